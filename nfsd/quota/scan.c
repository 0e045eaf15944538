// SPDX-License-Identifier: Apache-2.0
/*
 * scan: the allocated bytes under a datastore's directory, walked once
 * with fts(3) (physical: symlinks are not followed; one filesystem), each
 * inode recorded once, so a file with two links counts once.
 */
#include <errno.h>
#include <fts.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "nfsd/quota/quota_int.h"
#include "nfsd/snap/snap.h"

/* Records one entry unless its inode is on record; adds its bytes. */
static int scan_entry(struct quota *q, const struct stat *st, uint64_t *total)
{
	uint64_t bytes = (uint64_t)st->st_blocks * 512;

	if (quota_files_find(&q->files, st->st_ino)) {
		return 0;
	}
	if (!quota_files_add(&q->files, st->st_ino, bytes)) {
		return -ENOMEM;
	}
	*total += bytes;
	return 0;
}

int quota_scan(struct quota *q, const char *dir, char *errbuf, size_t errlen)
{
	char *paths[] = { (char *)dir, NULL };
	uint64_t total = 0;
	FTSENT *e;
	FTS *fts;
	int err = 0;

	fts = fts_open(paths, FTS_PHYSICAL | FTS_NOCHDIR | FTS_XDEV, NULL);
	if (!fts) {
		err = -errno;
		snprintf(errbuf, errlen, "%s: cannot scan: %s", dir,
			 strerror(-err));
		return err;
	}
	pthread_mutex_lock(&q->lock);
	quota_files_clear(&q->files);
	errno = 0;
	while (!err && (e = fts_read(fts))) {
		/* Snapshots share their blocks with the live files (and
		 * ANF leaves them out of a volume's consumed size). */
		if (e->fts_info == FTS_D && e->fts_level == 1 &&
		    !strcmp(e->fts_name, SNAP_DIR_NAME)) {
			fts_set(fts, e, FTS_SKIP);
			continue;
		}
		switch (e->fts_info) {
		case FTS_D: /* counted on the way in */
		case FTS_F:
		case FTS_SL:
		case FTS_SLNONE:
		case FTS_DEFAULT:
			err = scan_entry(q, e->fts_statp, &total);
			if (err) {
				snprintf(errbuf, errlen, "%s: %s", e->fts_path,
					 strerror(-err));
			}
			break;
		case FTS_DNR:
		case FTS_ERR:
		case FTS_NS:
			err = -e->fts_errno;
			snprintf(errbuf, errlen, "%s: cannot scan: %s",
				 e->fts_path, strerror(e->fts_errno));
			break;
		default: /* FTS_DP (the way out), FTS_DC (a cycle) */
			break;
		}
	}
	if (!err && errno) {
		err = -errno;
		snprintf(errbuf, errlen, "%s: cannot scan: %s", dir,
			 strerror(-err));
	}
	if (err) {
		quota_files_clear(&q->files);
	} else {
		atomic_store(&q->used_bytes,
			     total > INT64_MAX ? INT64_MAX : (int64_t)total);
	}
	pthread_mutex_unlock(&q->lock);
	fts_close(fts);
	return err;
}
