// SPDX-License-Identifier: Apache-2.0
/*
 * relation: a replication relation's state and transfers (relation.h).
 */
#include "nfsd/repl/relation.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nfsd/base/errbuf.h"
#include "nfsd/repl/dst.h"
#include "nfsd/repl/guard.h"
#include "nfsd/snap/snap.h"

static int relation_file(const struct repl_relation *r, const char *what,
			 char *out)
{
	int n = snprintf(out, PATH_MAX, "%s/repl-%s.%s", r->state_dir, r->name,
			 what);

	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

/* Writes the state file: tmp, fsync, rename. */
static int relation_save(const struct repl_relation *r)
{
	char p[PATH_MAX], tmp[PATH_MAX + 8];
	FILE *f;
	int err = 0;

	if (relation_file(r, "state", p)) {
		return -ENAMETOOLONG;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", p);
	f = fopen(tmp, "w");
	if (!f) {
		return -errno;
	}
	fprintf(f,
		"last=%s\nseq=%" PRIu64 "\nbroken=%d\nlast_snap_s=%" PRId64
		"\npending_s=%" PRId64 "\n",
		r->last, r->seq, r->broken ? 1 : 0, r->last_snap_s,
		r->pending_s);
	if (fflush(f) || fsync(fileno(f)) < 0) {
		err = -errno;
	}
	if (fclose(f) && !err) {
		err = -errno;
	}
	if (!err && rename(tmp, p) < 0) {
		err = -errno;
	}
	return err;
}

/* relation_save() with its failure's reason in @errbuf. */
static int relation_save_err(const struct repl_relation *r, char *errbuf,
			     size_t errlen)
{
	int err = relation_save(r);

	return err ? errbuf_printf(errbuf, errlen, err,
				   "relation %s: state: %s", r->name,
				   strerror(-err))
		   : 0;
}

static int relation_load(struct repl_relation *r)
{
	char p[PATH_MAX], line[128];
	FILE *f;

	if (relation_file(r, "state", p)) {
		return -ENAMETOOLONG;
	}
	f = fopen(p, "r");
	if (!f) {
		return errno == ENOENT ? 0 : -errno;
	}
	while (fgets(line, sizeof(line), f)) {
		int b;

		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "last=", 5) &&
		    strlen(line + 5) <= SNAP_NAME_MAX) {
			strcpy(r->last, line + 5);
		} else if (sscanf(line, "seq=%" SCNu64, &r->seq) == 1) {
		} else if (sscanf(line, "broken=%d", &b) == 1) {
			r->broken = b != 0;
		} else if (sscanf(line, "pending_s=%" SCNd64, &r->pending_s) ==
			   1) {
		} else {
			(void)sscanf(line, "last_snap_s=%" SCNd64,
				     &r->last_snap_s);
		}
	}
	fclose(f);
	return 0;
}

/* Operation @op with argument @arg (a snapshot's name, "" none) on the
 * destination. */
static int relation_dst(struct repl_relation *r, unsigned op, const char *arg,
			char *errbuf, size_t errlen)
{
	struct repl_msg m = { .op = (uint8_t)op,
			      .arg = arg,
			      .arg_len = strlen(arg) };
	struct repl_local local;
	struct repl_result res;
	char dummy[8];
	int err;

	if (!errbuf) {
		errbuf = dummy;
		errlen = sizeof(dummy);
	}
	if (r->to) {
		return repl_dst_call(r->to, &m, &res, errbuf, errlen);
	}
	err = repl_local_open(&local, r->dst_root, r->dst_manifest, errbuf,
			      errlen);
	if (!err) {
		char applying[PATH_MAX];

		local.applying = relation_file(r, "applying", applying)
					 ? NULL
					 : applying;
		local.guard = r->dst_guard;
		err = repl_dst_call(&local.pub, &m, &res, errbuf, errlen);
		repl_local_close(&local);
	}
	return err;
}

