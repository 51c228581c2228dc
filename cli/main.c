/* main.c - the fasweep command line: the table of commands and the
 * dispatch. Each command lives in a cmd_*.c file (cli.h lists them) and
 * only parses its arguments and calls the modules.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char *const usage_main =
    "usage: fasweep COMMAND [OPTIONS]\n"
    "\n"
    "Sweeps one templated FlashAttention-forward CUDA kernel over a space of configs,\n"
    "stores every result in an LMDB store, ranks them and writes Top-K seed files.\n"
    "\n"
    "commands:\n"
    "  plan     show the grid of a space: accepted points, rejected ones with reasons\n"
    "  grid     check and time every accepted point on the GPU, into the store\n"
    "  eval     check and time one point (or a head-to-head of a few), into the store\n"
    "  list     the kernel instances compiled into this binary\n"
    "  topk     rank stored results per (device, problem, mode); write seed files\n"
    "  export   write stored records as CSV or JSON lines, or a group for Kernel Tuner / T4\n"
    "  report   write an HTML page: heatmaps, Top-K, baselines, clocks per group\n"
    "  import   add JSON-lines records to the store (all or nothing)\n"
    "  merge    merge other stores into the store\n"
    "  show     print one stored record as JSON\n"
    "  version  print the version and build id\n"
    "\n"
    "`fasweep COMMAND --help` describes a command. The store is --store PATH, else\n"
    "$FASWEEP_STORE, else ./" CLI_DEFAULT_STORE ".\n"
    "exit status: 0 success, 1 failure, 2 usage or input error.\n";

static int help_main(int argc, char **argv);

static const cli_command cmd_help = {"help", help_main, "usage: fasweep help [COMMAND]\n"};

static const cli_command *const commands[] = {
    &cmd_plan,   &cmd_grid,   &cmd_eval,  &cmd_list, &cmd_topk,    &cmd_export,
    &cmd_report, &cmd_import, &cmd_merge, &cmd_show, &cmd_version, &cmd_help,
};

static const cli_command *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(commands[i]->name, name) == 0)
            return commands[i];
    return NULL;
}

static int help_main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_main, stdout);
        return CLI_OK;
    }
    const cli_command *c = find_command(argv[1]);
    if (!c)
        return cli_usage_error("unknown command '%s'", argv[1]);
    fputs(c->usage, stdout);
    return CLI_OK;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_main, stderr);
        return CLI_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        fputs(usage_main, stdout);
        return cli_finish(CLI_OK);
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0)
        name = "version";
    cli_current = find_command(name);
    if (!cli_current) {
        fprintf(stderr, "fasweep: unknown command '%s'; run `fasweep --help` for the list\n", name);
        return CLI_USAGE;
    }
    return cli_finish(cli_current->fn(argc - 1, argv + 1));
}
