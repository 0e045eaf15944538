// SPDX-License-Identifier: Apache-2.0
/*
 * snap_policy_api: GET, PUT and DELETE of /volumes/NAME/snapshot-policy
 * (snap_policy.h), and the API's policies kept over the config in
 * STATE_DIR/snapshot-policies.json:
 *
 *   {"ds1": {"hourly": ":05 keep 24", "daily": "off", ...}, ...}
 *
 * (every kind "off": the API cleared the datastore's policy).  Written
 * atomically (temporary file, fsync, rename) before the reply.
 */
#include "nfsd/admin/snap_policy.h"
#include "nfsd/admin/paths.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nfsd/base/fileio.h"
#include "nfsd/base/log.h"
#include "nfsd/export/export.h"
#include "nfsd/snap/naming.h"

#define POLICIES_FILE "snapshot-policies.json"

static void policies_path(const struct admin_policies *p, char *buf, size_t len)
{
	snprintf(buf, len, "%.3900s/" POLICIES_FILE, p->state_dir);
}

/* {"hourly": TEXT, ...} into @pol: every kind named (or left out: off),
 * nothing else.  Returns 0 or -EINVAL with the reason. */
static int policy_from_json(const json_t *doc, struct snap_policy *pol,
			    char *errbuf, size_t errlen)
{
	const char *key;
	json_t *val;

	memset(pol, 0, sizeof(*pol));
	if (!json_is_object(doc)) {
		snprintf(errbuf, errlen, "a policy is a JSON object");
		return -EINVAL;
	}
	json_object_foreach((json_t *)doc, key, val)
	{
		enum snap_policy_kind k;

		if (snap_policy_kind_parse(key, &k)) {
			snprintf(errbuf, errlen,
				 "policy: '%.64s' is not hourly, daily, weekly "
				 "or monthly",
				 key);
			return -EINVAL;
		}
		if (!json_is_string(val)) {
			snprintf(errbuf, errlen,
				 "policy: %s is a string such as \":05 keep "
				 "24\"",
				 key);
			return -EINVAL;
		}
		if (snap_policy_sched_parse(k, json_string_value(val),
					    &pol->k[k], errbuf, errlen)) {
			return -EINVAL;
		}
	}
	return snap_policy_check(pol, errbuf, errlen);
}

static json_t *policy_to_json(const struct snap_policy *pol)
{
	json_t *o = json_object();

	for (int k = 0; o && k < SNAP_POLICY_KINDS; k++) {
		char text[160];

		snap_policy_sched_format((enum snap_policy_kind)k, &pol->k[k],
					 text, sizeof(text));
		json_object_set_new(
			o, snap_policy_kind_name((enum snap_policy_kind)k),
			json_string(text));
	}
	return o;
}

int admin__policies_load(struct admin_policies *p, char *errbuf, size_t errlen)
{
	char path[PATH_MAX], why[256];
	json_error_t je;
	const char *name;
	json_t *doc, *val;

	policies_path(p, path, sizeof(path));
	if (access(path, F_OK) && errno == ENOENT) {
		return 0;
	}
	doc = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!json_is_object(doc)) {
		snprintf(errbuf, errlen, "%s: not a JSON object: %s", path,
			 doc ? "" : je.text);
		json_decref(doc);
		return -EINVAL;
	}
	json_object_foreach(doc, name, val)
	{
		struct admin_policy_vol *v;
		struct snap_policy pol;

		if (policy_from_json(val, &pol, why, sizeof(why))) {
			snprintf(errbuf, errlen, "%s: %.64s: %s", path, name,
				 why);
			json_decref(doc);
			return -EINVAL;
		}
		v = admin__policy_vol(p, name, true);
		if (!v) {
			snprintf(errbuf, errlen, "%s: %.64s: too many", path,
				 name);
			json_decref(doc);
			return -ENOSPC;
		}
		v->has_api = true;
		v->api = pol;
	}
	json_decref(doc);
	return 0;
}

/* Writes the API's policies.  Under the lock. */
static int policies_save(struct admin_policies *p, char *errbuf, size_t errlen)
{
	char path[PATH_MAX];
	json_t *doc = json_object();
	char *text = NULL;
	int err;

	for (size_t i = 0; doc && i < p->n; i++) {
		if (p->vols[i].has_api) {
			json_object_set_new(doc, p->vols[i].volume,
					    policy_to_json(&p->vols[i].api));
		}
	}
	text = doc ? json_dumps(doc, JSON_INDENT(1) | JSON_SORT_KEYS) : NULL;
	json_decref(doc);
	if (!text) {
		snprintf(errbuf, errlen, "out of memory");
		return -ENOMEM;
	}
	policies_path(p, path, sizeof(path));
	err = fileio_replace(path, text, strlen(text), errbuf, errlen);
	free(text);
	return err;
}

