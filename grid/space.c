/* space.c - strict parsing of sweep space files (format: docs/spaces.md).
 *
 * cJSON builds the tree; this file only walks it and validates. Every check
 * reports "FILE: JSON.PATH: expected ..., got ..." so a user can fix a space
 * without reading this code. Parsing fills a local struct and copies it out
 * only when everything passed, so a caller never sees half a space.
 */
#include "space.h"

#include <cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../kernels/family.h"
#include "../store/mode.h"
#include "../store/record.h"
#include "../store/text.h"

/* measure.rounds's message names the limit as text. */
_Static_assert(RECORD_MAX_ROUNDS == 8, "measure.rounds: update the limit in its message");

/* A space is a few KB; anything near this is a mistake (wrong file). */
#define SPACE_FILE_MAX (1L << 20)
/* Room for a JSON path such as "problems[15].head_dim" or an unknown key. */
#define SPACE_PATH_LEN 128

typedef struct sp_ctx {
    const char *file;
    char *err;
    size_t errlen;
} sp_ctx;

/* ---- error text ---------------------------------------------------------- */

/* Writes "FILE: PATH: message" into the caller's buffer; always returns -1
 * so checks can end with `return sp_fail(...)`. */
static int sp_fail(const sp_ctx *c, const char *path, const char *fmt, ...)
{
    if (!c->err || c->errlen == 0)
        return -1;
    char msg[SPACE_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (path && *path)
        snprintf(c->err, c->errlen, "%s: %s: %s", c->file, path, msg);
    else
        snprintf(c->err, c->errlen, "%s: %s", c->file, msg);
    return -1;
}

/* Untrusted text (a string value, a key) for a message: its first 32 bytes,
 * anything unprintable escaped, so the message stays one line. */
static void sp_clean(const char *s, char *buf, size_t n)
{
    text_clean(s, strlen(s), 32, 0, buf, n);
}

/* What the file holds at a place, for the "got ..." half of a message. */
static void sp_got(const cJSON *v, char *buf, size_t n)
{
    if (!v) {
        snprintf(buf, n, "nothing");
    } else if (cJSON_IsNumber(v)) {
        const double d = v->valuedouble;
        if (!isfinite(d))
            snprintf(buf, n, "a number too large to represent");
        else if (d == floor(d) && fabs(d) < 1e15)
            snprintf(buf, n, "%.0f", d);
        else
            snprintf(buf, n, "%.6g", d);
    } else if (cJSON_IsString(v)) {
        char s[80];
        sp_clean(v->valuestring, s, sizeof s);
        snprintf(buf, n, "\"%s\"", s);
    } else if (cJSON_IsTrue(v)) {
        snprintf(buf, n, "true");
    } else if (cJSON_IsFalse(v)) {
        snprintf(buf, n, "false");
    } else if (cJSON_IsNull(v)) {
        snprintf(buf, n, "null");
    } else if (cJSON_IsArray(v)) {
        snprintf(buf, n, v->child ? "an array" : "an empty array");
    } else if (cJSON_IsObject(v)) {
        snprintf(buf, n, "an object");
    } else {
        snprintf(buf, n, "an invalid value");
    }
}

/* "expected WHAT, got <v>" at path. */
static int sp_expected(const sp_ctx *c, const char *path, const cJSON *v, const char *what)
{
    char got[128];
    sp_got(v, got, sizeof got);
    return sp_fail(c, path, "expected %s, got %s", what, got);
}

static int sp_key_path(char *buf, size_t n, const char *parent, const char *key)
{
    char k[80];
    sp_clean(key, k, sizeof k);
    if (parent && *parent)
        return snprintf(buf, n, "%s.%s", parent, k);
    return snprintf(buf, n, "%s", k);
}

/* Paths are for messages: a long one is cut, never overflows. Returning
 * snprintf's value marks the truncation as intended. */
static int sp_index_path(char *buf, size_t n, const char *parent, int i)
{
    return snprintf(buf, n, "%s[%d]", parent, i);
}

/* ---- typed readers --------------------------------------------------------- */

/* An integer in [lo, hi]. JSON has only doubles, so 2.5, 1e400 and values
 * past int range are refused here rather than silently truncated. */
static int sp_int(const sp_ctx *c, const char *path, const cJSON *v, long lo, long hi,
                  const char *what, long *out)
{
    if (!cJSON_IsNumber(v))
        return sp_expected(c, path, v, what);
    const double d = v->valuedouble;
    if (!isfinite(d) || d != floor(d) || d < (double)lo || d > (double)hi)
        return sp_expected(c, path, v, what);
    *out = (long)d;
    return 0;
}

/* A finite number with lo < x < hi (hi may be INFINITY). */
static int sp_num_open(const sp_ctx *c, const char *path, const cJSON *v, double lo, double hi,
                       const char *what, double *out)
{
    if (!cJSON_IsNumber(v))
        return sp_expected(c, path, v, what);
    const double d = v->valuedouble;
    if (!isfinite(d) || !(d > lo) || !(d < hi))
        return sp_expected(c, path, v, what);
    *out = d;
    return 0;
}

/* A string of minlen..maxlen bytes without control characters (names end
 * up in tables, JSON output and file names). */
static int sp_str(const sp_ctx *c, const char *path, const cJSON *v, size_t minlen, size_t maxlen,
                  const char *what, const char **out)
{
    if (!cJSON_IsString(v))
        return sp_expected(c, path, v, what);
    const char *s = v->valuestring;
    const size_t len = strlen(s);
    /* Names end up in store keys, tables, JSON and file names: valid UTF-8
     * without control characters (C0, DEL, C1), like every name. */
    if (len < minlen || len > maxlen || text_bad(s, len))
        return sp_expected(c, path, v, what);
    *out = s;
    return 0;
}

static int sp_bool(const sp_ctx *c, const char *path, const cJSON *v, int *out)
{
    if (!cJSON_IsBool(v))
        return sp_expected(c, path, v, "true or false");
    *out = cJSON_IsTrue(v) ? 1 : 0;
    return 0;
}

/* ---- objects: known keys only, each once ----------------------------------- */

typedef struct sp_keys {
    const char *const *names;
    int n;
    const char *list; /* "a, b, c" for messages */
} sp_keys;

/* Checks that obj is an object whose every key is in k, none twice. Cost is
 * O(children x known keys): an unknown key stops the walk, so a hostile file
 * with many keys cannot make this quadratic. */
static int sp_object(const sp_ctx *c, const char *path, const cJSON *obj, const sp_keys *k)
{
    char what[SPACE_ERR_LEN / 2];
    snprintf(what, sizeof what, "an object with keys %s", k->list);
    if (!cJSON_IsObject(obj))
        return sp_expected(c, path, obj, what);
    unsigned seen = 0;
    for (const cJSON *it = obj->child; it; it = it->next) {
        char p[SPACE_PATH_LEN];
        sp_key_path(p, sizeof p, path, it->string ? it->string : "");
        int idx = -1;
        for (int i = 0; i < k->n; i++)
            if (it->string && strcmp(it->string, k->names[i]) == 0)
                idx = i;
        if (idx < 0)
            return sp_fail(c, p, "unknown key, expected one of %s (check the spelling)", k->list);
        if (seen & (1u << idx))
            return sp_fail(c, p, "duplicate key, each key may appear once");
        seen |= 1u << idx;
    }
    return 0;
}

/* A required member; reports it missing with what it should hold. */
static const cJSON *sp_need(const sp_ctx *c, const char *path, const cJSON *obj, const char *key,
                            const char *what)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) {
        char p[SPACE_PATH_LEN];
        sp_key_path(p, sizeof p, path, key);
        sp_fail(c, p, "missing required key, expected %s", what);
    }
    return v;
}

