/* record.c - the record: names, key, JSON codec, merge rule, ranking order
 * (contract: record.h).
 *
 * The record <-> JSON mapping is one table (rec_fields) that drives both
 * directions, so the encoder and the strict decoder cannot drift apart.
 */
#include "record.h"

#include <cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/family.h"
#include "text.h"

#ifndef FASWEEP_VERSION
#define FASWEEP_VERSION "unknown"
#endif

/* The times a record may hold, in us: from one picosecond (RECORD_MIN_US) to
 * 1000 s. Outside them a time is no measurement, and every ratio of two of
 * them (a speedup, its interval's ends: at most 1e9 / 1e-6 x REC_CI_MAX_RATIO)
 * stays finite, so no reader ever meets an inf. */
#define REC_MAX_US 1e9

/* A record's timestamp (Unix seconds): 0 (unknown) up to the last second of
 * year 9999, so its ISO 8601 text always has four year digits. */
#define REC_MAX_TIMESTAMP 253402300799.0

/* Largest integer a double holds exactly (smem_dynamic is a long). */
#define REC_LONG_LIM 9007199254740992.0

_Static_assert(sizeof(long) >= 8, "smem_dynamic must hold 2^53");

/* Formats into a caller's (err, errlen), which may be NULL/0; returns -1
 * so checks can end in `return rec_err(...)`. */