int admin__policy_set(struct admin_policies *p, const char *volume,
		      const struct snap_policy *pol, char *errbuf,
		      size_t errlen)
{
	struct admin_policy_vol *v, old;
	struct snap_policy now;
	int err;

	pthread_mutex_lock(&p->lock);
	v = admin__policy_vol(p, volume, true);
	if (!v) {
		pthread_mutex_unlock(&p->lock);
		snprintf(errbuf, errlen, "snapshot policies: too many");
		return -ENOSPC;
	}
	old = *v;
	v->has_api = true;
	if (pol) {
		v->api = *pol;
	} else {
		memset(&v->api, 0, sizeof(v->api));
	}
	err = policies_save(p, errbuf, errlen);
	if (err) {
		*v = old;
	} else if (memcmp(&old.api, &v->api, sizeof(v->api)) || !old.has_api) {
		/* A new policy starts afresh: nothing in arrears. */
		memset(&v->st, 0, sizeof(v->st));
		if (!pol) {
			v->alarm[0] = '\0';
		}
	}
	now = v->api;
	pthread_mutex_unlock(&p->lock);
	if (!err) {
		char text[4][160];

		for (int k = 0; k < SNAP_POLICY_KINDS; k++) {
			snap_policy_sched_format((enum snap_policy_kind)k,
						 &now.k[k], text[k],
						 sizeof(text[k]));
		}
		log_info("snapshot-policy: %s: set by the admin API: hourly "
			 "%s, daily %s, weekly %s, monthly %s",
			 volume, text[0], text[1], text[2], text[3]);
	}
	return err;
}

json_t *admin__policy_json(struct admin_policies *p, const char *volume)
{
	static const struct snap_policy none;
	struct admin_policy_vol *v;
	json_t *doc, *counts;

	pthread_mutex_lock(&p->lock);
	v = admin__policy_vol(p, volume, false);
	counts = json_object();
	for (int k = 0; counts && k < SNAP_POLICY_KINDS; k++) {
		json_object_set_new(
			counts, snap_policy_kind_name((enum snap_policy_kind)k),
			json_pack("{s:I, s:I, s:I}", "made",
				  (json_int_t)(v ? v->made[k] : 0), "deleted",
				  (json_int_t)(v ? v->deleted[k] : 0), "failed",
				  (json_int_t)(v ? v->failed[k] : 0)));
	}
	doc = json_pack(
		"{s:s, s:s, s:o, s:o*, s:I, s:s?}", "volume", volume, "source",
		!v			   ? "none"
		: v->has_api		   ? "api"
		: snap_policy_any(&v->cfg) ? "config"
					   : "none",
		"policy", policy_to_json(v ? admin__policy_of(v) : &none),
		"counts", counts, "last_success_s",
		(json_int_t)(v ? v->last_ok_s : 0), "alarm",
		v && v->alarm[0] ? v->alarm : NULL);
	pthread_mutex_unlock(&p->lock);
	return doc;
}

/* The datastore of the request, or NULL with the reply made. */
static const struct export *policy_target(struct admin_api *api,
					  const struct admin_request *req,
					  struct admin_reply *reply)
{
	if (!api->policies) {
		admin__reply_error(reply, 500,
				   "snapshot policies are not available");
		return NULL;
	}
	return admin__export_live(api, req->name, reply);
}

void admin__policy_get(struct admin_api *api, const struct admin_request *req,
		       struct admin_reply *reply)
{
	if (policy_target(api, req, reply)) {
		admin__reply_json(reply, 200,
				  admin__policy_json(api->policies, req->name));
	}
}

void admin__policy_put(struct admin_api *api, const struct admin_request *req,
		       struct admin_reply *reply)
{
	struct snap_policy pol;
	char err[400];
	int rc;

	if (!policy_target(api, req, reply)) {
		return;
	}
	if (policy_from_json(req->body, &pol, err, sizeof(err))) {
		admin__reply_error(reply, 400, "body: %s", err);
		return;
	}
	rc = admin__policy_set(api->policies, req->name, &pol, err,
			       sizeof(err));
	if (rc) {
		admin__reply_error(reply, 500, "%s", err);
		return;
	}
	admin__reply_json(reply, 200,
			  admin__policy_json(api->policies, req->name));
}

void admin__policy_delete(struct admin_api *api,
			  const struct admin_request *req,
			  struct admin_reply *reply)
{
	char err[400];

	if (!policy_target(api, req, reply)) {
		return;
	}
	if (admin__policy_set(api->policies, req->name, NULL, err,
			      sizeof(err))) {
		admin__reply_error(reply, 500, "%s", err);
		return;
	}
	admin__reply_empty(reply, 204);
}
