// SPDX-License-Identifier: Apache-2.0
/*
 * xfer: one replication transfer, a source snapshot applied to the
 * destination's tree (xfer.h).
 */
#include "nfsd/repl/xfer.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nfsd/base/errbuf.h"
#include "nfsd/repl/dst.h"
#include "nfsd/repl/journal.h"
#include "nfsd/repl/lanes.h"
#include "nfsd/repl/plan.h"
#include "nfsd/repl/src.h"
#include "nfsd/snap/snap.h"

struct xfer {
	const struct repl_xfer_args *a;
	struct repl_xfer_stats *st;
	struct repl_journal *j;
	struct repl_dst *to;
	char *errbuf;
	size_t errlen;
	struct repl_lanes *lanes; /* the WRITEs in flight */
	/* The source snapshot's tree and the base's (NULL: a baseline). */
	struct repl_src_tree *cur, *base;
};

/* Operation @op on the destination's @rel; @m (may be NULL) gives the
 * rest of the message.  Returns 0 or -errno with the reason. */
static int xfer_call(struct xfer *x, struct repl_msg *m, unsigned op,
		     const char *rel, struct repl_result *r)
{
	struct repl_msg z = { 0 };
	struct repl_result rz;
	int err;

	/* Every other operation after the WRITEs sent before it. */
	err = x->lanes ? repl_lanes_drain(x->lanes, &x->st->sent_bytes,
					  x->errbuf, x->errlen)
		       : 0;
	if (err) {
		return err;
	}
	if (!m) {
		m = &z;
	}
	m->op = (uint8_t)op;
	if (snprintf(m->path, sizeof(m->path), "%s", rel) >=
	    (int)sizeof(m->path)) {
		return errbuf_printf(x->errbuf, x->errlen, -ENAMETOOLONG,
				     "%s: path too long", rel);
	}
	return repl_dst_call(x->to, m, r ? r : &rz, x->errbuf, x->errlen);
}

/* The source's owner, mode and times of @ss for the destination's @rel
 * (set last: applying the data or a directory's entries changed them);
 * @sync: the file's data goes to disk first. */
static int xfer_attrs(struct xfer *x, const char *rel, const struct stat *ss,
		      bool sync)
{
	struct repl_msg m = {
		.flags = sync ? REPL_FLAG_SYNC | REPL_FLAG_SIZE : 0,
		.size = (uint64_t)ss->st_size,
		.mode = ss->st_mode & 07777,
		.uid = ss->st_uid,
		.gid = ss->st_gid,
		.atime_s = ss->st_atim.tv_sec,
		.atime_ns = (uint32_t)ss->st_atim.tv_nsec,
		.mtime_s = ss->st_mtim.tv_sec,
		.mtime_ns = (uint32_t)ss->st_mtim.tv_nsec,
	};

	return xfer_call(x, &m, REPL_OP_ATTRS, rel, NULL);
}

/*
 * Sends [@off, @off + @len) of @sf (at most REPL_WRITE_MAX) to the
 * destination's @rel, but for the blocks the base @bf (NULL: none;
 * @bsize bytes) has the same bytes at: a lane reads it and sends each
 * run of contiguous blocks left as one WRITE (lanes.h), while the next
 * chunks go to the other lanes.
 */
static int xfer_chunk(struct xfer *x, const char *rel, struct repl_src_file *sf,
		      struct repl_src_file *bf, uint64_t bsize, uint64_t off,
		      size_t len)
{
	struct repl_lane *lane;
	int err = repl_lanes_take(x->lanes, &lane, x->errbuf, x->errlen);

	if (!err) {
		repl_lane_chunk(lane, rel, sf, bf, bsize, off, len);
	}
	return err;
}

