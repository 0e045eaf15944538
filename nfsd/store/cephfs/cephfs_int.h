/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cephfs_int: what the files of the cephfs backend share.  cephfs.c mounts
 * and owns the store, cephfs_obj.c its objects (one per inode, cached with
 * their open file), cephfs_attr.c attributes, cephfs_io.c READ / WRITE /
 * COMMIT, cephfs_ns.c the namespace ops, cephfs_dir.c READDIR, and
 * cephfs_used.c the allocated bytes of a file (counted in RADOS objects,
 * because CephFS reports a sparse file's st_blocks as its size).
 *
 * Handles have the layout of handle.c with kernel type
 * STORE_CEPHFS_FH_TYPE and an 8-byte body, the inode number (big endian):
 * 23 bytes, valid on every gateway of the cluster (same key) and across
 * restarts (inode numbers are never reused while the file exists).
 */
#ifndef DSNFS_STORE_CEPHFS_INT_H
#define DSNFS_STORE_CEPHFS_INT_H

/* libcephfs.h refuses to compile without it (its struct dirent); a no-op
 * on 64-bit glibc otherwise.  First, before any system header: every
 * cephfs*.c includes this header first. */
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/statvfs.h>
#include <sys/un.h>
#include <time.h>

#include <cephfs/libcephfs.h>
#include <rados/librados.h>

#include "nfsd/store/cephfs/cephfs.h"
#include "nfsd/store/readahead.h"
#include "nfsd/store/store_obj.h"
#include "nfsd/store/store_int.h"

/* The kernel handle type our handles carry for a CephFS inode: not one
 * Linux uses (FILEID_* are below 0x100 but far below this one). */
#define STORE_CEPHFS_FH_TYPE 0xce
#define STORE_CEPHFS_VERF_XATTR "user.dsnfs.verf"
/* Version 1's handle secret (adopted and removed: cephfs_key.c). */
#define STORE_CEPHFS_SECRET_XATTR "user.dsnfs.handle_secret"
/* The handle key of a gateway's CephFS datastores, in its state dir. */
#define STORE_CEPHFS_KEY_FILE "cephfs.key"
/* The id of the handle key (not the key): cephfs_key.c. */
#define STORE_CEPHFS_KEYID_XATTR "user.dsnfs.handle_key_id"
#define STORE_CEPHFS_CACHE_ENTRIES 4096
#define STORE_CEPHFS_CACHE_BUCKETS 1024
/* The root's ".snapshot" over NFS is CephFS's ".snap" (read-only). */
#define STORE_CEPHFS_SNAPDIR ".snap"
#define STORE_CEPHFS_NFS_SNAPDIR ".snapshot"
#ifndef CEPH_SNAPDIR
#define CEPH_SNAPDIR ((uint64_t)(-1)) /* Ceph's include/rados.h */
#endif

/* Attributes every op wants from libcephfs. */
#define STORE_CEPHFS_WANT (CEPH_STATX_BASIC_STATS)

struct cephfs_ask;
struct cephfs_obj;
struct cephfs_prefetch;
struct store_cephfs;
struct store_rlog;

/* A call in libcephfs this long marks the datastore down (cephfs_health.c;
 * docs/ceph.md says why 5 s). */
#define STORE_CEPHFS_BOUND_MS 5000
/* A call past the cap waits for a place while the calls in libcephfs
 * move: while the oldest is younger than this, or another call came back
 * within this long (a slow fsync beside writes that complete is load, not
 * a stall). */
#define STORE_CEPHFS_SLOW_MS 1000
#define STORE_CEPHFS_TICK_MS 250
/* While down with a call stuck, the mount's admin socket is asked for
 * its session this often; two answers "stale" are an eviction
 * (cephfs_evict.c). */
#define STORE_CEPHFS_UNLISTED_MS 2000
/* How long one step of an admin-socket command may wait, and the longest
 * answer taken (cephfs_asok.c). */
#define STORE_CEPHFS_ASOK_WAIT_S 10
#define STORE_CEPHFS_ASOK_MAX_BYTES (1u << 20)
/* An ask not answered in this long is given up (its thread let go of),
 * and after this many the gateway asks no more. */
#define STORE_CEPHFS_ASK_MAX_MS 30000
#define STORE_CEPHFS_ASKS_ABANDONED_MAX 4
/* How long a fenced client stays blocklisted: longer than any call of a
 * cut-off gateway can wait (its mount's and its OSD ops' timeouts). */
#define STORE_CEPHFS_FENCE_S 3600u
/* A client's address list ("[v2:a/n,v1:a/n]"), with its NUL. */
#define STORE_CEPHFS_ADDRS_MAX 256u
/* The most calls of one store in libcephfs at once, whatever the cap. */
#define STORE_CEPHFS_CALLS_MAX 256

/* The readahead of files read in order (cephfs_prefetch.c, readahead.h):
 * reads within 4 MiB of each other are one run (16 READs of 64 KiB in
 * flight span 1 MiB; ESXi may keep more, and a work thread descheduled
 * a while falls further behind); once 8 of them have read 1 MiB the run is read
 * ahead, to the next CephFS object boundary (4 MiB objects by default) at a
 * time; a read the prefetch served takes less than 300 us (one from the cache:
 * tens of us; from an OSD: a network round trip and the OSD's read). */
#define STORE_CEPHFS_PREFETCH_NEAR (4ull << 20)
#define STORE_CEPHFS_PREFETCH_STREAK 8
#define STORE_CEPHFS_PREFETCH_START (1ull << 20)
#define STORE_CEPHFS_PREFETCH_CHUNK (4ull << 20)
#define STORE_CEPHFS_PREFETCH_HIT_US 300

/* cephfs_health.c's; the state itself is store.unavailable. */
struct store_cephfs_health {
	pthread_mutex_t lock;
	/* Down, an eviction, the last call back while down, stopping: the
	 * monitor and every call waiting for a place. */
	pthread_cond_t wake;
	/* A place freed: one waiting call, not all of them nor the monitor
	 * (a broadcast per call woke 30 threads per WRITE, bench-ceph). */
	pthread_cond_t room;
	unsigned cap; /* calls in libcephfs at once */
	unsigned inflight;
	unsigned waiting; /* calls waiting for a place */
	uint64_t start_ns[STORE_CEPHFS_CALLS_MAX]; /* 0: free place */
	uint64_t last_leave_ns; /* when a call last came back; 0: never */
	uint64_t down_since_ns, probe_ns;
	uint64_t outages;
	_Atomic uint64_t refused; /* calls answered -EAGAIN */
	bool stopping;
	/* Evicted with a RADOS log: whether another gateway took it over
	 * (fenced) or the MDS alone evicted us (mounted anew) is not known
	 * yet; the monitor asks the log (cephfs_rlog_fence.c). */
	bool fence_pending;
	pthread_t monitor;
	/* Whether the cluster answers again: 0 or -errno.  NULL at start:
	 * the real one (a test sets its own before), as the two below. */
	int (*probe)(struct store_cephfs *sc);
	/* An eviction without a blocklist (cephfs_evict.c): whether the
	 * mount's session is still its own, asked of its admin socket while
	 * down with a call stuck (the last ask, the answers "stale" in a
	 * row), and the mount's own blocklist once it is not (done: never
	 * again). */
	int (*session_listed)(struct store_cephfs *sc);
	int (*blocklist_self)(struct store_cephfs *sc);
	uint64_t session_ask_ns;
	unsigned unlisted;
	bool self_fenced;
	/* The blocklist above done: every call of this mount answers
	 * -EAGAIN from then on, and while calls still wait in it, its admin
	 * socket is told to drop its stale session, whose caps they may wait
	 * on (cephfs_evict.c), every STORE_CEPHFS_UNLISTED_MS (the last
	 * answer; said in the log once). */
	bool blocklisted;
	int (*kick_stale)(struct store_cephfs *sc);
	uint64_t kick_ns;
	bool kicked;
};

/* The last statfs the mon answered, for FSSTATs while it does not
 * (cephfs_statfs.c). */
struct cephfs_statfs {
	pthread_mutex_t lock;
	bool asking; /* a thread waits in ceph_ll_statfs */
	bool have_last;
	struct statvfs last;
};

struct store_cephfs {
	struct store base;
	struct ceph_mount_info *cm;
	UserPerm *root_perms; /* the mount's (borrowed from cm) */
	struct store_secret secret;
	struct cephfs_obj *root;
	uint64_t root_ino;
	char cluster[160]; /* "ceph.conf path (mon host)": for messages */

	/* librados, for the allocated bytes of files (cephfs_used.c) */
	rados_t rados;
	bool rados_ok;
	pthread_mutex_t rados_lock; /* the I/O contexts below */
	int64_t pool_id[4]; /* data pools seen, with their contexts */
	rados_ioctx_t pool_io[4];
	size_t npools;

	/* The object cache: ino -> object with a reference; FIFO eviction. */
	pthread_mutex_t cache_lock;
	struct cephfs_obj *buckets[STORE_CEPHFS_CACHE_BUCKETS];
	struct cephfs_obj *fifo_head, *fifo_tail;
	size_t cached;

	struct store_cephfs_health health;
	/* The mount's admin socket, "" when it has none (cephfs_asok.c). */
	char asok[sizeof(((struct sockaddr_un *)0)->sun_path)];
	/* Its MDS session's name, "" when unnamed, and the next store of
	 * this process with a named session (cephfs_reclaim.c). */
	char session[384];
	struct store_cephfs *named_next;
	/* NULL, or the ask of the admin socket while it runs, and the asks
	 * given up waiting for (cephfs_evict.c): the monitor thread's
	 * alone. */
	struct cephfs_ask *ask;
	unsigned asks_abandoned;
	struct cephfs_statfs statfs;
	/* NULL, or the readahead of files read in order
	 * (cephfs_prefetch.c): started before serving, stopped first. */
	struct cephfs_prefetch *prefetch;
	/* NULL, or the RADOS intent log of its stable writes
	 * (cephfs_rlog.h): set before serving, closed first. */
	struct store_rlog *rlog;
};

/* A ceph_ll_fsync of a file in progress (cephfs_obj.c, on its caller's
 * stack). */
struct cephfs_fsync {
	uint64_t since_ns;
	struct cephfs_fsync *next;
};

/* One resolved inode: the head every backend shares (store_obj.h: its
 * reference count and handle), then what this backend keeps. */
struct cephfs_obj {
	struct store_obj base;
	struct store_cephfs *sc;
	Inode *in; /* one ll reference, put by the last unref */
	uint64_t ino;
	/* CEPH_NOSNAP for the live tree; else the CephFS snapshot it is in
	 * (CEPH_SNAPDIR for a .snap directory): read-only, its handle
	 * carries the snapid too (cephfs_obj.c). */
	uint64_t snapid;
	enum store_ftype type;
	/* The open file of a regular file's I/O, made on first use under
	 * @lock, closed by the last unref. */
	pthread_mutex_t lock;
	struct Fh *io;
	struct store_syncgroup sync;
	/* The file's fsyncs in progress (changed under @lock, looked at
	 * without it first: NULL is the common case); writes held back by
	 * one that has waited its share wait on @fsync_done
	 * (store__cephfs_write_fair). */
	struct cephfs_fsync *_Atomic fsyncs;
	pthread_cond_t fsync_done;
	/* cephfs_used.c's, under @lock: which of the file's RADOS objects
	 * exist (a bit each), measured on first need and kept up to date by
	 * this gateway's writes; forgotten by a size change. */
	bool used_known;
	uint8_t *used_bits;
	uint64_t used_nbits; /* objects the bitmap covers */
	uint64_t used_objects; /* bits set */
	uint32_t object_bytes; /* the file's layout object size */
	/* The RADOS intent log's (cephfs_rlog.h; a file's order and newest
	 * record are its inode's, kept by the log): on the log's dirty list
	 * (a reference), under its lock. */
	bool rlog_dirty;
	struct cephfs_obj *rlog_next;
	/* cephfs_prefetch.c's, under its lock: the reads' run, and the
	 * prefetch queue's link */
	struct store_ra ra;
	struct cephfs_obj *ra_next;
	/* cephfs_obj.c's cache, under sc->cache_lock */
	bool cached;
	struct cephfs_obj *hash_next;
	struct cephfs_obj *fifo_next;
};

static inline struct store_cephfs *store__cephfs(struct store *st)
{
	return container_of(st, struct store_cephfs, base);
}

/* The cephfs object whose head @o is (NULL for NULL). */
static inline struct cephfs_obj *store__cephfs_obj(struct store_obj *o)
{
	return o ? container_of(o, struct cephfs_obj, base) : NULL;
}

/* The head of @o that the ops hand out (NULL for NULL). */
static inline struct store_obj *store__cephfs_pub(struct cephfs_obj *o)
{
	return o ? &o->base : NULL;
}

/* Maps a ceph error (negative errno, sometimes a positive one) to ours.
 * A lost cluster's errors stay as they are: the guard
 * (store__cephfs_call_leave) marks the store down and answers -EAGAIN
 * (NFS3ERR_JUKEBOX) for them. */
static inline int store__cephfs_err(int rc)
{
	return rc > 0 ? -rc : rc;
}

/* ---- health (cephfs_health.c) and the guarded ops (cephfs_guard.c) ---- */

/*
 * Loads the handle key of @sc's datastore from @state_dir (making it on
 * the directory's first start) and checks it is the directory's; adopts a
 * version-1 secret (cephfs_key.c).  Returns 0 or -errno, the reason in
 * @errbuf.
 */
int store__cephfs_key_load(struct store_cephfs *sc, Inode *root,
			   const char *state_dir, char *errbuf, size_t errlen);

/*
 * Starts the monitor of @sc's cluster, with at most @cap calls in
 * libcephfs at once (1 to STORE_CEPHFS_CALLS_MAX).  After the mount and
 * the root object: the monitor probes through them.  Returns 0 or -errno.
 */
int store__cephfs_health_start(struct store_cephfs *sc, unsigned cap);
/* Stops the monitor (waits for a probe in flight); before the unmount. */
void store__cephfs_health_stop(struct store_cephfs *sc);
/* True, counted as refused, while the store is marked down: its calls
 * answer -EAGAIN at once, touching nothing of the cluster. */
bool store__cephfs_refused_down(struct store_cephfs *sc);
/* Before a call into libcephfs: 0 with *slot taken, or -EAGAIN (down, or
 * at the cap while the calls in it do not move). */
int store__cephfs_call_enter(struct store_cephfs *sc, unsigned *slot);
/* After it, with its result @rc: gives @slot back, marks the store down
 * on a connection error.  Returns @rc, or -EAGAIN for such an error. */
int store__cephfs_call_leave(struct store_cephfs *sc, unsigned slot, int rc);
/*
 * Another gateway took @sc's datastore over and fenced this one (@why):
 * the store answers -EAGAIN for good and is never mounted anew by itself;
 * logged once (cephfs_fence.c).  Lock-free: callable under any lock.
 */
void store__cephfs_fenced(struct store_cephfs *sc, const char *why);
/*
 * After an eviction of @rl's store: reads the log's header with the log's
 * own librados client, a step per call (never waits).  1: another gateway
 * took the log over (that client is blocklisted, or the header names
 * other clients); 0: the log is still ours (the MDS alone evicted the
 * mount); -EINPROGRESS: ask again; another -errno: the read failed, ask
 * again.
 */
int store__cephfs_rlog_fence_poll(struct store_rlog *rl);
/* ---- readahead (cephfs_prefetch.c) ---- */

/* Starts @sc's prefetch threads, keeping runs read @ahead_bytes ahead;
 * 0: none.  Before serving.  Returns 0 or -errno. */
int store__cephfs_prefetch_start(struct store_cephfs *sc, uint64_t ahead_bytes);
/* Stops them (waits for reads in flight); after the last READ. */
void store__cephfs_prefetch_stop(struct store_cephfs *sc);
/* What the prefetch did, since the store opened. */
struct store_cephfs_prefetch_stats {
	uint64_t reads; /* pieces read ahead */
	uint64_t bytes;
	uint64_t runs_stopped; /* reads read ahead were no faster */
};
void store__cephfs_prefetch_stats(struct store_cephfs *sc,
				  struct store_cephfs_prefetch_stats *out);
/* A READ of @n bytes at @off of @o took @took_ns: may queue a prefetch. */
void store__cephfs_prefetch_note(struct cephfs_obj *o, uint64_t off, uint32_t n,
				 uint64_t took_ns);

/* CLOCK_MONOTONIC now, in ns: inline, for the health monitor, the
 * readahead and the fsync fairness alike. */
static inline uint64_t store__cephfs_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
/* True for the errors of a cluster that is not there (not of a file). */
bool store__cephfs_conn_err(int rc);
/* The ops table: each op through call_enter/_leave. */
extern const struct store_ops store__cephfs_ops;
/* The ops that never reach the cluster (cephfs.c). */
void store__cephfs_obj_fh(const struct store_obj *obj, struct store_fh *fh);
int store__cephfs_root(struct store *st, struct store_obj **out);
void store__cephfs_close(struct store *st);

/* ---- objects (cephfs_obj.c) -------------------------------------------- */

/*
 * The object of inode @in (takes its ll reference on every path) with
 * statx @stx, from the cache or new.  *out returns owned.  Returns 0 or
 * -ENOMEM.
 */
int store__cephfs_obj_get(struct store_cephfs *sc, Inode *in,
			  const struct ceph_statx *stx,
			  struct cephfs_obj **out);
void store__cephfs_obj_ref(struct store_obj *obj);
void store__cephfs_obj_unref(struct store_obj *obj);
/* True for the live root (a snapshot's root has the same inode). */
static inline bool store__cephfs_is_root(const struct store_cephfs *sc,
					 const struct cephfs_obj *o)
{
	return o->ino == sc->root_ino && o->snapid == CEPH_NOSNAP;
}

/* The cached object of @ino in snapshot @snapid (CEPH_NOSNAP: live) with
 * a new reference, or NULL.  Under sc->cache_lock. */
struct cephfs_obj *store__cephfs_cache_find(struct store_cephfs *sc,
					    uint64_t ino, uint64_t snapid);
/* Forgets the cached live object of inode @ino, if any (removed names). */
void store__cephfs_cache_drop(struct store_cephfs *sc, uint64_t ino);
/* Drops every cached object (close). */
void store__cephfs_cache_clear(struct store_cephfs *sc);
/* ceph_ll_write of all @count bytes of @buf at @off_bytes of @fh: 0 or
 * -errno (-EIO for a write that moves nothing). */
int store__cephfs_write_all(struct store_cephfs *sc, struct Fh *fh,
			    uint64_t off_bytes, const void *buf,
			    uint32_t count);

/* The open file of regular file @o for I/O (borrowed while @o is held):
 * -EISDIR / -EINVAL for a directory / another type, or the open's
 * -errno. */
int store__cephfs_obj_io(struct cephfs_obj *o, struct Fh **out);

/* ---- handles back to objects (cephfs_resolve.c) ------------------------ */

/* ops->resolve and ops->resolve_attr. */
int store__cephfs_resolve(struct store *st, const struct store_fh *fh,
			  struct store_obj **out);
int store__cephfs_resolve_attr(struct store *st, const struct store_fh *fh,
			       struct store_obj **out, struct store_attr *attr);

/* ---- attributes (cephfs_attr.c) ---------------------------------------- */

void store__cephfs_attr_from_statx(const struct store_cephfs *sc,
				   struct cephfs_obj *o,
				   const struct ceph_statx *stx,
				   struct store_attr *attr);
int store__cephfs_getattr(struct store *st, struct store_obj *obj,
			  struct store_attr *attr);
int store__cephfs_setattr(struct store *st, struct store_obj *obj,
			  const struct store_sattr *sattr,
			  const struct store_cred *cred);
/*
 * After a ceph_ll_sync_inode or ceph_ll_fsync of @o that returned 0:
 * whether the session it waited on still stands.  libcephfs returns 0
 * too when that session was torn down (this client blocklisted: the
 * caps it was flushing are dropped, a new size or mtime with them, and
 * the waiter woken; docs/ceph-rlog.md, "A SETATTR fenced in its sync").
 * 0, or -ESHUTDOWN (Ceph's EBLOCKLISTED) or another -errno: what was
 * synced may be lost.
 */
int store__cephfs_sync_confirm(struct store_cephfs *sc, struct cephfs_obj *o);
/*
 * store_sync_fn on @arg, a regular file's cephfs_obj with its open file:
 * ceph_ll_fsync (data only for STORE_DATA_SYNC), confirmed as above.
 * Every fsync of the backend goes through it (COMMIT and stable writes,
 * the RADOS log's checkpoints and its replay), over one sync group.
 */
int store__cephfs_sync_fh(void *arg, enum store_stable level);
/*
 * Before a write of @o into libcephfs's cache: waits while an fsync of
 * @o has been in progress STORE_CEPHFS_FSYNC_FAIR_MS or more, until that
 * one returns.  With writes of the file flowing, Pacific's ceph_ll_fsync
 * returned only once they stopped: 5 s and more, past
 * STORE_CEPHFS_BOUND_MS, so a healthy cluster was marked down (docs/ceph.md,
 * "A COMMIT starved by writes").  Holding every write back through every
 * fsync cost a quarter of the writes (0.76x nfs-ganesha at 8 KiB random,
 * 0.90x at 64 KiB sequential); 50 ms gave 1.21-1.33x and 1.04-1.17x, 200
 * ms 1.41x and 1.19x for half the COMMITs answered.  RFC 1813 lets the
 * writes wait: a COMMIT or a stable write covers the writes before it.
 */
#define STORE_CEPHFS_FSYNC_FAIR_MS 50
void store__cephfs_write_fair(struct cephfs_obj *o);
/* Applies @sattr to @o (SETATTR, and the attributes of a new object). */
int store__cephfs_sattr_apply(struct store_cephfs *sc, struct cephfs_obj *o,
			      const struct store_sattr *sattr);
int store__cephfs_readlink(struct store *st, struct store_obj *obj, char *buf,
			   size_t buflen, size_t *len);

/* ---- FSSTAT (cephfs_statfs.c) ------------------------------------------ */

void store__cephfs_statfs_init(struct cephfs_statfs *sf);
void store__cephfs_statfs_destroy(struct cephfs_statfs *sf);
/* ops->fsstat, not through the guard: the mon's wait marks nothing down;
 * while one thread asks it, the others get its last answer. */
int store__cephfs_fsstat(struct store *st, struct store_fsstat *fs);

/* ---- I/O (cephfs_io.c) ------------------------------------------------- */

int store__cephfs_read(struct store *st, struct store_obj *obj,
		       uint64_t off_bytes, void *buf, uint32_t count,
		       uint32_t *nread, bool *eof);
/* ops->read_sized: eof from the caller's @size_bytes, no getattr. */
int store__cephfs_read_sized(struct store *st, struct store_obj *obj,
			     uint64_t size_bytes, uint64_t off_bytes, void *buf,
			     uint32_t count, uint32_t *nread, bool *eof);
int store__cephfs_write(struct store *st, struct store_obj *obj,
			uint64_t off_bytes, const void *buf, uint32_t count,
			enum store_stable stable, bool *sync_failed);
int store__cephfs_commit(struct store *st, struct store_obj *obj,
			 uint64_t off_bytes, uint32_t count, bool *sync_failed);

/* ---- namespace (cephfs_ns.c) and READDIR (cephfs_dir.c) --------------- */

int store__cephfs_lookup(struct store *st, struct store_obj *dir,
			 const char *name, struct store_obj **out);
int store__cephfs_create(struct store *st, struct store_obj *dir,
			 const char *name, enum store_create_how how,
			 const struct store_sattr *sattr, const uint8_t verf[8],
			 const struct store_cred *cred, struct store_obj **out);
int store__cephfs_mkdir(struct store *st, struct store_obj *dir,
			const char *name, const struct store_sattr *sattr,
			const struct store_cred *cred, struct store_obj **out);
int store__cephfs_symlink(struct store *st, struct store_obj *dir,
			  const char *name, const char *target,
			  const struct store_sattr *sattr,
			  const struct store_cred *cred,
			  struct store_obj **out);
int store__cephfs_mknod(struct store *st, struct store_obj *dir,
			const char *name, enum store_ftype type,
			uint32_t rdev_major, uint32_t rdev_minor,
			const struct store_sattr *sattr,
			const struct store_cred *cred, struct store_obj **out);
int store__cephfs_remove(struct store *st, struct store_obj *dir,
			 const char *name);
int store__cephfs_rmdir(struct store *st, struct store_obj *dir,
			const char *name);
int store__cephfs_rename(struct store *st, struct store_obj *from_dir,
			 const char *from_name, struct store_obj *to_dir,
			 const char *to_name);
int store__cephfs_link(struct store *st, struct store_obj *obj,
		       struct store_obj *dir, const char *name);
int store__cephfs_readdir(struct store *st, struct store_obj *dir,
			  uint64_t cookie, store_readdir_fn cb, void *arg);

/* ---- allocated bytes (cephfs_used.c) ----------------------------------- */

/* Connects librados with @conf as @user (for counting objects); false
 * when it cannot (used bytes then fall back to the size). */
bool store__cephfs_rados_open(struct store_cephfs *sc, const char *conf,
			      const char *user);
/* The largest file its CephFS (@fs_name, or the default one) takes
 * (mdsmap max_file_size), read from the monitors; CephFS's default 1 TiB
 * when they do not say (cephfs_limits.c). */
uint64_t store__cephfs_max_file_bytes(struct store_cephfs *sc,
				      const char *fs_name);
/* ---- evictions the cluster does not blocklist (cephfs_evict.c) -------- */

/* Says in the log when the cluster evicts without blocklisting. */
void store__cephfs_evict_cfg_check(struct store_cephfs *sc);
/* Whether this mount's session with the MDS of rank 0 is still its own:
 * 1, 0 (libcephfs says it is stale: the MDS evicted it), -EINPROGRESS
 * while its admin socket is asked (it never waits), or another -errno
 * when it cannot say (no admin socket, no session with rank 0 now, an ask
 * that did not come back). */
int store__cephfs_session_listed(struct store_cephfs *sc);
/* Tells this mount, through its admin socket, to drop its stale MDS
 * sessions (`kick_stale_sessions`: their caps go, and the calls waiting
 * for them are woken): 0 once it answered, -EINPROGRESS while it is told
 * (it never waits), or another -errno (no admin socket, an ask that did
 * not come back). */
int store__cephfs_kick_stale(struct store_cephfs *sc);
/* What libcephfs's `mds_sessions` JSON @json says of the session with
 * rank 0 of client @id: 1 not stale, 0 stale, -ENOENT no such session,
 * -ESTALE another client's answer, -EINVAL not that JSON. */
int store__cephfs_session_state(const char *json, size_t len, uint64_t id);
/* ---- the mount's session name (cephfs_reclaim.c) ---------------------- */

/* The name of the session of datastore @name: after its RADOS log's
 * @gateway when it has one (a gateway that takes over a dead one's log
 * takes its name), else after the run whose state directory is
 * @state_dir (absolute) on @host; in @out: 0 or -ENAMETOOLONG. */
int store__cephfs_session_uuid(const char *host, const char *state_dir,
			       const char *gateway, const char *name, char *out,
			       size_t outlen);
/* Between ceph_init and ceph_mount: resets the MDS session this gateway's
 * previous run of the datastore left, if any, and names @cm's with the
 * same name (in @sc->session).  Nothing without @state_dir, or when a
 * live store of this process has that name. */
void store__cephfs_reclaim(struct store_cephfs *sc, struct ceph_mount_info *cm,
			   const char *state_dir, const char *gateway);
/* Lets go of @sc's session name (its mount is released). */
void store__cephfs_unname(struct store_cephfs *sc);
/* ---- the mount's admin socket (cephfs_asok.c) ------------------------ */

/* Names @sc's admin socket, STATE_DIR/ceph-NAME-N.asok (N counts this
 * process's mounts: the old mount of a store opened again may still hold
 * its own), in @sc->asok and in @cm's options, before ceph_init; none
 * ("") without @state_dir or when the path is too long for a socket. */
int store__cephfs_asok_set(struct store_cephfs *sc, struct ceph_mount_info *cm,
			   const char *state_dir);
/* Admin-socket command @cmd (JSON) to the socket @path -> its answer,
 * malloc'd and NUL-terminated, in *@out; 0 or -errno (each step waits
 * STORE_CEPHFS_ASOK_WAIT_S at most). */
int store__cephfs_asok_command(const char *path, const char *cmd, char **out,
			       size_t *out_len);
/* Blocklists, for @secs, every address of the list @addrs ("[v2:a/n,v1:a/n]"
 * or "a/n"); on an error, the address refused is in @bad. */
int store__cephfs_blocklist(rados_t rados, const char *addrs, unsigned secs,
			    char *bad, size_t badlen);
/* Blocklists this mount's own client (through the backend's librados). */
int store__cephfs_blocklist_self(struct store_cephfs *sc);
/* Lets go of the ask in flight, if any (after the monitor). */
void store__cephfs_ask_close(struct store_cephfs *sc);
void store__cephfs_rados_close(struct store_cephfs *sc);
/*
 * The bytes regular file @o holds in its data pool: the number of its
 * RADOS objects that exist times the object size (at most the size
 * rounded up to a 4 KiB block).  The objects are looked at once (one stat
 * per object the size spans), then this gateway's writes keep the count.
 * Directories and others, or without librados: st_blocks * 512.
 */
uint64_t store__cephfs_used_bytes(struct store_cephfs *sc, struct cephfs_obj *o,
				  const struct ceph_statx *stx);
/* A write of [@off_bytes, +@len) went to @o: its objects exist now. */
void store__cephfs_used_wrote(struct cephfs_obj *o, uint64_t off_bytes,
			      uint64_t len);
/* @o's size became @size_bytes through this gateway: the objects past
 * it are gone, a new tail is a hole (no stat needed). */
void store__cephfs_used_resized(struct cephfs_obj *o, uint64_t size_bytes);
/* Whether object @k of regular file @o (@size_bytes long) exists in its
 * data pool, measured as store__cephfs_used_bytes() does: 1, 0, or
 * -EOPNOTSUPP (no librados, not a regular file) or -errno; sets
 * *object_bytes to the layout's object size. */
int store__cephfs_used_object(struct store_cephfs *sc, struct cephfs_obj *o,
			      uint64_t size_bytes, uint64_t k,
			      uint32_t *object_bytes);

/* ---- storage-side operations (cephfs_tree.c, cephfs_snap.c) ----------- */

struct store_tree;
struct snap_stats;
int store__cephfs_tree_open(struct store *st, struct store_tree **out,
			    char *errbuf, size_t errlen);
extern const struct store_snap_ops store__cephfs_snap_ops;
/* store_snap_ops.changed (cephfs_snapread.c, store_snapread.h). */
struct store_range;
int store__cephfs_snap_changed(struct store *st, struct store_obj *cur,
			       struct store_obj *base, uint64_t size,
			       uint64_t base_size, struct store_range **out,
			       size_t *n);
/* store_snap_ops.restore (cephfs_restore.c); vmdk_progress_fn's type. */
int store__cephfs_snap_restore(struct store *st, const char *name,
			       struct snap_stats *out,
			       int (*progress)(void *arg, uint64_t done_bytes,
					       uint64_t total_bytes),
			       void *progress_arg, char *errbuf, size_t errlen);

#endif