/* ---- target ---------------------------------------------------------------- */

static const struct {
    const char *text;
    int arch;
} sp_archs[] = {{"sm_80", 80}, {"sm_86", 86}, {"sm_89", 89}, {"sm_90", 90}};

#define SP_ARCH_WHAT "one of \"sm_80\", \"sm_86\", \"sm_89\", \"sm_90\""
#define SP_SMEM_WHAT "an integer number of bytes from 1 to 262144"

static int sp_target(const sp_ctx *c, const cJSON *t, space *s)
{
    static const char *const names[] = {"gpu", "arch", "smem_limit"};
    static const sp_keys keys = {names, 3, "gpu, arch, smem_limit"};
    if (sp_object(c, "target", t, &keys))
        return -1;

    const cJSON *v = cJSON_GetObjectItemCaseSensitive(t, "gpu");
    if (v) {
        const char *gpu;
        if (sp_str(c, "target.gpu", v, 0, sizeof s->gpu - 1, "a GPU name of at most 63 characters",
                   &gpu))
            return -1;
        snprintf(s->gpu, sizeof s->gpu, "%s", gpu);
    }

    if (!(v = sp_need(c, "target", t, "arch", SP_ARCH_WHAT)))
        return -1;
    s->arch = 0;
    if (cJSON_IsString(v))
        for (size_t i = 0; i < sizeof sp_archs / sizeof sp_archs[0]; i++)
            if (strcmp(v->valuestring, sp_archs[i].text) == 0)
                s->arch = sp_archs[i].arch;
    if (!s->arch)
        return sp_expected(c, "target.arch", v, SP_ARCH_WHAT);

    if (!(v = sp_need(c, "target", t, "smem_limit", SP_SMEM_WHAT)))
        return -1;
    return sp_int(c, "target.smem_limit", v, 1, 262144, SP_SMEM_WHAT, &s->smem_limit);
}

/* ---- problems ------------------------------------------------------------------ */

static int sp_problem_dim(const sp_ctx *c, const char *path, const cJSON *o, const char *key,
                          int *out)
{
    char p[SPACE_PATH_LEN];
    sp_key_path(p, sizeof p, path, key);
    const cJSON *v = sp_need(c, path, o, key, "an integer >= 1");
    long x = 0;
    if (!v || sp_int(c, p, v, 1, INT_MAX, "an integer >= 1", &x))
        return -1;
    *out = (int)x;
    return 0;
}

/* The problem's head_dim as the space allows it: what a family may be
 * built for. Whether a family runs it is the family's rule (the planner
 * rejects the points of a family that cannot). */
static int sp_head_dim_ok(int d)
{
    return d == 64 || d == 128 || d == 256;
}

static int sp_problem(const sp_ctx *c, const char *path, const cJSON *o, space_problem *pr)
{
    static const char *const names[] = {"batch",    "heads",  "kv_heads", "seq_len",
                                        "head_dim", "causal", "dtype"};
    static const sp_keys keys = {names, 7,
                                 "batch, heads, kv_heads, seq_len, head_dim, causal, dtype"};
    if (sp_object(c, path, o, &keys))
        return -1;
    if (sp_problem_dim(c, path, o, "batch", &pr->batch) ||
        sp_problem_dim(c, path, o, "heads", &pr->heads) ||
        sp_problem_dim(c, path, o, "seq_len", &pr->seq_len) ||
        sp_problem_dim(c, path, o, "head_dim", &pr->head_dim))
        return -1;
    char p[SPACE_PATH_LEN];
    if (!sp_head_dim_ok(pr->head_dim)) {
        sp_key_path(p, sizeof p, path, "head_dim");
        return sp_fail(c, p, "unsupported head_dim %d: expected 64, 128 or 256", pr->head_dim);
    }

    /* kv_heads: the heads when left out (multi-head attention, as every
     * space before it), else 1 to heads and a divisor of them. */
    pr->kv_heads = pr->heads;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "kv_heads");
    if (v) {
        char what[160];
        snprintf(what, sizeof what,
                 "an integer from 1 to heads (%d) that divides it (each K/V head serves "
                 "heads / kv_heads query heads)",
                 pr->heads);
        long x = 0;
        sp_key_path(p, sizeof p, path, "kv_heads");
        if (sp_int(c, p, v, 1, pr->heads, what, &x))
            return -1;
        if (pr->heads % (int)x != 0)
            return sp_expected(c, p, v, what);
        pr->kv_heads = (int)x;
    }

    pr->dtype = FA_DTYPE_FP16;
    v = cJSON_GetObjectItemCaseSensitive(o, "dtype");
    if (v) {
        sp_key_path(p, sizeof p, path, "dtype");
        const int d = cJSON_IsString(v) ? space_dtype_of(v->valuestring) : -1;
        if (d < 0)
            return sp_expected(c, p, v, "\"fp16\" or \"bf16\"");
        pr->dtype = d;
    }

    char why[160];
    if (space_problem_check(pr, why, sizeof why) != 0)
        return sp_fail(c, path, "%s", why);

    pr->causal = 0;
    v = cJSON_GetObjectItemCaseSensitive(o, "causal");
    sp_key_path(p, sizeof p, path, "causal");
    if (v && sp_bool(c, p, v, &pr->causal))
        return -1;
    return 0;
}

