/*
 * dsnfsctl: the command line tool for dsnfs operators.  argv[1] names a
 * subcommand from the table below; everything after it is the
 * subcommand's (ctl.h).
 */
#include <stdio.h>
#include <string.h>

#include "nfsd/base.h"
#include "nfsd/ctl/ctl.h"

struct ctl_command {
	const char *name;
	const char *usage;
	ctl_command_fn *run;
};

static const struct ctl_command ctl_commands[] = {
	{ .name = "bill",
	  .usage = "bill --ledger FILE [--prices FILE] --from TIME --to TIME"
		   "\n      the explained cost of every pool in [from, to);"
		   "\n      TIME is UTC: 2024-01-31, 2024-01-31T12:00:00Z, "
		   "@EPOCH",
	  .run = ctl_bill_main },
	{ .name = "ledger",
	  .usage = "ledger --ledger FILE\n      the capacity events, oldest "
		   "first",
	  .run = ctl_ledger_main },
};

static void ctl_usage(FILE *out)
{
	fprintf(out, "usage: dsnfsctl COMMAND [OPTIONS]\n");
	for (size_t i = 0; i < ARRAY_SIZE(ctl_commands); i++)
		fprintf(out, "  dsnfsctl %s\n", ctl_commands[i].usage);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		ctl_usage(stderr);
		return CTL_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "-h")) {
		ctl_usage(stdout);
		return CTL_EXIT_OK;
	}
	for (size_t i = 0; i < ARRAY_SIZE(ctl_commands); i++) {
		if (!strcmp(argv[1], ctl_commands[i].name))
			return ctl_commands[i].run(argc - 1, argv + 1);
	}
	fprintf(stderr, "dsnfsctl: unknown command '%s'\n", argv[1]);
	ctl_usage(stderr);
	return CTL_EXIT_USAGE;
}
