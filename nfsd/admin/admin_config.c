// SPDX-License-Identifier: Apache-2.0
/*
 * admin_config: the [admin] section of dsnfsd.conf, the thresholds of the
 * thin-provisioning alarms.  (The endpoint's address and port are
 * [server] admin_listen and admin_port, nfsd/config/config.c's.)
 *
 *   [admin]
 *   usage_alarm_percent = 80            used / quota
 *   overallocation_alarm_percent = 150  provisioned / quota
 *   alarm_interval_s = 60               between datastore scans
 *   allowed_hosts = nas1.example        Host names besides the address
 *   metrics_auth = true                 /metrics needs the token too
 *   tls_cert = /etc/dsnfs/admin.crt     HTTPS (PEM); with tls_key
 *   tls_key = /etc/dsnfs/admin.key
 */
#include "nfsd/admin/admin.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/base/base.h"
#include "nfsd/base/errbuf.h"

#define ADMIN_SECTION "admin"

void admin_config_default(struct admin_config *cfg)
{
	cfg->usage_alarm_percent = 80;
	cfg->overallocation_alarm_percent = 150;
	cfg->alarm_interval_s = 60;
	cfg->allowed_hosts[0] = '\0';
	cfg->metrics_auth = true;
	cfg->tls_cert[0] = '\0';
	cfg->tls_key[0] = '\0';
}

/* The string and boolean keys; -ENOENT for another. */
static int admin_config_text(struct admin_config *cfg, const char *key,
			     const char *value, char *errbuf, size_t errlen)
{
	static const struct {
		const char *key;
		size_t offset, size;
	} texts[] = {
		{ "allowed_hosts", offsetof(struct admin_config, allowed_hosts),
		  sizeof(cfg->allowed_hosts) },
		{ "tls_cert", offsetof(struct admin_config, tls_cert),
		  sizeof(cfg->tls_cert) },
		{ "tls_key", offsetof(struct admin_config, tls_key),
		  sizeof(cfg->tls_key) },
	};

	if (!strcmp(key, "metrics_auth")) {
		if (!strcmp(value, "true") || !strcmp(value, "yes")) {
			cfg->metrics_auth = true;
		} else if (!strcmp(value, "false") || !strcmp(value, "no")) {
			cfg->metrics_auth = false;
		} else {
			return errbuf_printf(errbuf, errlen, -EINVAL,
					     "%s: true or false", key);
		}
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
		if (strcmp(key, texts[i].key)) {
			continue;
		}
		if (strlen(value) >= texts[i].size) {
			return errbuf_printf(errbuf, errlen, -EINVAL,
					     "%s: longer than %zu bytes", key,
					     texts[i].size - 1);
		}
		strcpy((char *)cfg + texts[i].offset, value);
		return 0;
	}
	return -ENOENT;
}

int admin_config_section(void *arg, const char *section, const char *key,
			 const char *value, char *errbuf, size_t errlen)
{
	static const struct {
		const char *key;
		size_t offset;
		unsigned long min, max;
	} keys[] = {
		{ "usage_alarm_percent",
		  offsetof(struct admin_config, usage_alarm_percent), 1, 1000 },
		{ "overallocation_alarm_percent",
		  offsetof(struct admin_config, overallocation_alarm_percent),
		  1, 100000 },
		{ "alarm_interval_s",
		  offsetof(struct admin_config, alarm_interval_s), 1, 86400 },
	};
	struct admin_config *cfg = arg;
	unsigned long v;
	char *end;
	int err;

	if (strcmp(section, ADMIN_SECTION)) {
		return -ENOENT;
	}
	err = admin_config_text(cfg, key, value, errbuf, errlen);
	if (err != -ENOENT) {
		return err;
	}
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		if (strcmp(key, keys[i].key)) {
			continue;
		}
		errno = 0;
		v = strtoul(value, &end, 10);
		if (value[0] < '0' || value[0] > '9' || *end || errno ||
		    v < keys[i].min || v > keys[i].max) {
			if (errbuf && errlen) {
				snprintf(errbuf, errlen,
					 "%s: a whole number from %lu to %lu",
					 key, keys[i].min, keys[i].max);
			}
			return -EINVAL;
		}
		*(uint32_t *)((char *)cfg + keys[i].offset) = (uint32_t)v;
		return 0;
	}
	return -ENOENT;
}
