// SPDX-License-Identifier: Apache-2.0
/*
 * snap/policy_record: which snapshots of a datastore its policy made
 * (policy.h), so that retention takes only those: a text file in the
 * state directory, a version line and a name a line, replaced
 * atomically (temporary file, fsync, rename).
 */
#include "nfsd/snap/policy.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nfsd/base/fileio.h"
#include "nfsd/snap/naming.h"

#define RECORD_MAGIC "dsnfs-policy-snapshots 1"

void snap_policy_record_free(struct snap_policy_record *r)
{
	free(r->names);
	r->names = NULL;
	r->n = 0;
}

bool snap_policy_record_has(const struct snap_policy_record *r,
			    const char *name)
{
	for (size_t i = 0; i < r->n; i++) {
		if (!strcmp(r->names[i], name)) {
			return true;
		}
	}
	return false;
}

int snap_policy_record_add(struct snap_policy_record *r, const char *name)
{
	char(*p)[64];

	if (strlen(name) >= sizeof(r->names[0])) {
		return -ENAMETOOLONG;
	}
	if (snap_policy_record_has(r, name)) {
		return 0;
	}
	if (r->n >= SNAP_LIST_MAX) {
		return -ENOSPC;
	}
	p = realloc(r->names, (r->n + 1) * sizeof(*p));
	if (!p) {
		return -ENOMEM;
	}
	r->names = p;
	snprintf(r->names[r->n++], sizeof(r->names[0]), "%s", name);
	return 0;
}

void snap_policy_record_del(struct snap_policy_record *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++) {
		if (!strcmp(r->names[i], name)) {
			memcpy(r->names[i], r->names[r->n - 1],
			       sizeof(r->names[0]));
			r->n--;
			return;
		}
	}
}

int snap_policy_record_load(const char *path, struct snap_policy_record *r,
			    char *errbuf, size_t errlen)
{
	char line[128], why[128];
	unsigned lineno = 1;
	FILE *f;
	int err = 0;

	memset(r, 0, sizeof(*r));
	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT) {
			return 0;
		}
		err = -errno;
		snprintf(errbuf, errlen, "%s: %s", path, strerror(-err));
		return err;
	}
	if (!fgets(line, sizeof(line), f) || strcmp(line, RECORD_MAGIC "\n")) {
		snprintf(errbuf, errlen, "%s: not a policy record", path);
		fclose(f);
		return -EINVAL;
	}
	while (!err && fgets(line, sizeof(line), f)) {
		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if (snap_name_check(line, why, sizeof(why))) {
			snprintf(errbuf, errlen, "%s:%u: a bad name", path,
				 lineno);
			err = -EINVAL;
		} else {
			err = snap_policy_record_add(r, line);
		}
	}
	fclose(f);
	if (err) {
		snap_policy_record_free(r);
	}
	return err;
}

static void record_print(FILE *f, const void *arg)
{
	const struct snap_policy_record *r = arg;

	fprintf(f, RECORD_MAGIC "\n");
	for (size_t i = 0; i < r->n; i++) {
		fprintf(f, "%s\n", r->names[i]);
	}
}

int snap_policy_record_save(const char *path,
			    const struct snap_policy_record *r, char *errbuf,
			    size_t errlen)
{
	return fileio_replace_printed(path, record_print, r, errbuf, errlen);
}
