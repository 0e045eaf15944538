// SPDX-License-Identifier: Apache-2.0
/*
 * admin_token: which file holds the admin token dsload sends (admin.h),
 * apart from admin.c so that the option parser needs no libcurl.
 */
#include "perf/dsload/admin.h"

#include <stdio.h>

#include "nfsd/admin/auth.h"

static const char *admin_token_opt; /* --token-file */
static char admin_token_srv[4096]; /* a server of dsload's own */

void admin_token_option(const char *path)
{
	admin_token_opt = path;
}

void admin_token_server(const char *state_dir)
{
	snprintf(admin_token_srv, sizeof(admin_token_srv), "%s/%s", state_dir,
		 ADMIN_TOKEN_FILE_NAME);
}

const char *admin_token_file(void)
{
	if (admin_token_opt) {
		return admin_token_opt;
	}
	return admin_token_srv[0] ? admin_token_srv : admin_token_path(NULL);
}
