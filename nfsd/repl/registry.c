// SPDX-License-Identifier: Apache-2.0
/*
 * registry: which relations the service runs.  At the start, the
 * config's, then those made through the admin API and kept in the state
 * directory (relfile.h); at run time, those made and deleted through the
 * API (POST and DELETE /replications).  service.c runs them; it does not
 * call back here.
 */
#include "nfsd/repl/service.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/base/errbuf.h"
#include "nfsd/base/log.h"
#include "nfsd/repl/relfile.h"
#include "nfsd/repl/repl_int.h"
#include "nfsd/repl/reverse.h"

/* The items past the first @n0 (a failed add), the list held for
 * writing. */
static void registry_drop(struct repl_service *s, size_t n0)
{
	while (s->n > n0) {
		struct repl_item *x = s->item[--s->n];

		(void)repl_peers_remove(&s->peers, x->cfg.name);
		repl__item_free(x);
	}
}

/* Whether relation @c may join the list (held): a new name, and its
 * datastore fed by no other relation. */
static int registry_check(struct repl_service *s,
			  const struct repl_rel_config *c, char *errbuf,
			  size_t errlen)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct repl_item *x = s->item[i];

		if (!strcmp(x->cfg.name, c->name)) {
			return errbuf_printf(errbuf, errlen, -EEXIST,
					     "relation %s exists (%s)", c->name,
					     x->api ? "made through the API"
						    : "[replication] in the "
						      "config");
		}
		if (repl__check_pair(c, &x->cfg, errbuf, errlen)) {
			return -EINVAL;
		}
	}
	if (s->n >= REPL_PEERS_MAX) {
		return errbuf_printf(errbuf, errlen, -ENOSPC,
				     "more than %d replication relations",
				     REPL_PEERS_MAX);
	}
	return 0;
}

/* Relations kept in the state directory (relfile.h) added at the start,
 * but for a name @cfg has (the config's wins; logged). */
static void registry_restore(struct repl_service *s,
			     const struct repl_config *cfg)
{
	struct repl_config *kept = malloc(sizeof(*kept));
	char err[768];

	if (!kept) {
		log_error("replication: relations made through the API: out "
			  "of memory: not restored");
		return;
	}
	if (repl_relfile_load_all(s->state_dir, kept)) {
		kept->n = 0;
	}
	for (size_t i = 0; i < kept->n; i++) {
		const struct repl_rel_config *k = &kept->rel[i];
		bool config = false;
		size_t n0 = s->n;

		for (size_t j = 0; j < cfg->n && !config; j++) {
			config = !strcmp(cfg->rel[j].name, k->name);
		}
		if (config) {
			log_warn("replication: %s: [replication %s] of the "
				 "config wins over the relation of that name "
				 "made through the API (%s/repl-%s.relation "
				 "not used)",
				 k->name, k->name, s->state_dir, k->name);
			continue;
		}
		if (registry_check(s, k, err, sizeof(err)) ||
		    repl__service_add(s, k, true, err, sizeof(err))) {
			log_error("replication: %s: the relation made through "
				  "the API is not restored: %s",
				  k->name, err);
			registry_drop(s, n0);
			continue;
		}
		log_info("replication: %s: restored (made through the API)",
			 k->name);
	}
	free(kept);
}

int repl_service_create(struct repl_service *s,
			const struct repl_rel_config *in, const char *key,
			const char *ca_pem, char *errbuf, size_t errlen)
{
	struct repl_rel_config *c;
	size_t n0;
	int err;

	if (!s) {
		return errbuf_printf(errbuf, errlen, -EOPNOTSUPP,
				     "replication is not running here");
	}
	c = malloc(sizeof(*c));
	if (!c) {
		return -ENOMEM;
	}
	*c = *in;
	pthread_rwlock_wrlock(&s->list);
	n0 = s->n;
	err = registry_check(s, c, errbuf, errlen);
	if (!err) {
		err = repl_relfile_secrets_save(s->state_dir, c, key, ca_pem,
						errbuf, errlen);
	}
	if (!err) {
		err = repl__service_add(s, c, true, errbuf, errlen);
		/* The .relation last: the relation is kept from here. */
		if (!err) {
			err = repl_relfile_save(s->state_dir, c, errbuf,
						errlen);
		}
		if (!err) {
			err = repl__item_start(s->item[s->n - 1]);
			if (err) {
				errbuf_printf(errbuf, errlen, err,
					      "relation %s: cannot start its "
					      "thread: %s",
					      c->name, strerror(-err));
			}
		}
		if (err) {
			registry_drop(s, n0);
			(void)repl_relfile_remove(s->state_dir, c->name);
		}
	}
	pthread_rwlock_unlock(&s->list);
	if (!err) {
		log_info("replication: %s: made through the admin API (kept in "
			 "%s/repl-%s.relation)",
			 c->name, s->state_dir, c->name);
	}
	free(c);
	return err;
}

