// SPDX-License-Identifier: Apache-2.0
/*
 * conf_copy: see conf_copy.h.
 */
#include "perf/dsload/conf_copy.h"

#include <errno.h>
#include <string.h>

int conf_copy_open(const char *base_path, FILE **in, const char *out_path,
		   FILE **out, char *errbuf, size_t errlen)
{
	int err;

	*in = fopen(base_path, "r");
	if (!*in) {
		err = -errno;
		snprintf(errbuf, errlen, "%s: %s", base_path, strerror(-err));
		return err;
	}
	*out = fopen(out_path, "w");
	if (!*out) {
		err = -errno;
		snprintf(errbuf, errlen, "%s: %s", out_path, strerror(-err));
		fclose(*in);
		*in = NULL;
		return err;
	}
	return 0;
}

int conf_copy_close(FILE *in, FILE *out, const char *out_path, char *errbuf,
		    size_t errlen)
{
	int err = 0;

	fclose(in);
	/* a full disk shows only here, when the buffered lines go out */
	if (fclose(out)) {
		err = -errno;
		snprintf(errbuf, errlen, "%s: %s", out_path, strerror(-err));
	}
	return err;
}
