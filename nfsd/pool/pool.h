/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pool: capacity pools, service levels and the QoS rules of a cloud file
 * service, modelled on Azure NetApp Files (docs/pools.md).  A pool has a
 * service level and a provisioned size in whole TiB; a volume (a datastore)
 * belongs to one pool and has a quota.  Auto QoS: a volume's throughput
 * limit is its quota (TiB, prorated) x the level.  Manual QoS: each volume is
 * given a limit, and the limits of a pool sum to at most its throughput.
 *
 * struct pool_state is plain data, checked as a whole by pool_state_check().
 * struct pool_registry is the live state behind a mutex: every operation is
 * applied to a copy, checked, written to the capacity ledger when it changes
 * a pool (ledger.h) and only then made live, so a refused operation changes
 * nothing.  Every operation can hand back the new effective limits
 * (struct pool_limits) for the traffic module.
 */
#ifndef DSNFS_POOL_H
#define DSNFS_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define POOL_NAME_MAX 64 /* with the NUL; names are [A-Za-z0-9._-]{1,63} */
#define POOL_MAX_POOLS 64
#define POOL_MAX_VOLUMES 256
#define POOL_SIZE_MIN_TIB 1
#define POOL_SIZE_MAX_TIB 2048 /* 2 PiB, ANF's largest pool */
#define POOL_TIB_BYTES (UINT64_C(1) << 40)
#define POOL_GIB_PER_TIB 1024
#define POOL_MIB_BYTES (UINT64_C(1) << 20)
/* A regular volume's quota and throughput ceilings. */
#define POOL_VOLUME_QUOTA_MAX_BYTES (100 * POOL_TIB_BYTES)
#define POOL_VOLUME_CAP_MIBPS 4500
#define POOL_VOLUME_CAP_STANDARD_MIBPS 1600
/* Flexible: a baseline every pool has, plus purchased throughput; the
 * total is at most 640 MiB/s per provisioned TiB. */
#define POOL_FLEX_BASELINE_MIBPS 128
#define POOL_FLEX_MAX_MIBPS_PER_TIB 640

enum pool_level {
	POOL_LEVEL_STANDARD = 0, /* 16 MiB/s per TiB */
	POOL_LEVEL_PREMIUM, /* 64 MiB/s per TiB */
	POOL_LEVEL_ULTRA, /* 128 MiB/s per TiB */
	POOL_LEVEL_FLEXIBLE, /* 128 MiB/s + purchased, manual QoS only */
	POOL_LEVEL_COUNT,
};

enum pool_qos {
	POOL_QOS_AUTO = 0, /* volume limit follows its quota */
	POOL_QOS_MANUAL, /* volume limits assigned one by one */
};

struct pool {
	char name[POOL_NAME_MAX];
	enum pool_level level;
	enum pool_qos qos;
	uint32_t size_tib;
	uint32_t purchased_mibps; /* Flexible only: above the baseline */
};

struct pool_volume {
	char name[POOL_NAME_MAX];
	char pool[POOL_NAME_MAX];
	uint64_t quota_bytes;
	uint32_t manual_mibps; /* the limit in a manual QoS pool, else 0 */
};

struct pool_state {
	size_t npools;
	struct pool pools[POOL_MAX_POOLS];
	size_t nvolumes;
	struct pool_volume volumes[POOL_MAX_VOLUMES];
};

/* What the traffic module and the store need after every change. */
struct pool_limit_pool {
	char name[POOL_NAME_MAX];
	uint64_t throughput_bytes_per_s;
};

struct pool_limit_volume {
	char name[POOL_NAME_MAX];
	char pool[POOL_NAME_MAX];
	uint64_t limit_bytes_per_s;
	uint64_t quota_bytes;
};

struct pool_limits {
	size_t npools;
	struct pool_limit_pool pools[POOL_MAX_POOLS];
	size_t nvolumes;
	struct pool_limit_volume volumes[POOL_MAX_VOLUMES];
};

/* ---- service levels (level.c) ------------------------------------------ */

/* "Standard", "Premium", "Ultra", "Flexible"; "?" when out of range. */
const char *pool_level_name(enum pool_level level);

/* Parses a level name, case-insensitively.  Returns 0 or -EINVAL. */
int pool_level_parse(const char *text, enum pool_level *out);

/* MiB/s per provisioned TiB (16, 64, 128); 0 for Flexible. */
uint32_t pool_level_mibps_per_tib(enum pool_level level);

/* The largest throughput one volume may have at @level, MiB/s. */
uint32_t pool_level_volume_cap_mibps(enum pool_level level);

