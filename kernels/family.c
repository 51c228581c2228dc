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

int fa_config_format(const fa_config *c, char *buf, unsigned long n)
{
    const fa_family *f = fa_family_of(c);
    return f ? f->format(c, buf, n) : snprintf(buf, n, "?");
}

int fa_config_parse_in(int family, const char *s, fa_config *c)
{
    const fa_family *f = fa_family_get(family);
    fa_config t = {0};
    if (!f || f->parse(s, &t) != 0)
        return -1;
    t.family = family;
    *c = t;
    return 0;
}

int fa_config_parse(const char *s, fa_config *c)
{
    const char *colon = strchr(s, ':');
    if (!colon)
        return fa_config_parse_in(FA_FAMILY_DEFAULT, s, c);
    char name[FA_FAMILY_NAME_LEN];
    const size_t len = (size_t)(colon - s);
    if (len == 0 || len >= sizeof name)
        return -1;
    memcpy(name, s, len);
    name[len] = '\0';
    const int fam = fa_family_index(name);
    return fam < 0 ? -1 : fa_config_parse_in(fam, colon + 1, c);
}