static int xfer_file(struct xfer *x, const char *rel, const struct stat *ls)
{
	struct repl_msg om = { .size = (uint64_t)ls->st_size };
	struct repl_src_file *sf = NULL, *bf = NULL;
	struct repl_range *r = NULL;
	struct repl_result res;
	struct stat ss, bs;
	size_t n = 0;
	int err;

	if (repl_journal_has(x->j, rel)) {
		x->st->files_resumed++;
		return 0;
	}
	/* The base counts only where the destination still holds its copy
	 * (it was applied before); else the file goes whole. */
	err = xfer_call(x, NULL, REPL_OP_STAT, rel, &res);
	if (err) {
		return err;
	}
	if (res.type == REPL_TYPE_REG && x->base &&
	    x->base->ops->file_open(x->base, rel, &bf, &bs)) {
		bf = NULL; /* not in the base, or not a regular file there */
	}
	err = x->cur->ops->file_open(x->cur, rel, &sf, &ss);
	if (err) {
		err = errbuf_printf(x->errbuf, x->errlen, err, "%s: open: %s",
				    rel, strerror(-err));
		goto out;
	}
	/* The size first: a shrunk file loses its tail, a grown one reads
	 * zeros until its blocks come; no base: applied whole, from empty. */
	om.size = (uint64_t)ss.st_size;
	om.flags = bf ? 0 : REPL_FLAG_WHOLE;
	err = xfer_call(x, &om, REPL_OP_OPEN, rel, NULL);
	if (err) {
		goto out;
	}
	err = x->cur->ops->changed(x->cur, sf, bf, (uint64_t)ss.st_size,
				   bf ? (uint64_t)bs.st_size : 0, &r, &n);
	if (err) {
		errbuf_printf(x->errbuf, x->errlen, err, "%s: plan: %s", rel,
			      strerror(-err));
		goto out;
	}
	for (size_t i = 0; i < n && !err; i++) {
		x->st->candidate_bytes += r[i].len;
		for (uint64_t o = r[i].off; o < r[i].off + r[i].len && !err;
		     o += REPL_WRITE_MAX) {
			uint64_t end = r[i].off + r[i].len;
			size_t len = end - o < REPL_WRITE_MAX
					     ? (size_t)(end - o)
					     : REPL_WRITE_MAX;

			err = xfer_chunk(x, rel, sf, bf,
					 bf ? (uint64_t)bs.st_size : 0, o, len);
		}
	}
	if (!err) {
		err = xfer_attrs(x, rel, &ss, true);
	}
	if (!err) {
		err = repl_journal_add(x->j, rel);
		if (err) {
			errbuf_printf(x->errbuf, x->errlen, err,
				      "%s: journal: %s", rel, strerror(-err));
		}
	}
	if (!err) {
		x->st->files++;
	}
out:
	free(r);
	if (x->lanes) {
		/* The lanes read @sf and @bf: done with them first (an
		 * error of theirs counts when this file's has none). */
		uint64_t sent = 0;
		char why[512];
		int lerr = repl_lanes_drain(x->lanes, &sent, why, sizeof(why));

		x->st->sent_bytes += sent;
		if (lerr && !err) {
			err = lerr;
			snprintf(x->errbuf, x->errlen, "%s", why);
		}
	}
	if (sf) {
		sf->ops->file_close(sf);
	}
	if (bf) {
		bf->ops->file_close(bf);
	}
	return err;
}

static int xfer_tree(struct xfer *x, const char *rel, int depth);

/* Applies entry @rel (lstat @ss) of the source snapshot. */
static int xfer_entry(struct xfer *x, const char *rel, const struct stat *ss,
		      int depth)
{
	char tgt[PATH_MAX];
	struct repl_msg m = { 0 };
	int n, err;

	if (S_ISREG(ss->st_mode)) {
		return xfer_file(x, rel, ss);
	}
	if (S_ISDIR(ss->st_mode)) {
		err = xfer_call(x, NULL, REPL_OP_MKDIR, rel, NULL);
		if (!err) {
			err = xfer_tree(x, rel, depth + 1);
		}
		return err ? err : xfer_attrs(x, rel, ss, false);
	}
	if (S_ISLNK(ss->st_mode)) {
		n = x->cur->ops->readlink(x->cur, rel, tgt, sizeof(tgt));
		if (n < 0) {
			return errbuf_printf(x->errbuf, x->errlen, n,
					     "%s: readlink: %s", rel,
					     strerror(-n));
		}
		m.arg = tgt;
		m.arg_len = (size_t)n;
		err = xfer_call(x, &m, REPL_OP_SYMLINK, rel, NULL);
		return err ? err : xfer_attrs(x, rel, ss, false);
	}
	return 0; /* devices, fifos, sockets: a datastore has none to send */
}