static int sp_problem_eq(const space_problem *a, const space_problem *b)
{
    return a->batch == b->batch && a->heads == b->heads && a->seq_len == b->seq_len &&
           a->head_dim == b->head_dim && a->causal == b->causal && a->kv_heads == b->kv_heads &&
           a->dtype == b->dtype;
}

#define SP_PROBLEMS_WHAT "a non-empty array of at most 16 problem objects"

static int sp_problems(const sp_ctx *c, const cJSON *a, space *s)
{
    if (!cJSON_IsArray(a) || !a->child)
        return sp_expected(c, "problems", a, SP_PROBLEMS_WHAT);
    const int n = cJSON_GetArraySize(a);
    if (n > SPACE_MAX_PROBLEMS)
        return sp_fail(c, "problems", "expected at most %d problems, got %d (split the space)",
                       SPACE_MAX_PROBLEMS, n);
    int i = 0;
    for (const cJSON *it = a->child; it; it = it->next, i++) {
        char p[SPACE_PATH_LEN];
        sp_index_path(p, sizeof p, "problems", i);
        space_problem *pr = &s->problems[i];
        if (sp_problem(c, p, it, pr))
            return -1;
        for (int j = 0; j < i; j++) {
            if (sp_problem_eq(pr, &s->problems[j])) {
                char txt[64];
                space_problem_format(pr, txt, sizeof txt);
                return sp_fail(c, p, "duplicate problem %s (same as problems[%d]), remove one", txt,
                               j);
            }
        }
    }
    s->n_problems = n;
    return 0;
}

/* ---- axes ------------------------------------------------------------------------ */

/* The space's axes are its family's tunable axes (kernels/family.h:
 * fa_family.axes[1 + a]): their names are the keys of "axes", their rules
 * the values each may take. */
static const fa_axis *sp_family_axis(int family, int a)
{
    return &fa_family_get(family)->axes[1 + a];
}

const char *space_axis_name(int family, int a)
{
    return fa_family_get(family) && a >= 0 && a < SPACE_AXIS_COUNT ? sp_family_axis(family, a)->name
                                                                   : "?";
}

/* The family's axis names as "A, B, C" for messages. */
static void sp_axis_list(int family, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int a = 0; a < SPACE_AXIS_COUNT && used < n; a++)
        used += (size_t)snprintf(buf + used, n - used, "%s%s", a ? ", " : "",
                                 sp_family_axis(family, a)->name);
}

static int sp_axis_value(const sp_ctx *c, const char *path, const cJSON *v, const fa_axis *ax,
                         int *out)
{
    long x = 0;
    if (sp_int(c, path, v, ax->lo, INT_MAX, ax->what, &x))
        return -1;
    const char *why = fa_axis_value_why(ax, x); /* the one rule, kernels/family.h */
    if (why)
        return sp_expected(c, path, v, why);
    *out = (int)x;
    return 0;
}

/* One axis of family `fam`'s grid g, at "PREFIX.NAME" ("axes.BLOCK_M",
 * "families.wgmma.axes.BLOCK_M"). */
static int sp_axis(const sp_ctx *c, const char *prefix, const cJSON *axes, int a, space_grid *g)
{
    const fa_axis *ax = sp_family_axis(g->family, a);
    char path[64], what[160]; /* "families.wgmma.axes.CONSUMER_WG" */
    sp_key_path(path, sizeof path, prefix, ax->name);
    snprintf(what, sizeof what, "a non-empty array of at most %d distinct values, each %s",
             SPACE_MAX_AXIS, ax->what);
    const cJSON *arr = sp_need(c, prefix, axes, ax->name, what);
    if (!arr)
        return -1;
    if (!cJSON_IsArray(arr) || !arr->child)
        return sp_expected(c, path, arr, what);
    int i = 0;
    for (const cJSON *it = arr->child; it; it = it->next, i++) {
        char p[SPACE_PATH_LEN];
        sp_index_path(p, sizeof p, path, i);
        /* Values are distinct and each axis allows few, so a long array
         * fails on a duplicate before it can overflow the table. */
        if (i == SPACE_MAX_AXIS)
            return sp_fail(c, path, "expected at most %d values, got more", SPACE_MAX_AXIS);
        if (sp_axis_value(c, p, it, ax, &g->axis[a][i]))
            return -1;
        for (int j = 0; j < i; j++)
            if (g->axis[a][j] == g->axis[a][i])
                return sp_fail(c, p, "expected distinct values, got %d again (also at [%d])",
                               g->axis[a][i], j);
    }
    g->axis_len[a] = i;
    return 0;
}

