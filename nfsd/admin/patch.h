/* SPDX-License-Identifier: Apache-2.0 */
/*
 * patch: what a change asks for and how it is made: request bodies read
 * into their structs (json_in.c), and changes of several fields applied
 * as one (patch.c).
 */
#ifndef DSNFS_ADMIN_PATCH_H
#define DSNFS_ADMIN_PATCH_H

#include "nfsd/admin/admin_int.h"

/* ---- JSON in (json_in.c) ----------------------------------------------- */

/* A PATCH /pools/NAME body: which fields it sets. */
struct admin_pool_patch {
	bool has_size, has_level, has_throughput, has_qos;
	uint32_t size_tib;
	enum pool_level level;
	uint32_t purchased_mibps;
	enum pool_qos qos;
};

/* A PATCH /volumes/NAME body. */
struct admin_volume_patch {
	bool has_pool, has_quota, has_limit;
	char pool[POOL_NAME_MAX];
	uint64_t quota_bytes;
	uint32_t limit_mibps;
};

/*
 * Parses a request body: one JSON object, no duplicate keys, no NUL in
 * strings, nothing after it.  Returns 0 and *out (owned: json_decref()),
 * or -EINVAL with "body: line L column C: why" in errbuf.
 */
int admin__json_parse(const char *body, size_t len, json_t **out, char *errbuf,
		      size_t errlen);

/* Refuses a key of @in (borrowed) that is not in @known (NULL-terminated),
 * and an object without any of them: -EINVAL with the list of known
 * fields in errbuf. */
int admin__json_keys_check(const json_t *in, const char *const *known,
			   char *errbuf, size_t errlen);

/*
 * Each reads one body (borrowed) into its struct: unknown fields, missing
 * required ones, wrong types and values out of the type's range are
 * -EINVAL with the field named in errbuf.  The rules of pools (sizes,
 * levels, sums) are left to the registry.
 *
 *   pool spec     {"name", "level", "size_tib", ["qos"], ["purchased_mibps"]}
 *                 (qos defaults to auto, and to manual for Flexible)
 *   pool patch    any of {"size_tib", "level", "purchased_mibps", "qos"}
 *   volume spec   {"name", "pool", "quota_bytes", ["limit_mibps"]}
 *   volume patch  any of {"pool", "quota_bytes", "limit_mibps"}
 *   caps patch    any of {"scale", "flow_mibps", "flow_iops", "host_mibps",
 *                 "host_iops", "volume_iops", "host_contention",
 *                 "volume_contention", "burst_ms"}, applied to *caps
 *                 (in and out; on an error it may be partly changed:
 *                 pass a copy)
 */
int admin__json_pool_spec(const json_t *in, struct pool *out, char *errbuf,
			  size_t errlen);
int admin__json_pool_patch(const json_t *in, struct admin_pool_patch *out,
			   char *errbuf, size_t errlen);
int admin__json_volume_spec(const json_t *in, struct pool_volume *out,
			    char *errbuf, size_t errlen);
int admin__json_volume_patch(const json_t *in, struct admin_volume_patch *out,
			     char *errbuf, size_t errlen);
int admin__json_caps_patch(const json_t *in, struct traffic_caps *caps,
			   char *errbuf, size_t errlen);

/* ---- multi-field changes (patch.c) ------------------------------------- */

/* One step of a change, applied to @reg (the live registry or a scratch
 * one).  Returns 0 or the registry's -errno with the reason in errbuf. */
typedef int admin_step_fn(struct pool_registry *reg, int step, void *arg,
			  struct pool_limits *limits, char *errbuf,
			  size_t errlen);

#define ADMIN_PATCH_MAX_STEPS 4

/*
 * Applies @n steps (distinct small integers, at most
 * ADMIN_PATCH_MAX_STEPS) as one change.  The registry checks each step on
 * its own, and some changes are valid only in one order (a pool becomes
 * Flexible before it buys throughput; it buys it before its volumes' limits
 * grow), so the steps are first tried, in each order, on a scratch copy of
 * the registry; the first order in which every step passes is applied to
 * the live one.  Returns 0 with @limits filled, or the first order's error
 * (nothing changed).  A live step that fails even so (the ledger) returns
 * its error with "(applied before: ...)" naming the steps that stayed.
 */
int admin__patch_apply(struct admin_api *api, const int *steps, size_t n,
		       admin_step_fn *fn, void *arg,
		       const char *const *step_names,
		       struct pool_limits *limits, char *errbuf, size_t errlen);

#endif
