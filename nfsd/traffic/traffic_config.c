// SPDX-License-Identifier: Apache-2.0
/*
 * traffic_config: the [traffic] section of dsnfsd.conf into struct
 * traffic_caps. Rates are written as published (MiB/s, IOPS); scale shrinks
 * them all.
 *
 *   [traffic]
 *   scale = 0.03125        every rate x scale (1: as published)
 *   flow_mibps = 2148      one flow (connection x datastore)
 *   flow_iops = 76000
 *   host_mibps = 2786      one client IP address
 *   host_iops = 200000
 *   volume_iops = 195000   per datastore, beside its QoS limit
 *   host_contention = 0.136
 *   volume_contention = 0.136
 *   burst_ms = 10
 */
#include "nfsd/traffic/traffic.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/base/errbuf.h"

#define TRAFFIC_SECTION "traffic"
/* Far above any link: 1 TiB/s or 1e12 ops/s. */
#define TRAFFIC_RATE_MAX 1e12

static int config_number(const char *text, double max, double *out)
{
	char *end;
	double v;

	if (!((*text >= '0' && *text <= '9') || *text == '.')) {
		return -EINVAL;
	}
	errno = 0;
	v = strtod(text, &end);
	if (errno || *end || !isfinite(v) || v < 0 || v > max) {
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* Its messages are the words only: the caller (nfsd/config/config.c) puts
 * "[section] key:" before them. */
int traffic_config_section(void *arg, const char *section, const char *key,
			   const char *value, char *errbuf, size_t errlen)
{
	struct traffic_caps *caps = arg;
	uint64_t *rate = NULL;
	double v, unit = 1;

	if (strcmp(section, TRAFFIC_SECTION)) {
		return -ENOENT;
	}
	if (!strcmp(key, "scale")) {
		if (config_number(value, 1e6, &v) || v <= 0) {
			return errbuf_printf(errbuf, errlen, -EINVAL,
					     "a number above 0");
		}
		caps->scale = v;
		return 0;
	}
	if (!strcmp(key, "host_contention")) {
		if (config_number(value, 1e6, &v)) {
			return errbuf_printf(errbuf, errlen, -EINVAL,
					     "a number, 0 or more");
		}
		caps->host_contention = v;
		return 0;
	}
	if (!strcmp(key, "volume_contention")) {
		if (config_number(value, 1e6, &v)) {
			return errbuf_printf(errbuf, errlen, -EINVAL,
					     "a number, 0 or more");
		}
		caps->volume_contention = v;
		return 0;
	}
	if (!strcmp(key, "burst_ms")) {
		if (config_number(value, 60000, &v) || v < 1 || v != floor(v)) {
			return errbuf_printf(errbuf, errlen, -EINVAL,
					     "whole milliseconds, 1 to 60000");
		}
		caps->burst_ms = (uint32_t)v;
		return 0;
	}
	if (!strcmp(key, "flow_mibps")) {
		rate = &caps->flow_bytes_per_s;
		unit = 1048576;
	} else if (!strcmp(key, "host_mibps")) {
		rate = &caps->host_bytes_per_s;
		unit = 1048576;
	} else if (!strcmp(key, "flow_iops")) {
		rate = &caps->flow_ops_per_s;
	} else if (!strcmp(key, "host_iops")) {
		rate = &caps->host_ops_per_s;
	} else if (!strcmp(key, "volume_iops")) {
		rate = &caps->volume_ops_per_s;
	} else {
		return -ENOENT;
	}
	if (config_number(value, TRAFFIC_RATE_MAX / unit, &v)) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "a rate, 0 (none) or more");
	}
	*rate = (uint64_t)llround(v * unit);
	return 0;
}
