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
#include "nfsd/repl/chain.h"
#include "nfsd/repl/dst.h"
#include "nfsd/repl/guard.h"
#include "nfsd/repl/src.h"
#include "nfsd/snap/snap.h"

/* The source datastore: @r->src, or the local one at @r->src_root kept
 * in @l. */
static struct repl_src *relation_src(const struct repl_relation *r,
				     struct repl_src_local *l)
{
	if (r->src) {
		return r->src;
	}
	repl_src_local_init(l, r->src_root, r->src_manifest, r->src_guard);
	return &l->pub;
}

/* Whether the source holds snapshot @name. */
static bool relation_on_src(const struct repl_relation *r, const char *name)
{
	struct repl_src_local l;
	struct repl_src *src = relation_src(r, &l);

	return !src->ops->snap_check(src, name);
}

/* The source's snapshots (snap_list()). */
static int relation_src_list(const struct repl_relation *r,
			     struct snap_entry **list, size_t *n)
{
	struct repl_src_local l;
	struct repl_src *src = relation_src(r, &l);

	return src->ops->snap_list(src, list, n);
}

/* Snapshot @name of the source made or deleted under its guard. */
static int relation_src_snap(const struct repl_relation *r,
			     enum repl_guard_op op, const char *name,
			     char *errbuf, size_t errlen)
{
	struct repl_src_local l;
	struct repl_src *src = relation_src(r, &l);
	char dummy[8];

	if (!errbuf) {
		errbuf = dummy;
		errlen = sizeof(dummy);
	}
	return src->ops->snap(src, op, name, errbuf, errlen);
}

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
		"\npending_s=%" PRId64 "\ntip=%s\ncommitting=%s\n",
		r->last, r->seq, r->broken ? 1 : 0, r->last_snap_s,
		r->pending_s, r->tip, r->committing);
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
		} else if (!strncmp(line, "tip=", 4) &&
			   strlen(line + 4) <= SNAP_NAME_MAX) {
			strcpy(r->tip, line + 4);
		} else if (!strncmp(line, "committing=", 11) &&
			   strlen(line + 11) <= SNAP_NAME_MAX) {
			strcpy(r->committing, line + 11);
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
 * destination; its result in @out (may be NULL). */
static int relation_dst_res(struct repl_relation *r, unsigned op,
			    const char *arg, struct repl_result *out,
			    char *errbuf, size_t errlen)
{
	struct repl_msg m = { .op = (uint8_t)op,
			      .arg = arg,
			      .arg_len = strlen(arg) };
	struct repl_local local;
	struct repl_result own, *resp = out ? out : &own;
	char dummy[8];
	int err;

	if (!errbuf) {
		errbuf = dummy;
		errlen = sizeof(dummy);
	}
	if (r->to) {
		return repl_dst_call(r->to, &m, resp, errbuf, errlen);
	}
	err = repl_local_open(&local, r->dst_root, r->dst_manifest, errbuf,
			      errlen);
	if (!err) {
		char applying[PATH_MAX];

		local.applying = relation_file(r, "applying", applying)
					 ? NULL
					 : applying;
		local.guard = r->dst_guard;
		err = repl_dst_call(&local.pub, &m, resp, errbuf, errlen);
		repl_local_close(&local);
	}
	return err;
}

static int relation_dst(struct repl_relation *r, unsigned op, const char *arg,
			char *errbuf, size_t errlen)
{
	return relation_dst_res(r, op, arg, NULL, errbuf, errlen);
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

/* The replica snapshot of a transfer taken and not committed yet
 * (repl-NAME-SEQ of the relation's sequence, still on the source): the
 * transfer to take up again. */
static bool relation_pending(const struct repl_relation *r, char *name)
{
	char n[SNAP_NAME_MAX + 1];

	if (!r->seq) {
		return false;
	}
	snprintf(n, sizeof(n), "repl-%s-%" PRIu64, r->name, r->seq);
	if (!strcmp(n, r->last) || !relation_on_src(r, n)) {
		return false;
	}
	strcpy(name, n);
	return true;
}

/* Records the failure @err of a transfer at @now. */
static int relation_failed(struct repl_relation *r, int err, int64_t now)
{
	r->transfers_failed++;
	r->last_err = err;
	r->last_err_s = now;
	return err;
}

/* The snapshot the destination's live tree is at. */
static const char *relation_tip(const struct repl_relation *r)
{
	return r->tip[0] ? r->tip : r->last;
}

/* The source's time of snapshot @name in @list, 0 when not there. */
static int64_t relation_created(const struct snap_entry *list, size_t n,
				const char *name)
{
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(list[i].name, name)) {
			return list[i].created_s;
		}
	}
	return 0;
}

