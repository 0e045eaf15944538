// SPDX-License-Identifier: Apache-2.0
/*
 * peer: the destination side of a relation between two dsnfsd (peer.h).
 */
#include "nfsd/repl/peer.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nfsd/base/errbuf.h"
#include "nfsd/repl/relation.h"
#include "nfsd/repl/undo.h"
#include "nfsd/snap/snap.h"

int repl_key_parse(const char *text, size_t n, char key[REPL_KEY_HEX_LEN + 1])
{
	if (n > 0 && text[n - 1] == '\n') {
		n--;
	}
	if (n != REPL_KEY_HEX_LEN) {
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		if (!isxdigit((unsigned char)text[i])) {
			return -EINVAL;
		}
	}
	memcpy(key, text, REPL_KEY_HEX_LEN);
	key[REPL_KEY_HEX_LEN] = '\0';
	return 0;
}

int repl_key_load(const char *path, char key[REPL_KEY_HEX_LEN + 1],
		  char *errbuf, size_t errlen)
{
	char buf[REPL_KEY_HEX_LEN + 2];
	struct stat sb;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		return errbuf_printf(errbuf, errlen, -errno, "key file %s: %s",
				     path, strerror(errno));
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || (sb.st_mode & 077)) {
		close(fd);
		return errbuf_printf(errbuf, errlen, -EPERM,
				     "key file %s: not a regular file of mode "
				     "0600 or stricter",
				     path);
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0 || repl_key_parse(buf, (size_t)n, key)) {
		explicit_bzero(buf, sizeof(buf));
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "key file %s: not %d hex digits (make one "
				     "with: openssl rand -hex 32)",
				     path, REPL_KEY_HEX_LEN);
	}
	explicit_bzero(buf, sizeof(buf));
	return 0;
}

bool repl_key_equal(const char *key, const char *given)
{
	size_t n = given ? strlen(given) : 0;
	unsigned char diff = n != REPL_KEY_HEX_LEN;

	/* Every byte of the key is compared, against @given's own or
	 * against itself when @given is shorter. */
	for (size_t i = 0; i < REPL_KEY_HEX_LEN; i++) {
		unsigned char g =
			i < n ? (unsigned char)given[i] : (unsigned char)key[i];

		diff |= g ^ (unsigned char)key[i];
	}
	return diff == 0;
}

static void peer_state_load(struct repl_peer *p)
{
	struct stat sb;

	p->broken = p->state[0] && stat(p->state, &sb) == 0;
}

/* Keeps (or drops) the broken flag: a file, made durable. */
static int peer_state_save(struct repl_peer *p, bool broken)
{
	int fd;

	if (!p->state[0]) {
		p->broken = broken;
		return 0;
	}
	if (!broken) {
		if (unlink(p->state) < 0 && errno != ENOENT) {
			return -errno;
		}
		p->broken = false;
		return 0;
	}
	fd = open(p->state, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || fsync(fd) < 0) {
		int err = -errno;

		if (fd >= 0) {
			close(fd);
		}
		return err;
	}
	close(fd);
	p->broken = true;
	return 0;
}

int repl_identity(const char *root, char out[REPL_IDENTITY_MAX])
{
	char mid[64] = "";
	struct stat sb;
	FILE *f = fopen("/etc/machine-id", "r");

	if (!f || !fgets(mid, sizeof(mid), f)) {
		(void)gethostname(mid, sizeof(mid) - 1);
	}
	if (f) {
		fclose(f);
	}
	mid[strcspn(mid, "\n ")] = '\0';
	if (stat(root, &sb) < 0) {
		return -errno;
	}
	snprintf(out, REPL_IDENTITY_MAX, "%s:%llx:%llx", mid,
		 (unsigned long long)sb.st_dev, (unsigned long long)sb.st_ino);
	return 0;
}

int repl_hello_arg(const char *src_root, const char *dst_datastore, char *out,
		   size_t len)
{
	char id[REPL_IDENTITY_MAX];
	int err = repl_identity(src_root, id);

	if (err) {
		return err;
	}
	return snprintf(out, len, "%s %s", id, dst_datastore) >= (int)len
		       ? -ENAMETOOLONG
		       : 0;
}

