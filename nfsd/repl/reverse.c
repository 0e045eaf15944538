// SPDX-License-Identifier: Apache-2.0
/*
 * reverse: the reverse resync of a relation, both ends (reverse.h).
 */
#include "nfsd/repl/reverse.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nfsd/base/errbuf.h"
#include "nfsd/base/log.h"
#include "nfsd/repl/client.h"
#include "nfsd/repl/repl_int.h"
#include "nfsd/snap/snap.h"

static int reverse_file(const char *state_dir, const char *name,
			const char *what, char *out)
{
	return snprintf(out, PATH_MAX, "%s/repl-%s.%s", state_dir, name,
			what) >= PATH_MAX
		       ? -ENAMETOOLONG
		       : 0;
}

bool repl_reversed_load(const char *state_dir, const char *name)
{
	char p[PATH_MAX];

	return !reverse_file(state_dir, name, "reversed", p) &&
	       access(p, F_OK) == 0;
}

int repl_reversed_save(const char *state_dir, const char *name, bool on)
{
	char p[PATH_MAX];
	int fd, err = reverse_file(state_dir, name, "reversed", p);

	if (err) {
		return err;
	}
	if (!on) {
		err = unlink(p) < 0 && errno != ENOENT ? -errno : 0;
	} else if ((fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) < 0) {
		err = -errno;
	} else {
		err = fsync(fd) < 0 ? -errno : 0;
		close(fd);
	}
	fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	return err;
}

/* Another relation of @x's datastore here: a reversed relation must be
 * its datastore's only one (it would be a replica and a source). */
static const struct repl_item *reverse_shared(const struct repl_service *s,
					      const struct repl_item *x)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->item[i] != x &&
		    !strcmp(s->item[i]->cfg.datastore, x->cfg.datastore)) {
			return s->item[i];
		}
	}
	return NULL;
}

/* What refuses a reverse asked of @x, before anything is sent. */
static int reverse_check(struct repl_service *s, struct repl_item *x,
			 char *last, char *errbuf, size_t errlen)
{
	const struct repl_item *o = reverse_shared(s, x);
	bool broken = false, applying = false;

	if (repl__item_sends(x)) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "relation %s: this server is its source: "
				     "a reverse is asked of the destination's "
				     "server, after its break",
				     x->cfg.name);
	}
	if (!x->client) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "relation %s: no source_url and "
				     "source_datastore in its [replication] "
				     "section: this server cannot reach the "
				     "source",
				     x->cfg.name);
	}
	if (o) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "relation %s: datastore %s is also in "
				     "relation %s: a reversed relation must be "
				     "its datastore's only one",
				     x->cfg.name, x->cfg.datastore,
				     o->cfg.name);
	}
	(void)repl_peers_state(&s->peers, x->cfg.name, &broken, &applying,
			       last);
	if (!broken) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "relation %s: not broken here: break it "
				     "first (the failover; then this "
				     "datastore's changes are sent back)",
				     x->cfg.name);
	}
	if (!last[0]) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "relation %s: no replica committed here: "
				     "the two ends share no snapshot",
				     x->cfg.name);
	}
	return 0;
}

