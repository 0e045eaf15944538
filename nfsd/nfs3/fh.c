// SPDX-License-Identifier: Apache-2.0
/*
 * fh: from an nfs_fh3 on the wire to a checked, resolved file (RFC 1813
 * 2.3.3, 4.1).  Every call goes through here: the handle is ours, its
 * export exists, the client is on the export's list (checked on every call,
 * RFC 1813 5.1 lets a server refuse any request, not only MNT), modifying
 * calls need a writable export, and the caller's credentials are squashed
 * the export's way.  Only then does the store resolve the handle.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "nfsd/base/log.h"
#include "nfsd/base/ratelimit.h"
#include "nfsd/nfs3/nfs3_int.h"
#include "nfsd/snap/snap.h"

/* root_squash maps uid 0 and gid 0 (primary and supplementary) to the
 * anonymous ids; all_squash and AUTH_NONE map everybody (as knfsd). */
static void nfs3_cred_squash(const struct export_access *exp,
			     const struct rpc_cred *rc, struct nfs3_file *f)
{
	struct store_cred *c = &f->cred;
	uint32_t n = rc->ngroups;

	c->groups = f->groups;
	if (rc->flavor != AUTH_SYS || exp->squash == EXPORT_SQUASH_ALL) {
		c->uid = exp->anon_uid;
		c->gid = exp->anon_gid;
		c->ngroups = 0;
		return;
	}
	if (n > RPC_AUTH_SYS_MAX_GROUPS) {
		n = RPC_AUTH_SYS_MAX_GROUPS;
	}
	c->uid = rc->uid;
	c->gid = rc->gid;
	c->ngroups = n;
	memcpy(f->groups, rc->groups, n * sizeof(f->groups[0]));
	if (exp->squash != EXPORT_SQUASH_ROOT) {
		return;
	}
	if (c->uid == 0) {
		c->uid = exp->anon_uid;
	}
	if (c->gid == 0) {
		c->gid = exp->anon_gid;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (f->groups[i] == 0) {
			f->groups[i] = exp->anon_gid;
		}
	}
}

void nfs3__fh_summary(const nfs_fh3 *fh, char *buf, size_t len)
{
	uint32_t h = XXH32(fh->data.data_val, fh->data.data_len, 0);

	snprintf(buf, len, "%08x", h);
}

/* Copies a wire handle into a store_fh; -STORE_EBADHANDLE when it cannot
 * be one of ours by its length alone. */
static int nfs3_fh_copy(const nfs_fh3 *fh, struct store_fh *out)
{
	if (fh->data.data_len == 0 || fh->data.data_len > STORE_FH_MAX) {
		return -STORE_EBADHANDLE;
	}
	out->len = fh->data.data_len;
	memcpy(out->data, fh->data.data_val, fh->data.data_len);
	return 0;
}

/* The export id @fh carries, without the store: 0, or -STORE_EBADHANDLE
 * when @fh cannot be one of our handles by its length and layout. */
static int nfs3_fh_export_id(const nfs_fh3 *fh, uint32_t *id)
{
	struct store_fh sfh;
	int err;

	err = nfs3_fh_copy(fh, &sfh);
	if (err) {
		return err;
	}
	return store_fh_export_id(&sfh, id);
}

/* The live export of id @id (borrowed), or NULL: the one @req already
 * found when the id is the same and it is still live, else one found in
 * the table, kept on @req when it is the call's first. */
static struct export *nfs3_request_export(struct request *req, uint32_t id)
{
	struct request_export *re = &req->export;
	const struct nfs3_service *svc = req->svc;
	struct export *exp;

	if (re->exp && re->id == id) {
		if (export_is_live(re->exp)) {
			return re->exp;
		}
		/* Removed since the call found it (a SIGHUP while the call
		 * waited in its queue): searched again, as every check
		 * used to, so that its handles answer STALE unless the
		 * export is back; nothing of the old one is kept. */
		memset(re, 0, sizeof(*re));
	}
	exp = export_find_by_id(svc->exports, id);
	/* Not found is not kept: a SIGHUP may add the export before the
	 * handler runs, and the handler then looks again, as it used to. */
	if (exp && !re->exp) {
		re->exp = exp;
		re->id = id;
	}
	return exp;
}

