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
	} else if (abs_t) {
		if (asprintf(&out, "%s/%s", strcmp(abs_t, "/") ? abs_t : "",
			     vmdk__path_base(target)) < 0) {
			out = NULL;
		}
	} else {
		out = strdup(target);
	}
	free(abs_t);
	free(abs_from);
	free(tdir);
	return out;
}