/* @p's datastore, its marker and guard, into @l (closed by the caller
 * when 0 is returned). */
static int peer_local(struct repl_peer *p, struct repl_local *l, char *errbuf,
		      size_t errlen)
{
	int err =
		repl_local_open(l, p->root, p->manifest[0] ? p->manifest : NULL,
				errbuf, errlen);

	if (!err) {
		l->applying = p->applying[0] ? p->applying : NULL;
		l->guard = &p->guard;
		l->open = &p->open; /* outlives the message */
	}
	return err;
}

/* Undoes @p's transfer applied in part, if any. */
static int peer_undo(struct repl_peer *p, char *errbuf, size_t errlen)
{
	struct repl_local l;
	int err = peer_local(p, &l, errbuf, errlen);

	repl_open_close(&p->open);
	if (!err) {
		err = repl_undo_run(&l, errbuf, errlen);
		repl_local_close(&l);
	}
	return err;
}

/* The list's next entry (the lock held), cleared, with @name and
 * @datastore; NULL with *@err and the reason when the list is full or a
 * name too long.  The caller raises t->n once the entry is complete. */
static struct repl_peer *peer_claim(struct repl_peers *t, const char *name,
				    const char *datastore, int *err,
				    char *errbuf, size_t errlen)
{
	struct repl_peer *p;

	if (t->n >= REPL_PEERS_MAX) {
		*err = errbuf_printf(errbuf, errlen, -ENOSPC,
				     "more than %d replication relations",
				     REPL_PEERS_MAX);
		return NULL;
	}
	p = &t->list[t->n];
	memset(p, 0, sizeof(*p));
	repl_open_init(&p->open);
	if (snprintf(p->name, sizeof(p->name), "%s", name) >=
		    (int)sizeof(p->name) ||
	    snprintf(p->datastore, sizeof(p->datastore), "%s", datastore) >=
		    (int)sizeof(p->datastore)) {
		*err = errbuf_printf(errbuf, errlen, -ENAMETOOLONG,
				     "relation %s: a name too long", name);
		return NULL;
	}
	return p;
}

static int peer_add_locked(struct repl_peers *t, const char *name,
			   const char *datastore, const char *root,
			   const char *manifest, const char *state_dir,
			   const char *key_path, const struct repl_guard *guard,
			   bool active, char *errbuf, size_t errlen)
{
	int err = 0;
	struct repl_peer *p =
		peer_claim(t, name, datastore, &err, errbuf, errlen);

	if (!p) {
		return err;
	}
	if (snprintf(p->root, sizeof(p->root), "%s", root) >=
		    (int)sizeof(p->root) ||
	    snprintf(p->manifest, sizeof(p->manifest), "%s", manifest) >=
		    (int)sizeof(p->manifest) ||
	    (state_dir &&
	     (snprintf(p->state, sizeof(p->state), "%s/repl-%s.broken",
		       state_dir, name) >= (int)sizeof(p->state) ||
	      snprintf(p->applying, sizeof(p->applying), "%s/repl-%s.applying",
		       state_dir, name) >= (int)sizeof(p->applying)))) {
		return errbuf_printf(errbuf, errlen, -ENAMETOOLONG,
				     "relation %s: a name or path too long",
				     name);
	}
	err = repl_identity(root, p->identity);
	if (err) {
		return errbuf_printf(errbuf, errlen, err, "relation %s: %s: %s",
				     name, root, strerror(-err));
	}
	err = repl_key_load(key_path, p->key, errbuf, errlen);
	if (err) {
		return err;
	}
	if (guard) {
		p->guard = *guard;
	}
	p->active = active;
	peer_state_load(p);
	/* A kill -9 in the middle of a transfer: the tree goes back to the
	 * last replica before anyone reads it. */
	err = peer_undo(p, errbuf, errlen);
	if (err) {
		return err;
	}
	t->n++;
	return 0;
}