struct export *nfs3__fh_request_export(struct request *req, const nfs_fh3 *fh,
				       int *err)
{
	struct request_export *re = &req->export;
	struct export *exp;
	uint32_t id;

	if (re->exp && re->handle == fh && export_is_live(re->exp)) {
		*err = 0;
		return re->exp;
	}
	*err = nfs3_fh_export_id(fh, &id);
	if (*err) {
		return NULL;
	}
	exp = nfs3_request_export(req, id);
	if (exp && exp == re->exp && !re->handle) {
		re->handle = fh;
	}
	return exp;
}

static struct export *nfs3_fh_find_export(struct request *req,
					  const nfs_fh3 *fh, int *err)
{
	struct export *exp = nfs3__fh_request_export(req, fh, err);

	if (*err) {
		return NULL;
	}
	/* A well-formed handle of an export that is no longer in the
	 * config names files the client may no longer reach: STALE, so that
	 * the client drops them (knfsd does the same). */
	if (!exp || !export_store(exp)) {
		*err = exp && export_store_down(exp) ? -EAGAIN : -ESTALE;
	}
	return exp;
}

/* One line for a call the export's rules refuse (a client that was
 * allowed at MNT and is no longer, or one that skipped MNT), at most one
 * a second for all clients: each call is refused, the log is not
 * flooded. */
static void nfs3_fh_log_refusal(struct request *req, const struct export *exp,
				enum export_refusal refusal)
{
	static struct ratelimit rl;
	uint64_t held;
	char why[256], note[64];

	if (!ratelimit_take(&rl, &held)) {
		return;
	}
	export_refusal_format(refusal, exp->name,
			      (const struct sockaddr *)&req->peer, why,
			      sizeof(why));
	log_warn("nfs: %s: call to %s refused: %s%s", request_peer(req),
		 exp->path, why, ratelimit_held_note(held, note, sizeof(note)));
}

/*
 * What the caller may do in @exp: read once per call under the table's lock
 * (a SIGHUP may change the options meanwhile on the main thread) and kept
 * on the request for the call's later checks; another export than the
 * call's own (a RENAME's second directory) is read each time.  Returns 0
 * with *acc set, or -EACCES (logged) when its client rules refuse the
 * caller.
 */
static int nfs3_fh_access(struct request *req, struct export *exp,
			  struct export_access *acc)
{
	const struct nfs3_service *svc = req->svc;
	struct request_export *re = &req->export;
	int err;

	if (exp == re->exp && re->access_valid) {
		*acc = re->access;
		return re->access_err;
	}
	err = export_access_get(svc->exports, exp,
				(const struct sockaddr *)&req->peer, acc);
	if (err) {
		nfs3_fh_log_refusal(req, exp, acc->refusal);
	}
	if (exp == re->exp) {
		re->access = *acc;
		re->access_err = err;
		re->access_valid = true;
	}
	return err;
}

int nfs3__fh_export(struct request *req, const nfs_fh3 *fh, bool modify,
		    struct nfs3_file *f)
{
	struct export_access acc;
	struct export *exp;
	int err;

	memset(f, 0, sizeof(*f));
	if (request_traced(req)) {
		nfs3__fh_summary(fh, req->path_hint, sizeof(req->path_hint));
	}
	exp = nfs3_fh_find_export(req, fh, &err);
	if (err) {
		return err;
	}
	req->export_name = exp->name;
	err = nfs3_fh_access(req, exp, &acc);
	if (err) {
		return err;
	}
	if (modify && acc.read_only) {
		if (acc.replica &&
		    !__atomic_exchange_n(&exp->replica_logged, true,
					 __ATOMIC_RELAXED)) {
			log_warn("nfs3: %s: read-only: the destination of a "
				 "replication relation, until its break "
				 "(NFS3ERR_ROFS to every change; logged once)",
				 exp->name);
		}
		return -EROFS;
	}
	f->exp = exp;
	f->st = export_store(exp);
	f->read_only = acc.read_only;
	f->snapshot_dir = acc.snapshot_dir;
	nfs3_cred_squash(&acc, &req->cred, f);
	return 0;
}

/*
 * Whether f->obj is the datastore's snapshot area or lies in it
 * (ROOT/.snapshot/...): by where the object itself is, not by the name a
 * call gave, so that a handle kept from a LOOKUP, a READDIRPLUS or an
 * earlier run is caught too.  A file whose name the kernel has not
 * reconnected yet (a handle resolved after a restart) reads as unknown
 * and passes: its snapshot's FS_IMMUTABLE_FL still refuses the change
 * (snap.h).  CephFS's snapshots are read-only in the cluster itself.
 * Costs one readlink the first time an object is changed
 * (store_in_area()), for calls that change something only.
 */