/* The axes object at `prefix` of grid g (g->family set). */
static int sp_axes(const sp_ctx *c, const char *prefix, const cJSON *axes, space_grid *g)
{
    const char *names[SPACE_AXIS_COUNT];
    for (int a = 0; a < SPACE_AXIS_COUNT; a++)
        names[a] = sp_family_axis(g->family, a)->name;
    char list[160];
    sp_axis_list(g->family, list, sizeof list);
    const sp_keys keys = {names, SPACE_AXIS_COUNT, list};
    if (sp_object(c, prefix, axes, &keys))
        return -1;
    for (int a = 0; a < SPACE_AXIS_COUNT; a++)
        if (sp_axis(c, prefix, axes, a, g))
            return -1;
    return 0;
}

/* "families": optional, {"NAME": {"axes": {...}}, ...}: the grids of the
 * families other than the space's own, each with that family's axes. */
static int sp_families(const sp_ctx *c, const cJSON *o, space *s)
{
    s->n_extra = 0;
    if (!o)
        return 0;
    char what[200];
    snprintf(what, sizeof what, "an object of kernel families (%s), each {\"axes\": {...}}",
             fa_family_names());
    if (!cJSON_IsObject(o) || !o->child)
        return sp_expected(c, "families", o, what);
    for (const cJSON *it = o->child; it; it = it->next) {
        char p[48], ap[56]; /* family names are short: a longer key is unknown anyway */
        const char *key = it->string ? it->string : "";
        sp_key_path(p, sizeof p, "families", key);
        const int f = fa_family_index(key);
        if (f < 0) {
            char k[80];
            sp_clean(key, k, sizeof k);
            return sp_fail(c, p,
                           "unknown kernel family \"%s\", expected one of %s (docs/families.md)", k,
                           fa_family_names());
        }
        if (f == s->family)
            return sp_fail(c, p,
                           "%s is the space's own family (\"family\", default mma): give its "
                           "axes in the top-level \"axes\" and remove this entry",
                           it->string);
        for (int j = 0; j < s->n_extra; j++)
            if (s->extra[j].family == f)
                return sp_fail(c, p, "duplicate key, each key may appear once");
        if (s->n_extra == SPACE_MAX_EXTRA)
            return sp_fail(c, "families", "expected at most %d families", SPACE_MAX_EXTRA);
        static const char *const names[] = {"axes"};
        static const sp_keys keys = {names, 1, "axes"};
        if (!cJSON_IsObject(it))
            return sp_expected(c, p, it, "an object with the key axes");
        if (sp_object(c, p, it, &keys))
            return -1;
        space_grid *g = &s->extra[s->n_extra];
        memset(g, 0, sizeof *g);
        g->family = f;
        char list[160], axes_what[200];
        sp_axis_list(f, list, sizeof list);
        snprintf(axes_what, sizeof axes_what, "an object with keys %s", list);
        const cJSON *axes = sp_need(c, p, it, "axes", axes_what);
        sp_key_path(ap, sizeof ap, p, "axes");
        if (!axes || sp_axes(c, ap, axes, g))
            return -1;
        s->n_extra++;
    }
    return 0;
}

/* The space's own grid (family, axis_len, axis) as a space_grid. */
void space_grid_main(const space *s, space_grid *g)
{
    g->family = s->family;
    memcpy(g->axis_len, s->axis_len, sizeof g->axis_len);
    memcpy(g->axis, s->axis, sizeof g->axis);
}

/* ---- measure, tolerance ------------------------------------------------------------ */

/* The table's names as "\"hot\" / \"cold\" / \"batch\"" into buf. */
static const char *sp_mode_list(char *buf, size_t n)
{
    size_t len = 0;
    for (int k = 0; k < MODE_COUNT && len < n; k++)
        len += (size_t)snprintf(buf + len, n - len, "%s\"%s\"", k ? " / " : "", mode_at(k)->name);
    return buf;
}

static int sp_modes(const sp_ctx *c, const cJSON *arr, space_measure *m)
{
    char list[MODE_COUNT * (MODE_NAME_MAX + 5) + 1], what[sizeof list + 48];
    snprintf(what, sizeof what, "a non-empty array of distinct %s",
             sp_mode_list(list, sizeof list));
    if (!cJSON_IsArray(arr) || !arr->child)
        return sp_expected(c, "measure.modes", arr, what);
    int i = 0;
    for (const cJSON *it = arr->child; it; it = it->next, i++) {
        char p[SPACE_PATH_LEN];
        sp_index_path(p, sizeof p, "measure.modes", i);
        if (!cJSON_IsString(it) || !mode_find(it->valuestring))
            return sp_expected(c, p, it, mode_names_quoted());
        /* Each of the table's modes at most once: an entry past MODE_COUNT
         * is always caught here, so modes[] cannot overflow. */
        for (int j = 0; j < i; j++)
            if (strcmp(m->modes[j], it->valuestring) == 0)
                return sp_fail(c, p, "expected distinct modes, got \"%s\" again (also at [%d])",
                               it->valuestring, j);
        snprintf(m->modes[i], sizeof m->modes[i], "%s", it->valuestring);
    }
    m->n_modes = i;
    return 0;
}

static int sp_opt_int_in(const sp_ctx *c, const cJSON *o, const char *key, long lo, long hi,
                         const char *what, int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    long x = 0;
    char p[SPACE_PATH_LEN];
    sp_key_path(p, sizeof p, "measure", key);
    if (!v)
        return 0;
    if (sp_int(c, p, v, lo, hi, what, &x))
        return -1;
    *out = (int)x;
    return 0;
}

static int sp_opt_int(const sp_ctx *c, const cJSON *o, const char *key, long lo, const char *what,
                      int *out)
{
    return sp_opt_int_in(c, o, key, lo, INT_MAX, what, out);
}

static int sp_opt_num(const sp_ctx *c, const char *path, const cJSON *o, const char *key, double hi,
                      const char *what, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    char p[SPACE_PATH_LEN];
    sp_key_path(p, sizeof p, path, key);
    return v ? sp_num_open(c, p, v, 0.0, hi, what, out) : 0;
}

