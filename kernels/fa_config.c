/* fa_config.c - text form of kernel configs (contract: fa_config.h). */
#include "fa_config.h"

#include <stdio.h>
#include <string.h>

int fa_config_format(const fa_config *c, char *buf, unsigned long n)
{
    return snprintf(buf, n, "d%d.m%d.n%d.w%d.s%d.z%d", c->head_dim, c->block_m, c->block_n,
                    c->num_warps, c->stages, c->swizzle);
}

int fa_config_parse(const char *s, fa_config *c)
{
    fa_config t;
    int used = 0;
    if (sscanf(s, "d%d.m%d.n%d.w%d.s%d.z%d%n", &t.head_dim, &t.block_m, &t.block_n, &t.num_warps,
               &t.stages, &t.swizzle, &used) != 6 ||
        s[used] != '\0')
        return -1;
    /* Round trip: rejects leading zeros, signs and spaces sscanf accepts. */
    char back[64];
    fa_config_format(&t, back, sizeof back);
    if (strcmp(back, s) != 0)
        return -1;
    *c = t;
    return 0;
}
