/* cli.h - what the command files (cli/cmd_*.c) share: the commands, the
 * option table every command is parsed with, the exit codes, and the
 * helpers for stores, plans and output. The command line only parses and
 * calls the modules; nothing here measures, ranks or stores by itself.
 *
 * Conventions: data on stdout, diagnostics on stderr with a "fasweep: "
 * prefix. Exit status 0 success, 1 failure (no GPU, missing store, nothing
 * found, interrupted, write error), 2 usage or input error (unknown command
 * or option, missing or bad value, bad space file, bad import line).
 */
#ifndef CLI_H
#define CLI_H

#include <stddef.h>
#include <stdio.h>

#include "../store/store.h"
#include "../grid/plan.h"
#include "../grid/space.h"

#define CLI_OK 0
#define CLI_FAIL 1
#define CLI_USAGE 2

#define CLI_DEFAULT_STORE "results.lmdb"

/* One command: `fasweep NAME ...` runs fn(argc, argv) with argv[0] = NAME. */
typedef struct cli_command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *usage; /* `fasweep NAME --help` */
} cli_command;

/* cmd_space.c: plan, grid, list, version. cmd_eval.c: eval. cmd_store.c:
 * topk, import, merge, show. cmd_export.c: export. cmd_report.c: report. */
extern const cli_command cmd_plan, cmd_grid, cmd_list, cmd_version, cmd_eval;
extern const cli_command cmd_topk, cmd_export, cmd_import, cmd_merge, cmd_show, cmd_report;

/* The command being run (main.c sets it), for its messages. */
extern const cli_command *cli_current;

/* ---- the option table ---------------------------------------------------------------------- */

typedef enum cli_kind {
    CLI_FLAG,    /* no value; *(int *)out = 1 */
    CLI_STR,     /* any text; *(const char **)out */
    CLI_PATH,    /* non-empty text; *(const char **)out */
    CLI_INT,     /* a whole decimal number in [lo, hi]; *(int *)out */
    CLI_PROBLEM, /* "4,8,512,64" or "b4.h8.s512.d64.nc"; (cli_problem *)out, canonical text */
    CLI_MODE     /* a mode fasweep measures (record_mode_known); *(const char **)out */
} cli_kind;

typedef struct cli_problem {
    char text[48]; /* space_problem_format text */
    int set;
} cli_problem;

typedef struct cli_opt {
    const char *name; /* long name without "--", or NULL for a short-only option */
    char letter;      /* short name ('k' for -k), or 0 */
    cli_kind kind;
    void *out;
    long lo, hi; /* CLI_INT range */
} cli_opt;

/* Parses argv[1..] against opts (a table ended by {NULL, 0}; --help and -h
 * are always known). Values are checked as their kind says; the first bad
 * one is a usage error naming the option ("-k wants an integer from 1 to
 * ..., got 'abc'"). Returns -1 to go on, with *first the index of the first
 * positional argument, else the exit status to return now (usage printed:
 * 0; usage error: 2). */
int cli_parse(int argc, char **argv, const cli_opt *opts, int *first);

/* Positional arguments: exactly none. Returns 0, or a usage error. */
int cli_no_args(int argc, char **argv, int first);

/* ---- messages -------------------------------------------------------------------------------- */

/* "fasweep: ..." on stderr. */
void cli_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "fasweep CMD: ...\n(see `fasweep CMD --help`)" on stderr; returns 2. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A command's exit status once its output is out: whatever stdout still
 * buffers is flushed, and a write error (a full disk, a closed pipe,
 * /dev/full) makes a successful command fail (1) with a message, so no
 * output is lost silently. */
int cli_finish(int rc);

/* Writes FILE through write(out, ctx) (which returns an exit status after
 * its own message) with file_write (store/file.h: atomic for a regular or
 * new file or a link's target, straight through for a device or FIFO, no
 * temp file left behind on failure or a signal). Returns the exit status:
 * write's, or 1 after a message when writing failed. */
int cli_write_file(const char *file, int (*write)(FILE *out, void *ctx), void *ctx);

/* Prints a cJSON document (and frees it): 0, or 1 after a message. */
struct cJSON;
int cli_emit_json(struct cJSON *doc);

/* ---- stores and plans ---------------------------------------------------------------------- */

/* The store: --store PATH, else $FASWEEP_STORE, else ./results.lmdb. */
const char *cli_store_path(const char *opt);

/* Opens the store; a read-only open of a store that does not exist is a
 * clear failure instead of an LMDB error. NULL after printing why. */
store *cli_open_store(const char *path, int read_only);

/* "fasweep: WHAT failed: ..." for a store error; returns 1. */
int cli_store_fail(store *s, int rc, const char *what);

/* Loads a space and builds its plan against this binary's instances.
 * Returns 0, or the exit status after printing why. */
int cli_load_plan(const char *path, space *s, plan *p);

#endif /* CLI_H */
