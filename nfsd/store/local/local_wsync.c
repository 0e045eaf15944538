// SPDX-License-Identifier: Apache-2.0
/*
 * local_wsync: a stable write made stable in its file.  The sync a
 * stable WRITE or COMMIT waits for, shared by the file's writers in
 * flight (its sync group, store/syncgroup.h); and an in-place write the
 * buffered way (pwrite, then that sync), which a work thread takes
 * (local_io.c) and the log's ring falls back to (local_dring.c).
 */
#include "nfsd/store/local/local_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

/* store_sync_fn on the object's read/write descriptor. */
static int store_local_sync_fd(void *arg, enum store_stable level)
{
	int fd = (int)(intptr_t)arg;
	int rc;

	rc = level == STORE_FILE_SYNC ? fsync(fd) : fdatasync(fd);
	return rc != 0 ? -errno : 0;
}

int store__local_wsync(struct store *st, struct local_obj *obj, int fd,
		       enum store_stable level, bool *sync_failed)
{
	int err = store__syncgroup_sync(&obj->sync, level, st->group_commit,
					store_local_sync_fd,
					(void *)(intptr_t)fd);

	*sync_failed = err != 0;
	return err;
}

int store__local_inplace_buffered(struct store *st, struct local_obj *obj,
				  int fd, uint64_t off_bytes, const void *buf,
				  uint32_t count, uint64_t *upto_lsn,
				  bool *sync_failed)
{
	int err;

	pthread_mutex_lock(&obj->ilog_order);
	err = store__pwrite_full(fd, buf, count, off_bytes);
	*upto_lsn = atomic_load(&obj->ilog_lsn);
	pthread_mutex_unlock(&obj->ilog_order);
	return err ? err
		   : store__local_wsync(st, obj, fd, STORE_DATA_SYNC,
					sync_failed);
}