/* "auto" or "manual". */
const char *pool_qos_name(enum pool_qos qos);

/* Parses "auto" or "manual".  Returns 0 or -EINVAL. */
int pool_qos_parse(const char *text, enum pool_qos *out);

/* True for 1..63 characters of letters, digits, '-', '_' and '.'. */
bool pool_name_valid(const char *name);

/* The pool's throughput, MiB/s: size x level, or baseline + purchased. */
uint64_t pool_throughput_mibps(const struct pool *pool);

/* The throughput limit of volume @vol in @pool, bytes/s: the manual limit,
 * or (auto QoS) quota x level prorated to the byte, capped at the level's
 * volume cap. */
uint64_t pool_volume_limit_bytes_per_s(const struct pool *pool,
				       const struct pool_volume *vol);

/* ---- plain state (state.c, qos.c) -------------------------------------- */

/* Lookups by name.  Return borrowed pointers into @st, or NULL. */
struct pool *pool_state_find_pool(struct pool_state *st, const char *name);
struct pool_volume *pool_state_find_volume(struct pool_state *st,
					   const char *name);
const struct pool *pool_state_pool(const struct pool_state *st,
				   const char *name);

/* Fills @out with the effective limits of every pool and volume of @st. */
void pool_state_limits(const struct pool_state *st, struct pool_limits *out);

/*
 * Checks every rule on the whole state: names, sizes, levels, QoS, volume
 * caps, quota and throughput sums.  Returns 0, or -EINVAL with the first
 * broken rule in errbuf ("pool p1: volume quotas sum to 5 TiB, more than
 * the pool's 4 TiB").  errbuf may be NULL.
 */
int pool_state_check(const struct pool_state *st, char *errbuf, size_t errlen);

/* ---- the live registry (registry.c) ------------------------------------ */

struct pool_registry;
struct pool_ledger;

/* The wall clock the registry stamps ledger events with: seconds since the
 * epoch, UTC.  Injected so tests control time. */
typedef int64_t (*pool_clock_fn)(void *arg);

/* time(NULL); @arg is unused. */
int64_t pool_clock_realtime(void *arg);

/* Creates an empty registry.  @clock may be NULL for pool_clock_realtime.
 * Returns 0 and *out (owned, pool_registry_free()), or -ENOMEM. */
int pool_registry_new(pool_clock_fn clock, void *clock_arg,
		      struct pool_registry **out);

/* Frees @reg (takes).  The attached ledger is not closed (borrowed). */
void pool_registry_free(struct pool_registry *reg);

/*
 * Replaces the whole state with @st (borrowed; e.g. from the config),
 * checked first.  With a ledger attached, pools that appear, change or
 * disappear are written to it.  Returns 0, -EINVAL with the broken rule in
 * errbuf, or the ledger's error.  @limits (may be NULL) gets the new limits.
 */
int pool_registry_load(struct pool_registry *reg, const struct pool_state *st,
		       struct pool_limits *limits, char *errbuf, size_t errlen);

/*
 * Attaches @ledger (borrowed; it must outlive @reg or be detached by
 * attaching NULL) and brings it up to date: the pools the ledger's replay
 * and the live state disagree on are written as created / changed /
 * deleted events stamped now.  Call it after pool_registry_load() of the
 * config.  Returns 0 or the ledger's -errno (message in errbuf).
 */
int pool_registry_ledger_attach(struct pool_registry *reg,
				struct pool_ledger *ledger, char *errbuf,
				size_t errlen);

/* A copy of the live state, for the admin API. */
void pool_registry_snapshot(struct pool_registry *reg, struct pool_state *out);

/* The live limits. */
void pool_registry_limits(struct pool_registry *reg, struct pool_limits *out);

/*
 * Operations.  Each one is checked on a copy and applied atomically: it
 * returns 0 and fills @limits (may be NULL) with the new effective limits,
 * or a negative errno with the reason in @errbuf (may be NULL) and changes
 * nothing: -EINVAL (a rule is broken), -ENOENT (no such pool or volume),
 * -EEXIST (the name is taken), -ENOSPC (POOL_MAX_POOLS/VOLUMES reached), or
 * the ledger's error.  Names and specs are borrowed.
 */
int pool_registry_pool_create(struct pool_registry *reg,
			      const struct pool *spec,
			      struct pool_limits *limits, char *errbuf,
			      size_t errlen);
int pool_registry_pool_resize(struct pool_registry *reg, const char *name,
			      uint32_t size_tib, struct pool_limits *limits,
			      char *errbuf, size_t errlen);
