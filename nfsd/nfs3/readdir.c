// SPDX-License-Identifier: Apache-2.0
/*
 * readdir: READDIR and READDIRPLUS (RFC 1813 3.3.16, 3.3.17).  Directory
 * scans block, so both run through request_defer().  A page holds what
 * fits the client's count (READDIR) or maxcount and dircount
 * (READDIRPLUS) in encoded XDR bytes, counted conservatively: every entry
 * is charged its full size, READDIRPLUS entries with attributes and a
 * handle of STORE_FH_MAX bytes.  Cookies are the store's; they stay valid
 * across directory changes, so the cookie verifier is a constant of the
 * directory (a hash of its fileid) and only a verifier of another
 * directory is NFS3ERR_BAD_COOKIE.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "nfsd/nfs3/nfs3_int.h"
#include "nfsd/snap/snap.h"

/* status + dir_attributes + cookieverf + end of list + eof. */
#define NFS3_DIRPAGE_HEAD_BYTES (4 + NFS3_XDR_POST_OP_ATTR_BYTES + 8 + 4 + 4)

struct nfs3_dirent {
	uint64_t fileid;
	uint64_t cookie;
	size_t name_off; /* into nfs3_dirpage.names, NUL-terminated */
};

/* One page of a listing, filled by the store's readdir callback. */
struct nfs3_dirpage {
	bool plus;
	uint32_t max_bytes; /* count / maxcount, capped by the service */
	uint32_t max_dir_bytes; /* READDIRPLUS dircount; 0 = none */
	uint32_t used_bytes;
	uint32_t used_dir_bytes;
	bool full; /* an entry did not fit: more follow */
	bool hide_snapdir; /* leave .snapshot out (the export's root) */
	cookieverf3 verf; /* of the directory listed */
	struct nfs3_dirent *ents;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
};

void nfs3__cookieverf(uint64_t fileid, cookieverf3 out)
{
	uint64_t h = XXH64(&fileid, sizeof(fileid), 0x6473636b /* "dsck" */);

	if (h == 0) { /* 0 is what a client sends first; never answer it */
		h = 1;
	}
	for (int i = 0; i < NFS3_COOKIEVERFSIZE; i++) {
		out[i] = (char)(h >> (56 - 8 * i));
	}
}

static bool nfs3_cookieverf_is_zero(const cookieverf3 verf)
{
	static const cookieverf3 zero;

	return memcmp(verf, zero, NFS3_COOKIEVERFSIZE) == 0;
}

static uint32_t nfs3_xdr_pad4(size_t len)
{
	return (uint32_t)((len + 3) & ~(size_t)3);
}

static int nfs3_dirpage_grow(struct nfs3_dirpage *p, size_t name_bytes)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		struct nfs3_dirent *e = realloc(p->ents, cap * sizeof(*e));

		if (!e) {
			return -ENOMEM;
		}
		p->ents = e;
		p->cap = cap;
	}
	if (p->names_cap - p->names_len < name_bytes) {
		size_t cap = p->names_cap ? p->names_cap * 2 : 4096;
		char *names;

		while (cap - p->names_len < name_bytes) {
			cap *= 2;
		}
		names = realloc(p->names, cap);
		if (!names) {
			return -ENOMEM;
		}
		p->names = names;
		p->names_cap = cap;
	}
	return 0;
}

