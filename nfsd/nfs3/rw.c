// SPDX-License-Identifier: Apache-2.0
/*
 * rw: READ, WRITE and COMMIT (RFC 1813 3.3.6, 3.3.7, 3.3.21).  READ and
 * UNSTABLE writes run on the loop; DATA_SYNC and FILE_SYNC writes and
 * COMMIT wait for stable storage, so they run through request_defer() on a
 * blocking-work thread.  With [server] io_offload = auto, READ and UNSTABLE
 * WRITE of a connection with calls pipelined go there too
 * (request_io_offload): the work touches no loop pool (a READ's buffer is
 * taken on the loop beforehand, request_work_buf_alloc, or from the heap).  A
 * WRITE reply says what was done (`committed`) and carries the service's write
 * verifier, new at every server start, so that a client resends unstable data
 * after a restart.  A write that would pass the datastore's quota is refused
 * with NOSPC before it touches the file (usage.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nfsd/base/log.h"
#include "nfsd/nfs3/nfs3_int.h"
#include "nfsd/rpc/pool.h"

static uint32_t nfs3_min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* Data I/O is on regular files only; the RFC's errors for the rest. */
static int nfs3_check_regular(const struct store_attr *a)
{
	if (a->type == STORE_DIR) {
		return -EISDIR;
	}
	return a->type == STORE_REG ? 0 : -EINVAL;
}

/* WRITE and COMMIT: fills wcc->before and *pre, then checks that the file
 * is regular (the wcc data goes back on that failure too). */
static int nfs3_regular_wcc_pre(const struct nfs3_file *f,
				struct store_attr *pre, wcc_data *wcc)
{
	int err;

	err = nfs3__wcc_pre(f, pre, wcc);
	if (err) {
		return err;
	}
	return nfs3_check_regular(pre);
}

/* The bytes of a READ of @count at @off that a file of @size_bytes has. */
static uint32_t nfs3_read_avail(uint64_t off, uint32_t count,
				uint64_t size_bytes)
{
	if (off >= size_bytes) {
		return 0;
	}
	return size_bytes - off < count ? (uint32_t)(size_bytes - off) : count;
}

/*
 * Fills a READ's result: @count bytes of data in @buf, taken (NULL when
 * the data goes as a file payload), and @eof.  The buffer goes apart from
 * the encoded result when the reply can carry it so (the transport gives
 * it back once sent), else inside it (the release hook frees it).
 */
static void nfs3_read_result_set(struct request *req, READ3resok *ok, char *buf,
				 uint32_t count, bool eof)
{
	if (buf && count > 0 && request_payload_ok(req)) {
		struct rpc_payload p = { .len = count,
					 .buf = (uint8_t *)buf,
					 .fd = -1 };

		request_reply_payload(req, &p);
		buf = NULL;
	}
	ok->data.data_val = buf;
	ok->data.data_len = count;
	ok->count = count;
	ok->eof = eof;
	req->payload_bytes = count;
}

/*
 * A buffer of at least @count bytes for a READ's data: the one taken on
 * the loop for deferred work when it is big enough, else one of the loop's
 * pool (on the loop) or of the heap (on a work thread).  Returns owned.
 */
static char *nfs3_read_buf(struct request *req, uint32_t count)
{
	size_t size = count ? count : 1;
	char *buf = request_work_buf_take(req, size);

	return buf ? buf : rpc_buf_alloc(request_buf_pool(req), size);
}

/*
 * The data of a READ, sized by the attributes taken when the handle was
 * resolved (one stat per READ).  With zero copy, when the store reads
 * through a descriptor, the transport sends at most size - offset bytes
 * from the page cache later (a file that shrinks meanwhile is padded with
 * zeros to the promised count: rpc_payload), eof when offset + count
 * reaches that size; otherwise they are copied into a buffer now
 * (store_read_sized: eof exactly as the store saw it).
 */
