// SPDX-License-Identifier: Apache-2.0
/*
 * ledger: the capacity ledger's file (format in ledger.h): replay on open
 * with torn-tail recovery, fsync'd appends, and the in-memory copy of the
 * events behind a mutex.
 */
#include "nfsd/pool/ledger.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "nfsd/base/errbuf.h"
#include "nfsd/base/fileio.h"

#define LEDGER_VERSION 1
#define LEDGER_MAX_FILE_BYTES                                                  \
	(POOL_LEDGER_HEADER_BYTES +                                            \
	 (uint64_t)POOL_LEDGER_MAX_EVENTS * POOL_LEDGER_RECORD_MAX_BYTES)

struct pool_ledger {
	pthread_mutex_t lock;
	int fd;
	bool writable;
	char path[PATH_MAX];
	uint64_t size_bytes; /* the end of the last good record */
	struct pool_event *events;
	size_t nevents;
	size_t cap;
};

static void ledger_put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++) {
		p[i] = (uint8_t)(v >> (8 * i));
	}
}

static void ledger_put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		p[i] = (uint8_t)(v >> (8 * i));
	}
}

static uint32_t ledger_get_le32(const uint8_t *p)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--) {
		v = (v << 8) | p[i];
	}
	return v;
}

static uint64_t ledger_get_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--) {
		v = (v << 8) | p[i];
	}
	return v;
}

static bool ledger_event_valid(const struct pool_event *ev)
{
	return ev->type >= POOL_EVENT_CREATED &&
	       ev->type <= POOL_EVENT_DELETED &&
	       (unsigned)ev->level < POOL_LEVEL_COUNT && ev->time_s >= 0 &&
	       pool_name_valid(ev->pool);
}

int pool_ledger_encode(const struct pool_event *ev, uint8_t *buf, size_t len)
{
	size_t name_len = strnlen(ev->pool, POOL_NAME_MAX);
	size_t plen = POOL_LEDGER_PAYLOAD_FIXED_BYTES + name_len;
	uint8_t *pl = buf + 4;

	if (!ledger_event_valid(ev) || len < 4 + plen + 8) {
		return -EINVAL;
	}
	ledger_put_le32(buf, (uint32_t)plen);
	pl[0] = LEDGER_VERSION;
	pl[1] = (uint8_t)ev->type;
	pl[2] = (uint8_t)ev->level;
	pl[3] = (uint8_t)name_len;
	ledger_put_le32(pl + 4, ev->size_tib);
	ledger_put_le32(pl + 8, ev->purchased_mibps);
	ledger_put_le64(pl + 12, (uint64_t)ev->time_s);
	memcpy(pl + POOL_LEDGER_PAYLOAD_FIXED_BYTES, ev->pool, name_len);
	ledger_put_le64(pl + plen, XXH64(buf, 4 + plen, 0));
	return (int)(4 + plen + 8);
}

/* Decodes a payload whose checksum matched.  Returns 0, or -EILSEQ with
 * the field that is wrong in *why. */
static int ledger_payload_decode(const uint8_t *pl, size_t plen,
				 struct pool_event *ev, const char **why)
{
	size_t name_len = pl[3];

	memset(ev, 0, sizeof(*ev));
	if (pl[0] != LEDGER_VERSION) {
		*why = "unknown record version";
		return -EILSEQ;
	}
	if (name_len != plen - POOL_LEDGER_PAYLOAD_FIXED_BYTES) {
		*why = "name length disagrees with record length";
		return -EILSEQ;
	}
	/* pool_name_valid() stops at a NUL: a name padded with NULs (or
	 * hiding bytes behind one) would decode to an event that does not
	 * encode back to the bytes it came from. */
	if (memchr(pl + POOL_LEDGER_PAYLOAD_FIXED_BYTES, '\0', name_len)) {
		*why = "NUL byte in the pool name";
		return -EILSEQ;
	}
	ev->type = (enum pool_event_type)pl[1];
	ev->level = (enum pool_level)pl[2];
	ev->size_tib = ledger_get_le32(pl + 4);
	ev->purchased_mibps = ledger_get_le32(pl + 8);
	ev->time_s = (int64_t)ledger_get_le64(pl + 12);
	memcpy(ev->pool, pl + POOL_LEDGER_PAYLOAD_FIXED_BYTES, name_len);
	if (!ledger_event_valid(ev)) {
		*why = "invalid event type, level, time or pool name";
		return -EILSEQ;
	}
	return 0;
}