/* store_readdir_fn: takes an entry if it fits the page, else stops. */
static int nfs3_dirpage_add_cb(void *arg, const char *name, uint64_t fileid,
			       uint64_t cookie)
{
	struct nfs3_dirpage *p = arg;
	size_t len = strnlen(name, STORE_NAME_MAX + 1);
	uint32_t dir_bytes, entry_bytes;
	int err;

	if (len > STORE_NAME_MAX) {
		return -EIO; /* no store may list a name it cannot hold */
	}
	if (p->hide_snapdir && !strcmp(name, SNAP_DIR_NAME)) {
		return 0;
	}
	/* fileid + name + cookie, and the value_follows word before. */
	dir_bytes = 8 + 4 + nfs3_xdr_pad4(len) + 8;
	entry_bytes = 4 + dir_bytes;
	if (p->plus) {
		entry_bytes +=
			NFS3_XDR_POST_OP_ATTR_BYTES + NFS3_XDR_POST_OP_FH_BYTES;
	}
	if ((uint64_t)p->used_bytes + entry_bytes > p->max_bytes) {
		p->full = true;
		return 1;
	}
	/* dircount limits the page, but the first entry always goes: some
	 * clients send a dircount smaller than any entry. */
	if (p->max_dir_bytes && p->n > 0 &&
	    (uint64_t)p->used_dir_bytes + dir_bytes > p->max_dir_bytes) {
		p->full = true;
		return 1;
	}
	err = nfs3_dirpage_grow(p, len + 1);
	if (err) {
		return err;
	}
	p->ents[p->n].fileid = fileid;
	p->ents[p->n].cookie = cookie;
	p->ents[p->n].name_off = p->names_len;
	memcpy(p->names + p->names_len, name, len);
	p->names[p->names_len + len] = '\0';
	p->names_len += len + 1;
	p->n++;
	p->used_bytes += entry_bytes;
	p->used_dir_bytes += dir_bytes;
	return 0;
}

static void nfs3_dirpage_fini(struct nfs3_dirpage *p)
{
	free(p->ents);
	free(p->names);
}

/*
 * Resolves and checks the directory, then lists it from @cookie into
 * @page.  *eof is true when the listing reached the end.  dir->obj
 * returns owned even on failure.
 */
static int nfs3_dirpage_scan(struct request *req, const nfs_fh3 *fh,
			     uint64_t cookie, const cookieverf3 verf,
			     struct nfs3_file *dir, struct nfs3_dirpage *page,
			     bool *eof)
{
	struct store_attr a;
	int err;

	err = nfs3__fh_resolve_attr(req, fh, false, dir, &a);
	if (err) {
		return err;
	}
	if (a.type != STORE_DIR) {
		return -ENOTDIR;
	}
	err = nfs3__may_read(&a, &dir->cred);
	if (err) {
		return err;
	}
	/* Cookie 0 starts over and needs no verifier; a zero verifier with
	 * a cookie is what some clients send and is taken as trust. */
	nfs3__cookieverf(a.fileid, page->verf);
	if (cookie != 0 && !nfs3_cookieverf_is_zero(verf) &&
	    memcmp(verf, page->verf, NFS3_COOKIEVERFSIZE) != 0) {
		return -STORE_EBADCOOKIE;
	}
	if (page->max_bytes < NFS3_DIRPAGE_HEAD_BYTES) {
		return -STORE_ETOOSMALL;
	}
	page->used_bytes = NFS3_DIRPAGE_HEAD_BYTES;
	page->hide_snapdir = !dir->snapshot_dir &&
			     nfs3__name_is_snapdir(dir, &a, SNAP_DIR_NAME);
	err = store_readdir(dir->st, dir->obj, cookie, nfs3_dirpage_add_cb,
			    page);
	if (err) {
		return err;
	}
	if (page->full && page->n == 0) {
		return -STORE_ETOOSMALL;
	}
	*eof = !page->full;
	return 0;
}

/* The client's count within the service's cap and its transport's (a
 * UDP reply is one datagram). */
static uint32_t nfs3_dir_cap(const struct request *req, uint32_t count)
{
	const struct nfs3_service *svc = req->svc;
	uint32_t transport = request_max_payload(req);

	if (count > svc->max_dir_bytes) {
		count = svc->max_dir_bytes;
	}
	return count < transport ? count : transport;
}

