/* SPDX-License-Identifier: Apache-2.0 */
/*
 * repl service: the replication relations of a running dsnfsd
 * (docs/replication.md), from the config's [replication NAME] sections
 * (read at start; a SIGHUP does not change them) and from the admin
 * API's POST /replications (kept in the state directory, relfile.h;
 * DELETE /replications/NAME ends them):
 *
 *   role = source       this server's datastore @datastore is sent to
 *                       @destination_url's dsnfsd, datastore
 *                       @destination_datastore, on @schedule (10min,
 *                       hourly, daily, none) or every @schedule_seconds
 *                       (tests), and by hand; a thread per relation runs
 *                       the transfers (relation.h over client.h), a clock
 *                       thread decides when, and skips (one log line,
 *                       counted, the relation's alarm) a run that falls
 *                       due while the last transfer still runs;
 *   role = destination  this server's datastore @datastore is fed by
 *                       the source holding the same @key_file: the admin
 *                       endpoint's POST /replications/NAME/peer
 *                       (peer.h), and the datastore is read-only to NFS
 *                       clients (export.h replica) until the break;
 *                       with @source_url and @source_datastore it can be
 *                       made the source (reverse.h).
 *
 * Each message to the other end is bounded by @timeout_seconds
 * (client.h).  The roles swap at a reverse (reverse.h): the role a
 * relation has now is the configured one unless STATE_DIR/repl-NAME
 * .reversed says otherwise.
 */
#ifndef DSNFS_REPL_SERVICE_H
#define DSNFS_REPL_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nfsd/repl/peer.h"
#include "nfsd/repl/relation.h"
#include "nfsd/repl/sched.h"

struct admin_ops;
struct export_table;

enum repl_role {
	REPL_ROLE_NONE = 0,
	REPL_ROLE_SOURCE,
	REPL_ROLE_DESTINATION,
};

/* One [replication NAME] section. */
struct repl_rel_config {
	char name[64];
	enum repl_role role;
	char datastore[64]; /* this server's */
	char key_file[1024];
	char url[1024]; /* source: the destination's admin endpoint */
	char dst_datastore[64]; /* source: the destination's datastore */
	char ca_file[1024]; /* source: checks an HTTPS destination */
	enum repl_schedule schedule;
	uint32_t schedule_seconds; /* 0: @schedule */
	uint32_t timeout_s; /* timeout_seconds; 0: REPL_TIMEOUT_DEFAULT_S */
	/* destination: the source's admin endpoint and datastore, for a
	 * reverse ("" none) */
	char src_url[1024];
	char src_datastore[64];
};

struct repl_config {
	struct repl_rel_config rel[REPL_PEERS_MAX];
	size_t n;
};

/* One key of [replication NAME] (config.h's config_section_fn, @arg a
 * struct repl_config, zeroed first).  Returns 0, -ENOENT (not a
 * [replication] section) or -EINVAL with the reason. */
int repl_config_section(void *arg, const char *section, const char *key,
			const char *value, char *errbuf, size_t errlen);

/* Whether @name may name a relation: at most 32 letters, digits, '-' and
 * '_' (it is a part of snapshot names).  Returns 0 or -EINVAL with the
 * reason. */
int repl_config_name_check(const char *name, char *errbuf, size_t errlen);

/* One key of a relation, @key = @value, into @r: the rules of every key
 * of [replication NAME] (key_file and ca_file among them).  Returns 0,
 * -ENOENT (no such key) or -EINVAL with the reason. */
int repl_config_key(struct repl_rel_config *r, const char *key,
		    const char *value, char *errbuf, size_t errlen);