/* Whether @a is @b or under it (both resolved). */
static bool relation_under(const char *a, const char *b)
{
	size_t n = strlen(b);

	return !strncmp(a, b, n) &&
	       (a[n] == '\0' || a[n] == '/' || (n == 1 && b[0] == '/'));
}

int repl_relation_open(struct repl_relation *r, char *errbuf, size_t errlen)
{
	char s[PATH_MAX], d[PATH_MAX];

	if (snap_name_check(r->name, errbuf, errlen)) {
		return -EINVAL;
	}
	if (r->to) {
		return relation_load(r);
	}
	if (!realpath(r->src_root, s) || !realpath(r->dst_root, d)) {
		return errbuf_printf(errbuf, errlen, -errno, "relation %s: %s",
				     r->name, strerror(errno));
	}
	if (relation_under(s, d) || relation_under(d, s)) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "relation %s: the destination %s is the "
				     "source datastore %s or inside it (or it "
				     "is inside the destination)",
				     r->name, d, s);
	}
	return relation_load(r);
}

int64_t repl_relation_lag(const struct repl_relation *r, int64_t now)
{
	return r->last[0] ? now - r->last_snap_s : -1;
}

/* The source snapshot of the transfer its journal names, if it is one of
 * this relation's and still there: the transfer to resume. */
static bool relation_pending(const struct repl_relation *r, char *name)
{
	char p[PATH_MAX], line[SNAP_NAME_MAX + 2], prefix[80];
	bool ok = false;
	FILE *f;

	if (relation_file(r, "journal", p) || !(f = fopen(p, "r"))) {
		return false;
	}
	snprintf(prefix, sizeof(prefix), "repl-%s-", r->name);
	if (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		ok = !strncmp(line, prefix, strlen(prefix)) &&
		     strcmp(line, r->last) &&
		     !snap_check(r->src_root, r->src_manifest, line, true, NULL,
				 0);
		if (ok) {
			strcpy(name, line);
		}
	}
	fclose(f);
	return ok;
}

/* Records the failure @err of a transfer at @now. */
static int relation_failed(struct repl_relation *r, int err, int64_t now)
{
	r->transfers_failed++;
	r->last_err = err;
	r->last_err_s = now;
	return err;
}

int repl_relation_transfer(struct repl_relation *r, int64_t now, char *errbuf,
			   size_t errlen)
{
	char name[SNAP_NAME_MAX + 1], src[PATH_MAX], base[PATH_MAX],
		journal[PATH_MAX], applying[PATH_MAX];
	struct repl_xfer_args a = { 0 };
	int err;

	if (r->broken) {
		return errbuf_printf(errbuf, errlen, -EPERM,
				     "relation %s is broken: resync it first",
				     r->name);
	}
	if (relation_file(r, "journal", journal) ||
	    relation_file(r, "applying", applying)) {
		return -ENAMETOOLONG;
	}
	memset(&r->last_stats, 0, sizeof(r->last_stats));
	if (r->to && r->hello) {
		err = relation_dst(r, REPL_OP_HELLO, r->hello, errbuf, errlen);
		if (err) {
			return relation_failed(r, err, now);
		}
	}
	if (!relation_pending(r, name)) {
		r->seq++;
		snprintf(name, sizeof(name), "repl-%s-%" PRIu64, r->name,
			 r->seq);
		r->pending_s = now;
		err = relation_save(r);
		if (!err) {
			err = repl_guard_snap(r->src_guard, REPL_GUARD_CREATE,
					      r->src_root, r->src_manifest,
					      name, errbuf, errlen);
		}
		if (err) {
			return relation_failed(r, err, now);
		}
	}
	snprintf(src, sizeof(src), "%s/%s/%s", r->src_root, SNAP_DIR_NAME,
		 name);
	snprintf(base, sizeof(base), "%s/%s/%s", r->src_root, SNAP_DIR_NAME,
		 r->last);
	a.name = name;
	a.src = src;
	a.base = r->last[0] ? base : NULL;
	a.base_name = r->last;
	a.dst = r->dst_root;
	a.journal = journal;
	a.dst_manifest = r->dst_manifest;
	a.dst_applying = applying;
	a.dst_guard = r->dst_guard;
	a.to = r->to;
	err = repl_xfer_run(&a, &r->last_stats, errbuf, errlen);
	r->bytes_total += r->last_stats.sent_bytes;
	if (err) {
		return relation_failed(r, err, now);
	}
	/* Committed on both sides: the older pair is no longer a base. */
	if (r->last[0]) {
		(void)repl_guard_snap(r->src_guard, REPL_GUARD_DELETE,
				      r->src_root, r->src_manifest, r->last,
				      NULL, 0);
		(void)relation_dst(r, REPL_OP_DELSNAP, r->last, NULL, 0);
	}
	snprintf(r->last, sizeof(r->last), "%s", name);
	r->last_snap_s = r->pending_s;
	r->last_ok_s = now;
	r->last_err = 0;
	r->transfers_ok++;
	return relation_save_err(r, errbuf, errlen);
}

