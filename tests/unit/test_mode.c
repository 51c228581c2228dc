/* test_mode.c - the timing modes' descriptor table (store/mode.h): names
 * unique and short enough for a record, lookup, unknown modes refused, the
 * record and space checks reading the same table, every descriptor's
 * stopping criterion resolvable in sweep/stats.h and behaving as the noise
 * rule, and the help text naming every mode. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "grid/space.h"
#include "store/mode.h"
#include "store/record.h"
#include "sweep/stats.h"
#include "tests/unit/testutil.h"

static void test_table_is_well_formed(void **state)
{
    (void)state;
    assert_null(mode_at(-1));
    assert_null(mode_at(MODE_COUNT));
    for (int i = 0; i < MODE_COUNT; i++) {
        const mode_desc *d = mode_at(i);
        assert_non_null(d);
        assert_int_equal(d->id, i); /* in mode_id order */
        assert_non_null(d->name);
        assert_true(d->name[0] != '\0');
        assert_true(strlen(d->name) < MODE_NAME_MAX); /* fits record.mode and task.modes */
        assert_true(strlen(d->name) < sizeof(((record *)0)->mode));
        assert_true(d->measures && d->measures[0] && !strchr(d->measures, '\n'));
        assert_true(d->uncertainty_text && d->uncertainty_text[0]);
        assert_true(d->fills && strstr(d->fills, "time.launches"));
        for (int j = 0; j < i; j++)
            assert_string_not_equal(mode_at(j)->name, d->name); /* names unique */
    }
    /* The measurement's switches: cold flushes L2, batch launches back to back. */
    assert_int_equal(mode_at(MODE_HOT)->l2, MODE_L2_WARM);
    assert_int_equal(mode_at(MODE_HOT)->launch, MODE_LAUNCH_SINGLE);
    assert_int_equal(mode_at(MODE_COLD)->l2, MODE_L2_FLUSHED);
    assert_int_equal(mode_at(MODE_COLD)->launch, MODE_LAUNCH_SINGLE);
    assert_int_equal(mode_at(MODE_BATCH)->l2, MODE_L2_WARM);
    assert_int_equal(mode_at(MODE_BATCH)->launch, MODE_LAUNCH_BATCH);
}

static void test_lookup(void **state)
{
    (void)state;
    for (int i = 0; i < MODE_COUNT; i++) {
        const mode_desc *d = mode_at(i);
        assert_ptr_equal(mode_find(d->name), d);
        assert_int_equal(mode_index(d->name), i);
        assert_int_equal(record_mode_index(d->name), i);
        assert_true(record_mode_known(d->name));
    }
    assert_string_equal(mode_find("hot")->name, "hot");
    assert_int_equal(mode_find("batch")->id, MODE_BATCH);
    assert_ptr_equal(mode_default(), mode_at(0));
    assert_string_equal(mode_default()->name, "hot");
}

static void test_unknown_refused(void **state)
{
    (void)state;
    const char *bad[] = {"", "HOT", "warm", "hot ", "ho", "batches", "cold\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_null(mode_find(bad[i]));
        assert_int_equal(mode_index(bad[i]), -1);
        assert_false(record_mode_known(bad[i]));
    }
    assert_null(mode_find(NULL));
    assert_int_equal(mode_index(NULL), -1);
    /* A record in an unknown mode has no key and is not valid. */
    record r;
    memset(&r, 0, sizeof r);
    snprintf(r.device, sizeof r.device, "NVIDIA L4");
    snprintf(r.problem, sizeof r.problem, "b1.h1.s128.d64.nc");
    snprintf(r.build, sizeof r.build, "0123456789abcdef");
    snprintf(r.config, sizeof r.config, "d64.m64.n64.w4.s1.z0");
    snprintf(r.mode, sizeof r.mode, "warm");
    char key[RECORD_KEY_LEN], why[256];
    assert_int_equal(record_key(&r, key, sizeof key), -1);
    assert_int_equal(record_check(&r, why, sizeof why), -1);
    assert_non_null(strstr(why, "hot, cold, batch"));
    snprintf(r.mode, sizeof r.mode, "%s", mode_at(MODE_COLD)->name);
    assert_int_equal(record_key(&r, key, sizeof key), 0);
}

