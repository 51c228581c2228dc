/* cli.c - option table, messages, stores and plans for the commands
 * (contract: cli.h). */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../grid/plan.h"
#include "../kernels/fa_launch.h"
#include "../seeds/group.h"
#include "../kernels/family.h"
#include "../store/file.h"
#include "../store/mode.h"
#include "../store/text.h"

#define CLI_MAX_OPTS 24

const cli_command *cli_current;

/* ---- messages -------------------------------------------------------------------------------- */

/* Bytes of the valid UTF-8 character at s (at most len bytes) that is
 * not a C1 control (U+0080-U+009F), or 0. */
static size_t cli_utf8_char(const unsigned char *s, size_t len)
{
    const size_t k = s[0] >= 0xc2 && s[0] <= 0xdf   ? 2
                     : s[0] >= 0xe0 && s[0] <= 0xef ? 3
                     : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4
                                                    : 0;
    if (!k || k > len || text_bad((const char *)s, k)) /* text_bad: invalid, or a C1 control */
        return 0;
    return k;
}

/* Writes a formatted message to stderr with every control character
 * (C0 such as a newline or ESC, DEL, C1) and every byte that is not valid
 * UTF-8 as \xHH: a message quotes what the user typed (--gpu, a command
 * name), and that must neither break the one-line rule nor reach the
 * terminal as an escape sequence. Valid UTF-8 (a device or path name)
 * passes as is. */
static void cli_put_clean(const char *fmt, va_list ap)
{
    char stack[1024], *msg = stack;
    va_list aq;
    va_copy(aq, ap);
    const int len = vsnprintf(stack, sizeof stack, fmt, aq);
    va_end(aq);
    if (len < 0)
        return;
    if ((size_t)len >= sizeof stack && (msg = malloc((size_t)len + 1)) != NULL)
        vsnprintf(msg, (size_t)len + 1, fmt, ap);
    if (!msg)
        msg = stack; /* out of memory: the message cut at sizeof stack */
    const unsigned char *u = (const unsigned char *)msg;
    const size_t n = strlen(msg);
    for (size_t i = 0; i < n;) {
        const size_t k = u[i] >= 0x80 ? cli_utf8_char(u + i, n - i) : 0;
        if (k) {
            fwrite(u + i, 1, k, stderr);
            i += k;
        } else if (u[i] < 0x20 || u[i] >= 0x7f) {
            fprintf(stderr, "\\x%02x", u[i++]);
        } else {
            fputc(u[i++], stderr);
        }
    }
    if (msg != stack)
        free(msg);
}

void cli_say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fasweep: ", stderr);
    cli_put_clean(fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fasweep %s: ", cli_current->name);
    cli_put_clean(fmt, ap);
    fprintf(stderr, "\n(see `fasweep %s --help`)\n", cli_current->name);
    va_end(ap);
    return CLI_USAGE;
}

/* Set once the output's failure is reported: cli_finish then says no more. */
static int cli_output_reported;

int cli_output_failed(int err)
{
    cli_output_reported = 1;
    cli_say("writing the output: %s; it is incomplete",
            err ? strerror(err)
                : "an earlier write failed (a closed pipe, a full disk or a file-size limit)");
    return CLI_FAIL;
}

int cli_finish(int rc)
{
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout))
        return rc;
    if (cli_output_reported)
        return rc == CLI_OK ? CLI_FAIL : rc;
    const int failed = cli_output_failed(errno);
    return rc == CLI_OK ? failed : rc;
}

int cli_write_file(const char *file, int (*write)(FILE *out, void *ctx), void *ctx)
{
    char err[PATH_MAX + 256];
    const int rc = file_write(file, write, ctx, err, sizeof err);
    if (rc < 0) {
        cli_say("%s", err);
        return CLI_FAIL;
    }
    return rc;
}

/* ---- the option table ---------------------------------------------------------------------- */

/* How messages name an option: "-k" when it has a letter, else "--name". */
static void cli_label(const cli_opt *o, char *buf, size_t n)
{
    if (o->letter)
        snprintf(buf, n, "-%c", o->letter);
    else
        snprintf(buf, n, "--%s", o->name);
}

