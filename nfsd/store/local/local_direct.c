// SPDX-License-Identifier: Apache-2.0
/*
 * local_direct: a stable write that goes in place (ilog.h's rules) over
 * blocks its file already holds, written through a second descriptor
 * opened O_DIRECT with RWF_DSYNC: the call returns once the bytes are on
 * the disk, with no pwrite into the page cache and no fdatasync after.
 *
 * Why: an fdatasync covers what reached the page cache before it began,
 * so a file's stable writes queue behind each other's syncs (the sync
 * group shares one, and the next waits for it to end).  Direct writes of
 * one file are in flight together, each with its own flush, and the block
 * layer merges flushes that meet.  fio here (ext4, 4 files, 64 KiB
 * sequential overwrites): pwrite + fdatasync each 525-548 MiB/s; O_DIRECT
 * + O_DSYNC at 4 in flight a file 1741-1845 MiB/s (docs/durability.md).
 *
 * Only where nothing but data moves, so that RWF_DSYNC costs a flush and
 * no journal commit: offset and length in whole 4 KiB blocks, inside the
 * file's size, with no hole under them (SEEK_HOLE; ext4 and XFS also
 * report unwritten extents with no cached pages as holes).  Anything else
 * (a thin disk's first write, a file system without O_DIRECT: tmpfs
 * before 6.6, some FUSE) takes the buffered path, and a file whose direct
 * open or write is refused with EINVAL is not tried again.  The kernel
 * writes back and drops the range's cached pages before a direct write,
 * so buffered reads and writes of the file stay coherent with it.
 */
#include "nfsd/store/local/local_int.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* Offset, length and memory alignment asked of a direct write: the
 * largest logical block size of disks in use; a disk needing more
 * refuses with EINVAL and the file goes back to the buffered path. */
#define DIRECT_ALIGN 4096u

/* A work thread's aligned copy of a WRITE's bytes (they come at any
 * address in a request's buffer), grown to the largest WRITE it met. */
struct direct_bounce {
	void *buf;
	size_t len;
};

static pthread_key_t bounce_key;
static pthread_once_t bounce_once = PTHREAD_ONCE_INIT;
static int bounce_key_err;

static void direct_bounce_free(void *p)
{
	struct direct_bounce *b = p;

	free(b->buf);
	free(b);
}

static void direct_bounce_key_init(void)
{
	bounce_key_err = pthread_key_create(&bounce_key, direct_bounce_free);
}

/* The calling thread's buffer of at least @len bytes, or NULL. */
static void *direct_bounce_get(size_t len)
{
	struct direct_bounce *b;
	void *p;

	if (pthread_once(&bounce_once, direct_bounce_key_init) ||
	    bounce_key_err) {
		return NULL;
	}
	b = pthread_getspecific(bounce_key);
	if (!b) {
		b = calloc(1, sizeof(*b));
		if (!b || pthread_setspecific(bounce_key, b)) {
			free(b);
			return NULL;
		}
	}
	if (b->len >= len) {
		return b->buf;
	}
	if (posix_memalign(&p, DIRECT_ALIGN, len)) {
		return NULL;
	}
	free(b->buf);
	b->buf = p;
	b->len = len;
	return p;
}

/* @obj's O_DIRECT descriptor, opened on first use and kept until the
 * object goes (store__obj_unref); -EAGAIN when the file cannot have one
 * (refused before, or now). */
static int direct_fd(struct store_local *sl, struct local_obj *obj)
{
	int expected = -1;
	char path[32];
	int fd = atomic_load_explicit(&obj->direct_fd, memory_order_acquire);
	int err;

	if (atomic_load(&obj->direct_refused)) {
		return -EAGAIN;
	}
	if (fd >= 0) {
		return fd;
	}
	store__proc_fd_path(obj->fd, path, sizeof(path));
	fd = open(path, O_WRONLY | O_DIRECT | O_CLOEXEC);
	err = fd < 0 ? -errno : 0;
	if (fd < 0 && store__fcache_relieve(sl->fc, err)) {
		fd = open(path, O_WRONLY | O_DIRECT | O_CLOEXEC);
		err = fd < 0 ? -errno : 0;
	}
	if (fd < 0) {
		/* Out of descriptors: the buffered path now, direct later. */
		if (err != -EMFILE && err != -ENFILE) {
			atomic_store(&obj->direct_refused, true);
		}
		return -EAGAIN;
	}
	/* Two threads may race here; the loser closes its descriptor. */
	if (!atomic_compare_exchange_strong(&obj->direct_fd, &expected, fd)) {
		close(fd);
		return expected;
	}
	return fd;
}

/* Whether [@off, @off + @count) of the file behind @io_fd is all written
 * blocks: a direct write there moves data only. */
static bool direct_range_written(int io_fd, uint64_t off, uint32_t count)
{
	off_t hole = lseek(io_fd, (off_t)off, SEEK_HOLE);

	return hole >= 0 && (uint64_t)hole >= off + count;
}

int store__local_direct_target(struct store *st, struct local_obj *obj,
			       int io_fd, uint64_t off_bytes, uint32_t count)
{
	if (!count || off_bytes % DIRECT_ALIGN || count % DIRECT_ALIGN ||
	    !direct_range_written(io_fd, off_bytes, count)) {
		return -EAGAIN;
	}
	return direct_fd(store__local(st), obj);
}

int store__local_write_direct(struct store *st, struct local_obj *obj,
			      int io_fd, uint64_t off_bytes, const void *buf,
			      uint32_t count)
{
	const char *src = buf;
	uint32_t done = 0;
	int fd = store__local_direct_target(st, obj, io_fd, off_bytes, count);

	if (fd < 0) {
		return fd;
	}
	if ((uintptr_t)buf % DIRECT_ALIGN) {
		void *b = direct_bounce_get(count);

		if (!b) {
			return -EAGAIN;
		}
		memcpy(b, buf, count);
		src = b;
	}
	while (done < count) {
		struct iovec iov = { (void *)(src + done), count - done };
		ssize_t n = pwritev2(fd, &iov, 1, (off_t)(off_bytes + done),
				     RWF_DSYNC);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0 && errno == EINVAL && !done) {
			/* The disk wants more alignment, or the file
			 * system no direct writes: never again here (the
			 * descriptor stays open: others may hold it). */
			atomic_store(&obj->direct_refused, true);
			return -EAGAIN;
		}
		if (n < 0) {
			return -errno;
		}
		if (n == 0) {
			return -EIO;
		}
		done += (uint32_t)n;
	}
	return 0;
}
