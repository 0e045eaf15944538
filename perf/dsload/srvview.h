/* SPDX-License-Identifier: Apache-2.0 */
/*
 * srvview: the server's view of a phase beside the client's, as the
 * vSAN benchmarks report them (docs/published.md, section 4).
 * dsnfsd's admin endpoint counts, per datastore (/volumes) and
 * per client address (/hosts), the READ, WRITE and other calls it started
 * and finished, their bytes and their summed latency (arrival to reply,
 * queueing in the traffic model included).  Two samples, at the edges of
 * the measured window, give the server's IOPS, MiB/s and mean latency
 * over that window; server bytes over client bytes is the write
 * amplification (1.0 for a flat file: each client write is one server
 * write).  Parsing and arithmetic only: admin.c fetches.
 */
#ifndef DSLOAD_SRVVIEW_H
#define DSLOAD_SRVVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SRV_NAME_MAX 64
#define SRV_ENTRIES_MAX 64 /* volumes, or hosts, kept per sample */

enum srv_dir {
	SRV_READ = 0,
	SRV_WRITE,
	SRV_OTHER,
	SRV_DIRS,
};

struct srv_counters {
	uint64_t ops[SRV_DIRS];
	uint64_t bytes[SRV_DIRS];
	uint64_t done[SRV_DIRS];
	uint64_t latency_ns[SRV_DIRS];
};

struct srv_entry {
	char name[SRV_NAME_MAX];
	struct srv_counters c;
};

/* The counters at one instant. */
struct srv_sample {
	int64_t at_ns;
	size_t nvol, nhost;
	struct srv_entry vol[SRV_ENTRIES_MAX];
	struct srv_entry host[SRV_ENTRIES_MAX];
};

/* Rates of one volume, host or the total over an interval. */
struct srv_rate {
	char name[SRV_NAME_MAX];
	double iops[SRV_DIRS];
	double mibps[SRV_DIRS];
	double lat_ms[SRV_DIRS]; /* mean of the calls finished in it */
};

struct srv_view {
	bool sampled; /* an admin endpoint was asked */
	bool ok; /* and both samples were good */
	char why[192]; /* when sampled but not ok */
	double seconds; /* between the two samples */
	size_t nvol, nhost;
	struct srv_rate vol[SRV_ENTRIES_MAX];
	struct srv_rate host[SRV_ENTRIES_MAX];
	struct srv_rate total; /* over the listed volumes */
	/* the client's own totals over the same interval, for the ratios */
	double client_iops, client_mibps, client_write_mibps;
};

/*
 * Fills @s from the bodies of GET /volumes and GET /hosts (borrowed),
 * keeping at most SRV_ENTRIES_MAX of each.  Returns 0, or -EBADMSG with
 * the reason in @errbuf.
 */
int srv_sample_parse(const char *volumes_json, const char *hosts_json,
		     int64_t at_ns, struct srv_sample *s, char *errbuf,
		     size_t errlen);

/*
 * The rates from @a to @b (borrowed) of the volumes named in @vols
 * (@nvols of them, SRV_NAME_MAX apart) and of the hosts whose name
 * starts with @host_prefix.  A counter that went backwards (the server
 * restarted, or its flows closed) makes the view not ok, with the reason.
 */
void srv_view_compute(const struct srv_sample *a, const struct srv_sample *b,
		      const char (*vols)[SRV_NAME_MAX], size_t nvols,
		      const char *host_prefix, struct srv_view *v);

#endif
