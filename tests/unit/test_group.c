/* test_group.c - the group file names and the guard before a group's file
 * is replaced (seeds/group.h): the plain rule with no hash, a hash only for
 * groups of one run that share a plain name (the colliding FNV-1a 32
 * pair), and a guard that reads the whole file whatever its size or format
 * (seeds, Kernel Tuner cache, T4) and never blocks on a FIFO; a group
 * whose records hold more than SPACE_MAX_AXIS values on an axis gets no
 * grid, not an error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "seeds/group.h"
#include "store/text.h"
#include "tests/unit/testutil.h"

static const char *const dev_a = "nviDiA-=+L4-", *const dev_b = "nvIdiA_=,l4__";

/* FNV-1a 64 of "DEVICE|PROBLEM|MODE": the documented disambiguator. */
static unsigned long long id_hash(const group_id *id)
{
    char t[256];
    snprintf(t, sizeof t, "%s|%s|%s", id->device, id->problem, id->mode);
    return text_fnv1a(TEXT_FNV_INIT, t, strlen(t));
}

static void test_plain_names(void **state)
{
    (void)state;
    char buf[GROUP_NAME_LEN];
    group_file_name("NVIDIA H100 80GB HBM3", "b4.h8.s512.d64.nc", "hot", ".json", buf, sizeof buf);
    assert_string_equal(buf, "nvidia-h100-80gb-hbm3_b4.h8.s512.d64.nc_hot.json");
    /* No hash for a name that does not read back: lower case, runs of
     * other characters one '-', trimmed. */
    group_file_name(dev_a, "b4.h8.s512.d64.nc", "cold", ".kt.json", buf, sizeof buf);
    assert_string_equal(buf, "nvidia-l4_b4.h8.s512.d64.nc_cold.kt.json");
    group_file_name(dev_b, "b4.h8.s512.d64.nc", "cold", ".kt.json", buf, sizeof buf);
    assert_string_equal(buf, "nvidia-l4_b4.h8.s512.d64.nc_cold.kt.json");
    group_file_name("../..", "../x/y", "hot", ".json", buf, sizeof buf);
    assert_string_equal(buf, "unknown_..-x-y_hot.json");
    assert_null(strchr(buf, '/'));
}

/* One run: the pair whose 32-bit hashes collide gets two names, each the
 * plain one with its 64-bit hash; a third group keeps its plain name. */
static void test_run_names(void **state)
{
    (void)state;
    const group_id ids[3] = {{dev_a, "b4.h8.s512.d64.nc", "hot"},
                             {"NVIDIA L4", "b4.h8.s512.d64.nc", "cold"},
                             {dev_b, "b4.h8.s512.d64.nc", "hot"}};
    char names[3][GROUP_NAME_LEN], err[512] = "";
    assert_int_equal(group_file_names(ids, 3, ".json", names, err, sizeof err), 0);
    char want[GROUP_NAME_LEN];
    snprintf(want, sizeof want, "nvidia-l4_b4.h8.s512.d64.nc_hot_%016llx.json", id_hash(&ids[0]));
    assert_string_equal(names[0], want);
    snprintf(want, sizeof want, "nvidia-l4_b4.h8.s512.d64.nc_hot_%016llx.json", id_hash(&ids[2]));
    assert_string_equal(names[2], want);
    assert_string_not_equal(names[0], names[2]);
    assert_string_equal(names[1], "nvidia-l4_b4.h8.s512.d64.nc_cold.json");
    /* Alone (or with groups of other plain names): the plain name. */
    assert_int_equal(group_file_names(ids, 2, ".json", names, err, sizeof err), 0);
    assert_string_equal(names[0], "nvidia-l4_b4.h8.s512.d64.nc_hot.json");
    assert_int_equal(group_file_names(ids, 0, ".json", names, err, sizeof err), 0);
}

typedef struct dirfix {
    char dir[512];
} dirfix;

static int setup(void **state)
{
    dirfix *f = calloc(1, sizeof *f);
    if (!f || !tu_tmpdir(f->dir, sizeof f->dir))
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    dirfix *f = *state;
    tu_rmtree(f->dir);
    free(f);
    return 0;
}

/* Writes head, then pad spaces, then tail into path. */
static void write_doc(const char *path, const char *head, size_t pad, const char *tail)
{
    FILE *o = fopen(path, "w");
    assert_non_null(o);
    fputs(head, o);
    for (size_t i = 0; i < pad; i++)
        fputc(' ', o);
    fputs(tail, o);
    assert_int_equal(fclose(o), 0);
}