/* The page as an entry3 list in one block: entries returns owned. */
static int nfs3_dirpage_list(const struct nfs3_dirpage *p, entry3 **entries)
{
	entry3 *e;
	char *names;

	*entries = NULL;
	if (p->n == 0) {
		return 0;
	}
	e = malloc(p->n * sizeof(*e) + p->names_len);
	if (!e) {
		return -ENOMEM;
	}
	names = (char *)(e + p->n);
	memcpy(names, p->names, p->names_len);
	for (size_t i = 0; i < p->n; i++) {
		e[i].fileid = p->ents[i].fileid;
		e[i].name = names + p->ents[i].name_off;
		e[i].cookie = p->ents[i].cookie;
		e[i].nextentry = i + 1 < p->n ? &e[i + 1] : NULL;
	}
	*entries = e;
	return 0;
}

static void nfs3_readdir_work(struct request *req)
{
	const READDIR3args *args = req->args;
	READDIR3res *res = req->res;
	struct nfs3_dirpage page = {
		.max_bytes = nfs3_dir_cap(req, args->count),
	};
	struct nfs3_file dir;
	entry3 *entries = NULL;
	bool eof = false;
	int err;

	err = nfs3_dirpage_scan(req, &args->dir, args->cookie, args->cookieverf,
				&dir, &page, &eof);
	if (!err) {
		err = nfs3_dirpage_list(&page, &entries);
	}
	res->status = nfs3__status_from_errno(err);
	if (res->status == NFS3_OK) {
		READDIR3resok *ok = &res->READDIR3res_u.resok;

		nfs3__post_op_fill(&dir, &ok->dir_attributes);
		memcpy(ok->cookieverf, page.verf, sizeof(ok->cookieverf));
		ok->reply.entries = entries;
		ok->reply.eof = eof;
	} else {
		nfs3__post_op_fill(&dir,
				   &res->READDIR3res_u.resfail.dir_attributes);
	}
	nfs3_dirpage_fini(&page);
	nfs3__file_release(&dir);
	req->disposition = RPC_REPLY;
}

/*
 * Fills one READDIRPLUS entry's handle (into @fh_buf, STORE_FH_MAX bytes)
 * and attributes.  Either is left out when the entry vanished since the
 * scan or the caller may not search the directory, as the RFC allows.
 */
static void nfs3_entryplus_fill(const struct nfs3_file *dir, bool may_lookup,
				entryplus3 *e, char *fh_buf)
{
	struct store_obj *obj;
	struct store_attr a;
	struct store_fh sfh;

	memset(&e->name_attributes, 0, sizeof(e->name_attributes));
	memset(&e->name_handle, 0, sizeof(e->name_handle));
	if (!may_lookup || nfs3__name_lookup(dir, e->name, &obj) != 0) {
		return;
	}
	store_obj_fh(dir->st, obj, &sfh);
	if (sfh.len > 0 && sfh.len <= STORE_FH_MAX) {
		memcpy(fh_buf, sfh.data, sfh.len);
		e->name_handle.handle_follows = TRUE;
		e->name_handle.post_op_fh3_u.handle.data.data_val = fh_buf;
		e->name_handle.post_op_fh3_u.handle.data.data_len = sfh.len;
	}
	if (store_getattr(dir->st, obj, &a) == 0) {
		nfs3__post_op_from_attr(&a, &e->name_attributes);
	}
	store_obj_unref(dir->st, obj);
}

/* The page as an entryplus3 list in one block (entries, handles, names):
 * entries returns owned.  Looks every name up for its handle. */
