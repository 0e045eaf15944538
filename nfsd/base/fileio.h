/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fileio: whole-file reads, full writes and directory syncs for the small
 * state files dsnfsd keeps in its state_dir (the capacity ledger, the
 * admin API's changes).  Each call retries EINTR and short transfers, so
 * a caller sees all or an error.
 */
#ifndef DSNFS_FILEIO_H
#define DSNFS_FILEIO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Writes all @len bytes of @buf (borrowed) to @fd at @off_bytes.  Returns
 * 0, -EIO when the file takes no more bytes, or another -errno.
 */
int fileio_pwrite_all(int fd, const void *buf, size_t len, uint64_t off_bytes);

/*
 * Reads @fd from offset 0 to its end, at most @max bytes.  *out returns
 * owned (free()), with one NUL byte after the *len bytes read.  Returns 0,
 * -EFBIG when the file holds more than @max bytes, -ENOMEM or -errno.
 */
int fileio_read_whole(int fd, size_t max, uint8_t **out, size_t *len);

/* fsyncs the directory that holds @path (borrowed), so that a file
 * created or renamed in it lasts.  Returns 0 or -errno. */
int fileio_sync_parent_dir(const char *path);

/*
 * Replaces @path by a file of the @len bytes of @text, mode 0600: written
 * to PATH.tmp (O_NOFOLLOW), fsynced, renamed over @path, its directory
 * fsynced; a crash leaves the old file or the new one.  Returns 0 or
 * -errno with "PATH: cannot write it: ..." in @errbuf (nothing left at
 * PATH.tmp).
 */
int fileio_replace(const char *path, const void *text, size_t len, char *errbuf,
		   size_t errlen);

/* fileio_replace() of what @print (called once) writes to a FILE * in
 * memory, with @arg.  Returns as fileio_replace(), or -ENOMEM. */
int fileio_replace_printed(const char *path,
			   void (*print)(FILE *f, const void *arg),
			   const void *arg, char *errbuf, size_t errlen);

#endif