int repl_peers_add(struct repl_peers *t, const char *name,
		   const char *datastore, const char *root,
		   const char *manifest, const char *state_dir,
		   const char *key_path, const struct repl_guard *guard,
		   bool active, char *errbuf, size_t errlen)
{
	int err;

	/* At run time too (POST /replications): a peer request reads the
	 * list meanwhile. */
	pthread_mutex_lock(&t->lock);
	err = peer_add_locked(t, name, datastore, root, manifest, state_dir,
			      key_path, guard, active, errbuf, errlen);
	pthread_mutex_unlock(&t->lock);
	return err;
}

int repl_peers_add_source_only(struct repl_peers *t, const char *name,
			       const char *datastore, const char *key_path,
			       char *errbuf, size_t errlen)
{
	struct repl_peer *p;
	int err = 0;

	pthread_mutex_lock(&t->lock);
	p = peer_claim(t, name, datastore, &err, errbuf, errlen);
	if (!p) {
		goto out;
	}
	/* The identity a CephFS source's HELLO carries (service.c): no
	 * local datastore's identity equals it. */
	if (snprintf(p->identity, sizeof(p->identity), "store:%s", datastore) >=
	    (int)sizeof(p->identity)) {
		err = errbuf_printf(errbuf, errlen, -ENAMETOOLONG,
				    "relation %s: a name too long", name);
		goto out;
	}
	err = repl_key_load(key_path, p->key, errbuf, errlen);
	if (err) {
		goto out;
	}
	p->source_only = true;
	t->n++;
out:
	pthread_mutex_unlock(&t->lock);
	return err;
}

int repl_peers_remove(struct repl_peers *t, const char *name)
{
	int err = -ENOENT;

	pthread_mutex_lock(&t->lock);
	for (size_t i = 0; i < t->n; i++) {
		if (strcmp(t->list[i].name, name)) {
			continue;
		}
		repl_open_close(&t->list[i].open);
		explicit_bzero(t->list[i].key, sizeof(t->list[i].key));
		/* The list stays dense: the last entry takes its place. */
		if (i != t->n - 1) {
			t->list[i] = t->list[t->n - 1];
		}
		t->n--;
		err = 0;
		break;
	}
	pthread_mutex_unlock(&t->lock);
	return err;
}

static struct repl_peer *peer_find(struct repl_peers *t, const char *name)
{
	for (size_t i = 0; name && i < t->n; i++) {
		if (!strcmp(t->list[i].name, name)) {
			return &t->list[i];
		}
	}
	return NULL;
}

bool repl_peers_feeding(struct repl_peers *t, const char *name)
{
	struct repl_peer *p;
	bool on;

	pthread_mutex_lock(&t->lock);
	p = peer_find(t, name);
	on = p && !p->source_only && p->active && !p->broken;
	pthread_mutex_unlock(&t->lock);
	return on;
}

/* The newest repl-NAME-SEQ snapshot of @p's datastore into @last. */
static void peer_last(const struct repl_peer *p, char last[SNAP_NAME_MAX + 1])
{
	struct snap_entry *list = NULL;
	uint64_t best = 0;
	size_t n = 0;

	last[0] = '\0';
	if (!p->manifest[0] || snap_list(p->root, p->manifest, &list, &n)) {
		return;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t seq = repl_relation_seq_of(p->name, list[i].name);

		if (seq > best) {
			best = seq;
			snprintf(last, SNAP_NAME_MAX + 1, "%s", list[i].name);
		}
	}
	free(list);
}

int repl_peers_state(struct repl_peers *t, const char *name, bool *broken,
		     bool *applying, char last[SNAP_NAME_MAX + 1])
{
	struct repl_peer *p;

	pthread_mutex_lock(&t->lock);
	p = peer_find(t, name);
	if (p) {
		*broken = p->broken;
		*applying = p->applying[0] && access(p->applying, F_OK) == 0;
		peer_last(p, last);
	}
	pthread_mutex_unlock(&t->lock);
	return p ? 0 : -ENOENT;
}

