/* SPDX-License-Identifier: Apache-2.0 */
/*
 * overlay: what the admin API changed over the config, kept across
 * restarts (docs/admin-api.md, docs/pools.md section 5).
 *
 * The rule: the config declares the starting state; the overlay is how the
 * live state differs from it, object by object and field by field: pools
 * and pool memberships of datastores the API created (every field),
 * changed (the fields that differ) or deleted, and the [traffic] caps it
 * changed.  Every successful API change recomputes it from the live state
 * and writes it to STATE_DIR/admin-state.json (atomically: temp file,
 * fsync, rename, fsync of the directory).  At start and at every SIGHUP the
 * server applies the config, then the overlay, as one registry change.  An
 * entry that no longer fits the config (the config shrank a pool below the
 * API's volumes, dropped a pool the API changed, ...) is dropped, with a
 * warning naming it and the rule, and the file is rewritten.  A field the
 * config comes to agree with leaves the overlay by itself.
 *
 * struct overlay is plain data (overlay.c: diff and apply; codec.c: JSON;
 * file.c: the file); struct overlay_store (store.c) is the server's copy
 * behind the lock that serialises every change of the live state.
 */
#ifndef DSNFS_OVERLAY_H
#define DSNFS_OVERLAY_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "nfsd/export/export.h"
#include "nfsd/pool/pool.h"
#include "nfsd/traffic/traffic.h"

#define OVERLAY_FILE_NAME "admin-state.json"
#define OVERLAY_FORMAT "dsnfsd-admin-state"
#define OVERLAY_VERSION 1
/* Larger files are refused before they are read: a full overlay (every
 * entry with every field) is far below this. */
#define OVERLAY_FILE_MAX_BYTES (1u << 20)
/* A diff has at most one entry per object of either side. */
#define OVERLAY_MAX_POOLS (2 * POOL_MAX_POOLS)
#define OVERLAY_MAX_VOLUMES (2 * POOL_MAX_VOLUMES)

enum overlay_change {
	OVERLAY_CREATED = 0, /* not in the config: every field is set */
	OVERLAY_CHANGED, /* in the config: the fields set differ */
	OVERLAY_DELETED, /* in the config, deleted through the API */
};

/* Fields of a pool entry (bits of overlay_pool.fields). */
#define OVERLAY_POOL_LEVEL (1u << 0)
#define OVERLAY_POOL_QOS (1u << 1)
#define OVERLAY_POOL_SIZE (1u << 2)
#define OVERLAY_POOL_PURCHASED (1u << 3)
#define OVERLAY_POOL_ALL 0xfu

/* Fields of a volume entry: its pool, quota and manual QoS limit. */
#define OVERLAY_VOLUME_POOL (1u << 0)
#define OVERLAY_VOLUME_QUOTA (1u << 1)
#define OVERLAY_VOLUME_LIMIT (1u << 2)
#define OVERLAY_VOLUME_ALL 0x7u

/* Fields of the caps (struct traffic_caps, in its own units). */
#define OVERLAY_CAPS_SCALE (1u << 0)
#define OVERLAY_CAPS_FLOW_BYTES (1u << 1)
#define OVERLAY_CAPS_FLOW_OPS (1u << 2)
#define OVERLAY_CAPS_HOST_BYTES (1u << 3)
#define OVERLAY_CAPS_HOST_OPS (1u << 4)
#define OVERLAY_CAPS_VOLUME_OPS (1u << 5)
#define OVERLAY_CAPS_CONTENTION (1u << 6)
#define OVERLAY_CAPS_BURST (1u << 7)
#define OVERLAY_CAPS_VOLUME_CONTENTION (1u << 8)
#define OVERLAY_CAPS_ALL 0x1ffu

struct overlay_pool {
	enum overlay_change change;
	unsigned fields; /* OVERLAY_POOL_*: which members of pool count */
	struct pool pool; /* its name, and the values of its fields */
};

struct overlay_volume {
	enum overlay_change change;
	unsigned fields; /* OVERLAY_VOLUME_* */
	struct pool_volume volume;
};

/* About 90 KiB: allocate it. */
struct overlay {
	size_t npools;
	struct overlay_pool pools[OVERLAY_MAX_POOLS];
	size_t nvolumes;
	struct overlay_volume volumes[OVERLAY_MAX_VOLUMES];
	unsigned caps_fields; /* OVERLAY_CAPS_* */
	struct traffic_caps caps; /* the values of caps_fields */
};

/* ---- diff and apply (overlay.c) ---------------------------------------- */

/* Empties @ov: no change over the config. */
void overlay_clear(struct overlay *ov);

/* True when @ov changes nothing. */
bool overlay_empty(const struct overlay *ov);

/*
 * Fills @out with how @live differs from @base (all borrowed): pools and
 * volumes created, changed (only the fields that differ) and deleted, in
 * the order of @live then of @base, and the caps fields that differ.
 */
void overlay_diff(const struct pool_state *base,
		  const struct traffic_caps *base_caps,
		  const struct pool_state *live,
		  const struct traffic_caps *live_caps, struct overlay *out);

/* Told about an entry that is dropped: @entry describes it ("pool gold
 * (changed: size_tib=2)"), @why names the rule or the reason.  Both are
 * borrowed for the call. */
typedef void overlay_refused_fn(void *arg, const char *entry, const char *why);