static bool ledger_all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i]) {
			return false;
		}
	}
	return true;
}

static int ledger_events_push(struct pool_event **events, size_t *n,
			      size_t *cap, const struct pool_event *ev)
{
	struct pool_event *grown;
	size_t want;

	if (*n == POOL_LEDGER_MAX_EVENTS) {
		return -ENOSPC;
	}
	if (*n == *cap) {
		want = *cap ? *cap * 2 : 64;
		grown = realloc(*events, want * sizeof(**events));
		if (!grown) {
			return -ENOMEM;
		}
		*events = grown;
		*cap = want;
	}
	(*events)[(*n)++] = *ev;
	return 0;
}

/*
 * Classifies a bad record at @off: the last one (a torn append: recover by
 * dropping it) or one in the middle (damage: refuse).  A record is the last
 * when it runs past the end, ends exactly at the end, or is followed only by
 * zeros (a file system may show zeroed blocks after a crash).
 */
static bool ledger_bad_is_last(const uint8_t *buf, size_t len, size_t off,
			       size_t rec_len)
{
	if (rec_len == 0) {
		return len - off <= POOL_LEDGER_RECORD_MAX_BYTES ||
		       ledger_all_zero(buf + off, len - off);
	}
	if (rec_len >= len - off) {
		return true;
	}
	return ledger_all_zero(buf + off + rec_len, len - off - rec_len);
}

int pool_ledger_decode(const uint8_t *buf, size_t len,
		       struct pool_event **events, size_t *n, size_t *valid_len,
		       struct pool_ledger_recovery *rec, char *errbuf,
		       size_t errlen)
{
	const size_t hdr = POOL_LEDGER_HEADER_BYTES;
	struct pool_event *evs = NULL, ev;
	size_t count = 0, cap = 0, off = hdr, rec_len = 0;
	const char *why = NULL;
	int err = 0;

	memset(rec, 0, sizeof(*rec));
	*events = NULL;
	*n = 0;
	if (len < hdr) {
		/* A crash while the header was written: empty ledger. */
		if (memcmp(buf, POOL_LEDGER_MAGIC, len)) {
			return errbuf_printf(errbuf, errlen, -EILSEQ,
					     "offset 0: not a dsnfs ledger");
		}
		*valid_len = 0;
		if (len) {
			rec->torn = true;
			rec->dropped_bytes = len;
			snprintf(rec->why, sizeof(rec->why),
				 "header cut short");
		}
		return 0;
	}
	if (memcmp(buf, POOL_LEDGER_MAGIC, hdr)) {
		return errbuf_printf(errbuf, errlen, -EILSEQ,
				     "offset 0: not a dsnfs ledger");
	}
	while (off < len) {
		size_t left = len - off;
		uint32_t plen;

		rec_len = 0;
		if (left < 4) {
			why = "length cut short";
			break;
		}
		plen = ledger_get_le32(buf + off);
		if (plen <= POOL_LEDGER_PAYLOAD_FIXED_BYTES ||
		    plen > POOL_LEDGER_PAYLOAD_MAX_BYTES) {
			why = "record length out of range";
			break;
		}
		rec_len = 4 + plen + 8;
		if (rec_len > left) {
			why = "record cut short";
			break;
		}
		if (XXH64(buf + off, 4 + plen, 0) !=
		    ledger_get_le64(buf + off + 4 + plen)) {
			why = "checksum mismatch";
			break;
		}
		if (ledger_payload_decode(buf + off + 4, plen, &ev, &why)) {
			break;
		}
		if (count && ev.time_s < evs[count - 1].time_s) {
			why = "time goes backwards";
			break;
		}
		err = ledger_events_push(&evs, &count, &cap, &ev);
		if (err) {
			free(evs);
			return errbuf_printf(errbuf, errlen, err,
					     "offset %zu: %s", off,
					     strerror(-err));
		}
		off += rec_len;
		why = NULL;
	}
	if (why && !ledger_bad_is_last(buf, len, off, rec_len)) {
		free(evs);
		return errbuf_printf(errbuf, errlen, -EILSEQ,
				     "offset %zu, record %zu: %s, and records "
				     "follow: the ledger is damaged",
				     off, count, why);
	}
	if (why) {
		rec->torn = true;
		rec->offset = off;
		rec->dropped_bytes = len - off;
		snprintf(rec->why, sizeof(rec->why), "%s", why);
	}
	*events = evs;
	*n = count;
	*valid_len = off < len ? off : len;
	return 0;
}

