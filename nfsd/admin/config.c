/*
 * config: the [admin] section of dsnfsd.conf, the thresholds of the
 * thin-provisioning alarms.  (The endpoint's address and port are
 * [server] admin_listen and admin_port, config.c's.)
 *
 *   [admin]
 *   usage_alarm_percent = 80            used / quota
 *   overallocation_alarm_percent = 150  provisioned / quota
 *   alarm_interval_s = 60               between datastore scans
 */
#include "nfsd/admin/admin.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ADMIN_SECTION "admin"

void admin_config_default(struct admin_config *cfg)
{
	cfg->usage_alarm_percent = 80;
	cfg->overallocation_alarm_percent = 150;
	cfg->alarm_interval_s = 60;
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

	if (strcmp(section, ADMIN_SECTION)) {
		return -ENOENT;
	}
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
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
