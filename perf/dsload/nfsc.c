// SPDX-License-Identifier: Apache-2.0
/*
 * nfsc: client-side encoding and decoding of NFSv3 (RFC 1813 3.3), MOUNT
 * v3 (RFC 1813 5.2) and portmapper (RFC 1833 3) calls with the generated
 * XDR routines and libtirpc memory streams.
 */
#include "perf/dsload/nfsc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/base/base.h"

#define NFSC_SYNC_BUF_BYTES (16u * 1024u)

int nfsc_fh_set(struct nfsc_fh *dst, const char *data, uint32_t len)
{
	if (len > NFS3_FHSIZE) {
		return -EINVAL;
	}
	memcpy(dst->data, data, len);
	dst->len = len;
	return 0;
}

int nfsc_encode(struct rpcconn *c, struct rpcconn_call *call, uint32_t prog,
		uint32_t vers, uint32_t proc, xdrproc_t args_fn,
		const void *args)
{
	size_t off = rpcconn_call_begin(c, call, prog, vers, proc);
	XDR x;
	bool_t ok;
	size_t len;

	if (!off) {
		return -ENOBUFS;
	}
	xdrmem_create(&x, (char *)call->buf + off, (u_int)(call->cap - off),
		      XDR_ENCODE);
	ok = args_fn(&x, (void *)args);
	len = off + xdr_getpos(&x);
	xdr_destroy(&x);
	return ok ? (int)len : -ENOBUFS;
}

int nfsc_decode(const uint8_t *body, size_t len, xdrproc_t res_fn, void *res)
{
	XDR x;
	bool_t ok;

	xdrmem_create(&x, (char *)body, (u_int)len, XDR_DECODE);
	ok = res_fn(&x, res);
	xdr_destroy(&x);
	return ok ? 0 : -EBADMSG;
}

/* ---- synchronous calls, for setup ---------------------------------------- */

struct nfsc_sync {
	struct rpcconn_call call;
	ev_timer timer;
	xdrproc_t res_fn;
	void *res;
	int err;
	bool done;
	bool timed_out;
};

static void nfsc_sync_done(struct rpcconn_call *call, int err,
			   const uint8_t *body, size_t len)
{
	struct nfsc_sync *s = container_of(call, struct nfsc_sync, call);

	if (!err && s->res_fn) {
		err = nfsc_decode(body, len, s->res_fn, s->res);
	}
	s->err = err;
	s->done = true;
}

static void nfsc_sync_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct nfsc_sync *s = container_of(w, struct nfsc_sync, timer);

	(void)loop;
	(void)revents;
	s->timed_out = true;
}

int nfsc_call_sync(struct rpcconn *c, uint32_t prog, uint32_t vers,
		   uint32_t proc, xdrproc_t args_fn, const void *args,
		   xdrproc_t res_fn, void *res, int timeout_ms)
{
	struct nfsc_sync *s = calloc(1, sizeof(*s));
	int len, err;

	if (!s) {
		return -ENOMEM;
	}
	s->call.buf = malloc(NFSC_SYNC_BUF_BYTES);
	if (!s->call.buf) {
		err = -ENOMEM;
		goto out_free;
	}
	s->call.cap = NFSC_SYNC_BUF_BYTES;
	s->res_fn = res_fn;
	s->res = res;
	len = nfsc_encode(c, &s->call, prog, vers, proc, args_fn, args);
	if (len < 0) {
		err = len;
		goto out_buf;
	}
	err = rpcconn_submit(c, &s->call, (size_t)len, nfsc_sync_done);
	if (err) {
		goto out_buf;
	}
	/* The loop's cached time may be old (between phases). */
	ev_now_update(c->loop);
	ev_timer_init(&s->timer, nfsc_sync_timer_cb, timeout_ms / 1000.0, 0.0);
	ev_timer_start(c->loop, &s->timer);
	while (!s->done && !s->timed_out) {
		ev_run(c->loop, EVRUN_ONCE);
	}
	ev_timer_stop(c->loop, &s->timer);
	if (!s->done) {
		rpcconn_cancel(c, &s->call);
		err = -ETIMEDOUT;
	} else {
		err = s->err;
	}
out_buf:
	free(s->call.buf);
out_free:
	free(s);
	return err;
}

/* ---- the I/O path -----------------------------------------------------------
 */

int nfsc_write_encode(struct rpcconn *c, struct rpcconn_call *call,
		      const struct nfsc_fh *fh, uint64_t off_bytes,
		      uint32_t count, enum stable_how stable, uint8_t **data)
{
	size_t off = rpcconn_call_begin(c, call, NFS_PROGRAM, NFS_V3,
					NFSPROC3_WRITE);
	nfs_fh3 fh3 = nfsc_fh3(fh);
	offset3 offset = off_bytes;
	count3 cnt = count;
	u_int data_len = count;
	size_t pos, pad = (4 - (count & 3)) & 3;
	XDR x;
	bool_t ok;

	if (!off) {
		return -ENOBUFS;
	}
	xdrmem_create(&x, (char *)call->buf + off, (u_int)(call->cap - off),
		      XDR_ENCODE);
	ok = xdr_nfs_fh3(&x, &fh3) && xdr_offset3(&x, &offset) &&
	     xdr_count3(&x, &cnt) && xdr_stable_how(&x, &stable) &&
	     xdr_u_int(&x, &data_len);
	pos = off + xdr_getpos(&x);
	xdr_destroy(&x);
	if (!ok || pos > call->cap || (size_t)count + pad > call->cap - pos) {
		return -ENOBUFS;
	}
	*data = call->buf + pos;
	memset(call->buf + pos + count, 0, pad);
	return (int)(pos + count + pad);
}

