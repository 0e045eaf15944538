// SPDX-License-Identifier: Apache-2.0
/*
 * trace: one-line summaries of NFSv3 arguments and results for --trace
 * (rpc_trace_fn).  The dispatcher prints "EXPORT:HINT" before them, where
 * the hint is the handle summary or the name the call is about, so these
 * add only what the hint does not say: offsets, counts, the other handle
 * of two, the status and what was moved.  Names and symlink targets come
 * from the wire and are printed with control bytes replaced.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "nfsd/nfs3/nfs3_int.h"

/* Copies @in into @out (of @len bytes) with control bytes as '?'. */
static void nfs3_trace_clean(const char *in, char *out, size_t len)
{
	size_t i = 0;

	for (; in && in[i] && i + 1 < len; i++) {
		unsigned char c = (unsigned char)in[i];

		out[i] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	out[i] = '\0';
}

static const char *nfs3_stable_name(stable_how how)
{
	switch (how) {
	case UNSTABLE:
		return "UNSTABLE";
	case DATA_SYNC:
		return "DATA_SYNC";
	case FILE_SYNC:
		return "FILE_SYNC";
	}
	return "?";
}

static const char *nfs3_time_how_name(time_how how)
{
	return how == SET_TO_CLIENT_TIME ? "client" : "server";
}

/* Appends to buf at *pos, never past len. */
static void nfs3_trace_put(char *buf, size_t len, size_t *pos, const char *fmt,
			   ...) __attribute__((format(printf, 4, 5)));

static void nfs3_trace_put(char *buf, size_t len, size_t *pos, const char *fmt,
			   ...)
{
	va_list ap;
	int n;

	if (*pos >= len) {
		return;
	}
	va_start(ap, fmt);
	n = vsnprintf(buf + *pos, len - *pos, fmt, ap);
	va_end(ap);
	if (n > 0) {
		*pos += (size_t)n < len - *pos ? (size_t)n : len - *pos - 1;
	}
}

void nfs3__trace_args_setattr(const struct request *req, const void *args,
			      const void *res, char *buf, size_t len)
{
	const SETATTR3args *a = args;
	const sattr3 *s = &a->new_attributes;
	size_t pos = 0;

	(void)req;
	(void)res;
	buf[0] = '\0';
	nfs3_trace_put(buf, len, &pos, "guard=%d", a->guard.check ? 1 : 0);
	if (s->mode.set_it) {
		nfs3_trace_put(buf, len, &pos, " mode=%04o",
			       s->mode.set_mode3_u.mode);
	}
	if (s->uid.set_it) {
		nfs3_trace_put(buf, len, &pos, " uid=%u",
			       s->uid.set_uid3_u.uid);
	}
	if (s->gid.set_it) {
		nfs3_trace_put(buf, len, &pos, " gid=%u",
			       s->gid.set_gid3_u.gid);
	}
	if (s->size.set_it) {
		nfs3_trace_put(buf, len, &pos, " size=%llu",
			       (unsigned long long)s->size.set_size3_u.size);
	}
	if (s->atime.set_it != DONT_CHANGE) {
		nfs3_trace_put(buf, len, &pos, " atime=%s",
			       nfs3_time_how_name(s->atime.set_it));
	}
	if (s->mtime.set_it != DONT_CHANGE) {
		nfs3_trace_put(buf, len, &pos, " mtime=%s",
			       nfs3_time_how_name(s->mtime.set_it));
	}
}

void nfs3__trace_args_access(const struct request *req, const void *args,
			     const void *res, char *buf, size_t len)
{
	const ACCESS3args *a = args;

	(void)req;
	(void)res;
	snprintf(buf, len, "access=%#x", a->access);
}

/* READ and COMMIT: the first three members are the same. */
void nfs3__trace_args_io(const struct request *req, const void *args,
			 const void *res, char *buf, size_t len)
{
	const READ3args *a = args;

	(void)res;
	if (req->proc == NFSPROC3_COMMIT) {
		const COMMIT3args *c = args;

		snprintf(buf, len, "off=%llu count=%u",
			 (unsigned long long)c->offset, c->count);
		return;
	}
	snprintf(buf, len, "off=%llu count=%u", (unsigned long long)a->offset,
		 a->count);
}

void nfs3__trace_args_write(const struct request *req, const void *args,
			    const void *res, char *buf, size_t len)
{
	const WRITE3args *a = args;

	(void)req;
	(void)res;
	snprintf(buf, len, "off=%llu count=%u stable=%s",
		 (unsigned long long)a->offset, a->count,
		 nfs3_stable_name(a->stable));
}

/* LOOKUP, CREATE, MKDIR, MKNOD, REMOVE, RMDIR: their arguments start with
 * a diropargs3, whose name is the hint; the directory is added here. */
void nfs3__trace_args_dirop(const struct request *req, const void *args,
			    const void *res, char *buf, size_t len)
{
	const diropargs3 *d = args;
	char fh[16];

	(void)req;
	(void)res;
	nfs3__fh_summary(&d->dir, fh, sizeof(fh));
	snprintf(buf, len, "dir=%s", fh);
}

void nfs3__trace_args_symlink(const struct request *req, const void *args,
			      const void *res, char *buf, size_t len)
{
	const SYMLINK3args *a = args;
	char fh[16], target[64];

	(void)req;
	(void)res;
	nfs3__fh_summary(&a->where.dir, fh, sizeof(fh));
	nfs3_trace_clean(a->symlink.symlink_data, target, sizeof(target));
	snprintf(buf, len, "dir=%s target=%s", fh, target);
}

void nfs3__trace_args_rename(const struct request *req, const void *args,
			     const void *res, char *buf, size_t len)
{
	const RENAME3args *a = args;
	char from[16], to[16], name[64];

	(void)req;
	(void)res;
	nfs3__fh_summary(&a->from.dir, from, sizeof(from));
	nfs3__fh_summary(&a->to.dir, to, sizeof(to));
	nfs3_trace_clean(a->to.name, name, sizeof(name));
	snprintf(buf, len, "from=%s to=%s/%s", from, to, name);
}

void nfs3__trace_args_link(const struct request *req, const void *args,
			   const void *res, char *buf, size_t len)
{
	const LINK3args *a = args;
	char file[16], dir[16];

	(void)req;
	(void)res;
	nfs3__fh_summary(&a->file, file, sizeof(file));
	nfs3__fh_summary(&a->link.dir, dir, sizeof(dir));
	snprintf(buf, len, "fh=%s dir=%s", file, dir);
}

void nfs3__trace_args_readdir(const struct request *req, const void *args,
			      const void *res, char *buf, size_t len)
{
	const READDIR3args *a = args;

	(void)req;
	(void)res;
	snprintf(buf, len, "cookie=%llu count=%u",
		 (unsigned long long)a->cookie, a->count);
}

void nfs3__trace_args_readdirplus(const struct request *req, const void *args,
				  const void *res, char *buf, size_t len)
{
	const READDIRPLUS3args *a = args;

	(void)req;
	(void)res;
	snprintf(buf, len, "cookie=%llu dircount=%u maxcount=%u",
		 (unsigned long long)a->cookie, a->dircount, a->maxcount);
}

/* Every NFSv3 result starts with its nfsstat3. */
void nfs3__trace_res_status(const struct request *req, const void *args,
			    const void *res, char *buf, size_t len)
{
	const nfsstat3 *status = res;

	(void)req;
	(void)args;
	snprintf(buf, len, "status=%s", nfs3__status_name(*status));
}

void nfs3__trace_res_read(const struct request *req, const void *args,
			  const void *res, char *buf, size_t len)
{
	const READ3res *r = res;

	if (r->status != NFS3_OK) {
		nfs3__trace_res_status(req, args, res, buf, len);
		return;
	}
	snprintf(buf, len, "status=NFS3_OK count=%u eof=%d",
		 r->READ3res_u.resok.count, r->READ3res_u.resok.eof ? 1 : 0);
}

void nfs3__trace_res_write(const struct request *req, const void *args,
			   const void *res, char *buf, size_t len)
{
	const WRITE3res *r = res;

	if (r->status != NFS3_OK) {
		nfs3__trace_res_status(req, args, res, buf, len);
		return;
	}
	snprintf(buf, len, "status=NFS3_OK count=%u committed=%s",
		 r->WRITE3res_u.resok.count,
		 nfs3_stable_name(r->WRITE3res_u.resok.committed));
}

void nfs3__trace_res_readdir(const struct request *req, const void *args,
			     const void *res, char *buf, size_t len)
{
	const READDIR3res *r = res;
	unsigned n = 0;

	if (r->status != NFS3_OK) {
		nfs3__trace_res_status(req, args, res, buf, len);
		return;
	}
	for (const entry3 *e = r->READDIR3res_u.resok.reply.entries; e;
	     e = e->nextentry) {
		n++;
	}
	snprintf(buf, len, "status=NFS3_OK entries=%u eof=%d", n,
		 r->READDIR3res_u.resok.reply.eof ? 1 : 0);
}

void nfs3__trace_res_readdirplus(const struct request *req, const void *args,
				 const void *res, char *buf, size_t len)
{
	const READDIRPLUS3res *r = res;
	unsigned n = 0;

	if (r->status != NFS3_OK) {
		nfs3__trace_res_status(req, args, res, buf, len);
		return;
	}
	for (const entryplus3 *e = r->READDIRPLUS3res_u.resok.reply.entries; e;
	     e = e->nextentry) {
		n++;
	}
	snprintf(buf, len, "status=NFS3_OK entries=%u eof=%d", n,
		 r->READDIRPLUS3res_u.resok.reply.eof ? 1 : 0);
}
