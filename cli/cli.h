/* cli.h - what the command files (cli/cmd_*.c) share: the commands, the
 * option table every command is parsed with and every help text is made
 * from, the exit codes, and the helpers for stores, plans and output files
 * (printing to stdout: emit.h). The command line only parses and
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

/* ---- the option table ---------------------------------------------------------------------- */

typedef enum cli_kind {
    CLI_FLAG,    /* no value; int field = 1 */
    CLI_STR,     /* any text; const char * field */
    CLI_PATH,    /* non-empty text; const char * field */
    CLI_INT,     /* a whole decimal number in [lo, hi]; int field */
    CLI_PROBLEM, /* "4,8,512,64" or "b4.h8.s512.d64.nc"; cli_problem field, canonical text */
    CLI_MODE,    /* a mode fasweep measures (record_mode_known); const char * field */
    CLI_REFUSED  /* an old spelling: refused (exit 2) with help as the message; not listed */
} cli_kind;

typedef struct cli_problem {
    char text[48]; /* space_problem_format text */
    int set;
} cli_problem;

/* One option of a command: how it is spelt and parsed, where its value
 * goes (a field of the command's argument struct, CLI_AT), and how --help
 * and docs/cli.md describe it. The table is the only description of an
 * option: `fasweep CMD --help`, `fasweep help --markdown` and the parser
 * all read it. */
typedef struct cli_opt {
    const char *name; /* long name without "--", or NULL for a short-only option */
    char letter;      /* short name ('k' for -k), or 0 */
    cli_kind kind;
    size_t at;         /* CLI_AT(args type, field) */
    long lo, hi;       /* CLI_INT range */
    const char *value; /* the value's name in help ("FILE", "N"); NULL for a flag */
    const char *help;  /* what it does and its default; may hold '\n' (a new help line) */
} cli_opt;

#define CLI_AT(type, field) offsetof(type, field)

/* One command: `fasweep NAME ...` runs fn(argc, argv) with argv[0] = NAME.
 * Everything `fasweep NAME --help`, `fasweep --help` and docs/cli.md say
 * about it is here. */
typedef struct cli_command {
    const char *name;
    const char *summary; /* one line for `fasweep --help`; NULL for a hidden command */
    const char *usage;   /* what follows "fasweep NAME": its positional arguments and
                            required options, one form per line ('\n' between) */
    const char *about;   /* what it does, lines of at most 88 columns, paragraphs
                            separated by an empty line */
    const cli_opt *opts; /* ended by an entry with neither name nor letter */
    const char *exit;    /* "0 ok, 1 ..., 2 ...": what each exit status means */
    int (*fn)(int argc, char **argv);
} cli_command;

/* Defines NAME_main, the fn of a command: its args (type) start as the
 * designated initializers that follow (0 for none), the command line is
 * parsed into them, and run(&args, n, pos) gets the n positional arguments
 * pos; CLI_MAIN_NO_ARGS refuses any positional argument and calls
 * run(&args). A parse that ends the command (help, usage error) returns its
 * status; else run's is returned. */
#define CLI_MAIN(NAME, type, run, ...)                                                             \
    static int NAME##_main(int argc, char **argv)                                                  \
    {                                                                                              \
        type a = {__VA_ARGS__};                                                                    \
        int first;                                                                                 \
        const int rc = cli_parse(argc, argv, &a, &first);                                          \
        return rc >= 0 ? rc : run(&a, argc - first, argv + first);                                 \
    }
#define CLI_MAIN_NO_ARGS(NAME, type, run, ...)                                                     \
    static int NAME##_main(int argc, char **argv)                                                  \
    {                                                                                              \
        type a = {__VA_ARGS__};                                                                    \
        const int rc = cli_parse_no_args(argc, argv, &a);                                          \
        return rc >= 0 ? rc : run(&a);                                                             \
    }

/* Defines the command `fasweep NAME` as cmd_NAME, run by NAME_main with
 * the table NAME_opts (the names every command file uses); the rest
 * (.summary, .usage, .about, .exit) follows as designated initializers. */
#define CLI_COMMAND(NAME, ...)                                                                     \
    const cli_command cmd_##NAME = {                                                               \
        .name = #NAME, .opts = NAME##_opts, .fn = NAME##_main, __VA_ARGS__}

/* cmd_space.c: plan, problem, grid, list, version. cmd_eval.c: eval. cmd_store.c:
 * topk, import, merge, show. cmd_export.c: export. cmd_report.c: report.
 * main.c: help. */
extern const cli_command cmd_plan, cmd_grid, cmd_list, cmd_version, cmd_eval;
extern const cli_command cmd_topk, cmd_export, cmd_import, cmd_merge, cmd_show, cmd_report;
extern const cli_command cmd_remove, cmd_problem;

/* The command being run (main.c sets it), for its messages. */
extern const cli_command *cli_current;