/* A step whose COMMIT was sent, its answer not had (a kill, a cut):
 * the destination says whether it made it; if so it is the tip (and, a
 * carried one, in the record @held, saved at @path). */
static int relation_settle(struct repl_relation *r, struct repl_snaps *held,
			   const char *path, const struct snap_entry *list,
			   size_t n, char *errbuf, size_t errlen)
{
	struct repl_result res;
	int err;

	if (!r->committing[0]) {
		return 0;
	}
	err = relation_dst_res(r, REPL_OP_HASSNAP, r->committing, &res, errbuf,
			       errlen);
	if (err) {
		return err;
	}
	if (res.value) {
		snprintf(r->tip, sizeof(r->tip), "%s", r->committing);
		if (repl_chain_carried(r->committing)) {
			/* Not on the source any more: 0, gone at the plan. */
			err = repl_snaps_add(
				held, r->committing,
				relation_created(list, n, r->committing));
			if (!err) {
				err = repl_snaps_save(path, held, errbuf,
						      errlen);
			}
			if (err) {
				return err;
			}
		}
	}
	r->committing[0] = '\0';
	return relation_save_err(r, errbuf, errlen);
}

/* Whether the source's copy of the tip is the one the destination's
 * tree is at: on the source and, a carried one, made at the time the
 * record says (not deleted and made again under its name). */
static bool relation_base_ok(const struct repl_relation *r,
			     const struct repl_snaps *held,
			     const struct snap_entry *list, size_t n)
{
	const char *tip = relation_tip(r);
	int h;

	if (!tip[0] || !relation_on_src(r, tip)) {
		return false;
	}
	if (!repl_chain_carried(tip)) {
		return true;
	}
	h = repl_snaps_find(held, tip);
	return h >= 0 && held->s[h].created_s == relation_created(list, n, tip);
}

/* One step: source snapshot @name (made at @created_s) applied on top of
 * the destination's tip (from the source's copy of it when @base_ok,
 * else whole files) and committed there; then it is the tip. */
static int relation_step(struct repl_relation *r, const char *name,
			 int64_t created_s, bool base_ok, char *errbuf,
			 size_t errlen)
{
	char journal[PATH_MAX], applying[PATH_MAX];
	struct repl_xfer_args a = { 0 };
	struct repl_xfer_stats st;
	const char *tip = relation_tip(r);
	struct repl_src_local l;
	struct repl_src *src = relation_src(r, &l);
	int err;

	if (relation_file(r, "journal", journal) ||
	    relation_file(r, "applying", applying)) {
		return -ENAMETOOLONG;
	}
	/* Kept until it is known made: a kill after the COMMIT is sent
	 * leaves the destination's tree at @name or at the tip. */
	snprintf(r->committing, sizeof(r->committing), "%s", name);
	err = relation_save_err(r, errbuf, errlen);
	if (err) {
		return err;
	}
	err = src->ops->tree_open(src, name, &a.src_tree, errbuf, errlen);
	if (!err && tip[0] && base_ok) {
		err = src->ops->tree_open(src, tip, &a.base_tree, errbuf,
					  errlen);
	}
	if (err) {
		if (a.src_tree) {
			a.src_tree->ops->close(a.src_tree);
		}
		return err;
	}
	a.name = name;
	a.base_name = tip;
	a.dst = r->dst_root;
	a.journal = journal;
	a.dst_manifest = r->dst_manifest;
	a.dst_applying = applying;
	a.dst_guard = r->dst_guard;
	a.to = r->to;
	a.created_s = created_s;
	a.from = src;
	err = repl_xfer_run(&a, &st, errbuf, errlen);
	a.src_tree->ops->close(a.src_tree);
	if (a.base_tree) {
		a.base_tree->ops->close(a.base_tree);
	}
	r->last_stats.files += st.files;
	r->last_stats.files_resumed += st.files_resumed;
	r->last_stats.candidate_bytes += st.candidate_bytes;
	r->last_stats.sent_bytes += st.sent_bytes;
	r->last_stats.removed += st.removed;
	r->last_stats.restarted |= st.restarted;
	r->bytes_total += st.sent_bytes;
	if (err) {
		return err;
	}
	snprintf(r->tip, sizeof(r->tip), "%s", name);
	r->committing[0] = '\0';
	return relation_save_err(r, errbuf, errlen);
}

