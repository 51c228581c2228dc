/* testoom.h - a malloc that fails on demand, for the tests that show a
 * document is built whole or not at all under any allocation failure
 * (cJSON_InitHooks with tu_oom_malloc). Set tu_oom.left to the number of
 * allocations to grant before one is refused (-1: never); tu_oom.refused
 * says whether one was. */
#ifndef TESTOOM_H
#define TESTOOM_H

#include <stdlib.h>

static struct {
    long left;   /* allocations left before one fails; -1: never */
    int refused; /* an allocation was refused */
} tu_oom = {-1, 0};

static void *tu_oom_malloc(size_t n)
{
    if (tu_oom.left == 0) {
        tu_oom.refused = 1;
        return NULL;
    }
    if (tu_oom.left > 0)
        tu_oom.left--;
    return malloc(n);
}

#endif /* TESTOOM_H */
