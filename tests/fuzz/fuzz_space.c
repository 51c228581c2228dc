/* fuzz_space.c - libFuzzer target for the space parser.
 *
 * Feeds arbitrary bytes to space_parse and checks what the header
 * promises: a one-line NUL-terminated error on failure with *out untouched,
 * and on success a space whose every field is within the documented
 * limits (so downstream code may trust a parsed space). ASan/UBSan catch
 * memory errors and leaks. Build and run: make fuzz.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grid/space.h"
#include "kernels/family.h"

static void fz_check(int ok)
{
    if (!ok)
        abort();
}

/* Everything space_parse guarantees about an accepted space. */
static void fz_check_space(const space *s)
{
    fz_check(strlen(s->name) >= 1 && strlen(s->name) < sizeof s->name);
    fz_check(strlen(s->hash) == 16);
    fz_check(s->arch == 80 || s->arch == 86 || s->arch == 89 || s->arch == 90);
    fz_check(s->smem_limit >= 1 && s->smem_limit <= 262144);
    fz_check(s->n_problems >= 1 && s->n_problems <= SPACE_MAX_PROBLEMS);
    for (int i = 0; i < s->n_problems; i++) {
        const space_problem *p = &s->problems[i];
        fz_check(p->batch >= 1 && p->heads >= 1 && p->seq_len >= 1);
        fz_check(p->head_dim == 64 || p->head_dim == 128 || p->head_dim == 256);
        fz_check(p->causal == 0 || p->causal == 1);
        fz_check(p->kv_heads >= 1 && p->kv_heads <= p->heads && p->heads % p->kv_heads == 0);
        fz_check(space_dtype_name(p->dtype) != NULL);
        /* The canonical text round-trips. */
        char buf[96];
        space_problem q;
        space_problem_format(p, buf, sizeof buf);
        fz_check(space_problem_parse(buf, &q) == 0 && memcmp(&q, p, sizeof q) == 0);
    }
    /* The other families' grids: known, not the space's own, each once,
     * every axis non-empty and distinct like the own grid's. */
    fz_check(s->n_extra >= 0 && s->n_extra <= SPACE_MAX_EXTRA);
    for (int e = 0; e < s->n_extra; e++) {
        const space_grid *g = &s->extra[e];
        fz_check(g->family >= 0 && g->family < fa_family_count() && g->family != s->family);
        for (int f = 0; f < e; f++)
            fz_check(s->extra[f].family != g->family);
        for (int a = 0; a < SPACE_AXIS_COUNT; a++) {
            fz_check(g->axis_len[a] >= 1 && g->axis_len[a] <= SPACE_MAX_AXIS);
            for (int i = 0; i < g->axis_len[a]; i++)
                for (int j = 0; j < i; j++)
                    fz_check(g->axis[a][i] != g->axis[a][j]);
        }
    }
    for (int a = 0; a < SPACE_AXIS_COUNT; a++) {
        fz_check(s->axis_len[a] >= 1 && s->axis_len[a] <= SPACE_MAX_AXIS);
        for (int i = 0; i < s->axis_len[a]; i++)
            for (int j = 0; j < i; j++)
                fz_check(s->axis[a][i] != s->axis[a][j]);
    }
    fz_check(s->measure.min_samples >= 1 && s->measure.max_samples >= s->measure.min_samples);
    fz_check(s->measure.noise > 0 && s->measure.noise < 1);
    fz_check(s->measure.n_modes >= 1 && s->measure.n_modes <= SPACE_MAX_MODES);
    fz_check(s->tolerance.rel_l2 > 0 && s->tolerance.max_abs > 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    space s, before;
    char err[SPACE_ERR_LEN];
    memset(&s, 0x5a, sizeof s);
    before = s;
    memset(err, 'x', sizeof err);
    if (space_parse((const char *)data, size, "fuzz.json", &s, err, sizeof err) == 0) {
        fz_check_space(&s);
    } else {
        fz_check(memchr(err, '\0', sizeof err) != NULL);
        fz_check(strncmp(err, "fuzz.json", 9) == 0);
        fz_check(strchr(err, '\n') == NULL);
        fz_check(memcmp(&s, &before, sizeof s) == 0);
    }
    /* The problem text parser sees the same bytes as a C string. */
    char *str = malloc(size + 1);
    if (str) {
        memcpy(str, data, size);
        str[size] = '\0';
        space_problem p;
        if (space_problem_parse(str, &p) == 0) {
            /* five ints of up to 10 digits, ".kv", ".nc", ".bf16": under 96 */
            char back[96];
            fz_check(space_problem_format(&p, back, sizeof back) < (int)sizeof back);
            fz_check(p.kv_heads >= 1 && p.heads % p.kv_heads == 0);
            space_problem q;
            fz_check(space_problem_parse(back, &q) == 0 && memcmp(&p, &q, sizeof p) == 0);
        }
        free(str);
    }
    return 0;
}