/*
 * Applies @ov over @base and @base_caps (all borrowed; @base must pass
 * pool_state_check(), as a finished config does) into @out and @caps_out.
 * When the whole overlay gives a valid state, that is the result.  If not,
 * the entries are applied one at a time, in their order, each kept only if
 * the state stays valid, and the refused ones are tried again after every
 * pass that kept one; what never fits is dropped, and @refused (may be
 * NULL) is called once for each, in order.  A volume entry that creates
 * a membership is dropped too when @exports (may be NULL: no check) has no
 * datastore of its name.  *ndropped (may be NULL) returns how many were
 * dropped.  Returns 0 (@out passes pool_state_check()) or -ENOMEM.
 */
int overlay_apply(const struct overlay *ov, const struct pool_state *base,
		  const struct traffic_caps *base_caps,
		  const struct export_table *exports, struct pool_state *out,
		  struct traffic_caps *caps_out, overlay_refused_fn *refused,
		  void *arg, size_t *ndropped);

/* ---- JSON (codec.c) ---------------------------------------------------- */

/*
 * The document of @ov (borrowed):
 *   {"format": "dsnfsd-admin-state", "version": 1,
 *    "pools":   [{"name", "change": "created"|"changed"|"deleted",
 *                 ["level"], ["qos"], ["size_tib"], ["purchased_mibps"]}],
 *    "volumes": [{"name", "change", ["pool"], ["quota_bytes"],
 *                 ["limit_mibps"]}],
 *    "caps":    {["scale"], ["flow_bytes_per_s"], ["flow_ops_per_s"],
 *                ["host_bytes_per_s"], ["host_ops_per_s"],
 *                ["volume_ops_per_s"], ["host_contention"],
 *                ["volume_contention"], ["burst_ms"]}}
 * Returns a new reference (owned: json_decref()), or NULL (no memory).
 */
json_t *overlay_to_json(const struct overlay *ov);

/* The same as text, one entry per line, ending in a newline.  Returns 0
 * and *out (owned: free()) with *len, or -ENOMEM. */
int overlay_encode(const struct overlay *ov, char **out, size_t *len);

/*
 * Reads a document of overlay_to_json()'s shape from @buf (borrowed, @len
 * bytes, at most OVERLAY_FILE_MAX_BYTES; no NUL needed) into @out,
 * strictly: no duplicate or unknown keys, the format and version above,
 * every name valid and used once, a created entry with every field, a
 * changed one with at least one, a deleted one with none, every number in
 * its range, at most OVERLAY_MAX_POOLS / OVERLAY_MAX_VOLUMES entries.
 * Returns 0, or -EINVAL (-E2BIG: too large) with "line L column C: why"
 * or "pools[3] (gold): why" in errbuf; @out is then cleared.
 */
int overlay_decode(const char *buf, size_t len, struct overlay *out,
		   char *errbuf, size_t errlen);

/* ---- the file (file.c) ------------------------------------------------- */

/*
 * Reads and decodes @path (borrowed) into @out.  Returns 0, -ENOENT when
 * there is no file (@out cleared: nothing changed), or -errno with the
 * reason in errbuf (unreadable, too large, not a valid document).
 */
int overlay_file_read(const char *path, struct overlay *out, char *errbuf,
		      size_t errlen);

/*
 * Replaces @path with @len bytes of @text (borrowed) atomically: writes
 * PATH.tmp, fsyncs it, renames it over @path and fsyncs the directory, so
 * that after a crash the file is the old one or the new one, whole.
 * Returns 0 or -errno with the reason in errbuf.
 */
int overlay_file_write(const char *path, const char *text, size_t len,
		       char *errbuf, size_t errlen);

/* ---- the server's copy (store.c) --------------------------------------- */

struct overlay_store;

/* Returns 0 and *out (owned: overlay_store_free()) for the file @path
 * (copied), with an empty base, or -ENOMEM / -ENAMETOOLONG. */
int overlay_store_new(const char *path, struct overlay_store **out);

/* Frees @s (takes).  NULL is fine. */
void overlay_store_free(struct overlay_store *s);

/* The lock of every change of the live state (admin API requests that
 * change something, SIGHUP): take it around reading the live state,
 * changing it and overlay_store_record().  Everything below needs it. */
void overlay_store_lock(struct overlay_store *s);
void overlay_store_unlock(struct overlay_store *s);

/* The file, borrowed from @s. */
const char *overlay_store_path(const struct overlay_store *s);

/* Reads the file into @out, as overlay_file_read(), and remembers what it
 * held so that an unchanged overlay is not written again. */
int overlay_store_load(struct overlay_store *s, struct overlay *out,
		       char *errbuf, size_t errlen);

/* The config's state and caps (copied): what the overlay is taken over. */
void overlay_store_base_set(struct overlay_store *s,
			    const struct pool_state *base,
			    const struct traffic_caps *caps);

/* Copies the config's state and caps out. */
void overlay_store_base_get(const struct overlay_store *s,
			    struct pool_state *base, struct traffic_caps *caps);

/* The overlay as last recorded or loaded, borrowed from @s. */
const struct overlay *overlay_store_current(const struct overlay_store *s);

/*
 * Recomputes the overlay as the difference between the base and @live
 * (borrowed) and, when its text changed, writes the file.  Returns 0 or
 * -errno with the reason in errbuf (the file then keeps its old content;
 * the store remembers the new overlay and tries again at the next record).
 */
int overlay_store_record(struct overlay_store *s, const struct pool_state *live,
			 const struct traffic_caps *live_caps, char *errbuf,
			 size_t errlen);

#endif
