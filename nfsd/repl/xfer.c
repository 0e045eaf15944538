// SPDX-License-Identifier: Apache-2.0
/*
 * xfer: one replication transfer, a source snapshot applied to the
 * destination's tree (xfer.h).
 */
#include "nfsd/repl/xfer.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "nfsd/base/errbuf.h"
#include "nfsd/repl/journal.h"
#include "nfsd/repl/plan.h"
#include "nfsd/snap/snap.h"

struct xfer {
	const struct repl_xfer_args *a;
	struct repl_xfer_stats *st;
	struct repl_journal *j;
	char *errbuf;
	size_t errlen;
	unsigned char *sbuf, *bbuf, *dbuf; /* REPL_BLOCK each */
};

static int xfer_path(char *out, const char *root, const char *rel)
{
	int n = snprintf(out, PATH_MAX, "%s%s%s", root, *rel ? "/" : "", rel);

	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

static int xfer_rm_cb(const char *p, const struct stat *sb, int flag,
		      struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	return (flag == FTW_DP ? rmdir(p) : unlink(p)) < 0 ? -1 : 0;
}

/* Removes @p whatever it is (a tree with it). */
static int xfer_rm(const char *p)
{
	struct stat sb;

	if (lstat(p, &sb) < 0) {
		return errno == ENOENT ? 0 : -errno;
	}
	if (!S_ISDIR(sb.st_mode)) {
		return unlink(p) < 0 ? -errno : 0;
	}
	return nftw(p, xfer_rm_cb, 16, FTW_DEPTH | FTW_PHYS) ? -errno : 0;
}

static ssize_t xfer_pread_full(int fd, void *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done,
				  off + (off_t)done);

		if (n < 0) {
			if (errno == EINTR) {
				continue;
			}
			return -errno;
		}
		if (!n) {
			break;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int xfer_pwrite_full(int fd, const void *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pwrite(fd, (const char *)buf + done, len - done,
				   off + (off_t)done);

		if (n < 0) {
			if (errno == EINTR) {
				continue;
			}
			return -errno;
		}
		done += (size_t)n;
	}
	return 0;
}

/*
 * Gives the destination's entry (@fd, or @path under @fd: never followed)
 * the source's owner, mode and times: ESXi and the NFS clients see the
 * replica as the source's files.  The times go last: applying the data
 * (or a directory's entries) changed them.  Returns 0 or -1 (errno).
 */
static int xfer_attrs(int fd, const char *path, const struct stat *ss)
{
	const struct timespec t[2] = { ss->st_atim, ss->st_mtim };

	if (!path) {
		return fchown(fd, ss->st_uid, ss->st_gid) < 0 ||
				       fchmod(fd, ss->st_mode & 07777) < 0 ||
				       futimens(fd, t) < 0
			       ? -1
			       : 0;
	}
	if (fchownat(fd, path, ss->st_uid, ss->st_gid, AT_SYMLINK_NOFOLLOW) <
		    0 ||
	    (!S_ISLNK(ss->st_mode) &&
	     fchmodat(fd, path, ss->st_mode & 07777, 0) < 0)) {
		return -1;
	}
	return utimensat(fd, path, t, AT_SYMLINK_NOFOLLOW);
}

/* Sends block [@off, @off + @len) of @sfd to @dfd unless the base @bfd
 * (-1: none; @bsize bytes) has the same bytes there; checks it by reading
 * it back. */
static int xfer_block(struct xfer *x, const char *rel, int sfd, int bfd,
		      uint64_t bsize, int dfd, uint64_t off, size_t len)
{
	ssize_t n = xfer_pread_full(sfd, x->sbuf, len, (off_t)off);
	uint64_t h;

	if (n < 0 || (size_t)n != len) {
		return errbuf_printf(x->errbuf, x->errlen,
				     n < 0 ? (int)n : -EIO,
				     "%s: source read at %llu failed", rel,
				     (unsigned long long)off);
	}
	h = XXH64(x->sbuf, len, 0);
	if (bfd >= 0 && off + len <= bsize) {
		n = xfer_pread_full(bfd, x->bbuf, len, (off_t)off);
		if (n == (ssize_t)len && XXH64(x->bbuf, len, 0) == h &&
		    !memcmp(x->bbuf, x->sbuf, len)) {
			return 0; /* rewritten with the same bytes */
		}
	}
	n = xfer_pwrite_full(dfd, x->sbuf, len, (off_t)off);
	if (n < 0) {
		return errbuf_printf(x->errbuf, x->errlen, (int)n,
				     "%s: destination write at %llu: %s", rel,
				     (unsigned long long)off,
				     strerror((int)-n));
	}
	x->st->sent_bytes += len;
	n = xfer_pread_full(dfd, x->dbuf, len, (off_t)off);
	if (n != (ssize_t)len || XXH64(x->dbuf, len, 0) != h) {
		return errbuf_printf(x->errbuf, x->errlen, -EIO,
				     "%s: block at %llu reads back other than "
				     "the snapshot's (xxh64)",
				     rel, (unsigned long long)off);
	}
	return 0;
}

/* The candidate ranges of @sfd against @bfd (-1: none): FIEMAP's, or the
 * whole file where a file system has none. */
static int xfer_plan(int sfd, int bfd, uint64_t size, uint64_t bsize,
		     struct repl_range **r, size_t *n)
{
	struct repl_extent *ce = NULL, *be = NULL;
	size_t nc = 0, nb = 0;
	int err;

	err = repl_plan_fiemap(sfd, &ce, &nc);
	if (!err && bfd >= 0) {
		err = repl_plan_fiemap(bfd, &be, &nb);
	}
	if (err == -EOPNOTSUPP) {
		free(ce);
		*r = malloc(sizeof(**r));
		if (!*r) {
			return -ENOMEM;
		}
		(*r)->off = 0;
		(*r)->len = size;
		*n = size ? 1 : 0;
		return 0;
	}
	if (!err) {
		err = repl_plan_changed(ce, nc, be, nb, size,
					bfd >= 0 ? bsize : 0, REPL_BLOCK, r, n);
	}
	free(ce);
	free(be);
	return err;
}

static int xfer_file(struct xfer *x, const char *rel, const struct stat *ss)
{
	char sp[PATH_MAX], bp[PATH_MAX], dp[PATH_MAX];
	struct repl_range *r = NULL;
	int sfd, bfd = -1, dfd, err;
	struct stat bs, ds;
	size_t n = 0;

	if (repl_journal_has(x->j, rel)) {
		x->st->files_resumed++;
		return 0;
	}
	if (xfer_path(sp, x->a->src, rel) || xfer_path(dp, x->a->dst, rel) ||
	    (x->a->base && xfer_path(bp, x->a->base, rel))) {
		return errbuf_printf(x->errbuf, x->errlen, -ENAMETOOLONG,
				     "%s: path too long", rel);
	}
	/* The base counts only where the destination still holds its copy
	 * (it was applied before); else the file goes whole. */
	if (lstat(dp, &ds) < 0 || !S_ISREG(ds.st_mode)) {
		err = xfer_rm(dp);
		if (err) {
			return errbuf_printf(x->errbuf, x->errlen, err,
					     "%s: cannot replace: %s", rel,
					     strerror(-err));
		}
	} else if (x->a->base) {
		bfd = open(bp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (bfd >= 0 && (fstat(bfd, &bs) < 0 || !S_ISREG(bs.st_mode))) {
			close(bfd);
			bfd = -1;
		}
	}
	sfd = open(sp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	dfd = open(dp, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (sfd < 0 || dfd < 0) {
		err = -errno;
		errbuf_printf(x->errbuf, x->errlen, err, "%s: open: %s", rel,
			      strerror(-err));
		goto out;
	}
	if (bfd < 0 && ftruncate(dfd, 0) < 0) {
		err = -errno; /* no base: a file applied whole, from empty */
		goto out;
	}
	/* The size first: a shrunk file loses its tail, a grown one reads
	 * zeros until its blocks come. */
	if (ftruncate(dfd, ss->st_size) < 0) {
		err = errbuf_printf(x->errbuf, x->errlen, -errno,
				    "%s: destination size %lld: %s", rel,
				    (long long)ss->st_size, strerror(errno));
		goto out;
	}
	err = xfer_plan(sfd, bfd, (uint64_t)ss->st_size,
			bfd >= 0 ? (uint64_t)bs.st_size : 0, &r, &n);
	if (err) {
		errbuf_printf(x->errbuf, x->errlen, err, "%s: plan: %s", rel,
			      strerror(-err));
		goto out;
	}
	for (size_t i = 0; i < n && !err; i++) {
		x->st->candidate_bytes += r[i].len;
		for (uint64_t o = r[i].off; o < r[i].off + r[i].len && !err;
		     o += REPL_BLOCK) {
			uint64_t end = r[i].off + r[i].len;
			size_t len = end - o < REPL_BLOCK ? (size_t)(end - o)
							  : REPL_BLOCK;

			err = xfer_block(x, rel, sfd, bfd,
					 bfd >= 0 ? (uint64_t)bs.st_size : 0,
					 dfd, o, len);
		}
	}
	if (!err && (xfer_attrs(dfd, NULL, ss) < 0 || fsync(dfd) < 0)) {
		err = errbuf_printf(x->errbuf, x->errlen, -errno,
				    "%s: destination sync: %s", rel,
				    strerror(errno));
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
	if (sfd >= 0) {
		close(sfd);
	}
	if (bfd >= 0) {
		close(bfd);
	}
	if (dfd >= 0) {
		close(dfd);
	}
	return err;
}

static int xfer_tree(struct xfer *x, const char *rel, int depth);

/* Applies entry @rel (lstat @ss) of the source snapshot. */
static int xfer_entry(struct xfer *x, const char *rel, const struct stat *ss,
		      int depth)
{
	char sp[PATH_MAX], dp[PATH_MAX], tgt[PATH_MAX];
	struct stat ds;
	ssize_t n;
	int err;

	if (xfer_path(sp, x->a->src, rel) || xfer_path(dp, x->a->dst, rel)) {
		return errbuf_printf(x->errbuf, x->errlen, -ENAMETOOLONG,
				     "%s: path too long", rel);
	}
	if (S_ISREG(ss->st_mode)) {
		return xfer_file(x, rel, ss);
	}
	if (S_ISDIR(ss->st_mode)) {
		if (lstat(dp, &ds) == 0 && !S_ISDIR(ds.st_mode) &&
		    (err = xfer_rm(dp))) {
			return err;
		}
		if (mkdir(dp, 0700) < 0 && errno != EEXIST) {
			return errbuf_printf(x->errbuf, x->errlen, -errno,
					     "%s: mkdir: %s", rel,
					     strerror(errno));
		}
		err = xfer_tree(x, rel, depth + 1);
		if (!err && xfer_attrs(AT_FDCWD, dp, ss) < 0) {
			err = -errno;
		}
		return err;
	}
	if (S_ISLNK(ss->st_mode)) {
		n = readlink(sp, tgt, sizeof(tgt) - 1);
		if (n < 0) {
			return -errno;
		}
		tgt[n] = '\0';
		err = xfer_rm(dp);
		if (!err && (symlink(tgt, dp) < 0 ||
			     xfer_attrs(AT_FDCWD, dp, ss) < 0)) {
			err = -errno;
		}
		return err ? errbuf_printf(x->errbuf, x->errlen, err,
					   "%s: symlink: %s", rel,
					   strerror(-err))
			   : 0;
	}
	return 0; /* devices, fifos, sockets: a datastore has none to send */
}

/*
 * The next entry of directory @d (at @rel) but ".", ".." and, at the
 * root, .snapshot (never sent, never pruned): its relative path into @sub
 * and its source path into @sp (PATH_MAX each).  Returns 1, 0 at the end
 * or -ENAMETOOLONG.
 */
static int xfer_next(struct xfer *x, DIR *d, const char *rel, char *sub,
		     char *sp)
{
	struct dirent *de;

	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    (!*rel && !strcmp(de->d_name, SNAP_DIR_NAME))) {
			continue;
		}
		if (snprintf(sub, PATH_MAX, "%s%s%s", rel, *rel ? "/" : "",
			     de->d_name) >= PATH_MAX ||
		    xfer_path(sp, x->a->src, sub)) {
			return -ENAMETOOLONG;
		}
		return 1;
	}
	return 0;
}

/* Removes what directory @rel of the destination has and the snapshot's
 * has not (at the root, .snapshot stays). */
static int xfer_prune(struct xfer *x, const char *rel)
{
	char dp[PATH_MAX], sp[PATH_MAX], sub[PATH_MAX];
	struct stat sb;
	int err = 0, rc = 0;
	DIR *d;

	if (xfer_path(dp, x->a->dst, rel)) {
		return -ENAMETOOLONG;
	}
	d = opendir(dp);
	if (!d) {
		return -errno;
	}
	while (!err && (rc = xfer_next(x, d, rel, sub, sp)) > 0) {
		if (lstat(sp, &sb) < 0) {
			char rp[PATH_MAX];

			if (!xfer_path(rp, x->a->dst, sub) &&
			    !(err = xfer_rm(rp))) {
				x->st->removed++;
			}
		}
	}
	closedir(d);
	return err ? err : rc;
}

static int xfer_tree(struct xfer *x, const char *rel, int depth)
{
	char sp[PATH_MAX], sub[PATH_MAX];
	struct stat sb;
	int err = 0, rc = 0;
	DIR *d;

	if (depth > SNAP_MAX_DEPTH) {
		return errbuf_printf(x->errbuf, x->errlen, -ELOOP,
				     "%s: deeper than %d levels", rel,
				     SNAP_MAX_DEPTH);
	}
	err = xfer_prune(x, rel);
	if (err) {
		return errbuf_printf(x->errbuf, x->errlen, err,
				     "%s: removing what the snapshot has not: "
				     "%s",
				     *rel ? rel : "/", strerror(-err));
	}
	if (xfer_path(sp, x->a->src, rel)) {
		return -ENAMETOOLONG;
	}
	d = opendir(sp);
	if (!d) {
		return errbuf_printf(x->errbuf, x->errlen, -errno,
				     "source %s: %s", *rel ? rel : "/",
				     strerror(errno));
	}
	while (!err && (rc = xfer_next(x, d, rel, sub, sp)) > 0) {
		err = lstat(sp, &sb) < 0 ? -errno
					 : xfer_entry(x, sub, &sb, depth);
	}
	closedir(d);
	return err ? err : rc;
}

/* Whether the destination holds anything but .snapshot. */
static int xfer_dst_empty(const char *dst)
{
	struct dirent *de;
	int empty = 1;
	DIR *d = opendir(dst);

	if (!d) {
		return -errno;
	}
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    strcmp(de->d_name, SNAP_DIR_NAME)) {
			empty = 0;
			break;
		}
	}
	closedir(d);
	return empty;
}

int repl_xfer_run(const struct repl_xfer_args *a, struct repl_xfer_stats *st,
		  char *errbuf, size_t errlen)
{
	struct xfer x = {
		.a = a, .st = st, .errbuf = errbuf, .errlen = errlen
	};
	bool resumed;
	int err;

	memset(st, 0, sizeof(*st));
	err = repl_journal_open(a->journal, a->name, &resumed, &x.j, errbuf,
				errlen);
	if (err) {
		return err;
	}
	if (!a->base && !resumed) {
		err = xfer_dst_empty(a->dst);
		if (err <= 0) {
			repl_journal_close(x.j, true);
			return errbuf_printf(errbuf, errlen,
					     err ? err : -ENOTEMPTY,
					     "destination %s: %s", a->dst,
					     err ? strerror(-err)
						 : "not empty: a baseline "
						   "needs an empty datastore");
		}
	}
	x.sbuf = malloc(REPL_BLOCK);
	x.bbuf = malloc(REPL_BLOCK);
	x.dbuf = malloc(REPL_BLOCK);
	err = x.sbuf && x.bbuf && x.dbuf ? xfer_tree(&x, "", 0) : -ENOMEM;
	if (!err && a->dst_manifest) {
		err = snap_create(a->dst, a->dst_manifest, a->name, NULL,
				  errbuf, errlen);
	}
	free(x.sbuf);
	free(x.bbuf);
	free(x.dbuf);
	repl_journal_close(x.j, err == 0);
	return err;
}