/* What GET /volumes/NAME/replication and /metrics show of a relation. */
struct repl_status {
	char name[64];
	bool api; /* made through POST /replications, not the config */
	enum repl_role role; /* now (a reverse swaps them) */
	bool reversed; /* the role is not the configured one */
	/* source: "uninitialized", "idle", "transferring", "broken";
	 * destination: "idle", "applying", "broken" (static) */
	const char *state;
	char datastore[64];
	char url[1024];
	char dst_datastore[64];
	const char *schedule; /* static */
	uint32_t schedule_seconds;
	bool running, broken;
	char last[SNAP_NAME_MAX + 1];
	int64_t last_ok_s, last_attempt_s, lag_s; /* lag -1: no replica */
	uint64_t bytes_total, transfers_ok, transfers_failed, skipped;
	struct repl_xfer_stats last_stats;
	/* The source's own snapshots (chain.h) the last transfer carried
	 * and deleted on the destination; all carried. */
	uint64_t last_snapshots, last_snapshots_deleted, snapshots_total;
	char error[512]; /* the last transfer's failure; "" */
	int last_err; /* its -errno; 0: the last transfer went */
	int64_t last_err_s;
	char alarm[320]; /* "" none */
};

struct repl_service;

/*
 * Checks @cfg against the datastores of @exports (each named one local,
 * a destination's not a source's too), opens every relation (the
 * client to the other end when its URL is known, the key; a transfer a
 * kill left applied in part is undone) and starts the threads; marks
 * each destination datastore read-only while its relation is not
 * broken.  The engine's snapshot calls go through @ops (guard.h; NULL:
 * no lock).  @exports, @ops and @state_dir are borrowed for the
 * service's life.
 * The relations made through the API (relfile.h) are restored then,
 * but for a name of @cfg (the config's wins; logged), and one that no
 * longer passes is left out with a log line.
 * Returns 0 and *out (owned: repl_service_stop()), or -errno with the
 * reason and nothing running.
 */
int repl_service_start(const struct repl_config *cfg,
		       struct export_table *exports, struct admin_ops *ops,
		       const char *state_dir, struct repl_service **out,
		       char *errbuf, size_t errlen);

/* Stops the threads (a transfer under way ends first) and frees @s;
 * NULL is fine. */
void repl_service_stop(struct repl_service *s);

/* The destination's route (peer.h): repl_peers_auth() before the body,
 * repl_peers_handle() with it; the datastore's read-only switch follows
 * a BREAK or RESYNC. */
unsigned repl_service_peer_auth(struct repl_service *s, const char *name,
				const char *authorization);
unsigned repl_service_peer(struct repl_service *s, const char *name,
			   const char *authorization, const unsigned char *b,
			   size_t n, unsigned char *out, size_t *outlen);

/* The relations of datastore @volume (NULL: all) into @out (at most
 * @max); returns how many. */
size_t repl_service_status(struct repl_service *s, const char *volume,
			   struct repl_status *out, size_t max);

/* On the relations of datastore @volume (only @relation's when not
 * NULL): "transfer" (queued: each relation's thread runs it), "break",
 * "resync", "reverse" (reverse.h).  Returns 0, -ENOENT (no relation),
 * -EBUSY (a transfer runs), -EPERM / -EINVAL (the relation's own
 * refusal) or -errno, with the first failure's reason. */
int repl_service_action(struct repl_service *s, const char *volume,
			const char *relation, const char *action, char *errbuf,
			size_t errlen);

/*
 * POST /replications: relation @c (its key_file and ca_file not used)
 * with key @key (64 hex digits) and the CA @ca_pem (NULL: none; the
 * system's store), opened and started as a section would be, kept in
 * the state directory (relfile.h) and restored at the start.  Returns
 * 0, -EEXIST (a relation of that name), -EINVAL (its rules) or -errno,
 * with the reason; nothing kept on failure.
 */
int repl_service_create(struct repl_service *s, const struct repl_rel_config *c,
			const char *key, const char *ca_pem, char *errbuf,
			size_t errlen);

/* DELETE /replications/NAME: stops relation @name's thread (a transfer
 * under way ends at its next message) and removes its files; a
 * destination is broken off first (writable).  Snapshots, journal and
 * state stay.  Returns 0, -ENOENT, -EPERM (a relation of the config) or
 * -errno (the break), with the reason. */
int repl_service_delete(struct repl_service *s, const char *name, char *errbuf,
			size_t errlen);

/* Whether datastore @datastore is in a relation here; its name into
 * @relation (@len bytes). */
bool repl_service_uses(struct repl_service *s, const char *datastore,
		       char *relation, size_t len);

#endif
