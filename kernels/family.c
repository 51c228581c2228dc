/* family.c - the family table and the config text (contracts: family.h,
 * fa_config.h). Adding a family adds one line to fam_table. */
#include "family.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

extern const fa_family mma_family, wgmma_family;

/* Index = the family's id in fa_config.family; mma first: the default.
 * Append only (FA_FAMILY_MMA 0, FA_FAMILY_WGMMA 1). */
static const fa_family *const fam_table[] = {&mma_family, &wgmma_family};
#define FAM_N ((int)(sizeof fam_table / sizeof *fam_table))

int fa_family_count(void)
{
    return FAM_N;
}

const fa_family *fa_family_get(int i)
{
    return i >= 0 && i < FAM_N ? fam_table[i] : NULL;
}

int fa_family_index(const char *name)
{
    for (int i = 0; name && i < FAM_N; i++)
        if (strcmp(fam_table[i]->name, name) == 0)
            return i;
    return -1;
}

const fa_family *fa_family_of(const fa_config *c)
{
    return fa_family_get(c->family);
}

const char *fa_family_names(void)
{
    /* Per thread: filled on first use, and the engine's threads may ask. */
    static _Thread_local char names[256];
    if (!names[0])
        for (int i = 0, used = 0; i < FAM_N; i++)
            used += snprintf(names + used, sizeof names - (size_t)used, "%s%s", i ? ", " : "",
                             fam_table[i]->name);
    return names;
}

/* The dtype's suffix of a config text: none for fp16 (so every text written
 * before dtypes reads as fp16), ".bf16" for bf16. */
static const char *const fa_dtype_suffix[FA_DTYPE_COUNT] = {"", ".bf16"};

const char *fa_dtype_name(int dtype)
{
    static const char *const names[FA_DTYPE_COUNT] = {"fp16", "bf16"};
    return dtype >= 0 && dtype < FA_DTYPE_COUNT ? names[dtype] : NULL;
}

/* Writes pre, then the tag and value of each slot of c joined by sep: the
 * one form of a config's text ('.') and of its symbol ('_'). */
static int fa_slots_text(const fa_family *f, const fa_config *c, const char *pre, char sep,
                         char *buf, unsigned long n)
{
    int v[FA_CONFIG_SLOTS];
    fa_config_slots(c, v);
    int k = snprintf(buf, n, "%s", pre);
    for (int i = 0; i < FA_CONFIG_SLOTS && k >= 0; i++) {
        const unsigned long at = (unsigned long)k < n ? (unsigned long)k : n;
        const int m = i ? snprintf(buf + at, n - at, "%c%s%d", sep, f->axes[i].tag, v[i])
                        : snprintf(buf + at, n - at, "%s%d", f->axes[i].tag, v[i]);
        k = m < 0 ? m : k + m;
    }
    return k;
}

int fa_config_format(const fa_config *c, char *buf, unsigned long n)
{
    const fa_family *f = fa_family_of(c);
    if (!f || c->dtype < 0 || c->dtype >= FA_DTYPE_COUNT)
        return snprintf(buf, n, "?");
    const int k = fa_slots_text(f, c, "", '.', buf, n);
    if (k < 0 || (unsigned long)k >= n)
        return k;
    const int m = snprintf(buf + k, n - (unsigned long)k, "%s", fa_dtype_suffix[c->dtype]);
    return m < 0 ? m : k + m;
}

int fa_config_symbol(const fa_config *c, char *buf, unsigned long n)
{
    const fa_family *f = fa_family_of(c);
    if (!f || c->dtype < 0 || c->dtype >= FA_DTYPE_COUNT)
        return snprintf(buf, n, "?");
    char pre[64];
    const int plain = c->dtype == FA_DTYPE_FP16; /* what every symbol was before dtypes */
    snprintf(pre, sizeof pre, "%s%s%s", f->symbol_prefix, plain ? "" : fa_dtype_name(c->dtype),
             plain ? "" : "_");
    return fa_slots_text(f, c, pre, '_', buf, n);
}

int fa_config_instance(const fa_config *c, char *buf, unsigned long n)
{
    const fa_family *f = fa_family_of(c);
    if (!f || c->dtype < 0 || c->dtype >= FA_DTYPE_COUNT)
        return snprintf(buf, n, "?");
    int v[FA_CONFIG_SLOTS];
    fa_config_slots(c, v);
    return snprintf(buf, n, "%s%s(%d, %d, %d, %d, %d, %d)", f->instance_macro,
                    c->dtype == FA_DTYPE_BF16 ? "_BF16" : "", v[0], v[1], v[2], v[3], v[4], v[5]);
}

