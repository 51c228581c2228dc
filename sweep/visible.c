/* visible.c - CUDA_VISIBLE_DEVICES's rule (contract: visible.h). */
#include "visible.h"

#include <string.h>

/* The entry at p (up to the next comma) without the blanks around it: p[*i..*j). Returns
 * the entry's length with them. */
static size_t visible_span(const char *p, size_t *i, size_t *j)
{
    const size_t len = strcspn(p, ",");
    *i = 0;
    *j = len;
    while (*i < *j && (p[*i] == ' ' || p[*i] == '\t'))
        ++*i;
    while (*j > *i && (p[*j - 1] == ' ' || p[*j - 1] == '\t'))
        --*j;
    return len;
}

int visible_count(const char *v, int n)
{
    int count = 0;
    for (const char *p = v;; p++) {
        size_t i, j;
        const size_t len = visible_span(p, &i, &j);
        size_t d = i;
        long idx = 0;
        while (d < j && d - i < 9 && p[d] >= '0' && p[d] <= '9')
            idx = 10 * idx + (p[d++] - '0');
        const int ordinal = d > i && d == j;
        const int uuid =
            j - i > 4 && (strncmp(p + i, "GPU-", 4) == 0 || strncmp(p + i, "MIG-", 4) == 0);
        if (ordinal ? n > 0 && idx >= n : !uuid)
            break;
        count++;
        p += len;
        if (!*p)
            break;
    }
    return n > 0 && count > n ? n : count;
}

int visible_entry(const char *v, int k, char *out, size_t n)
{
    if (!v || k < 0 || n == 0)
        return -1;
    const char *p = v;
    size_t i, j;
    for (int e = 0; e < k; e++) {
        p += visible_span(p, &i, &j);
        if (!*p)
            return -1;
        p++; /* the comma */
    }
    visible_span(p, &i, &j);
    if (j - i >= n)
        return -1;
    memcpy(out, p + i, j - i);
    out[j - i] = '\0';
    return 0;
}