int nfsc_write_decode(const uint8_t *body, size_t len,
		      struct nfsc_write_res *res)
{
	WRITE3res r;
	int err;

	memset(&r, 0, sizeof(r));
	err = nfsc_decode(body, len, (xdrproc_t)xdr_WRITE3res, &r);
	if (err) {
		return err;
	}
	memset(res, 0, sizeof(*res));
	res->status = r.status;
	if (r.status == NFS3_OK) {
		res->count = r.WRITE3res_u.resok.count;
		res->committed = r.WRITE3res_u.resok.committed;
		memcpy(res->verf, r.WRITE3res_u.resok.verf, sizeof(res->verf));
	}
	return 0;
}

int nfsc_read_encode(struct rpcconn *c, struct rpcconn_call *call,
		     const struct nfsc_fh *fh, uint64_t off_bytes,
		     uint32_t count)
{
	READ3args a = { .file = nfsc_fh3(fh),
			.offset = off_bytes,
			.count = count };

	return nfsc_encode(c, call, NFS_PROGRAM, NFS_V3, NFSPROC3_READ,
			   (xdrproc_t)xdr_READ3args, &a);
}

int nfsc_read_decode(const uint8_t *body, size_t len, nfsstat3 *status,
		     bool *eof, const uint8_t **data, uint32_t *data_len)
{
	post_op_attr attr;
	count3 count;
	bool_t b_eof;
	u_int dlen;
	size_t pos;
	XDR x;
	bool_t ok;

	memset(&attr, 0, sizeof(attr));
	xdrmem_create(&x, (char *)body, (u_int)len, XDR_DECODE);
	ok = xdr_nfsstat3(&x, status) && xdr_post_op_attr(&x, &attr);
	if (ok && *status == NFS3_OK) {
		ok = xdr_count3(&x, &count) && xdr_bool(&x, &b_eof) &&
		     xdr_u_int(&x, &dlen);
	}
	pos = xdr_getpos(&x);
	xdr_destroy(&x);
	if (!ok) {
		return -EBADMSG;
	}
	if (*status != NFS3_OK) {
		return 0;
	}
	/* The payload is bounded by what the record holds, not trusted. */
	if (pos > len || dlen > len - pos || dlen > NFS3_DATA_BOUND ||
	    count != dlen) {
		return -EBADMSG;
	}
	*eof = b_eof;
	*data = body + pos;
	*data_len = dlen;
	return 0;
}

int nfsc_commit_encode(struct rpcconn *c, struct rpcconn_call *call,
		       const struct nfsc_fh *fh)
{
	COMMIT3args a = { .file = nfsc_fh3(fh), .offset = 0, .count = 0 };

	return nfsc_encode(c, call, NFS_PROGRAM, NFS_V3, NFSPROC3_COMMIT,
			   (xdrproc_t)xdr_COMMIT3args, &a);
}

int nfsc_commit_decode(const uint8_t *body, size_t len, nfsstat3 *status,
		       uint8_t verf[NFS3_WRITEVERFSIZE])
{
	COMMIT3res r;
	int err;

	memset(&r, 0, sizeof(r));
	err = nfsc_decode(body, len, (xdrproc_t)xdr_COMMIT3res, &r);
	if (err) {
		return err;
	}
	*status = r.status;
	if (r.status == NFS3_OK) {
		memcpy(verf, r.COMMIT3res_u.resok.verf, NFS3_WRITEVERFSIZE);
	}
	return 0;
}

const char *nfsc_status_name(nfsstat3 status)
{
	switch (status) {
	case NFS3_OK:
		return "NFS3_OK";
	case NFS3ERR_PERM:
		return "NFS3ERR_PERM";
	case NFS3ERR_NOENT:
		return "NFS3ERR_NOENT";
	case NFS3ERR_IO:
		return "NFS3ERR_IO";
	case NFS3ERR_ACCES:
		return "NFS3ERR_ACCES";
	case NFS3ERR_EXIST:
		return "NFS3ERR_EXIST";
	case NFS3ERR_NOTDIR:
		return "NFS3ERR_NOTDIR";
	case NFS3ERR_ISDIR:
		return "NFS3ERR_ISDIR";
	case NFS3ERR_INVAL:
		return "NFS3ERR_INVAL";
	case NFS3ERR_FBIG:
		return "NFS3ERR_FBIG";
	case NFS3ERR_NOSPC:
		return "NFS3ERR_NOSPC";
	case NFS3ERR_ROFS:
		return "NFS3ERR_ROFS";
	case NFS3ERR_DQUOT:
		return "NFS3ERR_DQUOT";
	case NFS3ERR_STALE:
		return "NFS3ERR_STALE";
	case NFS3ERR_BADHANDLE:
		return "NFS3ERR_BADHANDLE";
	case NFS3ERR_NOTSUPP:
		return "NFS3ERR_NOTSUPP";
	case NFS3ERR_SERVERFAULT:
		return "NFS3ERR_SERVERFAULT";
	case NFS3ERR_JUKEBOX:
		return "NFS3ERR_JUKEBOX";
	default:
		break;
	}
	return "NFS3ERR_other";
}