/* A whole decimal int in [lo, hi]. Returns 0, or a usage error. */
static int cli_int(const char *label, const char *s, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    const long v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < lo || v > hi)
        return cli_usage_error("%s wants an integer from %ld to %ld, got '%s'", label, lo, hi, s);
    *out = (int)v;
    return 0;
}

/* Where option o's value goes in args. */
static void *cli_field(const cli_opt *o, void *args)
{
    return (char *)args + o->at;
}

/* Stores value v of option o into args. Returns 0, or a usage error. */
static int cli_value(const cli_opt *o, const char *v, void *args)
{
    char label[40];
    cli_label(o, label, sizeof label);
    void *out = cli_field(o, args);
    switch (o->kind) {
    case CLI_FLAG:
        *(int *)out = 1;
        return 0;
    case CLI_STR:
        *(const char **)out = v;
        return 0;
    case CLI_PATH:
        if (!*v)
            return cli_usage_error("%s wants a path, got an empty string", label);
        *(const char **)out = v;
        return 0;
    case CLI_INT:
        return cli_int(label, v, o->lo, o->hi, (int *)out);
    case CLI_PROBLEM: {
        cli_problem *p = out;
        space_problem sp;
        if (space_problem_parse(v, &sp) != 0)
            return cli_usage_error("%s wants " CLI_PROBLEM_FORMS ", got '%s'", label, v);
        if (space_problem_format(&sp, p->text, sizeof p->text) >= (int)sizeof p->text)
            return cli_usage_error("%s: the problem '%s' is too large (its text is longer than "
                                   "%zu characters)",
                                   label, v, sizeof p->text - 1);
        p->set = 1;
        return 0;
    }
    case CLI_MODE:
        if (!record_mode_known(v))
            return cli_usage_error("%s wants one of %s, got '%s'", label, RECORD_MODES_TEXT, v);
        *(const char **)out = v;
        return 0;
    case CLI_REFUSED: /* one line: the message already says what to do instead */
        fprintf(stderr, "fasweep %s: %s\n", cli_current->name, o->help);
        return CLI_USAGE;
    }
    return cli_usage_error("internal error: option %s of unknown kind", label);
}

/* getopt_long's '?' and ':' results as a usage error (opterr is 0 so the
 * message is ours alone). */
static int cli_option_error(int c, char **argv)
{
    const char *arg = argv[optind - 1];
    if (c == ':')
        return cli_usage_error("option %s needs a value", arg);
    if (optopt && !(arg[0] == '-' && arg[1] == '-'))
        return cli_usage_error("unknown option -%c", optopt);
    return cli_usage_error("unknown option %s", arg);
}

/* getopt_long's argument rule for o: a refused spelling takes an optional
 * value so that it is refused with its own message, value or not. */
static int cli_has_arg(const cli_opt *o)
{
    if (o->kind == CLI_FLAG)
        return no_argument;
    return o->kind == CLI_REFUSED ? optional_argument : required_argument;
}

int cli_parse(int argc, char **argv, void *args, int *first)
{
    const cli_opt *opts = cli_current->opts;
    struct option lo[CLI_MAX_OPTS + 2];
    char shorts[3 * CLI_MAX_OPTS + 4] = ":h";
    size_t ns = 2;
    int n = 0, nl = 0;
    for (; opts && (opts[n].name || opts[n].letter); n++) {
        if (n == CLI_MAX_OPTS)
            return cli_usage_error("internal error: more than %d options", CLI_MAX_OPTS);
        const int has_arg = cli_has_arg(&opts[n]);
        /* getopt_long returns the letter, or 256 + the table index. */
        if (opts[n].name)
            lo[nl++] = (struct option){opts[n].name, has_arg, NULL,
                                       opts[n].letter ? opts[n].letter : 256 + n};
        if (opts[n].letter) {
            shorts[ns++] = opts[n].letter;
            for (int c = 0; c < has_arg; c++) /* "x:" required, "x::" optional */
                shorts[ns++] = ':';
        }
    }
    lo[nl] = (struct option){"help", no_argument, NULL, 'h'};
    lo[nl + 1] = (struct option){NULL, 0, NULL, 0};
    shorts[ns] = '\0';
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
        if (c == 'h') {
            cli_help(cli_current, stdout);
            return CLI_OK;
        }
        int k = -1;
        for (int i = 0; i < n && k < 0; i++)
            if ((opts[i].letter && c == opts[i].letter) || (!opts[i].letter && c == 256 + i))
                k = i;
        if (k < 0)
            return cli_option_error(c, argv);
        if (cli_value(&opts[k], optarg, args))
            return CLI_USAGE;
    }
    *first = optind;
    return -1;
}