/* Leaving Flexible drops the purchased throughput (it is a Flexible-only
 * purchase); entering Flexible needs a manual QoS pool. */
int pool_registry_pool_set_level(struct pool_registry *reg, const char *name,
				 enum pool_level level,
				 struct pool_limits *limits, char *errbuf,
				 size_t errlen);
int pool_registry_pool_set_throughput(struct pool_registry *reg,
				      const char *name,
				      uint32_t purchased_mibps,
				      struct pool_limits *limits, char *errbuf,
				      size_t errlen);
/* Auto -> manual only (as in ANF): each volume keeps its current limit,
 * rounded down to whole MiB/s (at least 1), as its manual limit. */
int pool_registry_pool_set_qos(struct pool_registry *reg, const char *name,
			       enum pool_qos qos, struct pool_limits *limits,
			       char *errbuf, size_t errlen);
/* Refused while the pool holds volumes. */
int pool_registry_pool_delete(struct pool_registry *reg, const char *name,
			      struct pool_limits *limits, char *errbuf,
			      size_t errlen);
/* spec->manual_mibps must be set for a manual pool and 0 for an auto one. */
int pool_registry_volume_create(struct pool_registry *reg,
				const struct pool_volume *spec,
				struct pool_limits *limits, char *errbuf,
				size_t errlen);
int pool_registry_volume_resize(struct pool_registry *reg, const char *name,
				uint64_t quota_bytes,
				struct pool_limits *limits, char *errbuf,
				size_t errlen);
int pool_registry_volume_delete(struct pool_registry *reg, const char *name,
				struct pool_limits *limits, char *errbuf,
				size_t errlen);
/* Moves @name to pool @to (how ANF changes a volume's service level).
 * @manual_mibps is its limit when @to is manual: 0 keeps the current
 * effective limit (whole MiB/s, at least 1); it is ignored for auto pools. */
int pool_registry_volume_move(struct pool_registry *reg, const char *name,
			      const char *to, uint32_t manual_mibps,
			      struct pool_limits *limits, char *errbuf,
			      size_t errlen);
/* Manual QoS pools only. */
int pool_registry_volume_set_limit(struct pool_registry *reg, const char *name,
				   uint32_t manual_mibps,
				   struct pool_limits *limits, char *errbuf,
				   size_t errlen);

/* ---- config (pool_config.c) ---------------------------------------------- */

/*
 * The pool keys of dsnfsd.conf, parsed into a plain state:
 *
 *   [pool NAME]        level = standard|premium|ultra|flexible
 *                      size_tib = N            (whole TiB, >= 1)
 *                      qos = auto|manual       (default auto; Flexible:
 *                                               manual)
 *                      purchased_mibps = N     (Flexible only)
 *   [datastore NAME]   pool = NAME             (the datastore's pool)
 *                      quota = N[KiB|MiB|GiB|TiB]  (bytes without suffix)
 *                      throughput_mibps = N    (manual QoS limit)
 *
 * Sections may come in any order; the whole state is checked once, by
 * pool_config_finish().
 */
struct pool_config {
	struct pool_state *state; /* owned */
	unsigned pool_keys[POOL_MAX_POOLS]; /* keys seen, per pool */
	unsigned volume_keys[POOL_MAX_VOLUMES]; /* keys seen, per volume */
};

/* Returns 0 or -ENOMEM. */
int pool_config_init(struct pool_config *cfg);
void pool_config_fini(struct pool_config *cfg);

/*
 * One key of the config file; the signature of config.h's
 * config_section_fn, @arg being a struct pool_config.  Returns 0 when the
 * key was taken, -ENOENT when it is not a pool key (another module's, or
 * unknown), -EINVAL with the reason in errbuf.
 */
int pool_config_section(void *arg, const char *section, const char *key,
			const char *value, char *errbuf, size_t errlen);

/*
 * Checks the parsed state (every datastore with a quota names a pool, the
 * QoS rules).  Returns 0 and the state borrowed in *out (valid until
 * pool_config_fini()), or -EINVAL with the broken rule in errbuf.
 */
int pool_config_finish(struct pool_config *cfg, const struct pool_state **out,
		       char *errbuf, size_t errlen);

/* Parses "500GiB", "4TiB", "1048576" (bytes), binary K/M/G/T too.
 * Returns 0 or -EINVAL (syntax, zero excluded) / -ERANGE. */
int pool_size_parse(const char *text, uint64_t *bytes);

#endif