static int nfs3_read_run(struct request *req, const READ3args *args,
			 struct nfs3_file *f, const struct store_attr *a,
			 READ3resok *ok)
{
	const struct nfs3_service *svc = req->svc;
	uint32_t count = nfs3_min_u32(args->count, nfs3__read_limit(req));
	uint32_t avail = nfs3_read_avail(args->offset, count, a->size_bytes);
	struct store_file_ref ref;
	uint32_t nread = 0;
	bool eof = false;
	char *buf;
	int err;

	err = nfs3_check_regular(a);
	if (err) {
		return err;
	}
	err = nfs3__may_read(a, &f->cred);
	if (err) {
		return err;
	}
	if (avail > 0 && avail >= svc->read_zero_copy_min_bytes &&
	    svc->read_zero_copy && request_payload_ok(req)) {
		err = store_read_ref(f->st, f->obj, &ref);
		if (!err) {
			struct rpc_payload p = { .len = avail,
						 .fd = ref.fd,
						 .off_bytes = args->offset,
						 .unref = ref.unref,
						 .ref = ref.ref };

			request_reply_payload(req, &p);
			/* No buffer: READ3res_head encodes the length
			 * alone. */
			nfs3_read_result_set(req, ok, NULL, avail,
					     args->offset + avail >=
						     a->size_bytes);
			return 0;
		}
		if (err != -STORE_ENOTSUPP) {
			return err;
		}
	}
	/* From the loop's pool (rpc/pool.h), given back by the release hook
	 * or, when sent from its own buffer, by the transport. */
	buf = nfs3_read_buf(req, store_read_sized_max(f->st, a->size_bytes,
						      args->offset, count));
	if (!buf) {
		return -ENOMEM;
	}
	err = store_read_sized(f->st, f->obj, a->size_bytes, args->offset, buf,
			       count, &nread, &eof);
	if (err) {
		rpc_buf_unref(buf);
		return err;
	}
	nfs3_read_result_set(req, ok, buf, nread, eof);
	return 0;
}

/* The whole READ, on the loop or on a work thread. */
static void nfs3_read_all(struct request *req, const READ3args *args,
			  READ3res *res)
{
	struct store_attr a;
	READ3resok ok;
	struct nfs3_file f;
	int err;

	memset(&ok, 0, sizeof(ok));
	err = nfs3__fh_resolve_attr(req, &args->file, false, &f, &a);
	if (!err) {
		err = nfs3_read_run(req, args, &f, &a, &ok);
	}
	res->status = nfs3__status_from_errno(err);
	if (res->status == NFS3_OK) {
		/* The attributes the count and eof came from (RFC 1813
		 * 3.3.6 asks for post-op attributes; these are the file's
		 * as the data was read, bar the atime the read may move). */
		nfs3__post_op_from_attr(&a, &ok.file_attributes);
		res->READ3res_u.resok = ok;
	} else {
		nfs3__post_op_fill(&f,
				   &res->READ3res_u.resfail.file_attributes);
	}
	nfs3__file_release(&f);
}

static void nfs3_read_work(struct request *req)
{
	nfs3_read_all(req, req->args, req->res);
	req->disposition = RPC_REPLY;
}

/*
 * Hands a READ to a work thread.  When its data will likely be copied (not
 * sent from the file: small, zero copy off, or a reply that cannot carry a
 * file), its buffer is taken now, on the loop; a READ that turns out to
 * need one anyway (a file shorter than the zero-copy size) gets a heap
 * block there.
 */
static enum rpc_disposition nfs3_read_offload(struct request *req,
					      const READ3args *args)
{
	const struct nfs3_service *svc = req->svc;
	uint32_t count = nfs3_min_u32(args->count, nfs3__read_limit(req));

	if (!svc->read_zero_copy || count < svc->read_zero_copy_min_bytes ||
	    !request_payload_ok(req)) {
		if (!request_work_buf_alloc(req, count ? count : 1)) {
			((READ3res *)req->res)->status =
				nfs3__status_from_errno(-ENOMEM);
			return RPC_REPLY;
		}
	}
	return request_defer(req, nfs3_read_work);
}

enum rpc_disposition nfs3__proc_read(struct request *req, const void *argp,
				     void *resp)
{
	if (request_io_offload(req)) {
		return nfs3_read_offload(req, argp);
	}
	nfs3_read_all(req, argp, resp);
	return RPC_REPLY;
}

void nfs3__read_release(struct request *req, void *resp)
{
	READ3res *res = resp;

	(void)req;
	if (res->status == NFS3_OK) {
		rpc_buf_unref(res->READ3res_u.resok.data.data_val);
		res->READ3res_u.resok.data.data_val = NULL;
	}
}