static bool nfs3_fh_in_snapdir(const struct nfs3_file *f,
			       const struct store_attr *a)
{
	static const char area[] = "/" SNAP_DIR_NAME;

	if (a && f->exp->root_fileid && a->fileid == f->exp->root_fileid) {
		return false;
	}
	return store_in_area(f->st, f->obj, area) == 1;
}

/* Resolves @fh into f->obj; with @a, its attributes too (one stat when
 * the backend can: store_resolve_attr). */
static int nfs3_fh_resolve_obj(struct request *req, const nfs_fh3 *fh,
			       bool modify, struct nfs3_file *f,
			       struct store_attr *a)
{
	struct store_fh sfh;
	int err;

	err = nfs3__fh_export(req, fh, modify, f);
	if (err) {
		return err;
	}
	err = nfs3_fh_copy(fh, &sfh);
	if (err) {
		return err;
	}
	if (a) {
		err = store_resolve_attr(f->st, &sfh, &f->obj, a);
	} else {
		err = store_resolve(f->st, &sfh, &f->obj);
	}
	if (err) {
		f->obj = NULL;
		return err;
	}
	/* Nothing under .snapshot changes over NFS, whatever the file
	 * system would allow (a snapshot being made or deleted). */
	if (modify && nfs3_fh_in_snapdir(f, a)) {
		store_obj_unref(f->st, f->obj);
		f->obj = NULL;
		return -EROFS;
	}
	/* --trace names the file, not its handle: only when tracing, since
	 * the path costs the backend a system call. */
	if (request_traced(req)) {
		(void)store_path(f->st, f->obj, req->path_hint,
				 sizeof(req->path_hint));
	}
	return 0;
}

int nfs3__fh_resolve(struct request *req, const nfs_fh3 *fh, bool modify,
		     struct nfs3_file *f)
{
	return nfs3_fh_resolve_obj(req, fh, modify, f, NULL);
}

int nfs3__fh_resolve_attr(struct request *req, const nfs_fh3 *fh, bool modify,
			  struct nfs3_file *f, struct store_attr *a)
{
	return nfs3_fh_resolve_obj(req, fh, modify, f, a);
}

void nfs3__file_release(struct nfs3_file *f)
{
	if (f->obj) {
		store_obj_unref(f->st, f->obj);
		f->obj = NULL;
	}
}

int nfs3__fh_dup(struct store *st, const struct store_obj *obj, nfs_fh3 *out)
{
	struct store_fh sfh;

	store_obj_fh(st, obj, &sfh);
	out->data.data_val = malloc(sfh.len ? sfh.len : 1);
	if (!out->data.data_val) {
		out->data.data_len = 0;
		return -ENOMEM;
	}
	memcpy(out->data.data_val, sfh.data, sfh.len);
	out->data.data_len = sfh.len;
	return 0;
}

_Static_assert(STORE_FH_MAX <= NFS3_FHSIZE,
	       "a store handle must fit the wire's nfs_fh3");

void nfs3__fh_set(struct store *st, const struct store_obj *obj,
		  char room[NFS3_FHSIZE], nfs_fh3 *out)
{
	struct store_fh sfh;

	store_obj_fh(st, obj, &sfh);
	memcpy(room, sfh.data, sfh.len);
	out->data.data_val = room;
	out->data.data_len = sfh.len;
}

void nfs3__fh_free(nfs_fh3 *fh)
{
	free(fh->data.data_val);
	fh->data.data_val = NULL;
	fh->data.data_len = 0;
}

void nfs3__hint_name(struct request *req, const char *name)
{
	size_t i = 0, len = sizeof(req->path_hint);

	if (!request_traced(req)) {
		return;
	}

	/* With --trace the directory's path is already there: add the name
	 * to it ("/sub" + "disk.vmdk"). */
	if (req->path_hint[0] == '/') {
		i = strlen(req->path_hint);
		if (i > 1 && i < len - 1) {
			req->path_hint[i++] = '/';
		}
	}
	/* Names come from the wire: keep control bytes out of trace lines. */
	for (; name && *name && i < len - 1; i++, name++) {
		unsigned char c = (unsigned char)*name;

		req->path_hint[i] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	req->path_hint[i] = '\0';
}