/*
 * The next entry of directory @d (at @rel) but, at the root, .snapshot
 * (never sent, never pruned): its relative path into @sub (PATH_MAX)
 * and, when @st is not NULL, its lstat.  Returns 1, 0 at the end or
 * -errno.
 */
static int xfer_next(struct xfer *x, struct repl_src_dir *d, const char *rel,
		     char *sub, struct stat *st)
{
	char name[REPL_SRC_NAME_MAX + 1];
	int rc;

	while ((rc = x->cur->ops->dir_next(d, name, st)) > 0) {
		if (!*rel && !strcmp(name, SNAP_DIR_NAME)) {
			continue;
		}
		if (snprintf(sub, PATH_MAX, "%s%s%s", rel, *rel ? "/" : "",
			     name) >= PATH_MAX) {
			return -ENAMETOOLONG;
		}
		return 1;
	}
	return rc;
}

/* Removes what directory @rel of the destination has and the snapshot's
 * has not (at the root, .snapshot stays): the source's names go to the
 * destination, which removes the others. */
static int xfer_prune(struct xfer *x, const char *rel)
{
	char sub[PATH_MAX];
	struct repl_msg m = { 0 };
	struct repl_result res;
	struct repl_src_dir *d;
	char *names = NULL, *p;
	size_t len = 0, cap = 0;
	int err = 0, rc = 0;

	err = x->cur->ops->dir_open(x->cur, rel, &d);
	if (err) {
		return err;
	}
	while (!err && (rc = xfer_next(x, d, rel, sub, NULL)) > 0) {
		const char *leaf =
			strrchr(sub, '/') ? strrchr(sub, '/') + 1 : sub;
		size_t l = strlen(leaf) + 1;

		if (len + l > REPL_ARG_MAX) {
			err = -E2BIG; /* more names than a message holds */
		} else if (len + l > cap) {
			cap = (len + l) * 2;
			p = realloc(names, cap);
			err = p ? 0 : -ENOMEM;
			names = p ? p : names;
		}
		if (!err) {
			memcpy(names + len, leaf, l);
			len += l;
		}
	}
	x->cur->ops->dir_close(d);
	if (!err && rc >= 0) {
		m.arg = names ? names : "";
		m.arg_len = len;
		err = xfer_call(x, &m, REPL_OP_PRUNE, rel, &res);
		x->st->removed += err ? 0 : res.value;
	}
	free(names);
	return err ? err : rc;
}

static int xfer_tree(struct xfer *x, const char *rel, int depth)
{
	char sub[PATH_MAX];
	struct repl_src_dir *d;
	struct stat sb;
	int err = 0, rc = 0;

	if (depth > SNAP_MAX_DEPTH) {
		return errbuf_printf(x->errbuf, x->errlen, -ELOOP,
				     "%s: deeper than %d levels", rel,
				     SNAP_MAX_DEPTH);
	}
	err = xfer_prune(x, rel);
	if (err) {
		return err == -E2BIG
			       ? errbuf_printf(x->errbuf, x->errlen, err,
					       "%s: more names than a transfer "
					       "message holds",
					       *rel ? rel : "/")
			       : err;
	}
	err = x->cur->ops->dir_open(x->cur, rel, &d);
	if (err) {
		return errbuf_printf(x->errbuf, x->errlen, err, "source %s: %s",
				     *rel ? rel : "/", strerror(-err));
	}
	while (!err && (rc = xfer_next(x, d, rel, sub, &sb)) > 0) {
		err = xfer_entry(x, sub, &sb, depth);
	}
	x->cur->ops->dir_close(d);
	return err ? err : rc;
}

bool repl_err_transport(int err)
{
	return err == -ECONNREFUSED || err == -ETIMEDOUT ||
	       err == -EHOSTUNREACH || err == -ENETUNREACH ||
	       err == -ECONNRESET || err == -EPROTO || err == -ECANCELED;
}

/* BEGIN of @a on the destination: the journal @x->j is void unless the
 * destination still holds the transfer in part. */