/* The source's snapshots the destination lacks, @send, each a step;
 * those deleted on the source, @gone, deleted there first (room for the
 * new ones) but for the tip, the next step's base.  The record @held
 * (at @path) follows each. */
static int relation_chain(struct repl_relation *r, struct repl_snaps *held,
			  const char *path, const struct repl_snaps *send,
			  const struct repl_snaps *gone, bool base_ok,
			  char *errbuf, size_t errlen)
{
	char keep[SNAP_NAME_MAX + 1];
	int err;

	snprintf(keep, sizeof(keep), "%s", relation_tip(r));
	for (size_t i = 0; i < gone->n; i++) {
		if (!strcmp(gone->s[i].name, keep)) {
			continue; /* the next transfer, when it is not */
		}
		err = relation_dst(r, REPL_OP_DELSNAP, gone->s[i].name, errbuf,
				   errlen);
		if (err && err != -ENOENT) {
			return err;
		}
		repl_snaps_del(held, gone->s[i].name);
		err = repl_snaps_save(path, held, errbuf, errlen);
		if (err) {
			return err;
		}
		r->last_snapshots_deleted++;
	}
	for (size_t i = 0; i < send->n; i++) {
		const struct repl_snap *s = &send->s[i];

		if (!strcmp(s->name, keep) || !relation_on_src(r, s->name)) {
			continue; /* deleted on the source since the list */
		}
		err = relation_step(r, s->name, s->created_s, base_ok, errbuf,
				    errlen);
		if (err && !repl_err_transport(err) &&
		    !relation_on_src(r, s->name)) {
			/* Deleted (retention) while it was sent: not
			 * committed, the destination back at the tip. */
			r->committing[0] = '\0';
			err = relation_save_err(r, errbuf, errlen);
			if (err) {
				return err;
			}
			continue;
		}
		if (err) {
			return err;
		}
		base_ok = true;
		err = repl_snaps_add(held, s->name, s->created_s);
		if (!err) {
			err = repl_snaps_save(path, held, errbuf, errlen);
		}
		if (err) {
			return errbuf_printf(errbuf, errlen, err,
					     "relation %s: the record of "
					     "carried snapshots: %s",
					     r->name, strerror(-err));
		}
		r->last_snapshots++;
		r->snapshots_total++;
	}
	return 0;
}

