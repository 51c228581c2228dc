/* main.c - the fasweep command line: the table of commands and the
 * dispatch. Each command lives in a cmd_*.c file (cli.h lists them) and
 * only parses its arguments and calls the modules; every help text comes
 * from the command table (cli.h).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "../sweep/progress.h"

static int help_main(int argc, char **argv);

typedef struct help_args {
    int markdown;
} help_args;

static const cli_opt help_opts[] = {
    CLI_OPT_FLAG("markdown", help_args, markdown,
                 "print the command reference of docs/cli.md (Markdown)"),
    {0}};

/* Hidden (no summary): `fasweep help [COMMAND]` is --help spelt otherwise,
 * and --markdown is for docs/cli.md alone. */
static CLI_COMMAND(
    help, .usage = "[COMMAND]\n--markdown",
    .about = "Prints the help of COMMAND, or the list of commands; --markdown prints the\n"
             "command reference that docs/cli.md holds.\n",
    .exit = "0 ok, 2 unknown command or option.");

/* In the order `fasweep --help` and docs/cli.md list them. */
static const cli_command *const commands[] = {
    &cmd_plan,   &cmd_problem, &cmd_grid,  &cmd_eval, &cmd_list,   &cmd_topk,    &cmd_export,
    &cmd_report, &cmd_import,  &cmd_merge, &cmd_show, &cmd_remove, &cmd_version, &cmd_help,
};
#define N_COMMANDS (sizeof commands / sizeof *commands)

static const cli_command *find_command(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i]->name, name) == 0)
            return commands[i];
    return NULL;
}

/* [COMMAND] or --markdown. */
static int help_run(const help_args *a, int n, char **args)
{
    if (n > 1 || (a->markdown && n > 0))
        return cli_usage_error("wants one COMMAND, or --markdown alone");
    if (a->markdown) {
        cli_help_markdown(commands, N_COMMANDS, stdout);
        return CLI_OK;
    }
    if (n == 0) {
        cli_help_overview(commands, N_COMMANDS, stdout);
        return CLI_OK;
    }
    const cli_command *c = find_command(args[0]);
    if (!c)
        return cli_usage_error("unknown command '%s'", args[0]);
    cli_help(c, stdout);
    return CLI_OK;
}

CLI_MAIN(help, help_args, help_run, 0)

int main(int argc, char **argv)
{
    /* A closed stdout pipe (`fasweep export | head`) or a file-size limit
     * (`ulimit -f`) must not kill the process mid-write: the write fails
     * instead (EPIPE, EFBIG), the output's writer removes its temp file and
     * says so, cli_finish turns it into exit 1, and the work that does not
     * depend on stdout (a store's commit, the seeds files) is done. Children
     * that exec another program get the default dispositions back
     * (variant.c). */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
    progress_phase("main"); /* FASWEEP_TRACE: the clock of the phases starts here */
    /* Into a file or a pipe, stdout is written in large blocks, so most
     * outputs fail (if they do) at cli_finish's flush, where the cause
     * (errno) is still known; a terminal keeps its line buffering. */
    if (!isatty(STDOUT_FILENO))
        setvbuf(stdout, NULL, _IOFBF, 1 << 20);
    if (argc < 2) {
        cli_help_overview(commands, N_COMMANDS, stderr);
        return CLI_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        cli_help_overview(commands, N_COMMANDS, stdout);
        return cli_finish(CLI_OK);
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0)
        name = "version";
    cli_current = find_command(name);
    if (!cli_current) {
        cli_say("unknown command '%s'; run `fasweep --help` for the list", name);
        return CLI_USAGE;
    }
    const int rc = cli_finish(cli_current->fn(argc - 1, argv + 1));
    progress_phase("end"); /* FASWEEP_TRACE: what follows is the process's exit */
    return rc;
}