int cli_parse_no_args(int argc, char **argv, void *args)
{
    int first;
    const int rc = cli_parse(argc, argv, args, &first);
    if (rc >= 0)
        return rc;
    if (first < argc)
        return cli_usage_error("unexpected argument '%s'", argv[first]);
    return -1;
}

/* ---- help texts from the tables ----------------------------------------------------------- */

#define CLI_HELP_LABEL_MAX 20 /* wider option labels get their help on the next line */

static int cli_help_listed(const cli_opt *o)
{
    return o->kind != CLI_REFUSED;
}

static int cli_help_end(const cli_opt *o)
{
    return !o->name && !o->letter;
}

/* "-o, --output FILE", "-k N", "--space FILE", "--json". */
static void cli_help_label(const cli_opt *o, char *buf, size_t n)
{
    const char *v = o->value ? o->value : "";
    const char *sep = o->value ? " " : "";
    if (o->letter && o->name)
        snprintf(buf, n, "-%c, --%s%s%s", o->letter, o->name, sep, v);
    else if (o->letter)
        snprintf(buf, n, "-%c%s%s", o->letter, sep, v);
    else
        snprintf(buf, n, "--%s%s%s", o->name, sep, v);
}

/* The first option at or after o that help lists (refused spellings are
 * not), its label in buf; NULL at the table's end. */
static const cli_opt *cli_help_next(const cli_opt *o, char *buf, size_t n)
{
    for (; o && !cli_help_end(o); o++)
        if (cli_help_listed(o)) {
            cli_help_label(o, buf, n);
            return o;
        }
    return NULL;
}

/* ---- what help texts say about the kernel families -------------------------------------------
 *
 * A help text names axes, config texts, templates and rules through
 * placeholders the family table fills in (kernels/family.h), so no help
 * describes one family alone: {{NAME}} below, per family in table order
 * (the default family's config text without its "FAMILY:").
 */

/* The family's axis names (slots 1 on), joined by sep. */
static void cli_fam_axes(const fa_family *f, const char *sep, FILE *out)
{
    for (int a = 1; a < FA_CONFIG_SLOTS; a++)
        fprintf(out, "%s%s", a > 1 ? sep : "", f->axes[a].name);
}

/* One placeholder's text for family f (i its index); 0, or -1 for a name
 * that is none. */
static int cli_fam_item(const char *name, size_t len, const fa_family *f, int i, FILE *out)
{
#define CLI_IS(s) (len == sizeof s - 1 && strncmp(name, s, len) == 0)
    if (CLI_IS("CONFIG_EXAMPLES")) /* as eval --config takes them */
        fprintf(out, "%s%s%s (%s)", i == FA_FAMILY_DEFAULT ? "" : f->name,
                i == FA_FAMILY_DEFAULT ? "" : ":", f->text_example, f->name);
    else if (CLI_IS("CONFIG_TEXTS")) /* as a record stores them */
        fprintf(out, "%s (%s)", f->text_example, f->name);
    else if (CLI_IS("TEMPLATES"))
        fprintf(out, "%s (%s)", f->header, f->name);
    else if (CLI_IS("BLOCK_X"))
        fprintf(out, "%s (%s)", f->kt_block_x, f->name);
    else if (CLI_IS("AXES")) {
        cli_fam_axes(f, ", ", out);
        fprintf(out, " (%s)", f->name);
    } else if (CLI_IS("PANELS")) {
        fprintf(out, "%s x %s per (", f->axes[1].name, f->axes[2].name);
        for (int a = 3; a < FA_CONFIG_SLOTS; a++)
            fprintf(out, "%s%s", a > 3 ? ", " : "", f->axes[a].name);
        fprintf(out, ") panel (%s)", f->name);
    } else if (CLI_IS("LETTERS")) {
        fprintf(out, "%s: ", f->name);
        for (int a = 0; a < FA_CONFIG_SLOTS; a++)
            fprintf(out, "%s%s=%s", a ? " " : "", f->axes[a].tag, f->axes[a].name);
    } else
        return -1;
    return 0;
#undef CLI_IS
}