int repl_relation_transfer(struct repl_relation *r, int64_t now, char *errbuf,
			   size_t errlen)
{
	char name[SNAP_NAME_MAX + 1], path[PATH_MAX];
	struct repl_snaps held = { 0 }, send = { 0 }, gone = { 0 };
	struct snap_entry *list = NULL;
	size_t nl = 0;
	bool base_ok;
	int err;

	if (r->broken) {
		return errbuf_printf(errbuf, errlen, -EPERM,
				     "relation %s is broken: resync it first",
				     r->name);
	}
	if (relation_file(r, "snapshots", path)) {
		return -ENAMETOOLONG;
	}
	memset(&r->last_stats, 0, sizeof(r->last_stats));
	r->last_snapshots = r->last_snapshots_deleted = 0;
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
			err = relation_src_snap(r, REPL_GUARD_CREATE, name,
						errbuf, errlen);
		}
		if (err) {
			return relation_failed(r, err, now);
		}
	}
	/* The source's snapshots now: those made after this list go with
	 * the next transfer. */
	err = relation_src_list(r, &list, &nl);
	if (err) {
		errbuf_printf(errbuf, errlen, err,
			      "relation %s: the source's snapshots: %s",
			      r->name, strerror(-err));
		goto out;
	}
	err = repl_snaps_load(path, &held, errbuf, errlen);
	if (!err) {
		err = relation_settle(r, &held, path, list, nl, errbuf, errlen);
	}
	if (!err) {
		err = repl_chain_plan(list, nl, &held, &send, &gone);
	}
	if (err) {
		goto out;
	}
	base_ok = relation_base_ok(r, &held, list, nl);
	if (!base_ok && relation_tip(r)[0] && r->last[0] &&
	    strcmp(r->last, relation_tip(r)) && relation_on_src(r, r->last)) {
		/* The tip (a carried snapshot a stopped chain reached) is
		 * gone from the source: the destination back at the last
		 * replica, the base the source still has. */
		err = relation_dst(r, REPL_OP_RESYNC, r->last, errbuf, errlen);
		if (err) {
			goto out;
		}
		snprintf(r->tip, sizeof(r->tip), "%s", r->last);
		err = relation_save_err(r, errbuf, errlen);
		if (err) {
			goto out;
		}
		base_ok = true;
	}
	err = relation_chain(r, &held, path, &send, &gone, base_ok, errbuf,
			     errlen);
	if (!err && strcmp(relation_tip(r), name)) {
		err = relation_step(r, name, relation_created(list, nl, name),
				    relation_base_ok(r, &held, list, nl),
				    errbuf, errlen);
	}
	if (err) {
		goto out;
	}
	/* Committed on both sides: the older pair is no longer a base. */
	if (r->last[0] && strcmp(r->last, name)) {
		(void)relation_src_snap(r, REPL_GUARD_DELETE, r->last, NULL, 0);
		(void)relation_dst(r, REPL_OP_DELSNAP, r->last, NULL, 0);
	}
	snprintf(r->last, sizeof(r->last), "%s", name);
	snprintf(r->tip, sizeof(r->tip), "%s", name);
	r->last_snap_s = r->pending_s;
	r->last_ok_s = now;
	r->last_err = 0;
	r->transfers_ok++;
	err = relation_save_err(r, errbuf, errlen);
out:
	free(list);
	repl_snaps_free(&held);
	repl_snaps_free(&send);
	repl_snaps_free(&gone);
	return err ? relation_failed(r, err, now) : 0;
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
		(void)relation_src_snap(r, REPL_GUARD_DELETE, name, NULL, 0);
	}
	if (!relation_file(r, "journal", journal)) {
		(void)unlink(journal);
	}
}

/* relation_settle() with the source's list and record read here. */
static int relation_resync_settle(struct repl_relation *r, char *errbuf,
				  size_t errlen)
{
	struct repl_snaps held = { 0 };
	struct snap_entry *list = NULL;
	char path[PATH_MAX];
	size_t n = 0;
	int err;

	if (!r->committing[0]) {
		return 0;
	}
	if (relation_file(r, "snapshots", path)) {
		return -ENAMETOOLONG;
	}
	err = relation_src_list(r, &list, &n);
	if (!err) {
		err = repl_snaps_load(path, &held, errbuf, errlen);
	}
	if (!err) {
		err = relation_settle(r, &held, path, list, n, errbuf, errlen);
	}
	free(list);
	repl_snaps_free(&held);
	return err;
}

int repl_relation_resync(struct repl_relation *r, char *errbuf, size_t errlen)
{
	int err;

	if (!r->broken) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "relation %s is not broken", r->name);
	}
	err = relation_resync_settle(r, errbuf, errlen);
	if (!err) {
		err = relation_dst(r, REPL_OP_RESYNC, relation_tip(r), errbuf,
				   errlen);
	}
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
	char path[PATH_MAX];

	if (!seq) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "relation %s: %s is not one of its "
				     "snapshots",
				     r->name, common);
	}
	relation_drop_pending(r);
	snprintf(r->last, sizeof(r->last), "%s", common);
	/* Which of this side's snapshots the other holds is not known:
	 * the next transfer carries them all (those it holds are kept). */
	r->tip[0] = r->committing[0] = '\0';
	if (!relation_file(r, "snapshots", path)) {
		(void)unlink(path);
	}
	r->seq = seq;
	r->broken = false;
	/* Its age is not known here: counted from now. */
	r->last_snap_s = now;
	r->pending_s = now;
	r->last_ok_s = now;
	r->last_err = 0;
	return relation_save_err(r, errbuf, errlen);
}