/*
 * A stable WRITE or a COMMIT whose sync failed (the store says so: a write
 * refused before the sync, ENOSPC from the write itself or a quota, loses
 * nothing): the sync may have met a writeback error, after which the
 * kernel calls the pages clean, so UNSTABLE data acknowledged earlier may
 * be lost.  A new write verifier for this datastore makes its clients
 * resend what they have not seen committed (RFC 1813 3.3.7: the verifier
 * changes whenever uncommitted data may be lost); the other datastores
 * keep theirs.  Runs on a work thread.
 */
static void nfs3_sync_failed(struct nfs3_file *f, int err)
{
	/* What fsync(2) reports for lost data; EROFS, EBADF and the like
	 * lose nothing that was acknowledged. */
	if (err != -EIO && err != -ENOSPC && err != -EDQUOT) {
		return;
	}
	atomic_fetch_add(&f->exp->write_verf_gen, 1);
	log_warn("nfs3: %s: a sync failed (%s); new write verifier for this "
		 "datastore: its clients resend their unstable data",
		 f->exp->name, strerror(-err));
}

/*
 * A stable WRITE parked on the store's intent log (store_ops.write_async):
 * two parties finish it, the loop (its reply filled as a success) and the
 * log's flush (the outcome); the last one applies the outcome and hands
 * the request back to its loop.  Owned by the request while parked.
 */
struct nfs3_write_park {
	struct store_write_wait wait; /* the store's until the flush ends */
	struct request *req;
	struct export *exp; /* borrowed: export slots never move */
	atomic_int parties;
	int err;
};

/* The last party: a failed flush is a failed sync (new verifier). */
static void nfs3_write_park_end(struct nfs3_write_park *p)
{
	struct request *req = p->req;
	WRITE3res *res = req->res;

	if (p->err) {
		struct nfs3_file f = { .exp = p->exp };

		/* resok and resfail both begin with file_wcc. */
		res->status = nfs3__status_from_errno(p->err);
		nfs3_sync_failed(&f, p->err);
	} else if (p->wait.after_set) {
		/* The store wrote the bytes after the loop's stat. */
		nfs3__post_op_from_attr(&p->wait.after,
					&res->WRITE3res_u.resok.file_wcc.after);
	}
	free(p);
	req->disposition = RPC_REPLY;
	request_unpark(req);
}

static void nfs3_write_park_leave(struct nfs3_write_park *p)
{
	if (atomic_fetch_sub(&p->parties, 1) == 1) {
		nfs3_write_park_end(p);
	}
}

/* store_write_done_fn: on the log's flush thread. */
static void nfs3_write_flushed_cb(void *arg, int err)
{
	struct nfs3_write_park *p = arg;

	p->err = err;
	nfs3_write_park_leave(p);
}

/*
 * The store write of a WRITE.  With @try_park (a stable WRITE on the loop,
 * a store with write_async) it does not block: 0 with *park set (returns
 * owned: the reply waits for the log's flush), -EAGAIN when the store
 * would block (run the call on a work thread), or the error.
 */
static int nfs3_write_store(struct request *req, const WRITE3args *args,
			    struct nfs3_file *f, uint32_t count, bool try_park,
			    struct nfs3_write_park **park, bool *sync_failed)
{
	struct nfs3_write_park *p;
	int err;

	if (!try_park) {
		return store_write(
			f->st, f->obj, args->offset, args->data.data_val, count,
			(enum store_stable)args->stable, sync_failed);
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		return -EAGAIN;
	}
	p->req = req;
	p->exp = f->exp;
	atomic_init(&p->parties, 2);
	err = store_write_async(f->st, f->obj, args->offset,
				args->data.data_val, count, &p->wait,
				nfs3_write_flushed_cb, p);
	if (err) {
		free(p);
		return err;
	}
	*park = p;
	return 0;
}

/*
 * Linux's rule for a write (should_remove_suid(), file_remove_privs()):
 * a writer without CAP_FSETID clears setuid, and setgid when
 * group-execute is set (setgid without it marks mandatory locking and
 * stays).  Over NFS that is every caller but uid 0 after squashing, as
 * knfsd drops CAP_FSETID for them: the file's owner too, as in Linux.
 * dsnfsd writes as root, so the kernel would keep the bits: the clearing
 * is ours, before the data goes in.  Once per file (then no bit is left).
 */