/* One row of a table, one line each: a flag, an option with a value
 * (CLI_STR, CLI_PATH, CLI_PROBLEM, CLI_MODE) and an integer in [lo, hi];
 * name_ may be NULL and letter_ 0 (cli_opt). */
#define CLI_OPT_FLAG(name_, type, field, help_)                                                    \
    {                                                                                              \
        .name = (name_), .kind = CLI_FLAG, .at = CLI_AT(type, field), .help = (help_)              \
    }
#define CLI_OPT_VAL(name_, kind_, type, field, value_, help_)                                      \
    {                                                                                              \
        .name = (name_), .kind = (kind_), .at = CLI_AT(type, field), .value = (value_),            \
        .help = (help_)                                                                            \
    }
#define CLI_OPT_INT(name_, letter_, type, field, lo_, hi_, value_, help_)                          \
    {                                                                                              \
        .name = (name_), .letter = (letter_), .kind = CLI_INT, .at = CLI_AT(type, field),          \
        .lo = (lo_), .hi = (hi_), .value = (value_), .help = (help_)                               \
    }

/* The store option every store command has (field `store` of its args). */
#define CLI_OPT_STORE(type)                                                                        \
    {                                                                                              \
        .name = "store", .kind = CLI_PATH, .at = CLI_AT(type, store), .value = "PATH",             \
        .help = "the results store (default $FASWEEP_STORE, else ./" CLI_DEFAULT_STORE ")"         \
    }

/* The problem and mode options' help where they name one record's key. */
#define CLI_HELP_PROBLEM "B,H,S,D (e.g. 4,8,512,64) or b4.h8.s512.d64.nc"
#define CLI_HELP_MODE "{{MODES_DEFAULT}}"
/* What a problem text may be, for the messages that refuse one. */
#define CLI_PROBLEM_FORMS                                                                          \
    "B,H,S,D (e.g. 4,8,512,64; B,H:KV,S,D for KV K/V heads, ',bf16' at the end for "               \
    "bf16) or the canonical text (e.g. b4.h8.s512.d64.nc, b1.h32.kv8.s4096.d128.c.bf16)"

/* The filter of the commands that read a store group by group (topk,
 * export, report): --gpu NAME, --problem P and --mode M into the fields
 * gpu, problem and mode of its args; every help begins with lead ("" or
 * the formats they apply to), mode_help says what no --mode means. */
#define CLI_OPT_FILTER(type, lead, mode_help)                                                      \
    CLI_OPT_VAL("gpu", CLI_STR, type, gpu, "NAME",                                                 \
                lead "only this GPU model, exactly as stored (e.g. \"NVIDIA L4\")"),               \
        CLI_OPT_VAL("problem", CLI_PROBLEM, type, problem, "P",                                    \
                    lead "only this problem: " CLI_HELP_PROBLEM),                                  \
        CLI_OPT_VAL("mode", CLI_MODE, type, mode, "M", lead mode_help)

/* -o, --output FILE into the field file (export, report). */
#define CLI_OPT_OUTPUT(type, help_)                                                                \
    {                                                                                              \
        .name = "output", .letter = 'o', .kind = CLI_PATH, .at = CLI_AT(type, file),               \
        .value = "FILE", .help = (help_)                                                           \
    }

/* --variants into the field variants (topk, report): rank the records of
 * edited kernels too (rank_filter.variants); what says where they show. */
#define CLI_OPT_VARIANTS(type, what)                                                               \
    CLI_OPT_FLAG("variants", type, variants,                                                       \
                 "rank edited kernels (`fasweep eval --kernel`, build src-HASH)" what              \
                 "; without it they are only counted")

/* --device N, a CUDA ordinal (grid, eval). */
#define CLI_OPT_CUDA_DEVICE(type, field)                                                           \
    CLI_OPT_INT("device", 0, type, field, 0, 1024, "N", "the CUDA device ordinal (default 0)")

/* --device in the commands that filter a store by GPU model (topk, show,
 * export, report): --device is a CUDA ordinal everywhere (grid, eval), so
 * the old spelling of --gpu NAME is refused (exit 2), saying so. */
#define CLI_OPT_DEVICE_REFUSED                                                                     \
    {                                                                                              \
        .name = "device", .kind = CLI_REFUSED,                                                     \
        .help = "--device is a CUDA ordinal; to filter by GPU model use --gpu NAME"                \
    }

/* Parses argv[1..] against cli_current's table into the struct args (-h
 * and --help are always known: they print the command's help). Values are
 * checked as their kind says; the first bad one is a usage error naming the
 * option ("-k wants an integer from 1 to ..., got 'abc'"). Returns -1 to go
 * on, with *first the index of the first positional argument, else the
 * exit status to return now (help printed: 0; usage error: 2). */
int cli_parse(int argc, char **argv, void *args, int *first);

/* cli_parse for a command that takes no positional argument: one is a
 * usage error. Returns -1 to go on, else the exit status to return now. */