/* An int exactly as "%d" writes it (an optional '-', no leading zero, no
 * "-0", within int): its value and the text after it, or NULL. A value
 * no axis allows is then refused by fa_config_value_bad, in its words. */
static const char *fa_parse_int(const char *s, int *v)
{
    const int neg = *s == '-';
    s += neg;
    if (*s < '0' || *s > '9' || (s[0] == '0' && (neg || (s[1] >= '0' && s[1] <= '9'))))
        return NULL;
    long x = 0;
    for (; *s >= '0' && *s <= '9'; s++)
        if ((x = x * 10 + (*s - '0')) > (long)INT_MAX + neg)
            return NULL;
    *v = (int)(neg ? -x : x);
    return s;
}

/* Exactly what fa_slots_text writes with '.': each slot's tag, then its
 * value (fills the slots only). */
static int fa_slots_parse(const fa_family *f, const char *s, fa_config *c)
{
    for (int i = 0; i < FA_CONFIG_SLOTS; i++) {
        const size_t tl = strlen(f->axes[i].tag);
        int v;
        if ((i && *s++ != '.') || strncmp(s, f->axes[i].tag, tl) != 0 ||
            !(s = fa_parse_int(s + tl, &v)))
            return -1;
        fa_config_set_slot(c, i, v);
    }
    return *s ? -1 : 0;
}

int fa_config_parse_in(int family, const char *s, fa_config *c)
{
    const fa_family *f = fa_family_get(family);
    if (!f)
        return -1;
    /* The dtype suffix, then the family's own text before it. */
    char text[128];
    const size_t len = strlen(s);
    int dtype = FA_DTYPE_FP16;
    for (int d = 1; d < FA_DTYPE_COUNT; d++) {
        const size_t sl = strlen(fa_dtype_suffix[d]);
        if (len > sl && strcmp(s + len - sl, fa_dtype_suffix[d]) == 0)
            dtype = d;
    }
    const size_t body = len - strlen(fa_dtype_suffix[dtype]);
    if (body >= sizeof text)
        return -1;
    memcpy(text, s, body);
    text[body] = '\0';
    fa_config t = {0};
    if (fa_slots_parse(f, text, &t) != 0)
        return -1;
    t.family = family;
    t.dtype = dtype;
    *c = t;
    return 0;
}

const char *fa_axis_value_why(const fa_axis *ax, long v)
{
    if (v < ax->lo || (ax->step > 1 && v % ax->step != 0) ||
        (ax->set && (v < 0 || v >= 64 || !(ax->set & (1ULL << v)))))
        return ax->what;
    if (v > ax->hi)
        return ax->over ? ax->over : ax->what;
    return NULL;
}

int fa_config_value_bad(const fa_config *c)
{
    return fa_config_value_text(c, NULL, 0);
}

int fa_config_value_text(const fa_config *c, char *buf, unsigned long n)
{
    const fa_family *f = fa_family_of(c);
    if (!f)
        return 0;
    int v[FA_CONFIG_SLOTS];
    fa_config_slots(c, v);
    for (int i = 1; i < FA_CONFIG_SLOTS; i++) {
        const char *why = fa_axis_value_why(&f->axes[i], v[i]);
        if (why) {
            if (n)
                snprintf(buf, n, "%s is %d, expected %s", f->axes[i].name, v[i], why);
            return i;
        }
    }
    return 0;
}

int fa_config_parse(const char *s, fa_config *c)
{
    return fa_config_parse_why(s, c, NULL, 0);
}

int fa_config_parse_why(const char *s, fa_config *c, char *why, unsigned long n)
{
    if (n)
        why[0] = '\0';
    const char *colon = strchr(s, ':');
    int fam = FA_FAMILY_DEFAULT;
    if (colon) {
        char name[FA_FAMILY_NAME_LEN];
        const size_t len = (size_t)(colon - s);
        if (len == 0 || len >= sizeof name)
            return -1;
        memcpy(name, s, len);
        name[len] = '\0';
        fam = fa_family_index(name);
    }
    fa_config t;
    if (fam < 0 || fa_config_parse_in(fam, colon ? colon + 1 : s, &t) != 0 ||
        fa_config_value_text(&t, why, n))
        return -1;
    *c = t;
    return 0;
}
