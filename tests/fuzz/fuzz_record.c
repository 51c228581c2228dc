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
 *     ways, and record_rank_order is antisymmetric.
 * Build and run: make fuzz (ASan + UBSan; FUZZ_TIME seconds per target).
 */
#include <cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