int repl_relation_break(struct repl_relation *r, char *errbuf, size_t errlen)
{
	/* The destination is told when it answers (it undoes a transfer
	 * applied in part, undo.h); when it does not (the disaster), it is
	 * broken on its own side (peer.h). */
	(void)relation_dst(r, REPL_OP_BREAK, "", NULL, 0);
	r->broken = true;
	return relation_save_err(r, errbuf, errlen);
}

/* Drops the transfer its journal names (its source snapshot and the
 * journal): what the destination held of it was undone. */
static void relation_drop_pending(struct repl_relation *r)
{
	char name[SNAP_NAME_MAX + 1], journal[PATH_MAX];

	if (relation_pending(r, name)) {
		(void)repl_guard_snap(r->src_guard, REPL_GUARD_DELETE,
				      r->src_root, r->src_manifest, name, NULL,
				      0);
	}
	if (!relation_file(r, "journal", journal)) {
		(void)unlink(journal);
	}
}

int repl_relation_resync(struct repl_relation *r, char *errbuf, size_t errlen)
{
	int err;

	if (!r->broken) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "relation %s is not broken", r->name);
	}
	err = relation_dst(r, REPL_OP_RESYNC, r->last, errbuf, errlen);
	if (err) {
		return err;
	}
	/* The revert undid what a cut transfer had applied: its journal
	 * no longer says what the destination holds, and its snapshot
	 * goes; the next transfer starts afresh from the last one. */
	relation_drop_pending(r);
	r->broken = false;
	return relation_save_err(r, errbuf, errlen);
}

uint64_t repl_relation_seq_of(const char *rel, const char *name)
{
	char prefix[80], *end;
	unsigned long long v;
	size_t n;

	snprintf(prefix, sizeof(prefix), "repl-%s-", rel);
	n = strlen(prefix);
	if (strncmp(name, prefix, n) || name[n] < '1' || name[n] > '9') {
		return 0;
	}
	errno = 0;
	v = strtoull(name + n, &end, 10);
	return errno || *end ? 0 : (uint64_t)v;
}

int repl_relation_adopt(struct repl_relation *r, const char *common,
			int64_t now, char *errbuf, size_t errlen)
{
	uint64_t seq = repl_relation_seq_of(r->name, common);

	if (!seq) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "relation %s: %s is not one of its "
				     "snapshots",
				     r->name, common);
	}
	relation_drop_pending(r);
	snprintf(r->last, sizeof(r->last), "%s", common);
	r->seq = seq;
	r->broken = false;
	/* Its age is not known here: counted from now. */
	r->last_snap_s = now;
	r->pending_s = now;
	r->last_ok_s = now;
	r->last_err = 0;
	return relation_save_err(r, errbuf, errlen);
}
