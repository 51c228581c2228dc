/* cmd_repair.c - `fasweep remove`: deletes a damaged record (one whose
 * value does not decode) by its key, so a store that holds one is whole
 * again (contract: cli.h; the store's side is store_remove, store.h). A
 * readable record is removed only with --force.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../store/store.h"
#include "cli.h"

typedef struct remove_args {
    const char *store;
    int force;
} remove_args;

static int remove_run(const char *path, const char *key, int force)
{
    /* Removing from a store that is not there must not create one. */
    struct stat st;
    if (stat(path, &st) != 0) {
        cli_say("no results store at %s (%s); pass the store's directory with --store or "
                "FASWEEP_STORE",
                path, strerror(errno));
        return CLI_FAIL;
    }
    store *s = cli_open_store(path, 0);
    if (!s)
        return CLI_FAIL;
    const int rc = store_remove(s, key, force);
    int out = CLI_OK;
    if (rc == STORE_OK) {
        printf("removed '%s' from %s\n", key, path);
    } else if (rc == STORE_NOTFOUND) {
        cli_say("no record with key '%s' in %s; `fasweep export` (or the warning that named "
                "it) gives the exact key",
                key, path);
        out = CLI_FAIL;
    } else if (rc == STORE_EINVAL) {
        cli_say("%s", store_last_error(s)); /* readable: says to pass --force */
        out = CLI_USAGE;
    } else {
        out = cli_store_fail(s, rc, "remove");
    }
    store_close(s);
    return out;
}

static const cli_opt remove_opts[] = {{.name = "force",
                                       .kind = CLI_FLAG,
                                       .at = CLI_AT(remove_args, force),
                                       .help = "remove the record also when it reads fine"},
                                      CLI_OPT_STORE(remove_args),
                                      {0}};

static int remove_main(int argc, char **argv)
{
    remove_args a = {0};
    int first;
    const int rc = cli_parse(argc, argv, &a, &first);
    if (rc >= 0)
        return rc;
    if (argc - first != 1)
        return cli_usage_error("wants exactly one KEY, got %d arguments", argc - first);
    if (!*argv[first])
        return cli_usage_error("the KEY is empty");
    /* Said here, not by the store ("store_remove: key must be ..."). */
    if (strlen(argv[first]) > STORE_KEY_MAX)
        return cli_usage_error("the KEY is %zu bytes; a store key (DEVICE|PROBLEM|BUILD|CONFIG|"
                               "MODE) is at most %d, so no record has it",
                               strlen(argv[first]), STORE_KEY_MAX);
    return remove_run(cli_store_path(a.store), argv[first], a.force);
}

const cli_command cmd_remove = {
    .name = "remove",
    .summary = "delete a damaged record (one that does not decode) by its key",
    .usage = "KEY [OPTIONS]",
    .about = "Deletes the record at KEY (DEVICE|PROBLEM|BUILD|CONFIG|MODE, quote it) when its\n"
             "stored value does not decode: the record every reading command skips with a\n"
             "warning naming its key. A record that reads fine is kept unless --force is given.\n",
    .opts = remove_opts,
    .exit = "0 removed, 1 no such key or store failure, 2 the record reads fine (no --force)\n"
            "or bad option.",
    .fn = remove_main,
};