void space_measure_defaults(space_measure *m)
{
    /* The defaults space.h names, grouped (by hand, not one a line):
     * samples and their budget; the batch mode and the clock gate; the
     * rounds and intervals. */
    /* clang-format off */
    static const space_measure d = {
        .warmup_runs = 3, .min_samples = 10, .max_samples = 200, .noise = 0.01,
        .max_seconds = 0.5, .timeout_s = 10, .n_modes = 1,
        .batch_us = 200, .clock_tolerance = 0.03, .clock_pause_ms = 100, .max_discards = 10,
        .calibrate_ms = 50, .rounds = 3, .ci_floor = 0.007};
    /* clang-format on */
    *m = d;
    snprintf(m->modes[0], sizeof m->modes[0], "%s", mode_default()->name);
}

/* The measurement keeps every sample of a config in memory (8 bytes each,
 * for up to 8 configs at once) and sizes its buffers in int: 10^6 samples
 * is far past any useful count and stays clear of both limits. */
_Static_assert(SPACE_MAX_SAMPLES == 1000000, "measure.*_samples: update the limit in its message");
#define SP_SAMPLES_WHAT "an integer from 1 to 1000000"

static int sp_measure(const sp_ctx *c, const cJSON *o, space_measure *m)
{
    static const char *const names[] = {
        "warmup_runs",  "min_samples",  "max_samples", "noise",           "max_seconds",
        "timeout_s",    "modes",        "batch_us",    "clock_tolerance", "clock_pause_ms",
        "max_discards", "calibrate_ms", "rounds",      "ci_floor"};
    static const sp_keys keys = {names, 14,
                                 "warmup_runs, min_samples, max_samples, noise, max_seconds, "
                                 "timeout_s, modes, batch_us, clock_tolerance, clock_pause_ms, "
                                 "max_discards, calibrate_ms, rounds, ci_floor"};
    if (sp_object(c, "measure", o, &keys))
        return -1;
    const int max_given = cJSON_GetObjectItemCaseSensitive(o, "max_samples") != NULL;
    if (sp_opt_int(c, o, "warmup_runs", 0, "an integer >= 0", &m->warmup_runs) ||
        sp_opt_int_in(c, o, "min_samples", 1, SPACE_MAX_SAMPLES, SP_SAMPLES_WHAT,
                      &m->min_samples) ||
        sp_opt_int_in(c, o, "max_samples", 1, SPACE_MAX_SAMPLES, SP_SAMPLES_WHAT, &m->max_samples))
        return -1;
    if (m->max_samples < m->min_samples) {
        if (max_given)
            return sp_fail(c, "measure.max_samples",
                           "expected an integer >= min_samples (%d), got %d", m->min_samples,
                           m->max_samples);
        return sp_fail(c, "measure.max_samples",
                       "expected max_samples >= min_samples (%d), got the default %d (set "
                       "max_samples)",
                       m->min_samples, m->max_samples);
    }
    if (sp_opt_num(c, "measure", o, "noise", 1.0, "a number between 0 and 1 (exclusive)",
                   &m->noise) ||
        sp_opt_num(c, "measure", o, "max_seconds", INFINITY, "a number of seconds > 0",
                   &m->max_seconds) ||
        sp_opt_num(c, "measure", o, "timeout_s", INFINITY, "a number of seconds > 0",
                   &m->timeout_s) ||
        sp_opt_num(c, "measure", o, "batch_us", 1e6, "a number of microseconds, 0 < x < 1e6",
                   &m->batch_us) ||
        sp_opt_num(c, "measure", o, "clock_tolerance", 1.0,
                   "a fraction between 0 and 1 (exclusive)", &m->clock_tolerance) ||
        sp_opt_num(c, "measure", o, "clock_pause_ms", 1e4,
                   "a number of milliseconds, 0 < x < 10000", &m->clock_pause_ms) ||
        sp_opt_int(c, o, "max_discards", 0, "an integer >= 0", &m->max_discards) ||
        sp_opt_num(c, "measure", o, "calibrate_ms", 1e4, "a number of milliseconds, 0 < x < 10000",
                   &m->calibrate_ms) ||
        sp_opt_int(c, o, "rounds", 1, "an integer from 1 to 8", &m->rounds) ||
        sp_opt_num(c, "measure", o, "ci_floor", 0.5, "a fraction, 0 < x < 0.5", &m->ci_floor))
        return -1;
    if (m->rounds > RECORD_MAX_ROUNDS)
        return sp_fail(c, "measure.rounds", "expected an integer from 1 to %d, got %d",
                       RECORD_MAX_ROUNDS, m->rounds);
    const cJSON *modes = cJSON_GetObjectItemCaseSensitive(o, "modes");
    return modes ? sp_modes(c, modes, m) : 0;
}

static int sp_tolerance(const sp_ctx *c, const cJSON *o, space_tolerance *t)
{
    static const char *const names[] = {"rel_l2", "max_abs"};
    static const sp_keys keys = {names, 2, "rel_l2, max_abs"};
    if (sp_object(c, "tolerance", o, &keys))
        return -1;
    return sp_opt_num(c, "tolerance", o, "rel_l2", INFINITY, "a number > 0", &t->rel_l2) ||
                   sp_opt_num(c, "tolerance", o, "max_abs", INFINITY, "a number > 0", &t->max_abs)
               ? -1
               : 0;
}

/* ---- the document ---------------------------------------------------------------------- */

/* The kernel family (kernels/family.h): optional, the default (mma) when
 * absent, so every space written before families reads unchanged. */
static int sp_family(const sp_ctx *c, const cJSON *v, space *s)
{
    s->family = FA_FAMILY_DEFAULT;
    if (!v)
        return 0;
    char what[160];
    snprintf(what, sizeof what, "a kernel family name, one of %s", fa_family_names());
    const char *str;
    if (sp_str(c, "family", v, 1, FA_FAMILY_NAME_LEN - 1, what, &str))
        return -1;
    const int f = fa_family_index(str);
    if (f < 0)
        return sp_fail(c, "family",
                       "unknown kernel family \"%s\", expected one of %s (docs/families.md)", str,
                       fa_family_names());
    s->family = f;
    return 0;
}