static int ledger_open_fd(const char *path, bool writable, int *fd_out,
			  char *errbuf, size_t errlen)
{
	bool created = false;
	int fd, err;

	fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && writable) {
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		created = fd >= 0;
	}
	if (fd < 0) {
		return errbuf_printf(errbuf, errlen, -errno, "%s: %s", path,
				     strerror(errno));
	}
	if (writable && flock(fd, LOCK_EX | LOCK_NB)) {
		err = errno == EWOULDBLOCK ? -EBUSY : -errno;
		close(fd);
		return errbuf_printf(errbuf, errlen, err, "%s: %s", path,
				     err == -EBUSY ? "locked by another process"
						   : strerror(-err));
	}
	if (created) {
		err = fileio_sync_parent_dir(path);
		if (err) {
			close(fd);
			return errbuf_printf(errbuf, errlen, err,
					     "%s: syncing its directory: %s",
					     path, strerror(-err));
		}
	}
	*fd_out = fd;
	return 0;
}

/* Writable open: drop the torn tail, write the header of an empty file. */
static int ledger_repair(struct pool_ledger *l, size_t valid_len,
			 size_t file_len, char *errbuf, size_t errlen)
{
	int err;

	if (valid_len < file_len && ftruncate(l->fd, (off_t)valid_len)) {
		return errbuf_printf(errbuf, errlen, -errno,
				     "%s: truncating a torn record: %s",
				     l->path, strerror(errno));
	}
	if (valid_len == 0) {
		err = fileio_pwrite_all(l->fd,
					(const uint8_t *)POOL_LEDGER_MAGIC,
					POOL_LEDGER_HEADER_BYTES, 0);
		if (err) {
			return errbuf_printf(errbuf, errlen, err,
					     "%s: writing the header: %s",
					     l->path, strerror(-err));
		}
		valid_len = POOL_LEDGER_HEADER_BYTES;
	}
	if (valid_len != file_len && fsync(l->fd)) {
		return errbuf_printf(errbuf, errlen, -errno, "%s: fsync: %s",
				     l->path, strerror(errno));
	}
	l->size_bytes = valid_len;
	return 0;
}

int pool_ledger_open(const char *path, enum pool_ledger_mode mode,
		     struct pool_ledger **out, struct pool_ledger_recovery *rec,
		     char *errbuf, size_t errlen)
{
	struct pool_ledger_recovery local;
	struct pool_ledger *l;
	uint8_t *buf = NULL;
	size_t len = 0, valid_len = 0;
	char why[192];
	int err;

	if (!rec) {
		rec = &local;
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		return errbuf_printf(errbuf, errlen, -ENOMEM, "out of memory");
	}
	l->writable = mode == POOL_LEDGER_READ_WRITE;
	snprintf(l->path, sizeof(l->path), "%s", path);
	err = ledger_open_fd(path, l->writable, &l->fd, errbuf, errlen);
	if (err) {
		goto fail_alloc;
	}
	err = fileio_read_whole(l->fd, LEDGER_MAX_FILE_BYTES, &buf, &len);
	if (err) {
		errbuf_printf(errbuf, errlen, err, "%s: reading: %s", path,
			      strerror(-err));
		goto fail_fd;
	}
	err = pool_ledger_decode(buf, len, &l->events, &l->nevents, &valid_len,
				 rec, why, sizeof(why));
	free(buf);
	if (err) {
		errbuf_printf(errbuf, errlen, err, "%s: %s", path, why);
		goto fail_fd;
	}
	l->cap = l->nevents;
	l->size_bytes = valid_len;
	if (l->writable) {
		err = ledger_repair(l, valid_len, len, errbuf, errlen);
		if (err) {
			goto fail_events;
		}
	}
	pthread_mutex_init(&l->lock, NULL);
	*out = l;
	return 0;

fail_events:
	free(l->events);
fail_fd:
	close(l->fd);
fail_alloc:
	free(l);
	return err;
}