int repl_service_delete(struct repl_service *s, const char *name, char *errbuf,
			size_t errlen)
{
	struct repl_item *x = NULL;
	size_t i;
	bool dst;
	int err;

	if (!s) {
		return errbuf_printf(errbuf, errlen, -ENOENT,
				     "no relation %.64s", name);
	}
	pthread_rwlock_wrlock(&s->list);
	for (i = 0; i < s->n && !x; i++) {
		x = strcmp(s->item[i]->cfg.name, name) ? NULL : s->item[i];
	}
	if (!x || !x->api) {
		pthread_rwlock_unlock(&s->list);
		return !x ? errbuf_printf(errbuf, errlen, -ENOENT,
					  "no relation %.64s", name)
			  : errbuf_printf(errbuf, errlen, -EPERM,
					  "relation %s is [replication %s] of "
					  "dsnfsd.conf: remove it there",
					  name, name);
	}
	pthread_mutex_lock(&s->lock);
	dst = !repl__item_sends(x);
	pthread_mutex_unlock(&s->lock);
	/* A destination is left as a break leaves it: a transfer applied
	 * in part undone, its datastore writable (its snapshots stay). */
	if (dst) {
		err = repl_peers_break(&s->peers, name, errbuf, errlen);
		if (err) {
			pthread_rwlock_unlock(&s->list);
			return err;
		}
	}
	memmove(&s->item[i - 1], &s->item[i], (s->n - i) * sizeof(s->item[0]));
	s->n--;
	(void)repl_peers_remove(&s->peers, name);
	err = repl_relfile_remove(s->state_dir, name);
	pthread_rwlock_unlock(&s->list);
	/* Out of the list: its thread ends at the next message. */
	repl__item_free(x);
	log_info("replication: %s: deleted through the admin API%s", name,
		 dst ? ": datastore broken off, writable by its clients" : "");
	if (err) {
		log_error("replication: %s: its files in %s: %s", name,
			  s->state_dir, strerror(-err));
	}
	return 0;
}

bool repl_service_uses(struct repl_service *s, const char *datastore,
		       char *relation, size_t len)
{
	bool found = false;

	if (!s) {
		return false;
	}
	pthread_rwlock_rdlock(&s->list);
	for (size_t i = 0; i < s->n && !found; i++) {
		found = !strcmp(s->item[i]->cfg.datastore, datastore);
		if (found) {
			snprintf(relation, len, "%s", s->item[i]->cfg.name);
		}
	}
	pthread_rwlock_unlock(&s->list);
	return found;
}

int repl_service_start(const struct repl_config *cfg,
		       struct export_table *exports, struct admin_ops *ops,
		       const char *state_dir, struct repl_service **out,
		       char *errbuf, size_t errlen)
{
	struct repl_service *s;
	int err;

	*out = NULL;
	err = repl__service_check(cfg, errbuf, errlen);
	if (err) {
		return err;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		return -ENOMEM;
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->wake, NULL);
	pthread_mutex_init(&s->peers.lock, NULL);
	pthread_rwlock_init(&s->list, NULL);
	s->peers.reverse = repl__reverse_accept;
	s->peers.reverse_arg = s;
	s->exports = exports;
	s->ops = ops;
	/* Absolute, as the store names the manifests (store/local.c). */
	if (!realpath(state_dir, s->state_dir)) {
		snprintf(s->state_dir, sizeof(s->state_dir), "%s", state_dir);
	}
	for (size_t i = 0; i < cfg->n && !err; i++) {
		err = repl__service_add(s, &cfg->rel[i], false, errbuf, errlen);
	}
	if (!err) {
		registry_restore(s, cfg);
	}
	if (!err) {
		err = repl__service_threads(s, errbuf, errlen);
	}
	if (err) {
		repl_service_stop(s);
		return err;
	}
	*out = s;
	return 0;
}