int repl__reverse_start(struct repl_service *s, struct repl_item *x,
			char *errbuf, size_t errlen)
{
	struct repl_msg m = { .op = REPL_OP_HELLO };
	char last[SNAP_NAME_MAX + 1] = "";
	struct repl_dst *to;
	struct repl_result r;
	bool now_rev;
	int err;

	pthread_mutex_lock(&s->lock);
	if (x->running) {
		pthread_mutex_unlock(&s->lock);
		return errbuf_printf(errbuf, errlen, -EBUSY,
				     "relation %s: a transfer or another "
				     "change runs: try again when it ends",
				     x->cfg.name);
	}
	now_rev = !x->reversed;
	x->running = true;
	pthread_mutex_unlock(&s->lock);
	err = reverse_check(s, x, last, errbuf, errlen);
	if (!err) {
		to = repl_client_dst(x->client);
		m.arg = x->hello;
		m.arg_len = strlen(x->hello);
		err = repl_dst_call(to, &m, &r, errbuf, errlen);
	}
	if (!err) {
		struct repl_msg rm = { .op = REPL_OP_REVERSE,
				       .arg = last,
				       .arg_len = strlen(last) };

		err = repl_dst_call(to, &rm, &r, errbuf, errlen);
	}
	/* The other end is the destination now: this one follows. */
	if (!err) {
		err = repl_reversed_save(s->state_dir, x->cfg.name, now_rev);
		if (err) {
			errbuf_printf(errbuf, errlen, err,
				      "relation %s: %s/repl-%s.reversed: %s "
				      "(ask the reverse again)",
				      x->cfg.name, s->state_dir, x->cfg.name,
				      strerror(-err));
		}
	}
	if (!err) {
		err = repl_relation_adopt(&x->rel, last, (int64_t)time(NULL),
					  errbuf, errlen);
	}
	if (!err) {
		err = repl_peers_set(&s->peers, x->cfg.name, false, false);
	}
	pthread_mutex_lock(&s->lock);
	if (!err) {
		x->reversed = now_rev;
		x->shown = x->rel;
		x->error[0] = '\0';
		x->sched.next_s = 0;
	}
	x->running = false;
	pthread_cond_broadcast(&s->wake);
	pthread_mutex_unlock(&s->lock);
	if (!err) {
		repl__item_replica(x, false);
		log_info("replication: %s: reversed: datastore %s is the "
			 "source now, from %s (the other end went back to "
			 "it)",
			 x->cfg.name, x->cfg.datastore, last);
	}
	return err;
}

int repl__reverse_accept(void *arg, const char *name, const char *common,
			 char *reason, size_t len)
{
	struct repl_service *s = arg;
	struct repl_item *x = NULL;
	char applying[PATH_MAX];
	bool now_rev;
	int err;

	for (size_t i = 0; i < s->n && !x; i++) {
		x = strcmp(s->item[i]->cfg.name, name) ? NULL : s->item[i];
	}
	if (!x) {
		return errbuf_printf(reason, len, -ENOENT,
				     "relation %s: not here", name);
	}
	if (reverse_shared(s, x)) {
		return errbuf_printf(reason, len, -EINVAL,
				     "relation %s: datastore %s is in another "
				     "relation here: a reversed relation must "
				     "be its datastore's only one",
				     name, x->cfg.datastore);
	}
	pthread_mutex_lock(&s->lock);
	if (x->running) {
		pthread_mutex_unlock(&s->lock);
		return errbuf_printf(reason, len, -EBUSY,
				     "relation %s: a transfer runs on the "
				     "source: try again when it ends",
				     name);
	}
	x->running = true;
	x->want = false;
	/* Asked again (a crash between the two ends' switches): this end
	 * is the destination already, and stays it. */
	now_rev = x->cfg.role == REPL_ROLE_SOURCE;
	pthread_mutex_unlock(&s->lock);
	err = snap_check(x->root, x->manifest, common, true, reason, len);
	if (err) {
		err = errbuf_printf(
			reason, len, -EINVAL,
			"relation %s: this end has no snapshot %s: the "
			"two ends share none",
			name, common);
	}
	if (!err && x->client) {
		/* Its transfer cut before, and its snapshot, go. */
		err = repl_relation_adopt(&x->rel, common, (int64_t)time(NULL),
					  reason, len);
	}
	if (!err) {
		err = repl_guard_snap(&x->guard, REPL_GUARD_RESTORE, x->root,
				      x->manifest, common, reason, len);
	}
	if (!err && !reverse_file(s->state_dir, name, "applying", applying)) {
		(void)unlink(applying);
	}
	if (!err) {
		err = repl_reversed_save(s->state_dir, name, now_rev);
	}
	if (!err) {
		err = repl_peers_set_locked(&s->peers, name, true, false);
	}
	pthread_mutex_lock(&s->lock);
	if (!err) {
		x->reversed = now_rev;
		x->shown = x->rel;
		x->error[0] = '\0';
	}
	x->running = false;
	pthread_cond_broadcast(&s->wake);
	pthread_mutex_unlock(&s->lock);
	if (!err) {
		repl__item_replica(x, true);
		log_info("replication: %s: reversed: datastore %s went back to "
			 "%s and is the destination now (read-only to NFS "
			 "clients)",
			 name, x->cfg.datastore, common);
	}
	return err;
}
