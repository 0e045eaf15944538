// SPDX-License-Identifier: Apache-2.0
/*
 * vmdk/path.c: the file names of a disk.  Extent files and parents are named
 * relative to the directory of the descriptor that names them (VMware
 * "Virtual Disk Format 5.0", extent descriptions and parentFileNameHint).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmdk/vmdk_int.h"

char *vmdk__path_dir(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash) {
		return strdup(".");
	}
	if (slash == path) {
		return strdup("/");
	}
	return strndup(path, (size_t)(slash - path));
}

const char *vmdk__path_base(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

char *vmdk__path_join(const char *dir, const char *name)
{
	char *out;

	if (name[0] == '/' || !strcmp(dir, ".")) {
		return strdup(name);
	}
	if (asprintf(&out, "%s/%s", dir, name) < 0) {
		return NULL;
	}
	return out;
}

char *vmdk__path_stem(const char *path)
{
	size_t len = strlen(path);

	if (len <= 5 || strcmp(path + len - 5, ".vmdk")) {
		return NULL;
	}
	return strndup(path, len - 5);
}

/* The length of the first name of @p (after its slashes). */
static size_t name_len(const char *p)
{
	return strcspn(p, "/");
}

static const char *skip_slashes(const char *p)
{
	while (*p == '/') {
		p++;
	}
	return p;
}

/*
 * @target relative to directory @from_dir by their names alone: paths of
 * an io that is not this machine's file system (realpath cannot see
 * them), both below the same root.  "../" once per name of @from_dir
 * past the common part, then the rest of @target.
 */
static char *path_relative(const char *from_dir, const char *target)
{
	const char *f = skip_slashes(from_dir), *t = skip_slashes(target);
	size_t up = 0, len;
	char *out, *o;

	if ((from_dir[0] == '/') != (target[0] == '/')) {
		return strdup(target);
	}
	while (*f && name_len(f) == name_len(t) && strchr(t, '/') &&
	       !strncmp(f, t, name_len(f))) {
		f = skip_slashes(f + name_len(f));
		t = skip_slashes(t + name_len(t));
	}
	for (const char *p = f; *p; p = skip_slashes(p + name_len(p))) {
		up++;
	}
	len = up * 3 + strlen(t) + 1;
	out = malloc(len);
	if (!out) {
		return NULL;
	}
	o = out;
	for (size_t i = 0; i < up; i++) {
		memcpy(o, "../", 3);
		o += 3;
	}
	strcpy(o, t);
	return out;
}

char *vmdk__path_hint(const char *from_dir, const char *target)
{
	char *tdir = vmdk__path_dir(target);
	char *abs_from = NULL;
	char *abs_t = NULL;
	char *out = NULL;

	if (!tdir) {
		return NULL;
	}
	abs_from = realpath(from_dir, NULL);
	abs_t = realpath(tdir, NULL);
	if (abs_from && abs_t && !strcmp(abs_from, abs_t)) {
		out = strdup(vmdk__path_base(target));
	} else if (abs_from && abs_t) {
		/* Relative, as VMware writes it within a datastore: a
		 * descriptor a client reads never holds the server's own
		 * path to the datastore. */
		char *t_full = NULL;

		if (asprintf(&t_full, "%s/%s", strcmp(abs_t, "/") ? abs_t : "",
			     vmdk__path_base(target)) >= 0) {
			out = path_relative(abs_from, t_full);
			free(t_full);
		}
	} else if (!abs_from && !abs_t) {
		/* Not paths of this machine (a cephfs tree's). */
		out = path_relative(from_dir, target);
	} else {
		out = strdup(target);
	}
	free(abs_t);
	free(abs_from);
	free(tdir);
	return out;
}
