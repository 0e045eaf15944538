// SPDX-License-Identifier: Apache-2.0
/*
 * snap/naming: the check of a snapshot's name (naming.h).
 */
#include "nfsd/snap/naming.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int snap_name_check(const char *name, char *errbuf, size_t errlen)
{
	size_t len = strlen(name);

	if (len == 0 || len > SNAP_NAME_MAX) {
		snprintf(errbuf, errlen,
			 "snapshot name: 1 to %d characters are needed",
			 SNAP_NAME_MAX);
		return -EINVAL;
	}
	if (strchr(name, '/') || strstr(name, "..") || name[0] == '.') {
		snprintf(errbuf, errlen,
			 "snapshot '%.64s': a name has no '/', no '..' and "
			 "does not start with '.'",
			 name);
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-')) {
			snprintf(errbuf, errlen,
				 "snapshot '%.64s': only letters, digits, "
				 "'.', '_' and '-'",
				 name);
			return -EINVAL;
		}
	}
	return 0;
}
