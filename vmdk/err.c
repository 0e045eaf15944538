// SPDX-License-Identifier: Apache-2.0
/*
 * vmdk/err.c: the errbuf convention of vmdk/.  The library never logs; a call
 * whose failure needs words writes them into the caller's buffer, naming the
 * file and the field ("disk.vmdk: grain table 3 entry 17: ..."), and returns
 * the negative errno unchanged.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmdk/vmdk_int.h"

int vmdk__errf(char *errbuf, size_t errlen, int err, const char *fmt, ...)
{
	va_list ap;

	if (!errbuf || !errlen) {
		return err;
	}
	va_start(ap, fmt);
	vsnprintf(errbuf, errlen, fmt, ap);
	va_end(ap);
	return err;
}

int vmdk__err_prefix(char *errbuf, size_t errlen, int err, const char *prefix)
{
	char *old;

	if (!errbuf || !errlen) {
		return err;
	}
	if (!errbuf[0]) {
		snprintf(errbuf, errlen, "%s: %s", prefix, strerror(-err));
		return err;
	}
	old = strdup(errbuf);
	if (!old) {
		return err;
	}
	snprintf(errbuf, errlen, "%s: %s", prefix, old);
	free(old);
	return err;
}
