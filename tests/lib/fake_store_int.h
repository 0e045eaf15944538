/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fake_store_int: what fake_store.c (nodes, handles, data, listing) and
 * fake_store_ns.c (the namespace ops) share.  Every helper is called with
 * fs->lock held unless it takes the lock itself (none of these do).
 */
#ifndef DSNFS_TESTS_FAKE_STORE_INT_H
#define DSNFS_TESTS_FAKE_STORE_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "nfsd/store/store_obj.h"
#include "tests/lib/fake_store.h"

/* The wire layout of nfsd/store/handle.c, so that store_fh_export_id()
 * reads our handles: version 1, export id (big endian), kernel type, body
 * length, body, 8-byte tag.  Our body is the fileid and the generation
 * (big endian); our tag is a keyed xxh64 of everything before it. */
#define FAKE_FH_VERSION 1
#define FAKE_FH_TYPE 0xfa
#define FAKE_FH_BODY 12
#define FAKE_FH_LEN (7 + FAKE_FH_BODY + 8)
#define FAKE_FH_KEY 0x66616b6573746f72ull /* "fakestor" */

/* Cookies 1 and 2 are "." and ".."; entries count from 3. */
#define FAKE_COOKIE_FIRST 3

struct fake_dirent {
	char name[STORE_NAME_MAX + 1];
	uint64_t fileid;
	uint64_t cookie;
};

struct fake_node {
	uint64_t fileid;
	uint32_t gen;
	bool gone;
	struct store_attr attr;
	uint8_t *data; /* STORE_REG: attr.size_bytes bytes */
	char *target; /* STORE_LNK */
	uint64_t parent;
	struct fake_dirent *ents; /* STORE_DIR */
	size_t nents, cap;
	uint64_t next_cookie;
	bool has_verf;
	uint8_t verf[8];
};

struct fake_store {
	struct store base; /* first: ops receive &base */
	pthread_mutex_t lock;
	struct fake_node **nodes;
	size_t nnodes, cap;
	int refs;
	char fail_op[32];
	int fail_err;
	enum store_stable last_stable;
	unsigned writes, commits;
	unsigned getattrs; /* getattr calls: stats of a real store */
};

/* A resolved node: the head every store's object starts from
 * (store_obj.h), then the fake's own fields. */
struct fake_obj {
	struct store_obj base;
	struct fake_store *fs;
	uint64_t fileid;
	int refs; /* under fs->lock */
};

static inline struct fake_obj *fake_obj_of(const struct store_obj *obj)
{
	return container_of((struct store_obj *)obj, struct fake_obj, base);
}

/* ---- nodes (fake_store.c) ------------------------------------------ */

struct fake_store *fake_store__of(const struct store *st);
void fake_store__now(struct timespec *ts);
struct fake_node *fake_store__node_get(struct fake_store *fs, uint64_t fileid);
struct fake_node *fake_store__obj_node(struct store_obj *obj);
int fake_store__injected(struct fake_store *fs, const char *op);
int fake_store__obj_new(struct fake_store *fs, uint64_t fileid,
			struct store_obj **out);
struct fake_node *fake_store__node_new(struct fake_store *fs,
				       enum store_ftype type, uint32_t mode,
				       const struct store_cred *cred);
struct fake_dirent *fake_store__dir_find(struct fake_node *dir,
					 const char *name);
int fake_store__dir_add(struct fake_node *dir, const char *name,
			uint64_t fileid);
void fake_store__dir_del(struct fake_node *dir, struct fake_dirent *e);
void fake_store__unlink_node(struct fake_node *n);
int fake_store__apply_sattr(struct fake_node *n, const struct store_sattr *sa);
int fake_store__check_reg(const struct fake_node *n);

/* ---- namespace ops (fake_store_ns.c), as in struct store_ops -------- */

int fake_store__create(struct store *st, struct store_obj *dir,
		       const char *name, enum store_create_how how,
		       const struct store_sattr *sattr, const uint8_t verf[8],
		       const struct store_cred *cred, struct store_obj **out);
int fake_store__mkdir(struct store *st, struct store_obj *dir, const char *name,
		      const struct store_sattr *sattr,
		      const struct store_cred *cred, struct store_obj **out);
int fake_store__symlink(struct store *st, struct store_obj *dir,
			const char *name, const char *target,
			const struct store_sattr *sattr,
			const struct store_cred *cred, struct store_obj **out);
int fake_store__mknod(struct store *st, struct store_obj *dir, const char *name,
		      enum store_ftype type, uint32_t rdev_major,
		      uint32_t rdev_minor, const struct store_sattr *sattr,
		      const struct store_cred *cred, struct store_obj **out);
int fake_store__remove(struct store *st, struct store_obj *dir,
		       const char *name);
int fake_store__rmdir(struct store *st, struct store_obj *dir,
		      const char *name);
int fake_store__rename(struct store *st, struct store_obj *from_dir,
		       const char *from_name, struct store_obj *to_dir,
		       const char *to_name);
int fake_store__link(struct store *st, struct store_obj *obj,
		     struct store_obj *dir, const char *name);

#endif