/* One guard check: the file PATH below the fixture's folder, ERR its message. */
typedef struct guard {
    char path[600], err[1024];
} guard;

static void guard_at(void **state, guard *g, const char *name)
{
    const dirfix *f = *state;
    snprintf(g->path, sizeof g->path, "%s/%s", f->dir, name);
    g->err[0] = '\0';
}

/* group_file_foreign on G's file, its message into G's err. */
static int foreign(guard *g, const group_id *me, const char *opt)
{
    return group_file_foreign(g->path, me, opt, g->err, sizeof g->err);
}

/* The group fields past the first 4095 bytes (as an ordinary 6-8 KB seeds
 * file has them after a long seeds array, were the keys reordered) are
 * still read: the whole file is parsed. */
static void test_guard_whole_file(void **state)
{
    guard g;
    guard_at(state, &g, "x.json");
    const group_id me = {"NVIDIA L4", "b4.h8.s512.d64.nc", "hot"};
    write_doc(g.path, "{\"seeds\": [],", 7000,
              "\"device\": \"NVIDIA L40\", \"problem\": {\"text\": \"b4.h8.s512.d64.nc\"}, "
              "\"mode\": \"hot\"}\n");
    assert_int_equal(foreign(&g, &me, "--seeds-dir"), 1);
    assert_non_null(strstr(g.err, "holds the seeds of NVIDIA L40 | b4.h8.s512.d64.nc | hot, not of "
                                  "NVIDIA L4 | b4.h8.s512.d64.nc | hot"));
    assert_non_null(strstr(g.err, "pass another --seeds-dir"));
    /* Its own group's file may be replaced. */
    write_doc(g.path, "{\"seeds\": [],", 7000,
              "\"device\": \"NVIDIA L4\", \"problem\": {\"text\": \"b4.h8.s512.d64.nc\"}, "
              "\"mode\": \"hot\"}\n");
    assert_int_equal(foreign(&g, &me, "--seeds-dir"), 0);
    /* Another mode is another group. */
    write_doc(g.path, "{\"device\": \"NVIDIA L4\", \"problem\": {\"text\": \"b4.h8.s512.d64.nc\"},",
              10, "\"mode\": \"cold\"}");
    assert_int_equal(foreign(&g, &me, "--seeds-dir"), 1);
}

/* A NUL byte inside the file does not end the document: the file is
 * parsed to its length (cJSON reads a NUL between tokens as white space),
 * so the group after it is still seen. A file it cannot read is refused,
 * not replaced (a test only a non-root user can run: root reads it all). */
static void test_guard_nul_and_unreadable(void **state)
{
    guard g;
    guard_at(state, &g, "x.json");
    const group_id me = {"NVIDIA L4", "b4.h8.s512.d64.nc", "hot"};
    FILE *o = fopen(g.path, "w");
    assert_non_null(o);
    static const char doc[] = "{\"seeds\": [],\n\0\"device\": \"NVIDIA L40\", \"problem\": "
                              "{\"text\": \"b4.h8.s512.d64.nc\"}, \"mode\": \"hot\"}\n";
    assert_int_equal(fwrite(doc, 1, sizeof doc - 1, o), sizeof doc - 1);
    assert_int_equal(fclose(o), 0);
    assert_int_equal(foreign(&g, &me, "--seeds-dir"), 1);
    assert_non_null(strstr(g.err, "holds the seeds of NVIDIA L40"));
    if (geteuid() != 0) {
        assert_int_equal(chmod(g.path, 0), 0);
        assert_int_equal(foreign(&g, &me, "--seeds-dir"), 1);
        assert_non_null(strstr(g.err, "cannot read"));
        assert_int_equal(chmod(g.path, 0600), 0);
    }
}

/* The tuner files name their group under "fasweep" (Kernel Tuner cache)
 * and "metadata" (T4). */