static int nfs3_write_kill_priv(struct nfs3_file *f,
				const struct store_attr *pre)
{
	struct store_sattr sa;
	uint32_t kill = 0;

	if (f->cred.uid == 0) {
		return 0;
	}
	if (pre->mode & S_ISUID) {
		kill |= S_ISUID;
	}
	if ((pre->mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP)) {
		kill |= S_ISGID;
	}
	if (!kill) {
		return 0;
	}
	memset(&sa, 0, sizeof(sa));
	sa.set_mode = true;
	sa.mode = pre->mode & 07777 & ~kill;
	return store_setattr(f->st, f->obj, &sa, &f->cred);
}

/* @pre: the attributes from resolving the handle (one stat for them and
 * the cache's check); the post-op attributes need a stat of their own,
 * unless the quota's count of what the write allocated stat'ed the file
 * after it: then they are those, in wcc->after.  @try_park and @park as
 * nfs3_write_store(). */
static int nfs3_write_data(struct request *req, const WRITE3args *args,
			   struct nfs3_file *f, const struct store_attr *pre,
			   wcc_data *wcc, uint32_t *count, bool try_park,
			   struct nfs3_write_park **park)
{
	struct store_attr post;
	bool measured;
	bool sync_failed = false;
	uint64_t reserved;
	int err;

	nfs3__pre_op_from_attr(pre, &wcc->before);
	err = nfs3_check_regular(pre);
	if (err) {
		return err;
	}
	err = nfs3__may_write(pre, &f->cred);
	if (err) {
		return err;
	}
	err = nfs3_write_kill_priv(f, pre);
	if (err) {
		return err;
	}
	/* The RFC lets the server write less than asked; the reply says. */
	*count = nfs3_min_u32(args->count, nfs3__write_limit(req));
	if (*count > store_max_file_bytes(f->st) ||
	    args->offset > store_max_file_bytes(f->st) - *count) {
		return -EFBIG;
	}
	/* Past the datastore's quota: NOSPC, and the file stays as it was. */
	err = nfs3__usage_write_reserve(f, pre, args->offset, *count,
					&reserved);
	if (err) {
		return err;
	}
	err = nfs3_write_store(req, args, f, *count, try_park, park,
			       &sync_failed);
	measured = nfs3__usage_write_end(f, pre, reserved, &post);
	if (err && sync_failed) {
		nfs3_sync_failed(f, err);
	}
	if (err) {
		return err;
	}
	if (measured) {
		nfs3__post_op_from_attr(&post, &wcc->after);
	}
	req->payload_bytes = *count;
	return 0;
}

/*
 * The whole WRITE, on the loop (UNSTABLE, or stable with @try_park) or on
 * a work thread.  Only @try_park gives anything but NFS3_WRITE_REPLIED.
 */
enum nfs3_write_outcome nfs3__write_run(struct request *req,
					const WRITE3args *args, WRITE3res *res,
					bool try_park)
{
	struct nfs3_write_park *park = NULL;
	const struct nfs3_service *svc = req->svc;
	struct store_attr pre;
	struct nfs3_file f;
	uint32_t count = 0;
	wcc_data wcc;
	int err;

	memset(&wcc, 0, sizeof(wcc));
	err = nfs3__fh_resolve_attr(req, &args->file, true, &f, &pre);
	if (!err) {
		err = nfs3_write_data(req, args, &f, &pre, &wcc, &count,
				      try_park, &park);
	}
	if (try_park && err == -EAGAIN) {
		nfs3__file_release(&f);
		return NFS3_WRITE_WOULD_BLOCK;
	}
	/* A write the store does later stats the file itself, after it. */
	if (!wcc.after.attributes_follow && !(park && park->wait.after_later)) {
		nfs3__wcc_post(&f, &wcc);
	}
	res->status = nfs3__status_from_errno(err);
	if (res->status == NFS3_OK) {
		WRITE3resok *ok = &res->WRITE3res_u.resok;

		ok->file_wcc = wcc;
		ok->count = count;
		ok->committed = args->stable;
		nfs3_write_verf(svc, f.exp, ok->verf);
	} else {
		res->WRITE3res_u.resfail.file_wcc = wcc;
	}
	nfs3__file_release(&f);
	if (park) {
		nfs3_write_park_leave(park);
		return NFS3_WRITE_PARKED;
	}
	return NFS3_WRITE_REPLIED;
}