int repl_peers_set_locked(struct repl_peers *t, const char *name, bool active,
			  bool broken)
{
	struct repl_peer *p = peer_find(t, name);

	if (!p) {
		return -ENOENT;
	}
	if (p->source_only) {
		return -EPERM; /* a CephFS source is never the destination */
	}
	repl_open_close(&p->open);
	p->active = active;
	return peer_state_save(p, broken);
}

void repl_peers_fini(struct repl_peers *t)
{
	for (size_t i = 0; i < t->n; i++) {
		repl_open_close(&t->list[i].open);
	}
}

int repl_peers_set(struct repl_peers *t, const char *name, bool active,
		   bool broken)
{
	int err;

	pthread_mutex_lock(&t->lock);
	err = repl_peers_set_locked(t, name, active, broken);
	pthread_mutex_unlock(&t->lock);
	return err;
}

int repl_peers_break(struct repl_peers *t, const char *name, char *errbuf,
		     size_t errlen)
{
	struct repl_peer *p;
	int err;

	pthread_mutex_lock(&t->lock);
	p = peer_find(t, name);
	if (p && p->source_only) {
		pthread_mutex_unlock(&t->lock);
		return errbuf_printf(errbuf, errlen, -EPERM,
				     "relation %s: datastore %s here is on "
				     "CephFS, the relation's source: it has "
				     "no destination side to break",
				     name, p->datastore);
	}
	err = p ? peer_undo(p, errbuf, errlen) : -ENOENT;
	if (err && p) {
		pthread_mutex_unlock(&t->lock);
		return err;
	}
	err = p ? peer_state_save(p, true) : -ENOENT;
	pthread_mutex_unlock(&t->lock);
	return err ? errbuf_printf(errbuf, errlen, err,
				   "relation %s: break: %s", name,
				   strerror(-err))
		   : 0;
}

static unsigned peer_refuse(unsigned status, struct repl_result *r, int err,
			    const char *why, const char *name)
{
	r->err = err;
	snprintf(r->reason, sizeof(r->reason), "relation %.64s: %s",
		 name ? name : "", why);
	return status;
}

/* Any operation but HELLO, for @p a CephFS source's entry: why not. */
static unsigned peer_refuse_source_only(const struct repl_peer *p,
					const struct repl_msg *m,
					struct repl_result *r)
{
	r->err = -EPERM; /* as the other refusals: the admin API's 409 */
	if (m->op == REPL_OP_REVERSE) {
		snprintf(r->reason, sizeof(r->reason),
			 "relation %s: datastore %s here is on CephFS: a "
			 "replication source only; a reverse would make it "
			 "the destination, which is not built "
			 "(docs/replication.md)",
			 p->name, p->datastore);
	} else {
		snprintf(r->reason, sizeof(r->reason),
			 "relation %s: datastore %s here is on CephFS, the "
			 "relation's source: a replication source only, it "
			 "takes no %s (docs/replication.md)",
			 p->name, p->datastore, repl_op_name(m->op));
	}
	return 409;
}

/* HELLO: the source is not this datastore, and it means this one. */
static void peer_hello(struct repl_peer *p, const struct repl_msg *m,
		       struct repl_result *r)
{
	const char *arg = m->arg ? m->arg : "";
	const char *sp = strchr(arg, ' ');
	size_t idlen = sp ? (size_t)(sp - arg) : strlen(arg);

	if (idlen == strlen(p->identity) && !strncmp(arg, p->identity, idlen)) {
		r->err = -EINVAL;
		snprintf(r->reason, sizeof(r->reason),
			 "relation %s: the destination datastore %s is the "
			 "source datastore: a datastore cannot replicate to "
			 "itself",
			 p->name, p->datastore);
	} else if (sp && strcmp(sp + 1, p->datastore)) {
		r->err = -EINVAL;
		snprintf(r->reason, sizeof(r->reason),
			 "relation %s: this server feeds datastore %s, not "
			 "%.64s",
			 p->name, p->datastore, sp + 1);
	}
}