static int nfs3_dirpage_listplus(const struct nfs3_dirpage *p,
				 const struct nfs3_file *dir,
				 entryplus3 **entries)
{
	struct store_attr da;
	bool may_lookup;
	entryplus3 *e;
	char *fhs, *names;

	*entries = NULL;
	if (p->n == 0) {
		return 0;
	}
	e = malloc(p->n * (sizeof(*e) + STORE_FH_MAX) + p->names_len);
	if (!e) {
		return -ENOMEM;
	}
	fhs = (char *)(e + p->n);
	names = fhs + p->n * STORE_FH_MAX;
	memcpy(names, p->names, p->names_len);
	may_lookup = nfs3__getattr(dir, &da) == 0 &&
		     nfs3__may_lookup(&da, &dir->cred) == 0;
	for (size_t i = 0; i < p->n; i++) {
		e[i].fileid = p->ents[i].fileid;
		e[i].name = names + p->ents[i].name_off;
		e[i].cookie = p->ents[i].cookie;
		e[i].nextentry = i + 1 < p->n ? &e[i + 1] : NULL;
		nfs3_entryplus_fill(dir, may_lookup, &e[i],
				    fhs + i * STORE_FH_MAX);
	}
	*entries = e;
	return 0;
}

static void nfs3_readdirplus_work(struct request *req)
{
	const READDIRPLUS3args *args = req->args;
	READDIRPLUS3res *res = req->res;
	struct nfs3_dirpage page = {
		.plus = true,
		.max_bytes = nfs3_dir_cap(req, args->maxcount),
		.max_dir_bytes = args->dircount,
	};
	struct nfs3_file dir;
	entryplus3 *entries = NULL;
	bool eof = false;
	int err;

	err = nfs3_dirpage_scan(req, &args->dir, args->cookie, args->cookieverf,
				&dir, &page, &eof);
	if (!err) {
		err = nfs3_dirpage_listplus(&page, &dir, &entries);
	}
	res->status = nfs3__status_from_errno(err);
	if (res->status == NFS3_OK) {
		READDIRPLUS3resok *ok = &res->READDIRPLUS3res_u.resok;

		nfs3__post_op_fill(&dir, &ok->dir_attributes);
		memcpy(ok->cookieverf, page.verf, sizeof(ok->cookieverf));
		ok->reply.entries = entries;
		ok->reply.eof = eof;
	} else {
		nfs3__post_op_fill(
			&dir, &res->READDIRPLUS3res_u.resfail.dir_attributes);
	}
	nfs3_dirpage_fini(&page);
	nfs3__file_release(&dir);
	req->disposition = RPC_REPLY;
}

/* Checks the handle on the loop (so the request is charged to its export
 * before it waits), then scans on a work thread. */
static enum rpc_disposition nfs3_readdir_defer(struct request *req,
					       const nfs_fh3 *fh,
					       nfsstat3 *status,
					       void (*work)(struct request *))
{
	struct nfs3_file f;
	int err;

	err = nfs3__fh_export(req, fh, false, &f);
	if (err) {
		*status = nfs3__status_from_errno(err);
		return RPC_REPLY;
	}
	return request_defer(req, work);
}

enum rpc_disposition nfs3__proc_readdir(struct request *req, const void *argp,
					void *resp)
{
	const READDIR3args *args = argp;
	READDIR3res *res = resp;

	return nfs3_readdir_defer(req, &args->dir, &res->status,
				  nfs3_readdir_work);
}

enum rpc_disposition nfs3__proc_readdirplus(struct request *req,
					    const void *argp, void *resp)
{
	const READDIRPLUS3args *args = argp;
	READDIRPLUS3res *res = resp;

	return nfs3_readdir_defer(req, &args->dir, &res->status,
				  nfs3_readdirplus_work);
}

void nfs3__readdir_release(struct request *req, void *resp)
{
	READDIR3res *res = resp;

	(void)req;
	if (res->status == NFS3_OK) {
		free(res->READDIR3res_u.resok.reply.entries);
		res->READDIR3res_u.resok.reply.entries = NULL;
	}
}

void nfs3__readdirplus_release(struct request *req, void *resp)
{
	READDIRPLUS3res *res = resp;

	(void)req;
	if (res->status == NFS3_OK) {
		free(res->READDIRPLUS3res_u.resok.reply.entries);
		res->READDIRPLUS3res_u.resok.reply.entries = NULL;
	}
}
