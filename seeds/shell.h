/* shell.h - a command as one line a POSIX shell reads back as the same
 * argv: what the seeds' eval commands (`command`, `source_command`) are.
 *
 * A word of only the bytes [A-Za-z0-9._,/:=+@%-] is written as it is;
 * any other word (the empty one too) in single quotes, each ' in it
 * written '\''. Words are joined by one space. A line longer than its
 * buffer is cut at the end (the caller's buffer is sized for it).
 */
#ifndef SHELL_H
#define SHELL_H

#include <stddef.h>

/* Appends the word w to the command line in buf (n bytes, a string: "" to
 * start), after a space unless buf is empty, quoted when it needs to be. */
void shell_word(char *buf, size_t n, const char *w);

#endif /* SHELL_H */
