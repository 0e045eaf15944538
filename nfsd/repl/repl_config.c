// SPDX-License-Identifier: Apache-2.0
/*
 * repl_config: the keys of [replication NAME] (service.h), one validator
 * for the config, the admin API's POST /replications and the relations it
 * keeps (relfile.h).
 */
#include "nfsd/repl/service.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/base/errbuf.h"
#include "nfsd/snap/snap.h"

#define REPL_SECTION "replication "

int repl_config_name_check(const char *name, char *errbuf, size_t errlen)
{
	/* The name is a part of snapshot names: repl-NAME-SEQ. */
	if (strlen(name) > 32 || snap_name_check(name, errbuf, errlen)) {
		return errbuf_printf(
			errbuf, errlen, -EINVAL,
			"[replication %.64s]: a name of at most 32 "
			"letters, digits, '-' and '_'",
			name);
	}
	return 0;
}

/* The entry of relation @name, made at its first key. */
static struct repl_rel_config *
config_rel(struct repl_config *c, const char *name, char *errbuf, size_t errlen)
{
	struct repl_rel_config *r;

	for (size_t i = 0; i < c->n; i++) {
		if (!strcmp(c->rel[i].name, name)) {
			return &c->rel[i];
		}
	}
	if (repl_config_name_check(name, errbuf, errlen)) {
		return NULL;
	}
	if (c->n >= REPL_PEERS_MAX) {
		errbuf_printf(errbuf, errlen, -EINVAL,
			      "more than %d [replication] sections",
			      REPL_PEERS_MAX);
		return NULL;
	}
	r = &c->rel[c->n++];
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	return r;
}

static int config_copy(char *dst, size_t len, const char *key,
		       const char *value, char *errbuf, size_t errlen)
{
	if (!*value || snprintf(dst, len, "%s", value) >= (int)len) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "%s: empty or longer than %zu bytes", key,
				     len - 1);
	}
	return 0;
}

int repl_config_section(void *arg, const char *section, const char *key,
			const char *value, char *errbuf, size_t errlen)
{
	struct repl_rel_config *r;

	if (strncmp(section, REPL_SECTION, strlen(REPL_SECTION))) {
		return -ENOENT;
	}
	r = config_rel(arg, section + strlen(REPL_SECTION), errbuf, errlen);
	if (!r) {
		return -EINVAL;
	}
	return repl_config_key(r, key, value, errbuf, errlen);
}

int repl_config_key(struct repl_rel_config *r, const char *key,
		    const char *value, char *errbuf, size_t errlen)
{
	char *end;
	unsigned long v;

	if (!strcmp(key, "role")) {
		r->role = !strcmp(value, "source") ? REPL_ROLE_SOURCE
			  : !strcmp(value, "destination")
				  ? REPL_ROLE_DESTINATION
				  : REPL_ROLE_NONE;
		return r->role ? 0
			       : errbuf_printf(errbuf, errlen, -EINVAL,
					       "role is source or destination");
	}
	if (!strcmp(key, "datastore")) {
		return config_copy(r->datastore, sizeof(r->datastore), key,
				   value, errbuf, errlen);
	}
	if (!strcmp(key, "key_file")) {
		return config_copy(r->key_file, sizeof(r->key_file), key, value,
				   errbuf, errlen);
	}
	if (!strcmp(key, "destination_url")) {
		return config_copy(r->url, sizeof(r->url), key, value, errbuf,
				   errlen);
	}
	if (!strcmp(key, "destination_datastore")) {
		return config_copy(r->dst_datastore, sizeof(r->dst_datastore),
				   key, value, errbuf, errlen);
	}
	if (!strcmp(key, "ca_file")) {
		return config_copy(r->ca_file, sizeof(r->ca_file), key, value,
				   errbuf, errlen);
	}
	if (!strcmp(key, "schedule")) {
		return repl_sched_parse(value, &r->schedule)
			       ? errbuf_printf(errbuf, errlen, -EINVAL,
					       "schedule is 10min, hourly, "
					       "daily or none")
			       : 0;
	}
	if (!strcmp(key, "source_url")) {
		return config_copy(r->src_url, sizeof(r->src_url), key, value,
				   errbuf, errlen);
	}
	if (!strcmp(key, "source_datastore")) {
		return config_copy(r->src_datastore, sizeof(r->src_datastore),
				   key, value, errbuf, errlen);
	}
	if (!strcmp(key, "timeout_seconds")) {
		errno = 0;
		v = strtoul(value, &end, 10);
		if (errno || *end || !*value || v < 1 || v > 3600) {
			return errbuf_printf(errbuf, errlen, -EINVAL,
					     "timeout_seconds is 1..3600");
		}
		r->timeout_s = (uint32_t)v;
		return 0;
	}
	if (!strcmp(key, "schedule_seconds")) {
		errno = 0;
		v = strtoul(value, &end, 10);
		if (errno || *end || !*value || v < 1 || v > 86400) {
			return errbuf_printf(errbuf, errlen, -EINVAL,
					     "schedule_seconds is 1..86400");
		}
		r->schedule_seconds = (uint32_t)v;
		return 0;
	}
	return -ENOENT;
}