int cli_parse_no_args(int argc, char **argv, void *args);

/* ---- help texts ---------------------------------------------------------------------------- */

/* Every help text comes from the tables above: `fasweep --help`, `fasweep
 * COMMAND --help`, and `fasweep help --markdown`, the reference part of
 * docs/cli.md (between its "BEGIN generated" and "END generated" markers;
 * tests/cli/help.bats fails when the two disagree). Nothing about an
 * option is written anywhere else, so every option is documented by
 * construction. */

/* `fasweep COMMAND --help`: the usage line(s), what it does, one line per
 * option (value name and help), the exit statuses. */
void cli_help(const cli_command *c, FILE *out);

/* A help text (a command's about, an option's help) with its placeholders
 * filled in from the family table (kernels/family.h), so no help text
 * describes one family alone: {{FAMILIES}} the names; per family, in table
 * order, {{AXES}} its axis names, {{CONFIG_EXAMPLES}} a config text as
 * eval --config takes it (FAMILY: before all but the default's),
 * {{CONFIG_TEXTS}} one as a record stores it, {{LETTERS}} what each letter
 * of its config text is, {{TEMPLATES}} its template, {{BLOCK_X}} its
 * threads per CTA over its axes, {{PANELS}} the report's heatmap layout;
 * {{REASONS}} the static rules' reason codes; from the mode table
 * (store/mode.h), {{MODES}} the modes ("hot, cold or batch") and
 * {{MODES_DEFAULT}} the same with the default marked. An unknown {{NAME}} stays as
 * it is. Malloc'd; NULL when out of memory. */
char *cli_help_text(const char *text);

/* `fasweep --help`: the usage, one line per listed command (hidden ones,
 * summary NULL, left out), the store and exit status conventions. */
void cli_help_overview(const cli_command *const *cmds, size_t n, FILE *out);

/* `fasweep help --markdown`: the same as Markdown, a table of the commands
 * then one section per command with its options as a table. */
void cli_help_markdown(const cli_command *const *cmds, size_t n, FILE *out);

/* ---- messages -------------------------------------------------------------------------------- */

/* "fasweep: ..." on stderr, one line: control characters and bytes that
 * are not valid UTF-8 in the formatted text (e.g. a quoted --gpu value)
 * are written as \xHH. */
void cli_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "fasweep CMD: ...\n(see `fasweep CMD --help`)" on stderr, the message
 * escaped as cli_say's; returns 2. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A command's exit status once its output is out: whatever stdout still
 * buffers is flushed, and a write error (a full disk, a closed pipe,
 * /dev/full) makes a successful command fail (1) with a message, so no
 * output is lost silently. */
int cli_finish(int rc);

/* "fasweep: writing the output: WHY; it is incomplete" (err an errno value,
 * or 0 when the failure was met earlier and its cause is gone); returns 1.
 * The one message for an output that could not be written. */
int cli_output_failed(int err);

/* Writes FILE through write(out, ctx) (which returns an exit status after
 * its own message) with file_write (store/file.h: atomic for a regular or
 * new file or a link's target, straight through for a device or FIFO, no
 * temp file left behind on failure or a signal). Returns the exit status:
 * write's, or 1 after a message when writing failed. */
int cli_write_file(const char *file, int (*write)(FILE *out, void *ctx), void *ctx);

/* ---- stores and plans ---------------------------------------------------------------------- */

/* The store: --store PATH, else $FASWEEP_STORE, else ./results.lmdb. */
const char *cli_store_path(const char *opt);

/* Opens the store; a read-only open of a store that does not exist is a
 * clear failure instead of an LMDB error. NULL after printing why. */
store *cli_open_store(const char *path, int read_only);

/* Opens the store of --store opt (cli_store_path) read-only, runs fn(s,
 * path, ctx) and closes it. Returns fn's exit status, or 1 after a message
 * when the store cannot be opened. */
int cli_read_store(const char *opt, int (*fn)(store *s, const char *path, const void *ctx),
                   const void *ctx);

/* "fasweep: WHAT failed: ..." for a store error; returns 1. */
int cli_store_fail(store *s, int rc, const char *what);

/* Loads the space file PATH into *s. Returns 0, or CLI_USAGE after
 * printing why (the space's own one-line message). */
int cli_load_space(const char *path, space *s);

/* --family NAME (export, report): which kernel family's grid a group is laid
 * over. *out is its index, or -1 when name is NULL (the default: the
 * space's own family). Returns 0, or CLI_USAGE after printing why: an
 * unknown family, or one space sp (when not NULL) sweeps no grid of. */
int cli_family_option(const char *name, const space *sp, int *out);

/* Loads a space and builds its plan against this binary's instances.
 * Returns 0, or the exit status after printing why. */
int cli_load_plan(const char *path, space *s, plan *p);

#endif /* CLI_H */
