/* source.c - a seed's kernel source and its standalone text (contract:
 * source.h).
 */
#include "source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/family.h"
#include "../store/file.h"
#include "../store/sha256.h"
#include "../store/text.h"
#include "group.h"

/* The largest edited kernel a seed carries (its source is embedded). */
#define SOURCE_VARIANT_MAX ((size_t)4 << 20)

/* A variant's file when it still holds the text measured (its FNV-1a is the
 * record's kernel_hash); NULL otherwise. */
static char *source_variant_text(const record *r)
{
    /* The path comes from a record (an import may hold any path): only a
     * regular file of at most SOURCE_VARIANT_MAX bytes is read, nothing is
     * waited on (a FIFO, /dev/stdin), and its hash must match. */
    char *t = NULL;
    size_t n = 0;
    if (file_read_regular(r->kernel_path, SOURCE_VARIANT_MAX, &t, &n) != 0)
        return NULL;
    char hex[20];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)text_fnv1a(TEXT_FNV_INIT, t, n));
    if (strcmp(hex, r->kernel_hash) != 0 || memchr(t, '\0', n)) {
        free(t);
        return NULL;
    }
    return t;
}

source_seed source_of(const rank_sources *src, const record *r)
{
    source_seed o = {0};
    if (record_is_variant(r)) {
        o.path = r->kernel_path;
        o.text = r->kernel_path[0] && r->kernel_hash[0] ? source_variant_text(r) : NULL;
        o.same_build = o.text != NULL;
        return o;
    }
    const fa_family *f = fa_family_get(fa_family_index(record_family(r)));
    o.path = f ? f->header : "";
    const char *t = f && src && src->template_text ? src->template_text(f->header) : NULL;
    o.text = t ? strdup(t) : NULL;
    o.same_build = o.text && src->build && strcmp(src->build, r->build) == 0;
    return o;
}

void source_config(const record *r, char *buf, size_t n)
{
    const char *fam = record_family(r);
    if (strcmp(fam, FA_FAMILY_DEFAULT_NAME) == 0)
        snprintf(buf, n, "%s", r->config);
    else
        snprintf(buf, n, "%s:%s", fam, r->config);
}

void source_file(const rank_sources *src, const rank_group *g, int i, char *buf, size_t n)
{
    char suffix[32], name[256];
    snprintf(suffix, sizeof suffix, ".%d.cuh", i + 1);
    group_file_name(g->device, g->problem, g->mode, suffix, name, sizeof name);
    snprintf(buf, n, "%s/%s", src->dir, name);
}

/* The source text without a first line of SOURCE_TAG (a variant made
 * from an emitted source carries one: it is replaced, not stacked). */
static const char *source_body(const char *text)
{
    if (strncmp(text, SOURCE_TAG, strlen(SOURCE_TAG)) != 0)
        return text;
    const char *nl = strchr(text, '\n');
    return nl ? nl + 1 : "";
}

char *source_emitted(const rank_group *g, int i, const source_seed *so)
{
    const record *r = &g->top[i];
    char cfg[96], hex[SHA256_HEX_LEN];
    source_config(r, cfg, sizeof cfg);
    sha256_hex(so->text, strlen(so->text), hex);
    const char *body = source_body(so->text);
    const size_t n = strlen(body) + 2048;
    char *text = malloc(n);
    if (!text)
        return NULL;
    snprintf(text, n,
             "%s problem=%s config=%s mode=%s\n"
             "// Seed %d of %s | %s | %s (fasweep topk --emit-source): %s at this config,\n"
             "// sha256 %s%s, build %s, median %.3f us.\n"
             "// Re-score: fasweep eval --kernel THIS_FILE (the line above gives problem, "
             "config and mode).\n%s",
             SOURCE_TAG, g->problem, cfg, g->mode, i + 1, g->device, g->problem, g->mode, so->path,
             hex, so->same_build ? "" : " (as this fasweep has it; the build differs)", r->build,
             r->time.median_us, body);
    return text;
}