static int xfer_begin(struct xfer *x, bool resumed)
{
	const struct repl_xfer_args *a = x->a;
	struct repl_msg m = { 0 };
	struct repl_result res;
	char arg[2 * SNAP_NAME_MAX + 2];
	int err;

	if (snprintf(arg, sizeof(arg), "%s %s", a->name,
		     a->base_name ? a->base_name : "") >= (int)sizeof(arg)) {
		return errbuf_printf(x->errbuf, x->errlen, -ENAMETOOLONG,
				     "%s: name too long", a->name);
	}
	m.arg = arg;
	m.arg_len = strlen(arg);
	err = xfer_call(x, &m, REPL_OP_BEGIN, "", &res);
	if (err || !resumed || res.value) {
		return err;
	}
	x->st->restarted = true;
	err = repl_journal_restart(x->j, a->name);
	return err ? errbuf_printf(x->errbuf, x->errlen, err, "%s: journal: %s",
				   a->name, strerror(-err))
		   : 0;
}

int repl_xfer_run(const struct repl_xfer_args *a, struct repl_xfer_stats *st,
		  char *errbuf, size_t errlen)
{
	struct xfer x = {
		.a = a, .st = st, .errbuf = errbuf, .errlen = errlen
	};
	struct repl_src_tree *own_cur = NULL, *own_base = NULL;
	struct repl_local local;
	bool resumed;
	int err;

	memset(st, 0, sizeof(*st));
	x.cur = a->src_tree;
	x.base = a->src_tree ? a->base_tree : NULL;
	if (!x.cur) {
		err = repl_src_dir_tree(a->src, &own_cur);
		if (!err && a->base) {
			err = repl_src_dir_tree(a->base, &own_base);
		}
		if (err) {
			if (own_cur) {
				own_cur->ops->close(own_cur);
			}
			return errbuf_printf(errbuf, errlen, err,
					     "%s: the source: %s", a->name,
					     strerror(-err));
		}
		x.cur = own_cur;
		x.base = own_base;
	}
	x.to = a->to;
	if (!x.to) {
		err = repl_local_open(&local, a->dst, a->dst_manifest, errbuf,
				      errlen);
		if (err) {
			goto trees;
		}
		local.applying = a->dst_applying;
		local.guard = a->dst_guard;
		x.to = &local.pub;
	}
	err = repl_journal_open(a->journal, a->name, &resumed, &x.j, errbuf,
				errlen);
	if (err) {
		goto out;
	}
	err = xfer_begin(&x, resumed);
	if (err) {
		/* Kept: the next run takes up the same snapshot. */
		repl_journal_close(x.j, false);
		goto out;
	}
	err = repl_lanes_new(x.to, REPL_LANES_MAX, &x.lanes, errbuf, errlen);
	if (!err) {
		err = xfer_tree(&x, "", 0);
	}
	if (!err && ((a->from && a->from->ops->snap_check(a->from, a->name)) ||
		     (!a->from && a->src_manifest &&
		      snap_check(a->src_root, a->src_manifest, a->name, true,
				 NULL, 0)))) {
		err = errbuf_printf(errbuf, errlen, -ENOENT,
				    "source snapshot %s was deleted while it "
				    "was sent: not committed",
				    a->name);
	}
	if (!err) {
		struct repl_msg m = { .arg = a->name,
				      .arg_len = strlen(a->name),
				      .mtime_s = a->created_s };

		err = xfer_call(&x, &m, REPL_OP_COMMIT, "", NULL);
	}
	if (x.lanes) {
		/* The WRITEs in flight answered before anything else goes:
		 * an ABORT after them, and their connections closed. */
		uint64_t late = 0;
		char ignored[64];

		(void)repl_lanes_drain(x.lanes, &late, ignored,
				       sizeof(ignored));
		repl_lanes_free(x.lanes);
		x.lanes = NULL;
	}
	if (err && !repl_err_transport(err) && err != -ESTALE) {
		/* The destination goes back to its last replica now, not at
		 * the next BEGIN; its own failure changes nothing here (the
		 * next BEGIN undoes). */
		struct repl_msg am = { .op = REPL_OP_ABORT };
		struct repl_result res;
		char ignored[64];

		(void)repl_dst_call(x.to, &am, &res, ignored, sizeof(ignored));
	}
	repl_journal_close(x.j, err == 0);
out:
	if (!a->to) {
		repl_local_close(&local);
	}
trees:
	if (own_cur) {
		own_cur->ops->close(own_cur);
	}
	if (own_base) {
		own_base->ops->close(own_base);
	}
	return err;
}
