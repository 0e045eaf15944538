// SPDX-License-Identifier: Apache-2.0
/*
 * dsload: an emulated fleet of ESXi hosts driving NFSv3 datastores
 * (docs/dsload.md).  main parses argv and hands over to a command.
 */
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "perf/dsload/opts.h"
#include "perf/dsload/profile.h"
#include "perf/dsload/run.h"
#include "perf/dsload/sweep.h"

static int dsload_main(int argc, char **argv)
{
	struct dsload_opts o;
	char errbuf[512];

	if (opts_parse(argc, argv, &o, errbuf, sizeof(errbuf))) {
		fprintf(stderr, "dsload: %s (see dsload --help)\n", errbuf);
		return DSLOAD_EXIT_USAGE;
	}
	switch (o.cmd) {
	case DSLOAD_CMD_HELP:
		opts_usage(stdout);
		return DSLOAD_EXIT_OK;
	case DSLOAD_CMD_VERSION:
		printf("dsload %s\n", DSNFS_VERSION);
		return DSLOAD_EXIT_OK;
	case DSLOAD_CMD_SWEEP:
		return sweep_main(&o);
	case DSLOAD_CMD_PROFILE:
		return profile_main(&o);
	case DSLOAD_CMD_RUN:
		break;
	}
	return run_main(&o);
}

/* Every flow is a socket: 32 hosts x 32 datastores pass the usual soft
 * limit of 1024 descriptors, so use all that the hard limit allows. */
static void dsload_fd_limit_raise(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
			fprintf(stderr,
				"dsload: cannot raise the descriptor limit: "
				"%s\n",
				strerror(errno));
		}
	}
}

int main(int argc, char **argv)
{
	int status;

	dsload_fd_limit_raise();

	/* Before any thread: curl_global_init() is not thread-safe. */
	curl_global_init(CURL_GLOBAL_DEFAULT);
	status = dsload_main(argc, argv);
	curl_global_cleanup();
	return status;
}
