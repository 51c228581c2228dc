/* shell.c - shell quoting of a command line (contract: shell.h). */
#include "shell.h"

#include <stdio.h>
#include <string.h>

/* Appends text to the string in buf (n bytes), cut at the end. */
static void shell_append(char *buf, size_t n, const char *text)
{
    const size_t len = strlen(buf);
    snprintf(buf + len, n - len, "%s", text);
}

void shell_word(char *buf, size_t n, const char *w)
{
    if (buf[0])
        shell_append(buf, n, " ");
    if (*w &&
        strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._,/:=+-@%") ==
            strlen(w)) {
        shell_append(buf, n, w);
        return;
    }
    shell_append(buf, n, "'");
    for (const char *p = w; *p; p++) {
        const char c[2] = {*p, '\0'};
        shell_append(buf, n, *p == '\'' ? "'\\''" : c);
    }
    shell_append(buf, n, "'");
}
