/* fuzz_record.c - libFuzzer target for the record path: what `fasweep
 * import` does with a line (store_io_parse_line: raw bytes, JSON, the
 * strict decoder, the one validation), the JSON codec both ways, and the
 * two orders on records (the merge rule, the ranking order).
 *
 * The input is an import file: split into lines as import splits it. For
 * every line that parses, these must hold, else the target aborts:
 *   - the record passes record_check (what parses may be stored) and has
 *     a key;
 *   - record_to_json, printed and parsed again, gives the same text (the
 *     codec is lossless on anything it accepts);
 *   - with the previous accepted record: record_better is never true both
 *     ways, and record_rank_order is antisymmetric;
 *   - the record validation holds on it, checked here independently:
 *     a kernel record of a known family has a config its family parses and
 *     formats back to the same text, with every axis value the family
 *     allows; spreads (cv, noise) are NaN or >= 0; an ok record's median is
 *     at least 1e-6 us, no faster than its min_us, inside its interval.
 * Seeds: tests/cli/fixtures (bad_issue26.jsonl holds a record of each kind
 * the record validation refuses: bad configs, negative spreads, a 1e-320
 * median, min_us over the median).
 * Build and run: make fuzz (ASan + UBSan; FUZZ_TIME seconds per target).
 */
#include <cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/family.h"
#include "store/record.h"
#include "store/store_io.h"

static int sign(int x)
{
    return (x > 0) - (x < 0);
}

static void check_pair(const record *a, const record *b)
{
    if (record_better(a, b) && record_better(b, a))
        abort();
    const int ab = record_rank_order(a->time.median_us, a->time.noise, a->config, b->time.median_us,
                                     b->time.noise, b->config);
    const int ba = record_rank_order(b->time.median_us, b->time.noise, b->config, a->time.median_us,
                                     a->time.noise, a->config);
    if (sign(ab) != -sign(ba))
        abort();
}

/* Whether v is a value the axis allows (the planner's rule). */
static int axis_ok(const fa_axis *ax, int v)
{
    return v >= ax->lo && v <= ax->hi && (ax->step <= 1 || v % ax->step == 0) &&
           (!ax->set || (v >= 0 && v < 64 && (ax->set >> v) & 1));
}

/* Aborts when an accepted record breaks the record validation. */
static void check_valid(const record *r)
{
    const fa_family *f = fa_family_get(fa_family_index(record_family(r)));
    if (r->kind == RECORD_KIND_KERNEL && f) {
        fa_config c;
        char back[64];
        if (fa_config_parse_in(fa_family_index(f->name), r->config, &c) != 0)
            abort();
        fa_config_format(&c, back, sizeof back);
        if (strcmp(back, r->config) != 0)
            abort();
        int v[FA_CONFIG_SLOTS];
        fa_config_slots(&c, v);
        for (int i = 1; i < FA_CONFIG_SLOTS; i++)
            if (!axis_ok(&f->axes[i], v[i]))
                abort();
    }
    if (r->time.cv < 0 || r->time.noise < 0 || isinf(r->time.cv) || isinf(r->time.noise))
        abort();
    if (r->status != RECORD_ST_OK)
        return;
    if (!(r->time.median_us >= 1e-6) || (r->time.min_us > 0 && r->time.min_us > r->time.median_us))
        abort();
    if (record_has_ci(r) &&
        !(r->time.ci_lo_us <= r->time.median_us && r->time.median_us <= r->time.ci_hi_us))
        abort();
}

/* The record's line, as export writes it (caller frees), or NULL. */
static char *line_of(const record *r)
{
    cJSON *j = record_to_json(r);
    char *t = j ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);
    return t;
}

static void check_line(const char *line, size_t len, record *prev, int *have_prev)
{
    record r;
    char why[640], key[RECORD_KEY_LEN];
    if (store_io_parse_line(line, len, &r, why, sizeof why) != 0)
        return;
    if (record_check(&r, why, sizeof why) != 0 || record_key(&r, key, sizeof key) != 0)
        abort();
    check_valid(&r);
    char *t = line_of(&r);
    if (!t)
        return; /* out of memory */
    record back;
    if (store_io_parse_line(t, strlen(t), &back, why, sizeof why) != 0)
        abort();
    char *t2 = line_of(&back);
    if (t2 && strcmp(t, t2) != 0)
        abort();
    cJSON_free(t);
    cJSON_free(t2);
    if (*have_prev)
        check_pair(prev, &r);
    *prev = r;
    *have_prev = 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    record prev;
    int have_prev = 0;
    const char *p = (const char *)data, *end = p + size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const size_t len = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
        check_line(p, len, &prev, &have_prev);
        p += len;
    }
    return 0;
}