static int sp_root(const sp_ctx *c, const cJSON *root, space *s)
{
    static const char *const names[] = {"name", "description", "family",  "target",   "problems",
                                        "axes", "families",    "measure", "tolerance"};
    static const sp_keys keys = {
        names, 9,
        "name, description, family, target, problems, axes, families, measure, tolerance"};
    if (!cJSON_IsObject(root))
        return sp_expected(c, "", root, "a JSON object at the top level (see docs/spaces.md)");
    if (sp_object(c, "", root, &keys))
        return -1;

    static const char *name_what = "a name of 1 to 63 printable characters";
    const cJSON *v = sp_need(c, "", root, "name", name_what);
    const char *str;
    if (!v || sp_str(c, "name", v, 1, sizeof s->name - 1, name_what, &str))
        return -1;
    snprintf(s->name, sizeof s->name, "%s", str);

    v = cJSON_GetObjectItemCaseSensitive(root, "description");
    if (v && (!cJSON_IsString(v) || text_bad_utf8(v->valuestring, strlen(v->valuestring))))
        return sp_expected(c, "description", v, "a string");
    if (sp_family(c, cJSON_GetObjectItemCaseSensitive(root, "family"), s))
        return -1;

    if (!(v = sp_need(c, "", root, "target", "an object with keys gpu, arch, smem_limit")) ||
        sp_target(c, v, s))
        return -1;
    if (!(v = sp_need(c, "", root, "problems", SP_PROBLEMS_WHAT)) || sp_problems(c, v, s))
        return -1;
    char axes_what[200], list[160];
    sp_axis_list(s->family, list, sizeof list);
    snprintf(axes_what, sizeof axes_what, "an object with keys %s", list);
    space_grid g = {.family = s->family};
    if (!(v = sp_need(c, "", root, "axes", axes_what)) || sp_axes(c, "axes", v, &g))
        return -1;
    memcpy(s->axis_len, g.axis_len, sizeof s->axis_len);
    memcpy(s->axis, g.axis, sizeof s->axis);
    if (sp_families(c, cJSON_GetObjectItemCaseSensitive(root, "families"), s))
        return -1;

    space_measure_defaults(&s->measure);
    v = cJSON_GetObjectItemCaseSensitive(root, "measure");
    if (v && sp_measure(c, v, &s->measure))
        return -1;

    s->tolerance.rel_l2 = SPACE_DEFAULT_REL_L2;
    s->tolerance.max_abs = SPACE_DEFAULT_MAX_ABS;
    v = cJSON_GetObjectItemCaseSensitive(root, "tolerance");
    return v ? sp_tolerance(c, v, &s->tolerance) : 0;
}

/* ---- text level: bytes, syntax, position ----------------------------------------------- */

/* 1-based line and column (in bytes) of offset off. */
static void sp_line_col(const char *text, size_t off, int *line, int *col)
{
    long l = 1, cl = 1;
    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n') {
            l++;
            cl = 1;
        } else {
            cl++;
        }
    }
    *line = l > INT_MAX ? INT_MAX : (int)l;
    *col = cl > INT_MAX ? INT_MAX : (int)cl;
}

