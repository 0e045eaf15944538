/* SPDX-License-Identifier: Apache-2.0 */
/*
 * server: a dsnfsd that dsload starts and stops itself, for the profile
 * runner: `dsnfsd -f -c CONFIG -l 127.0.0.1 -p 0 -m 0 -P 0 -A 0` (the
 * calibrated server) or `dsnfsd -f -s STATE -c ACCESS -e NAME=DIR ...`
 * (the same datastores, no traffic caps: the machine's ceiling; ACCESS
 * holds CONFIG's access keys of each, server_access_write()).  The ports
 * come from the
 * first line dsnfsd prints ("dsnfsd: listening on ... nfs=N mount=M
 * portmap=P").  Also reads what the runner needs from a server config:
 * the datastores and the [traffic] scale.
 */
#ifndef DSLOAD_SERVER_H
#define DSLOAD_SERVER_H

#include <stdint.h>
#include <sys/types.h>

#include "perf/dsload/fleet.h"

#define SERVER_PATH_MAX 512

struct server_proc {
	pid_t pid;
	uint16_t nfs_port, mount_port, portmap_port;
	uint16_t admin_port; /* 0: none */
};

/* What the profile runner reads from a dsnfsd config file. */
struct server_config {
	unsigned ndatastores;
	char names[FLEET_DS_MAX][FLEET_NAME_MAX];
	char paths[FLEET_DS_MAX][SERVER_PATH_MAX];
	char state_dir[SERVER_PATH_MAX];
	double scale; /* [traffic] scale; 1 when absent */
	bool has_traffic;
};

/* Reads @path.  Returns 0, -ENOENT, or -EINVAL with the line in @errbuf. */
int server_config_read(const char *path, struct server_config *cfg,
		       char *errbuf, size_t errlen);

/*
 * Starts @dsnfsd with @argv (borrowed, NULL-terminated, argv[0] included;
 * the listen/port options are appended here), its stderr to @log_path,
 * and waits up to 10 s for its "listening" line.  Returns 0 with @sp
 * filled, or -errno with the reason in @errbuf (the process is gone).
 */
int server_start(const char *dsnfsd, const char *const *argv,
		 const char *log_path, struct server_proc *sp, char *errbuf,
		 size_t errlen);

/*
 * Writes to @out_path, for every datastore of @cfg, the access keys the
 * config @base_path gives it (clients, secure, squash, anonuid, anongid;
 * nothing else: no pool, quota or caps), so that the uncapped server
 * started with -e NAME=DIR lets in the same clients as the capped one.
 * Without them an -e datastore gets dsnfsd's defaults (secure, squash =
 * root), which refuse dsload: it binds unprivileged ports and writes as
 * uid 0.  Returns 0 or -errno with the reason in @errbuf.
 */
int server_access_write(const char *base_path, const struct server_config *cfg,
			const char *out_path, char *errbuf, size_t errlen);

/* Length of one -e NAME=DIR argument of server_argv_uncapped(). */
#define SERVER_EXPORT_ARG_MAX (SERVER_PATH_MAX + 80)
/* Entries of server_argv_uncapped()'s @argv, its NULL included. */
#define SERVER_ARGV_UNCAPPED_MAX (2 * FLEET_DS_MAX + 8)

/*
 * The uncapped server's argv (argv[0] @dsnfsd): -s @state_dir, -c
 * @access_conf (server_access_write()'s file) and -e NAME=DIR for every
 * datastore of @cfg, the strings in @storage; NULL-terminated.
 */
void server_argv_uncapped(const struct server_config *cfg, const char *dsnfsd,
			  const char *state_dir, const char *access_conf,
			  char storage[][SERVER_EXPORT_ARG_MAX],
			  const char **argv);

/* Creates every datastore directory of @cfg that is missing (mkdir -p):
 * a fresh checkout has no var/.  Returns 0 or -errno with @errbuf. */
int server_dirs_make(const struct server_config *cfg, char *errbuf,
		     size_t errlen);

/* SIGTERM, then waits (SIGKILL after 10 s).  Returns its exit status. */
int server_stop(struct server_proc *sp);

/* dsnfsd next to the running dsload (/proc/self/exe), into @buf. */
void server_default_path(char *buf, size_t len);

#endif
