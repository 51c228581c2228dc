/* write.c - the seeds files and standalone sources (contract: write.h). */
#include "write.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cJSON.h>

#include "../store/file.h"
#include "doc.h"
#include "group.h"
#include "source.h"

/* ---- seeds files ---------------------------------------------------------------------------- */

/* mkdir -p of the seeds (or sources) directory, named by its option. */
static int write_mkdirs(const char *dir, const char *opt, char *err, size_t errlen)
{
    char failed[4096];
    const int e = file_mkdirs(dir, 0777, failed, sizeof failed);
    struct stat st;
    if (e == ENOTDIR && stat(dir, &st) == 0)
        snprintf(err, errlen, "%s %s exists but is not a directory; pass another one", opt, dir);
    else if (e)
        snprintf(err, errlen, "cannot create the %s directory %s: %s", opt, failed, strerror(e));
    return e ? -1 : 0;
}

/* Writes text to path, then frees it with release; text NULL is out of
 * memory building `what`. 0, or -1 with err set. */
static int write_text(const char *path, char *text, void (*release)(void *), const char *what,
                      char *err, size_t errlen)
{
    if (!text) {
        snprintf(err, errlen, "%s: out of memory building %s", path, what);
        return -1;
    }
    const int rc = file_write_text(path, text, err, errlen) == 0 ? 0 : -1;
    release(text);
    return rc;
}

static int write_group(const rank_result *r, const rank_group *g, const char *path, const char *now,
                       char *err, size_t errlen)
{
    cJSON *doc = doc_seeds(g, r->src, now);
    char *text = doc ? cJSON_Print(doc) : NULL;
    cJSON_Delete(doc);
    return write_text(path, text, cJSON_free, "the seeds document", err, errlen);
}

/* The run's file names (group_file_names), one per group; NULL with err
 * set when two groups would share one or out of memory. */
static char (*write_names(const rank_result *r, char *err, size_t errlen))[GROUP_NAME_LEN]
{
    const size_t n = (size_t)r->n_groups;
    group_id *ids = malloc(n * sizeof *ids);
    char(*names)[GROUP_NAME_LEN] = malloc(n * sizeof *names);
    if (!ids || !names) {
        snprintf(err, errlen, "out of memory naming %zu seeds files", n);
        free(ids);
        free(names);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        ids[i] = (group_id){r->groups[i].device, r->groups[i].problem, r->groups[i].mode};
    if (group_file_names(ids, n, ".json", names, err, errlen) != 0) {
        free(names);
        names = NULL;
    }
    free(ids);
    return names;
}

int write_seeds(const rank_result *r, const char *dir, FILE *paths, char *err, size_t errlen)
{
    if (r->n_groups == 0)
        return 0;
    /* Names first: a clash refuses the run before any file is touched. */
    char(*names)[GROUP_NAME_LEN] = write_names(r, err, errlen);
    if (!names)
        return -1;
    if (write_mkdirs(dir, "--seeds-dir", err, errlen) != 0) {
        free(names);
        return -1;
    }
    char now[32];
    doc_now(now, sizeof now);
    int rc = 0;
    char path[4096 + GROUP_NAME_LEN];
    /* Every guard before any write: a refused run writes nothing. */
    for (int i = 0; i < r->n_groups && rc == 0; i++) {
        const rank_group *g = &r->groups[i];
        const group_id id = {g->device, g->problem, g->mode};
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        rc = group_file_foreign(path, &id, "--seeds-dir", err, errlen) ? -1 : 0;
    }
    for (int i = 0; i < r->n_groups && rc == 0; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        rc = write_group(r, &r->groups[i], path, now, err, errlen);
        if (rc == 0 && paths)
            fprintf(paths, "%s\n", path);
    }
    free(names);
    return rc;
}

/* ---- standalone sources --------------------------------------------------------------------- */

/* The standalone source of seed i of g at path. */
static int write_source(const rank_group *g, int i, const source_seed *so, const char *path,
                        char *err, size_t errlen)
{
    return write_text(path, source_emitted(g, i, so), free, "the source", err, errlen);
}

int write_sources(const rank_result *r, FILE *paths, char *err, size_t errlen)
{
    const rank_sources *src = r->src;
    if (!src || !src->dir || r->n_groups == 0)
        return 0;
    if (write_mkdirs(src->dir, "--emit-source", err, errlen) != 0)
        return -1;
    int rc = 0;
    for (int gi = 0; gi < r->n_groups && rc == 0; gi++) {
        const rank_group *g = &r->groups[gi];
        for (int i = 0; i < g->n_top && rc == 0; i++) {
            source_seed so = source_of(src, &g->top[i]);
            char path[4096 + 256];
            if (so.text) {
                source_file(src, g, i, path, sizeof path);
                rc = write_source(g, i, &so, path, err, errlen);
                if (rc == 0 && paths)
                    fprintf(paths, "%s\n", path);
            }
            free(so.text);
        }
    }
    return rc;
}
