// SPDX-License-Identifier: Apache-2.0
/*
 * errbuf: the one formatter of the errbuf convention (errbuf.h), shared by
 * the modules that explain their refusals (pool, admin).
 */
#include "nfsd/base/errbuf.h"

#include <stdarg.h>
#include <stdio.h>

int errbuf_printf(char *errbuf, size_t errlen, int err, const char *fmt, ...)
{
	va_list ap;

	if (errbuf && errlen) {
		va_start(ap, fmt);
		vsnprintf(errbuf, errlen, fmt, ap);
		va_end(ap);
	}
	return err;
}
