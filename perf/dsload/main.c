/*
 * dsload: an emulated fleet of ESXi hosts driving NFSv3 datastores
 * (docs/dsload.md).  main parses argv and hands over to a command.
 */
#include <curl/curl.h>
#include <stdio.h>

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
	case DSLOAD_CMD_SWEEP:
		return sweep_main(&o);
	case DSLOAD_CMD_PROFILE:
		return profile_main(&o);
	case DSLOAD_CMD_RUN:
		break;
	}
	return run_main(&o);
}

int main(int argc, char **argv)
{
	int status;

	/* Before any thread: curl_global_init() is not thread-safe. */
	curl_global_init(CURL_GLOBAL_DEFAULT);
	status = dsload_main(argc, argv);
	curl_global_cleanup();
	return status;
}