static void nfs3_write_work(struct request *req)
{
	(void)nfs3__write_run(req, req->args, req->res, false);
	req->disposition = RPC_REPLY;
}

/* Answers a WRITE or COMMIT that failed before reaching the store. */
static enum rpc_disposition nfs3_reply_early(nfsstat3 *status, int err)
{
	*status = nfs3__status_from_errno(err);
	return RPC_REPLY;
}

enum rpc_disposition nfs3__proc_write(struct request *req, const void *argp,
				      void *resp)
{
	const WRITE3args *args = argp;
	WRITE3res *res = resp;
	struct nfs3_file f;
	int err;

	err = nfs3__fh_export(req, &args->file, true, &f);
	if (!err && args->count != args->data.data_len) {
		err = -EINVAL;
	}
	if (!err && args->stable != UNSTABLE && args->stable != DATA_SYNC &&
	    args->stable != FILE_SYNC) {
		err = -EINVAL;
	}
	if (err) {
		return nfs3_reply_early(&res->status, err);
	}
	req->payload_bytes = args->count;
	if (args->stable == UNSTABLE && !request_io_offload(req)) {
		(void)nfs3__write_run(req, args, res, false);
		return RPC_REPLY;
	}
	/* With an intent log a stable WRITE holds no work thread: it is
	 * written and logged here and answered when the flush covers it. */
	if (args->stable != UNSTABLE && store_can_write_async(f.st) &&
	    request_can_park(req)) {
		switch (nfs3__write_run(req, args, res, true)) {
		case NFS3_WRITE_REPLIED:
			return RPC_REPLY;
		case NFS3_WRITE_PARKED:
			return request_park(req);
		case NFS3_WRITE_WOULD_BLOCK:
			break;
		}
	}
	return request_defer(req, nfs3_write_work);
}

static int nfs3_commit_data(struct nfs3_file *f, const COMMIT3args *args,
			    wcc_data *wcc)
{
	bool sync_failed = false;
	struct store_attr pre;
	int err;

	err = nfs3_regular_wcc_pre(f, &pre, wcc);
	if (err || f->read_only) {
		return err;
	}
	err = store_commit(f->st, f->obj, args->offset, args->count,
			   &sync_failed);
	if (err && sync_failed) {
		nfs3_sync_failed(f, err);
	}
	return err;
}

/* The whole COMMIT: on a work thread, or on the loop for a read-only
 * export, where nothing is synced. */
static void nfs3_commit_work(struct request *req)
{
	const struct nfs3_service *svc = req->svc;
	const COMMIT3args *args = req->args;
	COMMIT3res *res = req->res;
	struct nfs3_file f;
	wcc_data wcc;
	int err;

	memset(&wcc, 0, sizeof(wcc));
	err = nfs3__fh_resolve(req, &args->file, false, &f);
	if (!err) {
		err = nfs3_commit_data(&f, args, &wcc);
	}
	nfs3__wcc_post(&f, &wcc);
	res->status = nfs3__status_from_errno(err);
	if (res->status == NFS3_OK) {
		res->COMMIT3res_u.resok.file_wcc = wcc;
		nfs3_write_verf(svc, f.exp, res->COMMIT3res_u.resok.verf);
	} else {
		res->COMMIT3res_u.resfail.file_wcc = wcc;
	}
	nfs3__file_release(&f);
	req->disposition = RPC_REPLY;
}

enum rpc_disposition nfs3__proc_commit(struct request *req, const void *argp,
				       void *resp)
{
	const COMMIT3args *args = argp;
	COMMIT3res *res = resp;
	struct nfs3_file f;
	int err;

	/* A read-only export has no unstable data of this client (its
	 * WRITEs are refused), so its COMMIT is answered on the loop without
	 * a sync: NFS3_OK, the verifier and wcc data, as if the data were on
	 * disk, which it is as far as this client can have written.  knfsd
	 * answers NFS3ERR_ROFS (nfsd_commit() opens with NFSD_MAY_WRITE);
	 * OK is what a client that reconciles by verifier expects, and costs
	 * no fsync a read-only client could make the server do at will. */
	err = nfs3__fh_export(req, &args->file, false, &f);
	if (err) {
		return nfs3_reply_early(&res->status, err);
	}
	if (f.read_only) {
		nfs3_commit_work(req);
		return req->disposition;
	}
	return request_defer(req, nfs3_commit_work);
}