static int sp_is_ws(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/* "FILE:LINE:COL: message" for problems with the bytes themselves. */
static int sp_fail_at(const sp_ctx *c, const char *text, size_t off, const char *msg)
{
    int line, col;
    sp_line_col(text, off, &line, &col);
    if (c->err && c->errlen)
        snprintf(c->err, c->errlen, "%s:%d:%d: %s", c->file, line, col, msg);
    return -1;
}

/* How deep arrays and objects are nested at off (strings skipped): cJSON
 * stops at CJSON_NESTING_LIMIT levels and reports that as a plain syntax
 * error at the bracket, which a message should name for what it is. */
static long sp_depth_at(const char *text, size_t off)
{
    long depth = 0;
    int in_str = 0;
    for (size_t i = 0; i < off; i++) {
        const char ch = text[i];
        if (in_str) {
            if (ch == '\\')
                i++;
            else if (ch == '"')
                in_str = 0;
        } else if (ch == '"') {
            in_str = 1;
        } else if (ch == '[' || ch == '{') {
            depth++;
        } else if (ch == ']' || ch == '}') {
            depth--;
        }
    }
    return depth;
}

static int sp_syntax_error(const sp_ctx *c, const char *text, size_t len, size_t off)
{
    char msg[160];
    if (off < len && (text[off] == '[' || text[off] == '{') &&
        sp_depth_at(text, off) >= CJSON_NESTING_LIMIT) {
        snprintf(
            msg, sizeof msg,
            "arrays and objects nested deeper than %d levels (a space file needs 3): wrong file?",
            CJSON_NESTING_LIMIT);
        return sp_fail_at(c, text, off, msg);
    }
    /* cJSON points at the last byte when the text just stops: say so. */
    size_t rest = off;
    while (rest < len && sp_is_ws(text[rest]))
        rest++;
    if (rest >= len) {
        snprintf(msg, sizeof msg,
                 "JSON syntax error near end of file (an unclosed string, array or object?)");
        off = len;
    } else {
        char near[80];
        text_clean(text + off, len - off, 16, 1, near, sizeof near);
        snprintf(msg, sizeof msg, "JSON syntax error near '%s'", near);
    }
    return sp_fail_at(c, text, off, msg);
}

static void sp_hash(const char *text, size_t len, char out[17])
{
    snprintf(out, 17, "%016llx", (unsigned long long)text_fnv1a(TEXT_FNV_INIT, text, len));
}

/* Parses the text into a tree, with the checks cJSON leaves to the caller
 * (NUL bytes, an empty file, text after the value). */
static cJSON *sp_tree(const sp_ctx *c, const char *text, size_t len)
{
    /* cJSON takes every byte below 0x20 for whitespace and keeps raw ones
     * inside strings; JSON allows neither, and they hide in a terminal. */
    for (size_t i = 0; i < len; i++) {
        const unsigned char ch = (unsigned char)text[i];
        if (ch == 0) {
            sp_fail_at(c, text, i,
                       "NUL byte in the file; a space file is UTF-8 JSON text (wrong file?)");
            return NULL;
        }
        if (ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') {
            char msg[160];
            snprintf(msg, sizeof msg,
                     "control character 0x%02x in the file; JSON allows only tab, newline and "
                     "carriage return (inside a string write \\u%04x)",
                     ch, ch);
            sp_fail_at(c, text, i, msg);
            return NULL;
        }
    }
    const long nul = text_json_nul_escape(text, len);
    if (nul >= 0) {
        sp_fail_at(c, text, (size_t)nul,
                   "a string holds \\u0000 (a NUL character), which no name or text of a space "
                   "may hold");
        return NULL;
    }
    size_t start = 0;
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        start = 3; /* a UTF-8 byte order mark, which cJSON skips too */
    while (start < len && sp_is_ws(text[start]))
        start++;
    if (start == len) {
        sp_fail(c, NULL, "the file is empty, expected a JSON object (see docs/spaces.md)");
        return NULL;
    }
    /* A NUL-terminated copy: cJSON then cannot read past the bytes even if
     * it looks one past what `len` allows. */
    char *copy = malloc(len + 1);
    if (!copy) {
        sp_fail(c, NULL, "out of memory reading %zu bytes", len);
        return NULL;
    }
    memcpy(copy, text, len);
    copy[len] = '\0';
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(copy, len, &end, 0);
    const size_t off = end ? (size_t)(end - copy) : 0;
    free(copy);
    if (!root) {
        sp_syntax_error(c, text, len, off);
        return NULL;
    }
    size_t rest = off;
    while (rest < len && sp_is_ws(text[rest]))
        rest++;
    if (rest < len) {
        char near[80], msg[160];
        text_clean(text + rest, len - rest, 16, 1, near, sizeof near);
        snprintf(msg, sizeof msg,
                 "unexpected text '%s' after the JSON value; a space file holds one object", near);
        sp_fail_at(c, text, rest, msg);
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

int space_parse(const char *text, size_t len, const char *name, space *out, char *err,
                size_t errlen)
{
    const sp_ctx c = {name ? name : "<string>", err, errlen};
    if (err && errlen)
        err[0] = '\0';
    if (!text || !out)
        return sp_fail(&c, NULL, "no text to parse (internal error)");
    space s;
    memset(&s, 0, sizeof s);
    if (strlen(c.file) >= sizeof s.path)
        return sp_fail(&c, NULL, "the file name is longer than %zu bytes, use a shorter path",
                       sizeof s.path - 1);
    snprintf(s.path, sizeof s.path, "%s", c.file);
    sp_hash(text, len, s.hash);

    cJSON *root = sp_tree(&c, text, len);
    if (!root)
        return -1;
    const int rc = sp_root(&c, root, &s);
    cJSON_Delete(root);
    if (rc)
        return -1;
    *out = s;
    return 0;
}

/* Reads at most SPACE_FILE_MAX + 1 bytes so an oversized pipe or device is
 * caught without reading it all. */
static int sp_read(const sp_ctx *c, FILE *f, char **buf, size_t *len)
{
    struct stat st;
    if (fstat(fileno(f), &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return sp_fail(c, NULL, "is a directory, expected a space JSON file");
        if (S_ISREG(st.st_mode) && st.st_size > SPACE_FILE_MAX)
            return sp_fail(c, NULL,
                           "file is %lld bytes, a space file may be at most %ld bytes (1 MiB); "
                           "wrong file?",
                           (long long)st.st_size, SPACE_FILE_MAX);
    }
    char *b = malloc(SPACE_FILE_MAX + 1);
    if (!b)
        return sp_fail(c, NULL, "out of memory reading the file");
    size_t n = fread(b, 1, SPACE_FILE_MAX + 1, f);
    if (ferror(f)) {
        const int e = errno;
        free(b);
        return sp_fail(c, NULL, "cannot read: %s", strerror(e));
    }
    if (n > SPACE_FILE_MAX) {
        free(b);
        return sp_fail(c, NULL, "file is over %ld bytes (1 MiB), the limit for a space file",
                       SPACE_FILE_MAX);
    }
    *buf = b;
    *len = n;
    return 0;
}

int space_load(const char *path, space *out, char *err, size_t errlen)
{
    const sp_ctx c = {path ? path : "(null)", err, errlen};
    if (err && errlen)
        err[0] = '\0';
    if (!path || !out)
        return sp_fail(&c, NULL, "no space file given (internal error)");
    FILE *f = fopen(path, "rb");
    if (!f)
        return sp_fail(&c, NULL, "cannot open: %s (check the path)", strerror(errno));
    char *buf = NULL;
    size_t len = 0;
    const int rc = sp_read(&c, f, &buf, &len);
    fclose(f);
    if (rc)
        return -1;
    const int prc = space_parse(buf, len, path, out, err, errlen);
    free(buf);
    return prc;
}

/* ---- problems as text, and their cost ------------------------------------------------------ */

/* The names are the kernels' (fa_dtype_name): one table. */
const char *space_dtype_name(int dtype)
{
    return fa_dtype_name(dtype);
}

int space_dtype_of(const char *name)
{
    for (int d = 0; name && d < FA_DTYPE_COUNT; d++)
        if (strcmp(name, fa_dtype_name(d)) == 0)
            return d;
    return -1;
}

int space_problem_format(const space_problem *p, char *buf, size_t n)
{
    char kv[16] = "", dt[16] = "";
    if (p->kv_heads != p->heads)
        snprintf(kv, sizeof kv, ".kv%d", p->kv_heads);
    if (p->dtype != FA_DTYPE_FP16) {
        const char *name = space_dtype_name(p->dtype);
        if (name)
            snprintf(dt, sizeof dt, ".%s", name);
        else
            snprintf(dt, sizeof dt, ".dtype%d", p->dtype);
    }
    return snprintf(buf, n, "b%d.h%d%s.s%d.d%d.%s%s", p->batch, p->heads, kv, p->seq_len,
                    p->head_dim, p->causal ? "c" : "nc", dt);
}

/* A positive decimal int without sign, spaces or leading zeros, so that
 * every accepted text is the one space_problem_format writes. Returns the
 * end of the digits, or NULL. */
static const char *sp_pos_int(const char *s, int *out)
{
    if (*s < '1' || *s > '9')
        return NULL;
    long v = 0;
    while (*s >= '0' && *s <= '9') {
        v = v * 10 + (*s++ - '0');
        if (v > INT_MAX)
            return NULL;
    }
    *out = (int)v;
    return s;
}

/* `tag` then a positive int (sp_pos_int): the end, or NULL. */
static const char *sp_tagged(const char *s, const char *tag, int *out)
{
    const size_t n = strlen(tag);
    if (!s || strncmp(s, tag, n) != 0)
        return NULL;
    return sp_pos_int(s + n, out);
}

/* The canonical text: "bB.hH[.kvKV].sS.dD.{c,nc}[.DTYPE]", DTYPE not fp16
 * and KV not H. Returns 0 and fills *p, or -1. */
static int sp_problem_canonical(const char *s, space_problem *p)
{
    space_problem t = {0};
    s = sp_tagged(s, "b", &t.batch);
    s = sp_tagged(s, ".h", &t.heads);
    if (!s)
        return -1;
    t.kv_heads = t.heads;
    if (strncmp(s, ".kv", 3) == 0) {
        s = sp_tagged(s, ".kv", &t.kv_heads);
        if (!s || t.kv_heads == t.heads)
            return -1;
    }
    s = sp_tagged(s, ".s", &t.seq_len);
    s = sp_tagged(s, ".d", &t.head_dim);
    if (!s)
        return -1;
    if (strncmp(s, ".nc", 3) == 0)
        s += 3;
    else if (strncmp(s, ".c", 2) == 0 && (s[2] == '\0' || s[2] == '.'))
        s += 2, t.causal = 1;
    else
        return -1;
    t.dtype = FA_DTYPE_FP16;
    if (*s == '.') {
        t.dtype = space_dtype_of(s + 1);
        if (t.dtype < 0 || t.dtype == FA_DTYPE_FP16)
            return -1;
    } else if (*s != '\0') {
        return -1;
    }
    *p = t;
    return 0;
}

/* The short form: "B,H[:KV],S,D[,DTYPE]", non-causal. Returns 0 and fills
 * *p, or -1. */
static int sp_problem_short(const char *s, space_problem *p)
{
    space_problem t = {0};
    if (!(s = sp_pos_int(s, &t.batch)) || *s++ != ',' || !(s = sp_pos_int(s, &t.heads)))
        return -1;
    t.kv_heads = t.heads;
    if (*s == ':' && !(s = sp_pos_int(s + 1, &t.kv_heads)))
        return -1;
    if (*s++ != ',' || !(s = sp_pos_int(s, &t.seq_len)) || *s++ != ',' ||
        !(s = sp_pos_int(s, &t.head_dim)))
        return -1;
    t.dtype = FA_DTYPE_FP16;
    if (*s == ',') {
        t.dtype = space_dtype_of(s + 1);
        if (t.dtype < 0)
            return -1;
    } else if (*s != '\0') {
        return -1;
    }
    *p = t;
    return 0;
}

int space_problem_parse(const char *s, space_problem *p)
{
    if (!s || !p)
        return -1;
    space_problem t;
    if (sp_problem_canonical(s, &t) != 0 && sp_problem_short(s, &t) != 0)
        return -1;
    /* K/V heads: a divisor of the heads (the canonical text never names the heads themselves). */
    if (t.kv_heads > t.heads || t.heads % t.kv_heads != 0)
        return -1;
    *p = t;
    return 0;
}

int space_problem_check(const space_problem *p, char *why, size_t n)
{
    const long long bh = (long long)p->batch * p->heads; /* < 2^62 */
    if (bh > SPACE_MAX_BATCH_HEADS)
        return text_errf(
            why, n,
            "batch x heads is %lld, at most %ld (the CUDA grid's y dimension the kernel "
            "launches over): split the batch",
            bh, SPACE_MAX_BATCH_HEADS);
    /* bh <= 65535 here, so the product stays under 2^47. */
    if (bh * p->seq_len > SPACE_MAX_ROWS)
        return text_errf(
            why, n,
            "batch x heads x seq_len is %lld rows, at most %ld (the kernels index rows in "
            "32-bit integers): shorten seq_len or split the batch",
            bh * p->seq_len, SPACE_MAX_ROWS);
    if (p->kv_heads < 1 || p->kv_heads > p->heads || p->heads % p->kv_heads != 0)
        return text_errf(why, n,
                         "kv_heads %d does not divide heads %d (each K/V head serves heads / "
                         "kv_heads query heads: 1 <= kv_heads <= heads)",
                         p->kv_heads, p->heads);
    if (!space_dtype_name(p->dtype))
        return text_errf(why, n, "dtype %d is not fp16 or bf16", p->dtype);
    return 0;
}

double space_problem_flops(const space_problem *p)
{
    const double s = p->seq_len;
    const double f = 4.0 * p->batch * p->heads * s * s * p->head_dim;
    return p->causal ? 0.5 * f : f;
}

/* Bytes of one element: fp16 and bf16 alike. */
#define SP_ELEM_BYTES 2.0

double space_problem_bytes(const space_problem *p)
{
    const double row = (double)p->batch * p->seq_len * p->head_dim; /* one head's elements */
    return (2.0 * p->heads + 2.0 * p->kv_heads) * row * SP_ELEM_BYTES;
}

double space_problem_input_bytes(const space_problem *p)
{
    const double row = (double)p->batch * p->seq_len * p->head_dim;
    return (1.0 * p->heads + 2.0 * p->kv_heads) * row * SP_ELEM_BYTES;
}