/* Applies @m for @p of @t (the lock held): the break and resync change
 * @p's state, the reverse is the service's, every other operation goes
 * to the datastore. */
static void peer_apply(struct repl_peers *t, struct repl_peer *p,
		       const struct repl_msg *m, struct repl_result *r)
{
	struct repl_local l;
	int err;

	if (m->op == REPL_OP_HELLO || m->op == REPL_OP_REVERSE) {
		repl_open_close(&p->open); /* another transfer, or a role */
	}
	if (m->op == REPL_OP_HELLO) {
		peer_hello(p, m, r);
		return;
	}
	if (m->op == REPL_OP_REVERSE) {
		r->err = !t->reverse ? -EOPNOTSUPP
			 : !m->arg_len
				 ? -EINVAL
				 : t->reverse(t->reverse_arg, p->name, m->arg,
					      r->reason, sizeof(r->reason));
		return;
	}
	err = peer_local(p, &l, r->reason, sizeof(r->reason));
	if (err) {
		r->err = err;
		return;
	}
	repl_local_apply(&l, m, r); /* BREAK and RESYNC undo first */
	repl_local_close(&l);
	if (!r->err && m->op == REPL_OP_BREAK) {
		r->err = peer_state_save(p, true);
	}
	if (!r->err && m->op == REPL_OP_RESYNC) {
		r->err = peer_state_save(p, false);
	}
}

static bool peer_key_ok(const struct repl_peer *p, const char *authorization)
{
	static const char bearer[] = "Bearer ";

	return authorization &&
	       !strncmp(authorization, bearer, sizeof(bearer) - 1) &&
	       repl_key_equal(p->key, authorization + sizeof(bearer) - 1);
}

unsigned repl_peers_auth(struct repl_peers *t, const char *name,
			 const char *authorization)
{
	struct repl_peer *p;
	unsigned status;

	pthread_mutex_lock(&t->lock);
	p = peer_find(t, name);
	status = !p ? 404 : peer_key_ok(p, authorization) ? 200 : 401;
	pthread_mutex_unlock(&t->lock);
	return status;
}

unsigned repl_peers_handle(struct repl_peers *t, const char *name,
			   const char *authorization, const unsigned char *b,
			   size_t n, unsigned char *out, size_t *outlen)
{
	struct repl_result r = { 0 };
	struct repl_msg m;
	struct repl_peer *p;
	char *arg = NULL;
	unsigned status = 200;

	pthread_mutex_lock(&t->lock);
	p = peer_find(t, name);
	if (!p) {
		status = peer_refuse(404, &r, -ENOENT,
				     "not a replication relation this server "
				     "is the destination of",
				     name);
	} else if (!peer_key_ok(p, authorization)) {
		status = peer_refuse(401, &r, -EACCES,
				     "no key or not the relation's key", name);
	} else if (repl_msg_decode(b, n, &m, &arg, r.reason,
				   sizeof(r.reason))) {
		r.err = -EINVAL;
		status = 400;
	} else if (p->source_only && m.op != REPL_OP_HELLO) {
		status = peer_refuse_source_only(p, &m, &r);
	} else if (!p->active && m.op != REPL_OP_HELLO &&
		   m.op != REPL_OP_REVERSE) {
		status = peer_refuse(409, &r, -EPERM,
				     "this server is the relation's source "
				     "now, not its destination (reversed?)",
				     name);
	} else if (p->broken && m.op != REPL_OP_HELLO &&
		   m.op != REPL_OP_HASSNAP && m.op != REPL_OP_BREAK &&
		   m.op != REPL_OP_RESYNC && m.op != REPL_OP_REVERSE) {
		status = peer_refuse(409, &r, -EPERM,
				     "broken on the destination (its datastore "
				     "is writable): resync it first",
				     name);
	} else {
		peer_apply(t, p, &m, &r);
	}
	pthread_mutex_unlock(&t->lock);
	free(arg);
	*outlen = repl_result_encode(&r, out);
	return status;
}