void pool_ledger_close(struct pool_ledger *ledger)
{
	if (!ledger) {
		return;
	}
	close(ledger->fd);
	pthread_mutex_destroy(&ledger->lock);
	free(ledger->events);
	free(ledger);
}

/* Encodes @n events into one buffer, times clamped to the ledger's last. */
static int ledger_encode_batch(const struct pool_ledger *l,
			       const struct pool_event *events, size_t n,
			       uint8_t *buf, size_t *len,
			       struct pool_event *stamped)
{
	int64_t last = l->nevents ? l->events[l->nevents - 1].time_s : 0;
	size_t off = 0;

	for (size_t i = 0; i < n; i++) {
		int w;

		stamped[i] = events[i];
		if (stamped[i].time_s < last) {
			stamped[i].time_s = last;
		}
		last = stamped[i].time_s;
		w = pool_ledger_encode(&stamped[i], buf + off,
				       POOL_LEDGER_RECORD_MAX_BYTES);
		if (w < 0) {
			return w;
		}
		off += (size_t)w;
	}
	*len = off;
	return 0;
}

static int ledger_append_locked(struct pool_ledger *l,
				const struct pool_event *events, size_t n,
				char *errbuf, size_t errlen)
{
	struct pool_event *stamped = NULL;
	uint8_t *buf = NULL;
	size_t len = 0;
	int err;

	if (!l->writable) {
		return errbuf_printf(errbuf, errlen, -EBADF,
				     "%s: opened read-only", l->path);
	}
	if (n > POOL_LEDGER_MAX_EVENTS - l->nevents) {
		return errbuf_printf(errbuf, errlen, -ENOSPC,
				     "%s: more than %u events", l->path,
				     POOL_LEDGER_MAX_EVENTS);
	}
	buf = malloc(n * POOL_LEDGER_RECORD_MAX_BYTES);
	stamped = malloc(n * sizeof(*stamped));
	if (!buf || !stamped) {
		err = errbuf_printf(errbuf, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	err = ledger_encode_batch(l, events, n, buf, &len, stamped);
	if (err) {
		errbuf_printf(errbuf, errlen, err, "%s: invalid event",
			      l->path);
		goto out;
	}
	err = fileio_pwrite_all(l->fd, buf, len, l->size_bytes);
	if (!err && fsync(l->fd)) {
		err = -errno;
	}
	if (err) {
		errbuf_printf(errbuf, errlen, err, "%s: appending: %s", l->path,
			      strerror(-err));
		/* Best effort: leave no partial record behind.  A failure
		 * here is handled by the torn-tail replay on next open. */
		if (ftruncate(l->fd, (off_t)l->size_bytes) == 0) {
			(void)fsync(l->fd);
		}
		goto out;
	}
	l->size_bytes += len;
	for (size_t i = 0; i < n && !err; i++) {
		err = ledger_events_push(&l->events, &l->nevents, &l->cap,
					 &stamped[i]);
	}
	if (err) {
		errbuf_printf(errbuf, errlen, err,
			      "%s: appended, but no memory to keep the events",
			      l->path);
	}
out:
	free(stamped);
	free(buf);
	return err;
}

int pool_ledger_append(struct pool_ledger *ledger,
		       const struct pool_event *events, size_t n, char *errbuf,
		       size_t errlen)
{
	int err;

	if (n == 0) {
		return 0;
	}
	pthread_mutex_lock(&ledger->lock);
	err = ledger_append_locked(ledger, events, n, errbuf, errlen);
	pthread_mutex_unlock(&ledger->lock);
	return err;
}

int pool_ledger_events(struct pool_ledger *ledger, struct pool_event **out,
		       size_t *n)
{
	int err = 0;

	*out = NULL;
	*n = 0;
	pthread_mutex_lock(&ledger->lock);
	if (ledger->nevents) {
		*out = malloc(ledger->nevents * sizeof(**out));
		if (*out) {
			memcpy(*out, ledger->events,
			       ledger->nevents * sizeof(**out));
			*n = ledger->nevents;
		} else {
			err = -ENOMEM;
		}
	}
	pthread_mutex_unlock(&ledger->lock);
	return err;
}
