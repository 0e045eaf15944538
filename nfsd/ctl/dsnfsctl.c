// SPDX-License-Identifier: Apache-2.0
/*
 * dsnfsctl: the command line tool for dsnfs operators.  Global options
 * come first, then a subcommand from the table below; everything after
 * it is the subcommand's (ctl.h).  Offline commands read files; the
 * others talk to dsnfsd's admin endpoint (-s HOST:PORT, or
 * DSNFSCTL_SERVER, or 127.0.0.1:8049) with the token of its admin.token
 * (--token-file, DSNFS_ADMIN_TOKEN_FILE, --state-dir DIR's, or
 * /var/lib/dsnfs/admin.token).  --json anywhere prints the API's JSON
 * instead of a table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/admin/auth.h"
#include "nfsd/base/base.h"
#include "nfsd/ctl/ctl.h"

struct ctl_command {
	const char *name;
	const char *usage;
	ctl_command_fn *run; /* offline */
	ctl_remote_fn *remote; /* over the admin API */
};

static const struct ctl_command ctl_commands[] = {
	{ .name = "pools",
	  .usage = "pools                     capacity pools",
	  .remote = ctl_pools_main },
	{ .name = "pool",
	  .usage = "pool create NAME --level L --size TIB [--qos auto|manual]"
		   " [--throughput MIBPS]\n"
		   "      pool set NAME [--level L] [--size TIB] [--throughput "
		   "MIBPS] [--qos manual]\n"
		   "      pool show|delete NAME",
	  .remote = ctl_pool_main },
	{ .name = "volumes",
	  .usage = "volumes                   datastores, quotas, QoS limits",
	  .remote = ctl_volumes_main },
	{ .name = "volume",
	  .usage = "volume create NAME --pool P --quota SIZE [--limit MIBPS]\n"
		   "      volume set NAME [--pool P] [--quota SIZE] [--limit "
		   "MIBPS]\n"
		   "      volume show|delete NAME",
	  .remote = ctl_volume_main },
	{ .name = "flows",
	  .usage = "flows                     connection x datastore traffic",
	  .remote = ctl_flows_main },
	{ .name = "hosts",
	  .usage = "hosts                     traffic per client address",
	  .remote = ctl_hosts_main },
	{ .name = "alarms",
	  .usage = "alarms                    thin-provisioning alarms",
	  .remote = ctl_alarms_main },
	{ .name = "caps",
	  .usage = "caps [set --scale X --flow-mibps N ...]  traffic caps",
	  .remote = ctl_caps_main },
	{ .name = "metrics",
	  .usage = "metrics                   the Prometheus text",
	  .remote = ctl_metrics_main },
	{ .name = "changes",
	  .usage = "changes [revert]          what the API changed over the "
		   "config\n      (kept across restarts); revert: back to the "
		   "config, live",
	  .remote = ctl_changes_main },
	{ .name = "vmdk",
	  .usage = "vmdk clone DATASTORE SRC DST --full|--linked|--native\n"
		   "      vmdk reserve DATASTORE PATH "
		   "--zeroedthick|--eagerzeroedthick\n"
		   "      vmdk stats DATASTORE PATH   storage-side (VAAI-NAS)"
		   "; paths in the datastore",
	  .remote = ctl_vmdk_main },
	{ .name = "snapshot",
	  .usage =
		  "snapshot create|delete|restore DATASTORE NAME\n"
		  "      snapshot list DATASTORE   native datastore snapshots\n"
		  "      snapshot policy show|clear DATASTORE\n"
		  "      snapshot policy set DATASTORE [--hourly ':MM keep N']"
		  "\n        [--daily 'HH:MM keep N'] [--weekly 'DAYS HH:MM "
		  "keep N']\n        [--monthly 'DAYS HH:MM keep N']   "
		  "snapshots on a schedule (UTC)",
	  .remote = ctl_snapshot_main },
	{ .name = "replication",
	  .usage = "replication show|transfer|break|resync|reverse "
		   "DATASTORE [--relation NAME]\n      the datastore's "
		   "replication relations ([replication] in\n      "
		   "dsnfsd.conf, or made through the API)\n"
		   "  replication list | create NAME --role R --datastore DS "
		   "--key-file F ... |\n      delete NAME   the relations "
		   "made through the API",
	  .remote = ctl_replication_main },
	{ .name = "operations",
	  .usage = "operations [ID]           long operations and their "
		   "progress",
	  .remote = ctl_operations_main },
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
	fprintf(out,
		"usage: dsnfsctl [-s HOST:PORT] [--token-file FILE] "
		"[--json] COMMAND [OPTIONS]\n"
		"       dsnfsctl --help | --version\n"
		"  -s, --server HOST:PORT  the admin endpoint "
		"(DSNFSCTL_SERVER; 127.0.0.1:8049;\n"
		"                          https://HOST:PORT: over TLS)\n"
		"  --token-file FILE       the admin token "
		"(DSNFS_ADMIN_TOKEN_FILE;\n"
		"                          " ADMIN_TOKEN_DEFAULT_PATH ")\n"
		"  --state-dir DIR         the token is DIR/admin.token\n"
		"  --cacert FILE           HTTPS, the server's certificate "
		"signed by FILE\n"
		"  -j, --json              the API's JSON, not a table\n");
	for (size_t i = 0; i < ARRAY_SIZE(ctl_commands); i++) {
		fprintf(out, "  dsnfsctl %s\n", ctl_commands[i].usage);
	}
}

