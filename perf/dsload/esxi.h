/* SPDX-License-Identifier: Apache-2.0 */
/*
 * esxi: the rules of the ESXi NFSv3 client that dsload follows, apart
 * from any socket so that they are tested on a fake clock
 * (docs/dsload.md, "What ESXi 8 does on the wire"):
 *
 *   limits     nConnect (8.0U1) 1 connection per datastore on ESXi 7; on
 *              8 at most /NFS/MaxConnectionsPerDatastore (4, up to 8); all
 *              NFSv3 datastores of a host together at most 256;
 *   sharing    at most SunRPC.MaxConnPerIP (32) connections to one server
 *              address: the datastores past it share the ones open (one
 *              connection then carries several datastores' calls; the file
 *              handle says which);
 *   heartbeat  a GETATTR of the datastore root when none succeeded for
 *              NFS.HeartbeatDelta (5 s), looked at every
 *              NFS.HeartbeatFrequency (12 s), given up after
 *              NFS.HeartbeatTimeout (5 s); APD (all paths down) starts
 *              after Misc.ApdStartCount (3) failures in a row, the volume
 *              is marked down after NFS.HeartbeatMaxFailures (10), and
 *              Misc.APDTimeout (140 s) after APD started I/O fails fast;
 *   locks      every open disk's .lck file is rewritten (84 bytes) every
 *              NFS.DiskFileLockUpdateFreq (10 s).
 *
 * Every timer is multiplied by timer_scale, a lab knob: an integration
 * test sees APD in seconds rather than minutes.
 */
#ifndef DSLOAD_ESXI_H
#define DSLOAD_ESXI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ESXI_NCONNECT_MAX 8 /* the largest MaxConnectionsPerDatastore */
#define ESXI_NCONNECT_DEFAULT_MAX 4 /* MaxConnectionsPerDatastore's default */
#define ESXI_HOST_CONN_MAX 256 /* NFSv3 connections of one host */
#define ESXI_CONN_PER_IP_MAX 128 /* SunRPC.MaxConnPerIP's largest */
#define ESXI_CONN_PER_IP_DEFAULT 32 /* since 7.0 (4 before) */
#define ESXI_LCK_BYTES 84 /* one .lck refresh: a WRITE of this many */

struct esxi_conf {
	unsigned version; /* 7 or 8 */
	unsigned max_conns_per_ds; /* /NFS/MaxConnectionsPerDatastore */
	unsigned max_conn_per_ip; /* SunRPC.MaxConnPerIP */
	double timer_scale; /* every timer below x this (lab knob) */
	double hb_delta_s; /* NFS.HeartbeatDelta */
	double hb_frequency_s; /* NFS.HeartbeatFrequency */
	double hb_timeout_s; /* NFS.HeartbeatTimeout */
	unsigned hb_max_failures; /* NFS.HeartbeatMaxFailures */
	unsigned apd_start_count; /* Misc.ApdStartCount */
	double apd_timeout_s; /* Misc.APDTimeout */
	double lck_refresh_s; /* NFS.DiskFileLockUpdateFreq */
};

/* ESXi 8.0U3's defaults, timer scale 1. */
void esxi_conf_default(struct esxi_conf *c);

/*
 * Whether a host of @c may mount @ndatastores datastores with @nconnect
 * connections each.  Returns 0, or -EINVAL with the rule broken, and the
 * setting that sets it, in @errbuf.
 */
int esxi_conf_check(const struct esxi_conf *c, unsigned nconnect,
		    unsigned ndatastores, char *errbuf, size_t errlen);

/*
 * Which of a host's connections carries connection i of datastore d:
 * map[d * nconnect + i] (map has ndatastores x nconnect entries).  The
 * first datastores get connections of their own, in mount order, up to
 * SunRPC.MaxConnPerIP; the rest take the open ones in turn.  Returns the
 * number of connections to open.
 */
unsigned esxi_conn_plan(const struct esxi_conf *c, unsigned nconnect,
			unsigned ndatastores, unsigned *map);

/* How many datastores of @map share a connection with another one. */
unsigned esxi_conn_shared(const unsigned *map, unsigned nconnect,
			  unsigned ndatastores, unsigned nconns);

/* The timers of @c, scaled, in ns. */
struct esxi_timers {
	int64_t delta_ns, frequency_ns, timeout_ns, apd_timeout_ns;
	int64_t lck_ns;
	unsigned max_failures, apd_start_count;
};

void esxi_timers_get(const struct esxi_conf *c, struct esxi_timers *t);

enum esxi_vol_state {
	ESXI_VOL_UP = 0, /* heartbeats answered */
	ESXI_VOL_APD, /* ApdStartCount failures in a row */
	ESXI_VOL_DOWN, /* HeartbeatMaxFailures in a row: marked down */
};

/* What one datastore's heartbeats saw (one host's mount). */
struct esxi_hb_counters {
	uint64_t sent, ok, failures;
	uint64_t apd_starts, downs, apd_timeouts;
	uint64_t recoveries; /* back in service after failures */
	int64_t outage_max_ns; /* first failed heartbeat sent to the first
				  answered after it, the longest */
};

/* The heartbeat state machine of one mounted datastore. */
struct esxi_hb {
	struct esxi_timers t;
	enum esxi_vol_state state;
	bool inflight;
	bool apd_timed_out;
	unsigned failures; /* in a row */
	int64_t last_ok_ns, sent_ns, first_fail_ns, apd_start_ns;
	struct esxi_hb_counters c;
};

/* A datastore just mounted at @now_ns (its MNT and FSINFO answered). */
void esxi_hb_init(struct esxi_hb *hb, const struct esxi_timers *t,
		  int64_t now_ns);

/* The heartbeat world runs (every HeartbeatFrequency): notes an APD
 * timeout, and returns true when a GETATTR of the root is due now. */
bool esxi_hb_tick(struct esxi_hb *hb, int64_t now_ns);

/* The GETATTR went on the wire. */
void esxi_hb_sent(struct esxi_hb *hb, int64_t now_ns);

/* True when the heartbeat on the wire has waited HeartbeatTimeout. */
bool esxi_hb_expired(const struct esxi_hb *hb, int64_t now_ns);

/* Its outcome: @ok false for an error, or no reply within the timeout. */
void esxi_hb_result(struct esxi_hb *hb, bool ok, int64_t now_ns);

const char *esxi_vol_state_name(enum esxi_vol_state s);

#endif