__attribute__((format(printf, 3, 4))) static int rec_err(char *err, size_t errlen, const char *fmt,
                                                         ...)
{
    if (!err || errlen == 0)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- names --------------------------------------------------------------------------------- */

static const char *const rec_status_names[] = {"ok",      "wrong",         "crashed",
                                               "timeout", "compile_error", "implausible"};
static const char *const rec_kind_names[] = {"kernel", "baseline"};
#define REC_N_STATUS ((int)(sizeof rec_status_names / sizeof *rec_status_names))
#define REC_N_KIND ((int)(sizeof rec_kind_names / sizeof *rec_kind_names))

/* names[i] for 0 <= i < n, else "invalid". */
static const char *rec_name(const char *const *names, int n, int i)
{
    return i >= 0 && i < n ? names[i] : "invalid";
}

/* The index of s in names, or -1. */
static int rec_index(const char *const *names, int n, const char *s)
{
    for (int i = 0; s && i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

const char *record_status_name(record_status st)
{
    return rec_name(rec_status_names, REC_N_STATUS, (int)st);
}

const char *record_kind_name(record_kind k)
{
    return rec_name(rec_kind_names, REC_N_KIND, (int)k);
}

int record_status_parse(const char *s, record_status *out)
{
    const int i = rec_index(rec_status_names, REC_N_STATUS, s);
    if (i >= 0 && out)
        *out = (record_status)i;
    return i < 0 ? -1 : 0;
}

int record_kind_parse(const char *s, record_kind *out)
{
    const int i = rec_index(rec_kind_names, REC_N_KIND, s);
    if (i >= 0 && out)
        *out = (record_kind)i;
    return i < 0 ? -1 : 0;
}

/* ---- keys ---------------------------------------------------------------------------------- */

/* Why the key field f (an array of size bytes) cannot be part of a key, or
 * NULL when it can: NUL-terminated, not empty, no '|', and a name
 * (text_bad: valid UTF-8, no C0, DEL or C1 control character). */
static const char *rec_key_field_bad(const char *f, size_t size, char *why, size_t n)
{
    const char *end = memchr(f, '\0', size);
    if (!end)
        return snprintf(why, n, "is not NUL-terminated within its %zu bytes", size), why;
    if (end == f)
        return "is empty";
    for (const char *p = f; p < end; p++) {
        const unsigned char ch = (unsigned char)*p;
        if (ch == '|')
            return "holds '|', which separates key fields";
        if (ch < 0x20 || ch == 0x7f)
            return snprintf(why, n, "holds a control character (\\x%02x)", ch), why;
    }
    return text_bad(f, (size_t)(end - f));
}

#define REC_KEY_FIELD(name)                                                                        \
    {                                                                                              \
#name, offsetof(record, name), sizeof(((record *)0)->name)                                 \
    }

static const struct {
    const char *name;
    size_t off, size;
} rec_key_fields[] = {REC_KEY_FIELD(device), REC_KEY_FIELD(problem), REC_KEY_FIELD(build),
                      REC_KEY_FIELD(config), REC_KEY_FIELD(mode)};
#define REC_N_KEY ((int)(sizeof rec_key_fields / sizeof *rec_key_fields))

/* Whether r is of the default family (family "" or "mma"). */
static int record_family_is_default(const record *r)
{
    return r->family[0] == '\0' || strcmp(r->family, RECORD_FAMILY_DEFAULT) == 0;
}

const char *record_family(const record *r)
{
    return r->family[0] ? r->family : RECORD_FAMILY_DEFAULT;
}

/* Why the family field cannot be a family name, or NULL when it can ("" is
 * the default family): NUL-terminated, [a-z0-9_] only. */
static const char *rec_family_bad(const record *r)
{
    const char *end = memchr(r->family, '\0', sizeof r->family);
    if (!end)
        return "is not NUL-terminated within its array";
    for (const char *p = r->family; p < end; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return "is not a kernel family name (lower-case letters, digits and '_')";
    return NULL;
}

/* Checks every key field, and that the mode is one fasweep measures; on
 * failure writes "FIELD REASON" into msg. */
static int rec_key_check(const record *r, char *msg, size_t n)
{
    const char *fam = rec_family_bad(r);
    if (fam) {
        rec_err(msg, n, "family %s", fam);
        return -1;
    }
    for (int i = 0; i < REC_N_KEY; i++) {
        char why[64];
        const char *bad = rec_key_field_bad((const char *)r + rec_key_fields[i].off,
                                            rec_key_fields[i].size, why, sizeof why);
        if (bad) {
            rec_err(msg, n, "%s %s", rec_key_fields[i].name, bad);
            return -1;
        }
    }
    if (!record_mode_known(r->mode)) {
        rec_err(msg, n, "mode \"%s\" is none of %s (the L2 modes fasweep measures)", r->mode,
                RECORD_MODES_TEXT);
        return -1;
    }
    return 0;
}

int record_mode_index(const char *mode)
{
    return mode_index(mode);
}

int record_mode_known(const char *mode)
{
    return record_mode_index(mode) >= 0;
}

int record_key(const record *r, char *buf, size_t n)
{
    if (!r || !buf || n == 0 || rec_key_check(r, NULL, 0) != 0)
        return -1;
    const int len = record_family_is_default(r)
                        ? snprintf(buf, n, "%s|%s|%s|%s|%s", r->device, r->problem, r->build,
                                   r->config, r->mode)
                        : snprintf(buf, n, "%s|%s|%s|%s|%s|%s", r->device, r->problem, r->build,
                                   r->family, r->config, r->mode);
    if (len < 0 || (size_t)len >= n) {
        buf[0] = '\0';
        return -1;
    }
    return 0;
}

/* ---- the JSON form ------------------------------------------------------------------------- */

typedef enum rec_ftype {
    RF_STR,    /* a name: char array, NUL-terminated, text_bad-clean */
    RF_TEXT,   /* free text (an error message): the same, but only valid UTF-8 is asked */
    RF_INT,    /* int in [lo, hi] */
    RF_LONG,   /* long in [lo, hi] */
    RF_DBL,    /* double; null <-> non-finite */
    RF_HEX64,  /* unsigned long long as "0x..." */
    RF_ROUNDS, /* record_rounds as an array of numbers */
    RF_KIND,   /* record_kind by name */
    RF_STATUS, /* record_status by name */
    RF_SCHEMA, /* not stored: the record format version */
    RF_FAMILY  /* the kernel family: a name, left out of the JSON when the default */
} rec_ftype;

typedef struct rec_field {
    const char *group; /* enclosing object, NULL at the top level */
    const char *name;
    rec_ftype type;
    size_t off, size; /* in record */
    int required;
    double lo, hi, def; /* range and default of integers */
} rec_field;

#define REC_MEM(m) offsetof(record, m), sizeof(((record *)0)->m)
#define F_KEY(n)                                                                                   \
    {                                                                                              \
        "key", #n, RF_STR, REC_MEM(n), 1, 0, 0, 0                                                  \
    }
#define F_STR(g, n, m)                                                                             \
    {                                                                                              \
        g, n, RF_STR, REC_MEM(m), 0, 0, 0, 0                                                       \
    }
#define F_TEXT(g, n, m)                                                                            \
    {                                                                                              \
        g, n, RF_TEXT, REC_MEM(m), 0, 0, 0, 0                                                      \
    }
#define F_DBL(g, n, m)                                                                             \
    {                                                                                              \
        g, n, RF_DBL, REC_MEM(m), 0, 0, 0, 0                                                       \
    }
#define F_INT(g, n, m, lo, hi, def)                                                                \
    {                                                                                              \
        g, n, RF_INT, REC_MEM(m), 0, lo, hi, def                                                   \
    }
#define F_ANYINT(g, n, m) F_INT(g, n, m, INT_MIN, INT_MAX, 0)

/* In output order; the members of a group are contiguous. */
static const rec_field rec_fields[] = {
    F_KEY(device),
    F_KEY(problem),
    F_KEY(build),
    {"key", "family", RF_FAMILY, REC_MEM(family), 0, 0, 0, 0},
    F_KEY(config),
    F_KEY(mode),
    {NULL, "kind", RF_KIND, REC_MEM(kind), 1, 0, 0, 0},
    {NULL, "status", RF_STATUS, REC_MEM(status), 1, 0, 0, 0},
    F_TEXT(NULL, "error", error),
    F_DBL("time", "median_us", time.median_us),
    F_DBL("time", "min_us", time.min_us),
    F_DBL("time", "mean_us", time.mean_us),
    F_DBL("time", "stdev_us", time.stdev_us),
    F_DBL("time", "cv", time.cv),
    F_DBL("time", "noise", time.noise),
    F_INT("time", "samples", time.samples, 0, INT_MAX, 0),
    F_INT("time", "launches", time.launches, 0, INT_MAX, 0),
    F_DBL("time", "ci_lo_us", time.ci_lo_us),
    F_DBL("time", "ci_hi_us", time.ci_hi_us),
    {"time", "round_us", RF_ROUNDS, REC_MEM(time.round), 0, 0, 0, 0},
    F_DBL(NULL, "tflops", tflops),
    F_DBL(NULL, "gbps", gbps),
    F_DBL("errors", "rel_l2", rel_l2),
    F_DBL("errors", "max_abs", max_abs),
    F_ANYINT("resources", "regs", regs),
    F_ANYINT("resources", "smem_static", smem_static),
    {"resources", "smem_dynamic", RF_LONG, REC_MEM(smem_dynamic), 0, -REC_LONG_LIM, REC_LONG_LIM,
     0},
    F_ANYINT("resources", "local_bytes", local_bytes),
    F_ANYINT("resources", "max_blocks_per_sm", max_blocks_per_sm),
    F_DBL("cycles", "cta_mean", cta_cycles_mean),
    F_DBL("cycles", "cta_max", cta_cycles_max),
    F_DBL("cycles", "waves", waves),
    F_DBL("cycles", "sm_imbalance", sm_imbalance),
    F_INT("clock", "sm_min_mhz", clock.min_mhz, -1, INT_MAX, -1),
    F_INT("clock", "sm_median_mhz", clock.median_mhz, -1, INT_MAX, -1),
    F_INT("clock", "sm_max_mhz", clock.max_mhz, -1, INT_MAX, -1),
    F_INT("clock", "ref_mhz", clock.ref_mhz, -1, INT_MAX, -1),
    F_INT("clock", "blocks", clock.blocks, 0, INT_MAX, 0),
    F_INT("clock", "discarded_blocks", clock.discarded, 0, INT_MAX, 0),
    F_INT("clock", "below_threshold", clock.below, -1, 1, -1),
    F_STR("env", "gpu_uuid", gpu_uuid),
    F_ANYINT("env", "cc", cc),
    F_ANYINT("env", "sm_count", sm_count),
    F_STR("env", "driver", driver),
    F_STR("env", "runtime", runtime),
    F_INT("env", "sm_clock_mhz", sm_clock_mhz, -1, INT_MAX, -1),
    F_INT("env", "mem_clock_mhz", mem_clock_mhz, -1, INT_MAX, -1),
    {"env", "throttle_reasons", RF_HEX64, REC_MEM(throttle_reasons), 0, 0, 0, 0},
    F_INT("env", "throttled", throttled, -1, 1, -1),
    F_STR("env", "host", host),
    F_STR("provenance", "space_name", space_name),
    F_STR("provenance", "space_hash", space_hash),
    F_STR("provenance", "version", version),
    F_DBL("provenance", "timestamp", timestamp),
    F_STR("provenance", "kernel_path", kernel_path),
    F_STR("provenance", "kernel_hash", kernel_hash),
    {NULL, "schema", RF_SCHEMA, 0, 0, 0, 1, RECORD_SCHEMA_VERSION, RECORD_SCHEMA_VERSION},
};
#define REC_NF ((int)(sizeof rec_fields / sizeof *rec_fields))

static int rec_same_group(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* The rounds as an array of shortest round-trip numbers. */
static int rec_add_rounds(cJSON *obj, const char *name, const record_rounds *rr)
{
    cJSON *a = cJSON_AddArrayToObject(obj, name);
    char buf[64];
    for (int i = 0; a && i < rr->n && i < RECORD_MAX_ROUNDS; i++) {
        text_double(rr->us[i], buf, sizeof buf);
        cJSON *v = cJSON_CreateRaw(buf);
        if (!v)
            return -1;
        cJSON_AddItemToArray(a, v);
    }
    return a ? 0 : -1;
}

/* Adds field f of r to obj; returns 0, or -1 when out of memory. */
static int rec_add_field(cJSON *obj, const rec_field *f, const record *r)
{
    const char *p = (const char *)r + f->off;
    char buf[320];
    switch (f->type) {
    case RF_STR:
    case RF_TEXT: {
        /* Bounded: a record that did not come through from_json may lack
         * the NUL; store_put rejects such records before they get here. */
        const size_t len = strnlen(p, f->size);
        memcpy(buf, p, len);
        buf[len] = '\0';
        return cJSON_AddStringToObject(obj, f->name, buf) ? 0 : -1;
    }
    case RF_INT:
        return cJSON_AddNumberToObject(obj, f->name, *(const int *)p) ? 0 : -1;
    case RF_LONG:
        /* Raw for the same reason as below: cJSON prints 2^53 as 9.0e15. */
        snprintf(buf, sizeof buf, "%ld", *(const long *)p);
        return cJSON_AddRawToObject(obj, f->name, buf) ? 0 : -1;
    case RF_DBL: {
        const double d = *(const double *)p;
        if (!isfinite(d))
            return cJSON_AddNullToObject(obj, f->name) ? 0 : -1;
        /* A raw item, not a number: cJSON prints numbers with %.15g when
         * that reads back within one ulp, which would change stored data. */
        text_double(d, buf, sizeof buf);
        return cJSON_AddRawToObject(obj, f->name, buf) ? 0 : -1;
    }
    case RF_HEX64:
        snprintf(buf, sizeof buf, "0x%llx", *(const unsigned long long *)p);
        return cJSON_AddStringToObject(obj, f->name, buf) ? 0 : -1;
    case RF_ROUNDS:
        return rec_add_rounds(obj, f->name, (const record_rounds *)p);
    case RF_KIND:
        return cJSON_AddStringToObject(obj, f->name, record_kind_name(*(const record_kind *)p))
                   ? 0
                   : -1;
    case RF_STATUS:
        return cJSON_AddStringToObject(obj, f->name, record_status_name(*(const record_status *)p))
                   ? 0
                   : -1;
    case RF_SCHEMA:
        return cJSON_AddNumberToObject(obj, f->name, RECORD_SCHEMA_VERSION) ? 0 : -1;
    case RF_FAMILY:
        /* Left out for the default: an mma record's JSON is what it was
         * before families. */
        if (record_family_is_default(r))
            return 0;
        return cJSON_AddStringToObject(obj, f->name, r->family) ? 0 : -1;
    }
    return -1;
}

cJSON *record_to_json(const record *r)
{
    if (!r)
        return NULL;
    cJSON *root = cJSON_CreateObject();
    cJSON *obj = root;
    const char *group = NULL;
    for (int i = 0; root && i < REC_NF; i++) {
        const rec_field *f = &rec_fields[i];
        if (!rec_same_group(f->group, group)) {
            group = f->group;
            obj = group ? cJSON_AddObjectToObject(root, group) : root;
        }
        if (!obj || rec_add_field(obj, f, r) != 0) {
            cJSON_Delete(root);
            return NULL;
        }
    }
    return root;
}

/* A short description of v, for the "got ..." half of a message. */
static void rec_got(const cJSON *v, char *buf, size_t n)
{
    if (cJSON_IsNumber(v)) {
        snprintf(buf, n, "%.17g", v->valuedouble);
    } else if (cJSON_IsString(v) && v->valuestring) {
        char s[80];
        text_clean(v->valuestring, strlen(v->valuestring), 32, 0, s, sizeof s);
        snprintf(buf, n, "\"%s\"", s);
    } else if (cJSON_IsRaw(v) && v->valuestring) {
        text_clean(v->valuestring, strlen(v->valuestring), 32, 0, buf, n);
    } else {
        snprintf(buf, n, "%s",
                 cJSON_IsTrue(v)     ? "true"
                 : cJSON_IsFalse(v)  ? "false"
                 : cJSON_IsNull(v)   ? "null"
                 : cJSON_IsArray(v)  ? "an array"
                 : cJSON_IsObject(v) ? "an object"
                                     : "an invalid value");
    }
}

typedef struct rec_jctx {
    char *err;
    size_t errlen;
} rec_jctx;

/* "group.name: message" (or "name: ...") into the caller's err; -1. */
__attribute__((format(printf, 4, 5))) static int rec_jfail(const rec_jctx *c, const char *group,
                                                           const char *name, const char *fmt, ...)
{
    if (!c->err || c->errlen == 0)
        return -1;
    char msg[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char cname[80];
    text_clean(name, strlen(name), 40, 0, cname, sizeof cname);
    if (group)
        snprintf(c->err, c->errlen, "%s.%s: %s", group, cname, msg);
    else
        snprintf(c->err, c->errlen, "%s: %s", cname, msg);
    return -1;
}

static int rec_expected(const rec_jctx *c, const rec_field *f, const cJSON *v, const char *what)
{
    char got[128];
    rec_got(v, got, sizeof got);
    return rec_jfail(c, f->group, f->name, "expected %s, got %s", what, got);
}

/* The number in v (a number, or a raw item holding one), or null (*is_null);
 * -1 for anything else. */
static int rec_number(const cJSON *v, double *d, int *is_null)
{
    *is_null = 0;
    if (cJSON_IsNumber(v)) {
        *d = v->valuedouble;
        return 0;
    }
    if (cJSON_IsNull(v)) {
        *is_null = 1;
        return 0;
    }
    if (!cJSON_IsRaw(v) || !v->valuestring)
        return -1;
    /* Raw items come from record_to_json; parse them like text. */
    cJSON *n = cJSON_Parse(v->valuestring);
    int rc = -1;
    if (cJSON_IsNumber(n)) {
        *d = n->valuedouble;
        rc = 0;
    } else if (cJSON_IsNull(n)) {
        *is_null = 1;
        rc = 0;
    }
    cJSON_Delete(n);
    return rc;
}

/* Strict "0x" + 1..16 hex digits. */
static int rec_parse_hex64(const char *s, unsigned long long *out)
{
    if (!s || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
        return -1;
    size_t n = strlen(s + 2);
    if (n == 0 || n > 16 || strspn(s + 2, "0123456789abcdefABCDEF") != n)
        return -1;
    *out = strtoull(s + 2, NULL, 16);
    return 0;
}

static int rec_integer(const rec_jctx *c, const rec_field *f, const cJSON *v, double *out)
{
    double d;
    int is_null;
    if (rec_number(v, &d, &is_null) != 0 || is_null || !isfinite(d) || d != floor(d) || d < f->lo ||
        d > f->hi) {
        char what[96];
        snprintf(what, sizeof what, "an integer from %.0f to %.0f", f->lo, f->hi);
        return rec_expected(c, f, v, what);
    }
    *out = d;
    return 0;
}

/* An array of at most RECORD_MAX_ROUNDS finite numbers; their values are
 * checked with the other times (rec_times_bad). */
static int rec_get_rounds(const rec_jctx *c, const rec_field *f, const cJSON *v, record_rounds *rr)
{
    if (!cJSON_IsArray(v))
        return rec_expected(c, f, v, "an array of numbers");
    rr->n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, v)
    {
        double d;
        int is_null;
        if (rr->n >= RECORD_MAX_ROUNDS)
            return rec_jfail(c, f->group, f->name, "more than %d rounds", RECORD_MAX_ROUNDS);
        if (rec_number(e, &d, &is_null) != 0 || is_null || !isfinite(d))
            return rec_expected(c, f, e, "finite numbers");
        rr->us[rr->n++] = d;
    }
    return 0;
}

/* Decodes one member v into field f of r. */
static int rec_get_field(const rec_jctx *c, const rec_field *f, const cJSON *v, record *r)
{
    char *p = (char *)r + f->off;
    double d;
    int is_null;
    switch (f->type) {
    case RF_STR:
    case RF_TEXT: {
        if (!cJSON_IsString(v) || !v->valuestring)
            return rec_expected(c, f, v, "a string");
        const size_t len = strlen(v->valuestring);
        if (len >= f->size)
            return rec_jfail(c, f->group, f->name,
                             "text is %zu bytes, longer than the %zu this field holds", len,
                             f->size - 1);
        memcpy(p, v->valuestring, len + 1);
        return 0;
    }
    case RF_INT:
        if (rec_integer(c, f, v, &d) != 0)
            return -1;
        *(int *)p = (int)d;
        return 0;
    case RF_LONG:
        if (rec_integer(c, f, v, &d) != 0)
            return -1;
        *(long *)p = (long)d;
        return 0;
    case RF_DBL:
        /* An overflowing literal (1e999) is refused: what is read is always
         * finite or NaN, and so encodes back to the same text. */
        if (rec_number(v, &d, &is_null) != 0 || (!is_null && !isfinite(d)))
            return rec_expected(c, f, v, "a finite number or null");
        *(double *)p = is_null ? NAN : d;
        return 0;
    case RF_HEX64:
        if (!cJSON_IsString(v) || rec_parse_hex64(v->valuestring, (unsigned long long *)p) != 0)
            return rec_expected(c, f, v, "a hex string such as \"0x4\" (at most 16 digits)");
        return 0;
    case RF_ROUNDS:
        return rec_get_rounds(c, f, v, (record_rounds *)p);
    case RF_KIND:
        if (!cJSON_IsString(v) || record_kind_parse(v->valuestring, (record_kind *)p) != 0)
            return rec_expected(c, f, v, "\"kernel\" or \"baseline\"");
        return 0;
    case RF_STATUS:
        if (!cJSON_IsString(v) || record_status_parse(v->valuestring, (record_status *)p) != 0)
            return rec_expected(c, f, v,
                                "\"ok\", \"wrong\", \"crashed\", \"timeout\", \"compile_error\" "
                                "or \"implausible\"");
        return 0;
    case RF_FAMILY: {
        if (!cJSON_IsString(v) || !v->valuestring || !v->valuestring[0] ||
            strlen(v->valuestring) >= f->size)
            return rec_expected(c, f, v, "a kernel family name of 1 to 15 bytes (\"mma\")");
        memcpy(p, v->valuestring, strlen(v->valuestring) + 1);
        return 0;
    }
    case RF_SCHEMA:
        if (rec_number(v, &d, &is_null) == 0 && !is_null && d == floor(d) &&
            d > RECORD_SCHEMA_VERSION)
            return rec_jfail(c, f->group, f->name,
                             "record schema %.0f is newer than this fasweep (%s) reads (%d); "
                             "upgrade fasweep",
                             d, FASWEEP_VERSION, RECORD_SCHEMA_VERSION);
        return rec_integer(c, f, v, &d);
    }
    return -1;
}

static int rec_find_field(const char *group, const char *name)
{
    for (int i = 0; i < REC_NF; i++)
        if (rec_same_group(rec_fields[i].group, group) && strcmp(rec_fields[i].name, name) == 0)
            return i;
    return -1;
}

/* Index of the first field of group name, or -1 when name is no group. */
static int rec_find_group(const char *name)
{
    for (int i = 0; i < REC_NF; i++)
        if (rec_fields[i].group && strcmp(rec_fields[i].group, name) == 0)
            return i;
    return -1;
}

/* Decodes the members of one object (the top level or a group). seen[g]
 * flags group g (by its first field's index), seen[REC_NF + i] field i. */
static int rec_get_members(const rec_jctx *c, const char *group, const cJSON *obj, record *r,
                           unsigned char *seen)
{
    for (const cJSON *m = obj->child; m; m = m->next) {
        if (!m->string)
            return rec_jfail(c, group, "?", "a member without a name");
        if (!group) {
            const int g = rec_find_group(m->string);
            if (g >= 0) {
                if (seen[g]++)
                    return rec_jfail(c, NULL, m->string, "given twice");
                if (!cJSON_IsObject(m)) {
                    char got[128];
                    rec_got(m, got, sizeof got);
                    return rec_jfail(c, NULL, m->string, "expected an object, got %s", got);
                }
                if (rec_get_members(c, rec_fields[g].group, m, r, seen) != 0)
                    return -1;
                continue;
            }
        }
        const int i = rec_find_field(group, m->string);
        if (i < 0)
            return rec_jfail(c, group, m->string, "unknown key");
        if (seen[REC_NF + i]++)
            return rec_jfail(c, group, m->string, "given twice");
        if (rec_get_field(c, &rec_fields[i], m, r) != 0)
            return -1;
    }
    return 0;
}

/* An ok record's times: a finite median of at least RECORD_MIN_US (what it
 * is ranked by), and the other times finite and not negative (0: left
 * out); each round's median at least RECORD_MIN_US. */
static int rec_times_bad(const record *r, const char **field, double *got)
{
    const struct {
        const char *name;
        double v;
    } t[] = {{"time.median_us", r->time.median_us},
             {"time.min_us", r->time.min_us},
             {"time.mean_us", r->time.mean_us},
             {"time.stdev_us", r->time.stdev_us}};
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        if (!isfinite(t[i].v) || t[i].v < 0 || t[i].v > REC_MAX_US ||
            (i == 0 && t[i].v < RECORD_MIN_US)) {
            *field = t[i].name;
            *got = t[i].v;
            return 1;
        }
    for (int i = 0; i < r->time.round.n; i++)
        if (!isfinite(r->time.round.us[i]) || r->time.round.us[i] < RECORD_MIN_US ||
            r->time.round.us[i] > REC_MAX_US) {
            *field = "time.round_us";
            *got = r->time.round.us[i];
            return 1;
        }
    return 0;
}

/* An ok record's times agree with each other: the fastest sample is no
 * slower than the median or the mean (each when given, > 0). On failure
 * names the field and the two numbers. */
static int rec_times_inconsistent(const record *r, const char **field, double *got, double *bound)
{
    const double min = r->time.min_us;
    if (!(min > 0))
        return 0;
    if (min > r->time.median_us) {
        *field = "time.min_us";
        *got = min;
        *bound = r->time.median_us;
        return 1;
    }
    if (r->time.mean_us > 0 && min > r->time.mean_us) {
        *field = "time.min_us";
        *got = min;
        *bound = r->time.mean_us;
        return 1;
    }
    return 0;
}

/* The spreads of any record: cv a finite number >= 0 (or null: unknown),
 * noise likewise (null: no estimate). A negative spread would win every
 * merge and tie. */
static int rec_spread_bad(const record *r, const char **field, double *got)
{
    if (!isnan(r->time.cv) && !(isfinite(r->time.cv) && r->time.cv >= 0)) {
        *field = "time.cv";
        *got = r->time.cv;
        return 1;
    }
    if (!isnan(r->time.noise) && !(isfinite(r->time.noise) && r->time.noise >= 0)) {
        *field = "time.noise";
        *got = r->time.noise;
        return 1;
    }
    return 0;
}

/* A kernel record's config is a point of its family, by the planner's
 * rules: the family's own text (fa_config_parse_in), every axis value one
 * the family allows, and the family's static rules (without a shared
 * memory limit: that is the space's). A family this build does not know
 * cannot be checked (a store may hold records of a newer build); a
 * baseline's config is its free name. 0, or -1 with the reason in why. */
static int rec_config_bad(const record *r, char *why, size_t n)
{
    if (r->kind != RECORD_KIND_KERNEL)
        return 0;
    const int fam = fa_family_index(record_family(r));
    const fa_family *f = fa_family_get(fam);
    if (!f)
        return 0;
    fa_config c;
    if (fa_config_parse_in(fam, r->config, &c) != 0)
        return rec_err(why, n,
                       "\"%s\" is not a config of kernel family %s (its form: %s, each value a "
                       "plain decimal integer)",
                       r->config, f->name, f->text_example);
    char bad[160];
    if (fa_config_value_text(&c, bad, sizeof bad)) /* the one rule, kernels/family.h */
        return rec_err(why, n, "\"%s\": %s", r->config, bad);
    const int rej = f->check(&c, LONG_MAX);
    if (rej != FA_REJ_OK) {
        char text[160];
        f->reject_text(rej, &c, LONG_MAX, text, sizeof text);
        return rec_err(why, n, "\"%s\" is no point of kernel family %s: %s", r->config, f->name,
                       text);
    }
    return 0;
}

/* An interval is both bounds or neither (null, or both 0 as a zeroed
 * record has them), holds the median, and ends at most REC_CI_MAX_RATIO
 * times the median: every reader prints its half-width in percent
 * (100 * (hi - lo) / 2 / median), which a bound such as 1e308 overflows
 * to "inf". The engine's intervals are a few times the median at most
 * (store/rounds.c: relative spreads of at most 8 rounds, widened by
 * Student's t; a lower end that reaches zero is RECORD_MIN_US,
 * rounds_interval_us), so the limit refuses only hand-made numbers. */
#define REC_CI_MAX_RATIO 1e6
static int rec_ci_bad(const record *r)
{
    const double lo = r->time.ci_lo_us, hi = r->time.ci_hi_us, m = r->time.median_us;
    if ((isnan(lo) && isnan(hi)) || (lo == 0 && hi == 0))
        return 0;
    return !(isfinite(lo) && isfinite(hi) && lo >= RECORD_MIN_US && lo <= m && m <= hi &&
             hi <= REC_CI_MAX_RATIO * m);
}

/* Whether h is a kernel hash: 16 lower-case hex digits (FNV-1a 64, as
 * sweep/variant.c writes it). */
static int rec_hash_ok(const char *h)
{
    size_t i = 0;
    while (h[i] && ((h[i] >= '0' && h[i] <= '9') || (h[i] >= 'a' && h[i] <= 'f')))
        i++;
    return i == 16 && !h[i];
}

int record_is_variant(const record *r)
{
    return strncmp(r->build, RECORD_VARIANT_PREFIX, strlen(RECORD_VARIANT_PREFIX)) == 0;
}

/* A kernel variant's provenance: its build is the prefix and its source's
 * hash, the same hash is in kernel_hash, and kernel_path names the file; any
 * kernel_hash is a hash. What the seeds promise of a variant (its source,
 * its re-scoring command) rests on these. */
static int rec_provenance_bad(const record *r, char *field, size_t fn, char *why, size_t wn)
{
    if (r->kernel_hash[0] && !rec_hash_ok(r->kernel_hash)) {
        rec_err(field, fn, "provenance.kernel_hash");
        return rec_err(why, wn, "expected 16 lower-case hex digits, got \"%s\"", r->kernel_hash);
    }
    if (!record_is_variant(r))
        return 0;
    const char *h = r->build + strlen(RECORD_VARIANT_PREFIX);
    if (!rec_hash_ok(h)) {
        rec_err(field, fn, "key.build");
        return rec_err(why, wn,
                       "a variant's build is \"%s\" and 16 lower-case hex digits, got \"%s\"",
                       RECORD_VARIANT_PREFIX, r->build);
    }
    if (strcmp(h, r->kernel_hash) != 0) {
        rec_err(field, fn, "provenance.kernel_hash");
        return rec_err(why, wn, "a variant (build %s) needs kernel_hash \"%s\", got \"%s\"",
                       r->build, h, r->kernel_hash);
    }
    if (!r->kernel_path[0]) {
        rec_err(field, fn, "provenance.kernel_path");
        return rec_err(why, wn, "a variant (build %s) needs the path of its source", r->build);
    }
    return 0;
}

/* The one validation of a record, whether it was read from JSON or made
 * by the engine: key fields (rec_key_field_bad), a known mode, status and
 * kind, every text field NUL-terminated, names text_bad-clean and free
 * text valid UTF-8, and an ok record with finite, positive times. On
 * failure, field gets the field ("key.device") and why the
 * reason. */
static int rec_valid(const record *r, char *field, size_t fn, char *why, size_t wn)
{
    const char *fam = rec_family_bad(r);
    if (fam) {
        rec_err(field, fn, "key.family");
        return rec_err(why, wn, "%s", fam);
    }
    for (int i = 0; i < REC_N_KEY; i++) {
        char w[64];
        const char *bad = rec_key_field_bad((const char *)r + rec_key_fields[i].off,
                                            rec_key_fields[i].size, w, sizeof w);
        if (bad) {
            rec_err(field, fn, "key.%s", rec_key_fields[i].name);
            return rec_err(why, wn, "%s", bad);
        }
    }
    if (!record_mode_known(r->mode)) {
        rec_err(field, fn, "key.mode");
        return rec_err(why, wn, "expected one of %s (the L2 modes fasweep measures), got \"%s\"",
                       RECORD_MODES_TEXT, r->mode);
    }
    if ((int)r->status < 0 || (int)r->status >= REC_N_STATUS) {
        rec_err(field, fn, "status");
        return rec_err(why, wn, "%d is not a record_status", (int)r->status);
    }
    if ((int)r->kind < 0 || (int)r->kind >= REC_N_KIND) {
        rec_err(field, fn, "kind");
        return rec_err(why, wn, "%d is not a record_kind", (int)r->kind);
    }
    for (int i = 0; i < REC_NF; i++) {
        const rec_field *f = &rec_fields[i];
        if (f->type != RF_STR && f->type != RF_TEXT)
            continue;
        const char *p = (const char *)r + f->off;
        const char *end = memchr(p, '\0', f->size);
        const char *bad = !end                 ? "is not NUL-terminated within its array"
                          : f->type == RF_TEXT ? text_bad_utf8(p, (size_t)(end - p))
                                               : text_bad(p, (size_t)(end - p));
        if (bad) {
            if (f->group)
                rec_err(field, fn, "%s.%s", f->group, f->name);
            else
                rec_err(field, fn, "%s", f->name);
            return rec_err(why, wn, "%s", bad);
        }
    }
    if (rec_config_bad(r, why, wn) != 0)
        return rec_err(field, fn, "key.config");
    const char *tf;
    double got, bound;
    if (r->status == RECORD_ST_OK && rec_times_bad(r, &tf, &got)) {
        rec_err(field, fn, "%s", tf);
        return rec_err(why, wn,
                       "an ok record needs a median_us of at least %g and times from 0 to %g "
                       "us, got %g",
                       RECORD_MIN_US, REC_MAX_US, got);
    }
    if (r->status == RECORD_ST_OK && rec_times_inconsistent(r, &tf, &got, &bound)) {
        rec_err(field, fn, "%s", tf);
        return rec_err(why, wn,
                       "%g is slower than the median or mean %g; the fastest sample cannot be", got,
                       bound);
    }
    if (rec_spread_bad(r, &tf, &got)) {
        rec_err(field, fn, "%s", tf);
        return rec_err(why, wn, "a spread must be a finite number >= 0 (or null), got %g", got);
    }
    if (r->time.round.n < 0 || r->time.round.n > RECORD_MAX_ROUNDS) {
        rec_err(field, fn, "time.round_us");
        return rec_err(why, wn, "holds %d rounds, not 0 to %d", r->time.round.n, RECORD_MAX_ROUNDS);
    }
    if (r->status == RECORD_ST_OK && rec_ci_bad(r)) {
        rec_err(field, fn, "time.ci_lo_us");
        return rec_err(why, wn,
                       "the interval %g..%g must be two numbers of at least %g around median_us "
                       "%g, the upper at most %g times it (or both null: no interval)",
                       r->time.ci_lo_us, r->time.ci_hi_us, RECORD_MIN_US, r->time.median_us,
                       REC_CI_MAX_RATIO);
    }
    if (!(r->timestamp >= 0 && r->timestamp <= REC_MAX_TIMESTAMP)) {
        rec_err(field, fn, "provenance.timestamp");
        return rec_err(why, wn,
                       "%.0f is not a time from 1970 to the end of year 9999 (Unix seconds)",
                       r->timestamp);
    }
    return rec_provenance_bad(r, field, fn, why, wn);
}

/* What a record's left-out fields read as: 0, the integers' own defaults
 * (clocks and throttled -1: unknown), and a NaN noise: no estimate, which
 * loses a merge (record_better) and ranks after any estimate. */
static void rec_defaults(record *r)
{
    memset(r, 0, sizeof *r);
    r->time.noise = NAN;
    r->time.ci_lo_us = r->time.ci_hi_us = NAN;
    snprintf(r->family, sizeof r->family, "%s", RECORD_FAMILY_DEFAULT);
    for (int i = 0; i < REC_NF; i++) {
        const rec_field *f = &rec_fields[i];
        if (f->type == RF_INT)
            *(int *)((char *)r + f->off) = (int)f->def;
    }
}

int record_from_json(const cJSON *j, record *out, char *err, size_t errlen)
{
    const rec_jctx c = {err, errlen};
    if (!out)
        return rec_err(err, errlen, "no record to decode into");
    if (!cJSON_IsObject(j)) {
        char got[128];
        rec_got(j, got, sizeof got);
        rec_err(err, errlen, "expected a JSON object (one record), got %s", j ? got : "nothing");
        return -1;
    }
    record r;
    rec_defaults(&r);
    unsigned char seen[2 * REC_NF];
    memset(seen, 0, sizeof seen);
    if (rec_get_members(&c, NULL, j, &r, seen) != 0)
        return -1;
    for (int i = 0; i < REC_NF; i++)
        if (rec_fields[i].required && !seen[REC_NF + i])
            return rec_jfail(&c, rec_fields[i].group, rec_fields[i].name,
                             "missing; every record needs key.device, key.problem, key.build, "
                             "key.config, key.mode, kind and status"),
                   -1;
    char field[48], why[320];
    if (rec_valid(&r, field, sizeof field, why, sizeof why) != 0)
        return rec_err(err, errlen, "%s: %s", field, why);
    *out = r;
    return 0;
}

int record_check(const record *r, char *why, size_t n)
{
    char field[48], reason[320];
    if (rec_valid(r, field, sizeof field, reason, sizeof reason) != 0)
        return rec_err(why, n, "%s %s", field, reason);
    return 0;
}

/* ---- the merge rule ------------------------------------------------------------------------ */

int record_better(const record *a, const record *b)
{
    const int a_ok = a->status == RECORD_ST_OK, b_ok = b->status == RECORD_ST_OK;
    if (a_ok != b_ok)
        return a_ok;
    if (a_ok) {
        /* An interval beats none; then the narrower interval (relative), then
         * (two records without one) the lower noise, NaN losing to any number. */
        const int ac = record_has_ci(a), bc = record_has_ci(b);
        if (ac != bc)
            return ac;
        if (ac) {
            const double wa = (a->time.ci_hi_us - a->time.ci_lo_us) / a->time.median_us;
            const double wb = (b->time.ci_hi_us - b->time.ci_lo_us) / b->time.median_us;
            if (wa != wb)
                return wa < wb;
        }
        const int an = isnan(a->time.noise), bn = isnan(b->time.noise);
        if (an != bn)
            return bn;
        if (!an && a->time.noise != b->time.noise)
            return a->time.noise < b->time.noise;
        if (a->time.samples != b->time.samples)
            return a->time.samples > b->time.samples;
    }
    /* Two failures, or two equal measurements: the later attempt. */
    return a->timestamp > b->timestamp;
}

/* ---- the ranking order and its tie rule ---------------------------------------------------- */

/* NaN after every number; two NaNs equal. */
static int rec_cmp_num(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) - isnan(b);
    return (a > b) - (a < b);
}

int record_rank_order(double median_a, double noise_a, const char *config_a, double median_b,
                      double noise_b, const char *config_b)
{
    int c = rec_cmp_num(median_a, median_b);
    if (!c)
        c = rec_cmp_num(noise_a, noise_b);
    return c ? c : strcmp(config_a, config_b);
}

int record_has_ci(const record *r)
{
    return isfinite(r->time.ci_lo_us) && isfinite(r->time.ci_hi_us) && r->time.ci_lo_us > 0;
}

double record_ci_half(const record *r, double other_us)
{
    if (!record_has_ci(r))
        return NAN;
    const double m = r->time.median_us;
    return (other_us >= m ? r->time.ci_hi_us - m : m - r->time.ci_lo_us) / m;
}

record_tie_t record_tie(const record *a, const record *b)
{
    if (!record_has_ci(a) || !record_has_ci(b))
        return RECORD_TIE_UNKNOWN; /* no interval: the rule cannot tell */
    const double ma = a->time.median_us, mb = b->time.median_us;
    const double ha = record_ci_half(a, mb) * ma, hb = record_ci_half(b, ma) * mb;
    return fabs(ma - mb) <= hypot(ha, hb) ? RECORD_TIE_YES : RECORD_TIE_NO;
}

const char *record_tie_name(record_tie_t t)
{
    return t == RECORD_TIE_YES ? "yes" : t == RECORD_TIE_NO ? "no" : "unknown";
}
