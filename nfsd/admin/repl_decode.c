// SPDX-License-Identifier: Apache-2.0
/*
 * repl_decode: the body of POST /replications into a relation
 * (repl_decode.h).
 */
#include "nfsd/admin/repl_decode.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nfsd/admin/patch.h"
#include "nfsd/base/errbuf.h"

#define REPL_CA_BEGIN "-----BEGIN CERTIFICATE-----"

/* The fields that are keys of [replication NAME] as they are. */
static const char *const repl_decode_strings[] = {
	"role",	    "datastore",  "destination_url",  "destination_datastore",
	"schedule", "source_url", "source_datastore",
};
static const char *const repl_decode_numbers[] = {
	"schedule_seconds",
	"timeout_seconds",
};

/* String field @key of @in, or NULL when absent; -EINVAL when not a
 * string fit for a key = value line. */
static int repl_decode_string(const json_t *in, const char *key,
			      const char **out, char *errbuf, size_t errlen)
{
	const json_t *v = json_object_get(in, key);
	const char *s;
	size_t n;

	*out = NULL;
	if (!v) {
		return 0;
	}
	s = json_string_value(v);
	if (!s) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "body: '%s' must be a string", key);
	}
	n = strlen(s);
	for (size_t i = 0; i < n; i++) {
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) {
			return errbuf_printf(errbuf, errlen, -EINVAL,
					     "body: '%s' holds a control "
					     "character",
					     key);
		}
	}
	if (n && (s[0] == ' ' || s[n - 1] == ' ')) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "body: '%s' begins or ends with a space",
				     key);
	}
	*out = s;
	return 0;
}

/* @key = @value through the config's rule of that key. */
static int repl_decode_key(struct repl_rel_config *c, const char *key,
			   const char *value, char *errbuf, size_t errlen)
{
	char why[512];
	int err = repl_config_key(c, key, value, why, sizeof(why));

	return err ? errbuf_printf(errbuf, errlen, -EINVAL, "body: %s", why)
		   : 0;
}

static int repl_decode_fields(const json_t *in, struct repl_rel_config *c,
			      char *errbuf, size_t errlen)
{
	const char *s;
	char num[32];
	int err;

	for (size_t i = 0;
	     i < sizeof(repl_decode_strings) / sizeof(repl_decode_strings[0]);
	     i++) {
		const char *key = repl_decode_strings[i];

		err = repl_decode_string(in, key, &s, errbuf, errlen);
		if (!err && s) {
			err = repl_decode_key(c, key, s, errbuf, errlen);
		}
		if (err) {
			return err;
		}
	}
	for (size_t i = 0;
	     i < sizeof(repl_decode_numbers) / sizeof(repl_decode_numbers[0]);
	     i++) {
		const char *key = repl_decode_numbers[i];
		const json_t *v = json_object_get(in, key);

		if (!v) {
			continue;
		}
		if (!json_is_integer(v)) {
			return errbuf_printf(errbuf, errlen, -EINVAL,
					     "body: '%s' must be a whole "
					     "number",
					     key);
		}
		snprintf(num, sizeof(num), "%lld",
			 (long long)json_integer_value(v));
		/* strtoul() would take "-1" as a huge number: the rule's
		 * bound refuses it, but say so plainly. */
		err = num[0] == '-'
			      ? errbuf_printf(errbuf, errlen, -EINVAL,
					      "body: '%s' is negative", key)
			      : repl_decode_key(c, key, num, errbuf, errlen);
		if (err) {
			return err;
		}
	}
	return 0;
}

static int repl_decode_ca(const json_t *in, struct admin_repl_spec *out,
			  char *errbuf, size_t errlen)
{
	const json_t *v = json_object_get(in, "ca");
	const char *s;
	size_t n;

	if (!v) {
		return 0;
	}
	s = json_string_value(v);
	if (!s) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "body: 'ca' must be a string (PEM)");
	}
	n = strlen(s);
	if (n > REPL_CA_PEM_MAX) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "body: 'ca' is longer than %d bytes",
				     REPL_CA_PEM_MAX);
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if ((ch < 0x20 && ch != '\n' && ch != '\r' && ch != '\t') ||
		    ch == 0x7f) {
			return errbuf_printf(errbuf, errlen, -EINVAL,
					     "body: 'ca' holds a control "
					     "character");
		}
	}
	if (!strstr(s, REPL_CA_BEGIN)) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "body: 'ca' is not a PEM certificate (no "
				     "%s line)",
				     REPL_CA_BEGIN);
	}
	memcpy(out->ca, s, n + 1);
	out->has_ca = true;
	return 0;
}

int admin__json_repl_spec(const json_t *in, struct admin_repl_spec *out,
			  char *errbuf, size_t errlen)
{
	static const char *const known[] = {
		"name",
		"role",
		"datastore",
		"key",
		"destination_url",
		"destination_datastore",
		"schedule",
		"schedule_seconds",
		"timeout_seconds",
		"source_url",
		"source_datastore",
		"ca",
		NULL,
	};
	static const char *const required[] = { "name", "role", "datastore",
						"key" };
	const char *name, *key;
	char why[512];
	int err;

	memset(out, 0, sizeof(*out));
	/* A path the server would open for the caller: never taken. */
	if (json_object_get(in, "key_file") || json_object_get(in, "ca_file")) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "body: key_file and ca_file are not "
				     "taken: give the key as 'key' and the CA "
				     "as 'ca', inline");
	}
	err = admin__json_keys_check(in, known, errbuf, errlen);
	for (size_t i = 0; !err && i < sizeof(required) / sizeof(required[0]);
	     i++) {
		if (!json_object_get(in, required[i])) {
			err = errbuf_printf(errbuf, errlen, -EINVAL,
					    "body: field '%s' is missing",
					    required[i]);
		}
	}
	if (!err) {
		err = repl_decode_string(in, "name", &name, errbuf, errlen);
	}
	if (!err && repl_config_name_check(name, why, sizeof(why))) {
		err = errbuf_printf(errbuf, errlen, -EINVAL, "body: %s", why);
	}
	if (err) {
		return err;
	}
	snprintf(out->cfg.name, sizeof(out->cfg.name), "%s", name);
	err = repl_decode_fields(in, &out->cfg, errbuf, errlen);
	if (!err) {
		err = repl_decode_string(in, "key", &key, errbuf, errlen);
	}
	if (!err && repl_key_parse(key, strlen(key), out->key)) {
		err = errbuf_printf(errbuf, errlen, -EINVAL,
				    "body: 'key' must be %d hex digits (make "
				    "one with: openssl rand -hex 32)",
				    REPL_KEY_HEX_LEN);
	}
	if (!err) {
		err = repl_decode_ca(in, out, errbuf, errlen);
	}
	return err;
}
