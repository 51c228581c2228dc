/* emit.h - how the commands print their data on stdout: every JSON
 * document through emit_json (pretty, one document) or emit_json_line (one
 * line, for a stream of records: `fasweep eval --json`), built with
 * store/json.h (one out-of-memory flag: a NULL document is one message and
 * a failure, never a partial line), every text table row through emit_row,
 * so the format rules live in one place: JSON as cJSON prints it ending in
 * a newline, table cells padded to their column, no trailing blanks.
 * Write errors are not checked here: cli_finish checks stdout once, at the
 * end of every command.
 */
#ifndef EMIT_H
#define EMIT_H

#include <stdio.h>

struct cJSON;

/* Prints doc pretty on stdout and frees it (doc NULL: out of memory while
 * building it). Returns 0, or 1 after a message. */
int emit_json(struct cJSON *doc);

/* The same as one line (a JSON-lines stream). */
int emit_json_line(struct cJSON *doc);

/* One column of a text table: its heading, width (cells are padded to it:
 * right-aligned, or left-aligned when left; 0 for the last, unpadded) and
 * the blanks before it (0 for the first column). */
typedef struct emit_col {
    const char *head;
    int width, left, gap;
} emit_col;

/* Prints one row of n cells (cells NULL: the headings) to out. */
void emit_row(FILE *out, const emit_col *cols, int n, const char *const *cells);

#endif /* EMIT_H */