static void test_guard_tuner_files(void **state)
{
    guard g;
    guard_at(state, &g, "x.kt.json");
    const group_id me = {"NVIDIA L4", "b2.h3.s300.d64.nc", "hot"};
    write_doc(g.path, "{\"device_name\": \"NVIDIA L4\", \"fasweep\": {\"device\": \"GPU 2\", ",
              5000, "\"problem\": \"b2.h3.s300.d64.nc\", \"mode\": \"hot\"}, \"cache\": {}}");
    assert_int_equal(foreign(&g, &me, "--dir"), 1);
    assert_non_null(
        strstr(g.err, "holds the Kernel Tuner cache of GPU 2 | b2.h3.s300.d64.nc | hot"));
    assert_non_null(strstr(g.err, "pass another --dir"));
    write_doc(g.path, "{\"schema_version\": \"1.0.0\", \"metadata\": {\"device\": \"NVIDIA L4\", ",
              0, "\"problem\": \"b1.h2.s200.d128.c\", \"mode\": \"hot\"}, \"results\": []}");
    assert_int_equal(foreign(&g, &me, "--dir"), 1);
    assert_non_null(strstr(g.err, "holds the T4 results of NVIDIA L4 | b1.h2.s200.d128.c"));
}

/* What names no group may be replaced: no file, not JSON, cut short, a
 * document of another shape, a directory; a FIFO is not opened for
 * reading (that would block until a writer came). */
static void test_guard_not_a_group(void **state)
{
    guard g;
    const group_id me = {"NVIDIA L4", "b4.h8.s512.d64.nc", "hot"};
    guard_at(state, &g, "none.json");
    assert_int_equal(foreign(&g, &me, "--dir"), 0);
    write_doc(g.path, "not json", 0, "");
    assert_int_equal(foreign(&g, &me, "--dir"), 0);
    write_doc(g.path, "{\"device\": \"NVIDIA L40\", \"problem\": {\"text\": \"b4", 0, "");
    assert_int_equal(foreign(&g, &me, "--dir"), 0);
    write_doc(g.path, "[1, 2, 3]", 0, "");
    assert_int_equal(foreign(&g, &me, "--dir"), 0);
    write_doc(g.path, "{\"device\": 3, \"problem\": \"p\", \"mode\": \"hot\"}", 0, "");
    assert_int_equal(foreign(&g, &me, "--dir"), 0);
    guard_at(state, &g, "sub");
    assert_int_equal(mkdir(g.path, 0700), 0);
    assert_int_equal(foreign(&g, &me, "--dir"), 0);
    guard_at(state, &g, "fifo");
    assert_int_equal(mkfifo(g.path, 0600), 0);
    assert_int_equal(foreign(&g, &me, "--dir"), 0);
}

/* Over SPACE_MAX_AXIS values of BLOCK_M among the records: no grid (no
 * cells, no_grid says why), laid out all the same (was: -1, as out of
 * memory, and `report` failed for every group). */
static void test_lay_out_too_wide(void **state)
{
    (void)state;
    group g;
    memset(&g, 0, sizeof g);
    snprintf(g.device, sizeof g.device, "NVIDIA L4");
    snprintf(g.problem, sizeof g.problem, "b4.h8.s512.d64.nc");
    snprintf(g.mode, sizeof g.mode, "hot");
    g.n_recs = SPACE_MAX_AXIS + 1;
    g.recs = calloc(g.n_recs, sizeof *g.recs);
    assert_non_null(g.recs);
    for (size_t i = 0; i < g.n_recs; i++) {
        record *r = &g.recs[i];
        r->kind = RECORD_KIND_KERNEL;
        r->status = RECORD_ST_OK;
        r->time.median_us = 100;
        snprintf(r->config, sizeof r->config, "d64.m%zu.n64.w1.s1.z0", 16 * (i + 1));
        snprintf(r->build, sizeof r->build, "0123456789abcdef");
    }
    assert_int_equal(group_lay_out(&g, NULL), 0);
    assert_int_equal(g.n_cells, 0);
    assert_non_null(strstr(g.no_grid, "more than 16 values of BLOCK_M"));
    /* One value fewer: a grid again, and no flag. */
    g.n_recs = SPACE_MAX_AXIS;
    assert_int_equal(group_lay_out(&g, NULL), 0);
    assert_int_equal(g.no_grid[0], '\0');
    assert_int_equal(g.n_cells, SPACE_MAX_AXIS);
    group_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_names),
        cmocka_unit_test(test_run_names),
        cmocka_unit_test_setup_teardown(test_guard_whole_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_guard_nul_and_unreadable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_guard_tuner_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_guard_not_a_group, setup, teardown),
        cmocka_unit_test(test_lay_out_too_wide),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