/* A placeholder's text (NAME, len bytes): per family, one a line for the
 * long ones (joined by ";" or "," and a line break), joined by ", " for the
 * others; the reason codes of the static rules; the families' names. 0,
 * or -1 for a name that is none. */
static int cli_fam_text(const char *name, size_t len, FILE *out)
{
    /* the timing modes, from their table (store/mode.h) */
    const int dflt = len == 13 && strncmp(name, "MODES_DEFAULT", 13) == 0;
    if (dflt || (len == 5 && strncmp(name, "MODES", 5) == 0)) {
        for (int i = 0; i < MODE_COUNT; i++)
            fprintf(out, "%s%s%s",
                    i == 0                ? ""
                    : i == MODE_COUNT - 1 ? " or "
                                          : ", ",
                    mode_at(i)->name, dflt && i == 0 ? " (default)" : "");
        return 0;
    }
    if (len == 8 && strncmp(name, "FAMILIES", 8) == 0) {
        fputs(fa_family_names(), out);
        return 0;
    }
    if (len == 7 && strncmp(name, "REASONS", 7) == 0) {
        for (int r = 1; r < PLAN_REJ_NOT_COMPILED; r++)
            fprintf(out, "%s%s", r > 1 ? ", " : "", plan_reason_code((plan_reason)r));
        return 0;
    }
    const char *sep = ", ";
    if ((len == 4 && strncmp(name, "AXES", 4) == 0) ||
        (len == 7 && strncmp(name, "LETTERS", 7) == 0) ||
        (len == 6 && strncmp(name, "PANELS", 6) == 0))
        sep = ";\n";
    else if (len == 9 && strncmp(name, "TEMPLATES", 9) == 0)
        sep = ",\n";
    for (int i = 0; i < fa_family_count(); i++) {
        if (i)
            fputs(sep, out);
        if (cli_fam_item(name, len, fa_family_get(i), i, out) != 0)
            return -1;
    }
    return 0;
}

/* text with every {{NAME}} replaced (an unknown one is left as it is):
 * malloc'd, or NULL when out of memory. */