static void test_names_text(void **state)
{
    (void)state;
    assert_string_equal(mode_names_text(), "hot, cold, batch");
    assert_string_equal(mode_names_text(), "hot, cold, batch"); /* built once, stays */
    assert_string_equal(mode_names_quoted(), "\"hot\", \"cold\" or \"batch\"");
    assert_string_equal(RECORD_MODES_TEXT, "hot, cold, batch");
}

static void test_help_names_every_mode(void **state)
{
    (void)state;
    const char *h = mode_help_text();
    assert_non_null(h);
    assert_ptr_equal(mode_help_text(), h);
    for (int i = 0; i < MODE_COUNT; i++) {
        const mode_desc *d = mode_at(i);
        char line[64];
        snprintf(line, sizeof line, "  %-6s %s", d->name, d->measures);
        line[sizeof line - 1] = '\0';
        assert_non_null(strstr(h, line));
    }
    assert_non_null(strstr(h, "stdrel"));
    assert_non_null(strstr(h, "stops by stdrel, noise by median_se"));
    assert_string_equal(mode_uncertainty_name(MODE_UNC_MEDIAN_SE), "median_se");
    assert_string_equal(mode_uncertainty_name((mode_uncertainty)99), "unknown");
    assert_true(h[strlen(h) - 1] == '\n');
}

/* Every descriptor's criterion exists in the engine, and "stdrel" is the
 * noise rule of stats_stop_rule. */
static void test_criteria_resolve(void **state)
{
    (void)state;
    for (int i = 0; i < MODE_COUNT; i++) {
        const stats_criterion *c = stats_criterion_find(mode_at(i)->stop);
        assert_non_null(c);
        assert_string_equal(c->name, mode_at(i)->stop);
        assert_true(c->text && c->text[0]);
    }
    assert_null(stats_criterion_find("nope"));
    assert_null(stats_criterion_find(NULL));
    const stats_criterion *c = stats_criterion_find("stdrel");
    space_measure m;
    space_measure_defaults(&m);
    m.min_samples = 10;
    m.max_samples = 100;
    m.noise = 0.01;
    m.max_seconds = 0.5;
    assert_int_equal(c->stop(&m, 9, 0.001, 0.1), STATS_CONTINUE);
    assert_int_equal(c->stop(&m, 10, 0.01, 0.1), STATS_CONVERGED);
    assert_int_equal(c->stop(&m, 100, 0.02, 0.1), STATS_MAX_SAMPLES);
    assert_int_equal(c->stop(&m, 3, 0.5, 0.5), STATS_BUDGET);
}

/* The uncertainty method of every mode gives the timing summary's noise. */
static void test_uncertainty_method(void **state)
{
    (void)state;
    for (int i = 0; i < MODE_COUNT; i++) {
        double a[5] = {10, 12, 11, 13, 9}, b[5] = {10, 12, 11, 13, 9};
        record_timing ta, tb;
        stats_timing_of(a, 5, &ta);
        stats_timing_for(mode_at(i)->uncertainty, b, 5, &tb);
        assert_true(ta.median_us == tb.median_us && ta.noise == tb.noise);
        assert_true(isfinite(tb.noise) && tb.noise > 0);
    }
}

/* The space file takes exactly the table's modes, defaulting to its first. */
static void test_space_uses_the_table(void **state)
{
    (void)state;
    space_measure m;
    space_measure_defaults(&m);
    assert_int_equal(m.n_modes, 1);
    assert_string_equal(m.modes[0], mode_default()->name);
    assert_int_equal(SPACE_MAX_MODES, MODE_COUNT);
}

TU_MAIN(cmocka_unit_test(test_table_is_well_formed), cmocka_unit_test(test_lookup),
        cmocka_unit_test(test_unknown_refused), cmocka_unit_test(test_names_text),
        cmocka_unit_test(test_help_names_every_mode), cmocka_unit_test(test_criteria_resolve),
        cmocka_unit_test(test_uncertainty_method), cmocka_unit_test(test_space_uses_the_table))
