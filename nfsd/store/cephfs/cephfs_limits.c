// SPDX-License-Identifier: Apache-2.0
/*
 * cephfs_limits: the largest file the datastore's CephFS takes, so that
 * FSINFO tells clients the truth (RFC 1813's maxfilesize) and a write or
 * a size past it is NFS3ERR_FBIG before any byte moves.  CephFS keeps it
 * in its MDS map (`ceph fs set NAME max_file_size BYTES`, 1 TiB unless
 * raised; ESXi makes VMDKs up to 62 TB), which libcephfs does not expose:
 * it is read once at mount from the monitors (`fs dump`, through the
 * backend's librados handle), for the file system this mount uses.
 */
#include "nfsd/store/cephfs/cephfs_int.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/base/log.h"

/* CephFS's own default, for a cluster that does not say. */
#define STORE_CEPHFS_DEFAULT_MAX_FILE_BYTES (1ull << 40)

/* mdsmap.max_file_size, in `fs dump`'s JSON, of the file system named
 * @fs_name, or of the default one when @fs_name is NULL or empty (what
 * the mount took); 0 when not found. */
static uint64_t cephfs_limits_parse(const char *json, size_t len,
				    const char *fs_name)
{
	json_t *root = json_loadb(json, len, 0, NULL);
	json_t *def = json_object_get(root, "default_fscid");
	json_t *fs;
	size_t i;
	uint64_t bytes = 0;

	json_array_foreach(json_object_get(root, "filesystems"), i, fs)
	{
		json_t *map = json_object_get(fs, "mdsmap");
		json_t *max = json_object_get(map, "max_file_size");
		const char *name =
			json_string_value(json_object_get(map, "fs_name"));
		bool ours =
			fs_name && fs_name[0]
				? name && !strcmp(name, fs_name)
				: json_equal(json_object_get(fs, "id"), def);

		if (ours && json_is_integer(max) &&
		    json_integer_value(max) > 0) {
			bytes = (uint64_t)json_integer_value(max);
		}
	}
	json_decref(root);
	return bytes;
}

uint64_t store__cephfs_max_file_bytes(struct store_cephfs *sc,
				      const char *fs_name)
{
	const char *cmd[] = { "{\"prefix\": \"fs dump\", "
			      "\"format\": \"json\"}" };
	char *out = NULL, *status = NULL;
	size_t out_len = 0, status_len = 0;
	uint64_t bytes = 0;
	int rc = -ENOTCONN;

	if (sc->rados_ok) {
		rc = rados_mon_command(sc->rados, cmd, 1, NULL, 0, &out,
				       &out_len, &status, &status_len);
	}
	if (rc == 0) {
		bytes = cephfs_limits_parse(out, out_len, fs_name);
	}
	rados_buffer_free(out);
	rados_buffer_free(status);
	if (bytes == 0) {
		log_warn("cephfs: %s: the file system's max_file_size is "
			 "unknown (fs dump: %s): taking CephFS's default, "
			 "1 TiB",
			 sc->base.name, rc ? strerror(-rc) : "not in it");
		return STORE_CEPHFS_DEFAULT_MAX_FILE_BYTES;
	}
	return bytes;
}
