/* SPDX-License-Identifier: Apache-2.0 */
/*
 * server: a dsnfsd that dsload starts and stops itself, for the profile
 * runner: `dsnfsd -f -c CONFIG -l 127.0.0.1 -p 0 -m 0 -P 0 -A 0` (the
 * calibrated server) or `dsnfsd -f -e NAME=DIR ... -s STATE` (the same
 * datastores, no traffic caps: the machine's ceiling).  The ports come from the
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

/* Creates every datastore directory of @cfg that is missing (mkdir -p):
 * a fresh checkout has no var/.  Returns 0 or -errno with @errbuf. */
int server_dirs_make(const struct server_config *cfg, char *errbuf,
		     size_t errlen);

/* SIGTERM, then waits (SIGKILL after 10 s).  Returns its exit status. */
int server_stop(struct server_proc *sp);

/* dsnfsd next to the running dsload (/proc/self/exe), into @buf. */
void server_default_path(char *buf, size_t len);

#endif