char *cli_help_text(const char *text)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (!out)
        return NULL;
    for (const char *p = text; *p;) {
        const char *open = strstr(p, "{{");
        const char *close = open ? strstr(open + 2, "}}") : NULL;
        if (!close) {
            fputs(p, out);
            break;
        }
        fwrite(p, 1, (size_t)(open - p), out);
        if (cli_fam_text(open + 2, (size_t)(close - open - 2), out) != 0)
            fwrite(open, 1, (size_t)(close + 2 - open), out);
        p = close + 2;
    }
    if (fclose(out) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Writes text, every line after the first indented by indent columns. */
static void cli_help_indented_raw(const char *text, int indent, FILE *out)
{
    for (const char *p = text; *p; p++) {
        fputc(*p, out);
        if (*p == '\n' && p[1])
            fprintf(out, "%*s", indent, "");
    }
    fputc('\n', out);
}

/* cli_help_indented_raw of text with its placeholders filled in. */
static void cli_help_indented(const char *text, int indent, FILE *out)
{
    char *t = cli_help_text(text);
    cli_help_indented_raw(t ? t : text, indent, out);
    free(t);
}

/* text with its placeholders filled in, as it is. */
static void cli_help_put(const char *text, FILE *out)
{
    char *t = cli_help_text(text);
    fputs(t ? t : text, out);
    free(t);
}

/* The usage lines: "fasweep NAME FORM" per form of c->usage. */
static void cli_help_usage_lines(const cli_command *c, const char *first, const char *next,
                                 FILE *out)
{
    const char *u = c->usage ? c->usage : "";
    const char *lead = first;
    for (;;) {
        const char *nl = strchr(u, '\n');
        const int len = nl ? (int)(nl - u) : (int)strlen(u);
        fprintf(out, "%sfasweep %s%s%.*s\n", lead, c->name, len ? " " : "", len, u);
        if (!nl)
            break;
        u = nl + 1;
        lead = next;
    }
}

void cli_help(const cli_command *c, FILE *out)
{
    cli_help_usage_lines(c, "usage: ", "       ", out);
    if (c->about) {
        fputc('\n', out);
        cli_help_put(c->about, out);
    }
    int width = 10; /* "-h, --help" */
    char label[64];
    for (const cli_opt *o = c->opts; (o = cli_help_next(o, label, sizeof label)); o++) {
        const int len = (int)strlen(label);
        if (len > width && len <= CLI_HELP_LABEL_MAX)
            width = len;
    }
    fputs("\noptions:\n", out);
    for (const cli_opt *o = c->opts; (o = cli_help_next(o, label, sizeof label)); o++) {
        if ((int)strlen(label) > width)
            fprintf(out, "  %s\n%*s", label, width + 4, "");
        else
            fprintf(out, "  %-*s  ", width, label);
        cli_help_indented(o->help ? o->help : "", width + 4, out);
    }
    fprintf(out, "  %-*s  this help\n", width, "-h, --help");
    if (c->exit) {
        fputs("\nexit status: ", out);
        cli_help_indented(c->exit, 0, out);
    }
}

void cli_help_overview(const cli_command *const *cmds, size_t n, FILE *out)
{
    fputs("usage: fasweep COMMAND [OPTIONS]\n"
          "\n"
          "Sweeps templated FlashAttention-forward CUDA kernels (kernel families, each with its\n"
          "own axes and rules) over a space of configs, stores every result in an LMDB store,\n"
          "ranks them and writes Top-K seed files.\n"
          "\n"
          "commands:\n",
          out);
    for (size_t i = 0; i < n; i++)
        if (cmds[i]->summary)
            fprintf(out, "  %-8s %s\n", cmds[i]->name, cmds[i]->summary);
    /* The families, from their table: a space's "family", a config's axes. */
    fputs("\nkernel families (a space's \"family\"; docs/families.md):\n", out);
    for (int i = 0; i < fa_family_count(); i++) {
        const fa_family *f = fa_family_get(i);
        fprintf(out, "  %-8s %s\n  %-8s axes ", f->name, f->summary, "");
        cli_fam_axes(f, ", ", out);
        fprintf(out, "; config text %s%s%s\n", i == FA_FAMILY_DEFAULT ? "" : f->name,
                i == FA_FAMILY_DEFAULT ? "" : ":", f->text_example);
    }
    /* The timing modes, from their table: a space's "modes", --mode. */
    fputs("\ntiming modes (a space's \"modes\", --mode; docs/measurement.md):\n", out);
    fputs(mode_help_text(), out);
    fputs("\n"
          "`fasweep COMMAND --help` describes a command. The store is --store PATH, else\n"
          "$FASWEEP_STORE, else ./" CLI_DEFAULT_STORE ".\n"
          "exit status: 0 success, 1 failure, 2 usage or input error.\n",
          out);
}

/* ---- Markdown ---------------------------------------------------------------------------------
 */

/* Text in a table cell, its placeholders filled in: '|' escaped, line
 * breaks as spaces. */
static void cli_help_cell(const char *text, FILE *out)
{
    char *t = cli_help_text(text);
    for (const char *p = t ? t : text; *p; p++) {
        if (*p == '|')
            fputs("\\|", out);
        else
            fputc(*p == '\n' ? ' ' : *p, out);
    }
    free(t);
}

static void cli_help_md_options(const cli_command *c, FILE *out)
{
    fputs("| option | what it does |\n|---|---|\n", out);
    char label[64];
    for (const cli_opt *o = c->opts; (o = cli_help_next(o, label, sizeof label)); o++) {
        fputs("| `", out);
        cli_help_cell(label, out);
        fputs("` | ", out);
        cli_help_cell(o->help ? o->help : "", out);
        fputs(" |\n", out);
    }
    fputs("| `-h, --help` | this help |\n", out);
}

static void cli_help_md_command(const cli_command *c, FILE *out)
{
    /* the summary as a sentence */
    fprintf(out, "\n### `fasweep %s`\n\n%c%s.\n\n```\n", c->name,
            toupper((unsigned char)c->summary[0]), c->summary + 1);
    cli_help_usage_lines(c, "", "", out);
    fputs("```\n", out);
    if (c->about) {
        fputc('\n', out);
        cli_help_put(c->about, out);
    }
    fputc('\n', out);
    cli_help_md_options(c, out);
    if (c->exit) {
        fputs("\nExit status: ", out);
        cli_help_indented(c->exit, 0, out);
    }
}

void cli_help_markdown(const cli_command *const *cmds, size_t n, FILE *out)
{
    fputs("| command | what it does |\n|---|---|\n", out);
    for (size_t i = 0; i < n; i++)
        if (cmds[i]->summary) {
            fprintf(out, "| `%s` | ", cmds[i]->name);
            cli_help_cell(cmds[i]->summary, out);
            fputs(" |\n", out);
        }
    for (size_t i = 0; i < n; i++)
        if (cmds[i]->summary)
            cli_help_md_command(cmds[i], out);
}

/* ---- stores and plans ---------------------------------------------------------------------- */

int cli_family_option(const char *name, const space *sp, int *out)
{
    *out = -1;
    if (!name)
        return 0;
    const int f = fa_family_index(name);
    if (f < 0)
        return cli_usage_error("--family: unknown kernel family '%s', expected one of %s "
                               "(docs/families.md)",
                               name, fa_family_names());
    space_grid grid;
    if (sp && group_space_grid(sp, f, &grid) != 0) {
        char swept[128];
        int used = snprintf(swept, sizeof swept, "%s", fa_family_get(sp->family)->name);
        for (int i = 0; i < sp->n_extra && used < (int)sizeof swept; i++)
            used += snprintf(swept + used, sizeof swept - (size_t)used, ", %s",
                             fa_family_get(sp->extra[i].family)->name);
        return cli_usage_error("--family %s: space %s sweeps no %s grid (its grids: %s)", name,
                               sp->name, name, swept);
    }
    *out = f;
    return 0;
}

const char *cli_store_path(const char *opt)
{
    if (opt)
        return opt;
    const char *env = getenv("FASWEEP_STORE");
    return (env && *env) ? env : CLI_DEFAULT_STORE;
}

/* One line per damaged record a command skips (store_on_damaged). */
static void cli_on_damaged(const char *path, const char *key, const char *why, long count,
                           void *ctx)
{
    (void)ctx;
    cli_say("warning: %s: record '%s' is damaged (%s); skipped (%ld damaged so far); "
            "`fasweep remove '%s' --store %s` deletes it",
            path, key, why, count, key, path);
}

store *cli_open_store(const char *path, int read_only)
{
    struct stat st;
    if (read_only && stat(path, &st) != 0) {
        cli_say("no results store at %s (%s); run `fasweep grid` first, or pass --store PATH "
                "or set FASWEEP_STORE",
                path, strerror(errno));
        return NULL;
    }
    store *s = NULL;
    char err[1024];
    const int rc = store_open(path, read_only, &s, err, sizeof err);
    if (rc != STORE_OK) {
        cli_say("%s", err[0] ? err : store_strerror(rc));
        return NULL;
    }
    store_on_damaged(s, cli_on_damaged, NULL);
    return s;
}

int cli_read_store(const char *opt, int (*fn)(store *s, const char *path, const void *ctx),
                   const void *ctx)
{
    const char *path = cli_store_path(opt);
    store *s = cli_open_store(path, 1);
    if (!s)
        return CLI_FAIL;
    const int rc = fn(s, path, ctx);
    store_close(s);
    return rc;
}

int cli_store_fail(store *s, int rc, const char *what)
{
    cli_say("%s failed: %s (%s)", what, store_strerror(rc), s ? store_last_error(s) : "");
    return CLI_FAIL;
}

static int cli_compiled(const fa_config *c, void *ctx)
{
    (void)ctx;
    return fa_registry_find(c) != NULL;
}

int cli_load_space(const char *path, space *s)
{
    char err[SPACE_ERR_LEN];
    if (space_load(path, s, err, sizeof err) != 0) {
        cli_say("%s", err);
        return CLI_USAGE;
    }
    return 0;
}

int cli_load_plan(const char *path, space *s, plan *p)
{
    if (cli_load_space(path, s) != 0)
        return CLI_USAGE;
    if (plan_build(s, cli_compiled, NULL, p) != 0) {
        cli_say("out of memory building the plan of %s", path);
        return CLI_FAIL;
    }
    return 0;
}