/* Takes the global options off the front of argv, and --json from
 * anywhere.  Returns how many leading arguments were options, or -1. */
static int ctl_globals(int *argc, char **argv, struct ctl_remote *r)
{
	static char state_token[4096];
	int i = 1, n = 1;

	r->server = getenv("DSNFSCTL_SERVER");
	if (!r->server || !r->server[0]) {
		r->server = CTL_DEFAULT_SERVER;
	}
	for (int j = 1; j < *argc; j++) {
		if (!strcmp(argv[j], "--json") || !strcmp(argv[j], "-j")) {
			r->json = true;
		} else {
			argv[n++] = argv[j];
		}
	}
	*argc = n;
	while (i < *argc && argv[i][0] == '-') {
		if ((!strcmp(argv[i], "-s") || !strcmp(argv[i], "--server")) &&
		    i + 1 < *argc) {
			r->server = argv[i + 1];
			i += 2;
		} else if (!strncmp(argv[i], "--server=", 9)) {
			r->server = argv[i] + 9;
			i++;
		} else if (!strcmp(argv[i], "--token-file") && i + 1 < *argc) {
			r->token_file = argv[i + 1];
			i += 2;
		} else if (!strcmp(argv[i], "--state-dir") && i + 1 < *argc) {
			snprintf(state_token, sizeof(state_token), "%s/%s",
				 argv[i + 1], ADMIN_TOKEN_FILE_NAME);
			r->token_file = state_token;
			i += 2;
		} else if (!strcmp(argv[i], "--cacert") && i + 1 < *argc) {
			r->cacert = argv[i + 1];
			i += 2;
		} else {
			return -1;
		}
	}
	return i - 1;
}

/* The admin token, before a command that talks to dsnfsd: a clear error
 * when it cannot be read, not a 401 later. */
static int ctl_token_load(struct ctl_remote *r)
{
	const char *path = admin_token_path(r->token_file);
	char err[512];
	int rc = admin_token_read(path, r->token, err, sizeof(err));

	if (rc) {
		fprintf(stderr,
			"dsnfsctl: cannot read the admin token: %s "
			"(--token-file "
			"FILE or " ADMIN_TOKEN_ENV " names it; it is dsnfsd's "
			"STATE_DIR/" ADMIN_TOKEN_FILE_NAME ")\n",
			err);
	}
	return rc;
}

int main(int argc, char **argv)
{
	struct ctl_remote r = { 0 };
	int skip;

	if (argc >= 2 &&
	    (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
	     !strcmp(argv[1], "-h"))) {
		ctl_usage(stdout);
		return CTL_EXIT_OK;
	}
	if (argc >= 2 &&
	    (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))) {
		printf("dsnfsctl %s\n", DSNFS_VERSION);
		return CTL_EXIT_OK;
	}
	skip = ctl_globals(&argc, argv, &r);
	if (skip < 0 || argc - skip < 2) {
		ctl_usage(stderr);
		return CTL_EXIT_USAGE;
	}
	argc -= skip;
	argv += skip;
	for (size_t i = 0; i < ARRAY_SIZE(ctl_commands); i++) {
		const struct ctl_command *c = &ctl_commands[i];

		if (strcmp(argv[1], c->name)) {
			continue;
		}
		if (c->run) {
			return c->run(argc - 1, argv + 1);
		}
		return ctl_token_load(&r) ? CTL_EXIT_FAIL
					  : c->remote(&r, argc - 1, argv + 1);
	}
	fprintf(stderr, "dsnfsctl: unknown command '%s'\n", argv[1]);
	ctl_usage(stderr);
	return CTL_EXIT_USAGE;
}
