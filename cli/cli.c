/* cli.c - option table, messages, stores and plans for the commands
 * (contract: cli.h). */
#include "cli.h"

#include <cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../kernels/fa_launch.h"
#include "../store/file.h"

#define CLI_MAX_OPTS 24

const cli_command *cli_current;

/* ---- messages -------------------------------------------------------------------------------- */

void cli_say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fasweep: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fasweep %s: ", cli_current->name);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(see `fasweep %s --help`)\n", cli_current->name);
    va_end(ap);
    return CLI_USAGE;
}

int cli_finish(int rc)
{
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout))
        return rc;
    cli_say("writing the output failed (%s); it is incomplete",
            errno ? strerror(errno) : "an earlier write to stdout failed");
    return rc == CLI_OK ? CLI_FAIL : rc;
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

int cli_emit_json(cJSON *doc)
{
    char *text = doc ? cJSON_Print(doc) : NULL;
    cJSON_Delete(doc);
    if (!text) {
        cli_say("out of memory printing JSON");
        return CLI_FAIL;
    }
    puts(text);
    cJSON_free(text);
    return CLI_OK;
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

/* Stores value v of option o. Returns 0, or a usage error. */
static int cli_value(const cli_opt *o, const char *v)
{
    char label[40];
    cli_label(o, label, sizeof label);
    switch (o->kind) {
    case CLI_FLAG:
        *(int *)o->out = 1;
        return 0;
    case CLI_STR:
        *(const char **)o->out = v;
        return 0;
    case CLI_PATH:
        if (!*v)
            return cli_usage_error("%s wants a path, got an empty string", label);
        *(const char **)o->out = v;
        return 0;
    case CLI_INT:
        return cli_int(label, v, o->lo, o->hi, (int *)o->out);
    case CLI_PROBLEM: {
        cli_problem *p = o->out;
        space_problem sp;
        if (space_problem_parse(v, &sp) != 0)
            return cli_usage_error("%s wants B,H,S,D (e.g. 4,8,512,64) or the canonical text "
                                   "(e.g. b4.h8.s512.d64.nc), got '%s'",
                                   label, v);
        space_problem_format(&sp, p->text, sizeof p->text);
        p->set = 1;
        return 0;
    }
    case CLI_MODE:
        if (!record_mode_known(v))
            return cli_usage_error("%s wants one of %s, got '%s'", label, RECORD_MODES_TEXT, v);
        *(const char **)o->out = v;
        return 0;
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

int cli_parse(int argc, char **argv, const cli_opt *opts, int *first)
{
    struct option lo[CLI_MAX_OPTS + 2];
    char shorts[2 * CLI_MAX_OPTS + 4] = ":h";
    size_t ns = 2;
    int n = 0, nl = 0;
    for (; opts[n].name || opts[n].letter; n++) {
        if (n == CLI_MAX_OPTS)
            return cli_usage_error("internal error: more than %d options", CLI_MAX_OPTS);
        const int has_arg = opts[n].kind == CLI_FLAG ? no_argument : required_argument;
        /* getopt_long returns the letter, or 256 + the table index. */
        if (opts[n].name)
            lo[nl++] = (struct option){opts[n].name, has_arg, NULL,
                                       opts[n].letter ? opts[n].letter : 256 + n};
        if (opts[n].letter) {
            shorts[ns++] = opts[n].letter;
            if (has_arg == required_argument)
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
            fputs(cli_current->usage, stdout);
            return CLI_OK;
        }
        int k = -1;
        for (int i = 0; i < n && k < 0; i++)
            if ((opts[i].letter && c == opts[i].letter) || (!opts[i].letter && c == 256 + i))
                k = i;
        if (k < 0)
            return cli_option_error(c, argv);
        if (cli_value(&opts[k], optarg))
            return CLI_USAGE;
    }
    *first = optind;
    return -1;
}

int cli_no_args(int argc, char **argv, int first)
{
    if (first < argc)
        return cli_usage_error("unexpected argument '%s'", argv[first]);
    return 0;
}

/* ---- stores and plans ---------------------------------------------------------------------- */

const char *cli_store_path(const char *opt)
{
    if (opt)
        return opt;
    const char *env = getenv("FASWEEP_STORE");
    return (env && *env) ? env : CLI_DEFAULT_STORE;
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
    return s;
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

int cli_load_plan(const char *path, space *s, plan *p)
{
    char err[SPACE_ERR_LEN];
    if (space_load(path, s, err, sizeof err) != 0) {
        cli_say("%s", err);
        return CLI_USAGE;
    }
    if (plan_build(s, cli_compiled, NULL, p) != 0) {
        cli_say("out of memory building the plan of %s", path);
        return CLI_FAIL;
    }
    return 0;
}
