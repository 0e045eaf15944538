/*
 * ctl: dsnfsctl's subcommands.  Each one is a function that parses its own
 * arguments (argv[0] is the subcommand's name) and returns the exit status:
 * 0, 1 (it failed; a message went to stderr) or 2 (bad usage).  Adding one
 * (the admin API's HTTP commands) is a new file and one row in dsnfsctl.c.
 */
#ifndef DSNFS_CTL_H
#define DSNFS_CTL_H

#include <stddef.h>

struct pool_event;

#define CTL_EXIT_OK 0
#define CTL_EXIT_FAIL 1
#define CTL_EXIT_USAGE 2

typedef int ctl_command_fn(int argc, char **argv);

/* bill.c: `dsnfsctl bill --ledger FILE [--prices FILE] --from T --to T`,
 * the explained bill of a period, offline. */
int ctl_bill_main(int argc, char **argv);

/* ledger.c: `dsnfsctl ledger --ledger FILE`, the capacity events. */
int ctl_ledger_main(int argc, char **argv);

/* Opens @path read-only and returns its events (owned, free()) in *events,
 * warning on stderr about a torn last record.  Returns 0 or prints the
 * error and returns -errno. */
int ctl_ledger_read(const char *path, struct pool_event **events, size_t *n);

#endif
