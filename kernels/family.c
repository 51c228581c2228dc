/* family.c - the family table and the config text (contracts: family.h,
 * fa_config.h). Adding a family adds one line to fam_table. */
#include "family.h"

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

int fa_config_format(const fa_config *c, char *buf, unsigned long n)
{
    const fa_family *f = fa_family_of(c);
    if (!f || c->dtype < 0 || c->dtype >= FA_DTYPE_COUNT)
        return snprintf(buf, n, "?");
    const int k = f->format(c, buf, n);
    if (k < 0 || (unsigned long)k >= n)
        return k;
    const int m = snprintf(buf + k, n - (unsigned long)k, "%s", fa_dtype_suffix[c->dtype]);
    return m < 0 ? m : k + m;
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
    if (f->parse(text, &t) != 0)
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
    const fa_family *f = fa_family_of(c);
    if (!f)
        return 0;
    int v[FA_CONFIG_SLOTS];
    fa_config_slots(c, v);
    for (int i = 1; i < FA_CONFIG_SLOTS; i++)
        if (fa_axis_value_why(&f->axes[i], v[i]))
            return i;
    return 0;
}

int fa_config_parse(const char *s, fa_config *c)
{
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
        fa_config_value_bad(&t))
        return -1;
    *c = t;
    return 0;
}
