/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vmdk: VMware virtual disks.  Opens a disk by its descriptor (a text
 * `disk.vmdk`, or a monolithic sparse file with an embedded descriptor),
 * reads and writes it through its whole delta chain, creates thin, thick and
 * sparse disks, reports their allocation the way `vmkfstools -D` does
 * (nb / tbz), and clones, snapshots, consolidates, inflates, converts and
 * checks them.  Extents: FLAT and VMFS (flat files), SPARSE (hosted KDMV;
 * streamOptimized compressed grains read-only), VMFSSPARSE (ESX COWD redo
 * logs, read-only), SESPARSE (ESXi 6.5+ snapshot deltas, read-only) and
 * ZERO.
 *
 * The library depends on nothing else of dsnfs and never logs.  Every
 * function returns 0 or a negative errno; calls whose failure needs words
 * also fill @errbuf (may be NULL) with "file: field: what is wrong".  All
 * file I/O goes through a `struct vmdk_io` (NULL = plain POSIX calls), so a
 * test can substitute one that fails.  A `struct vmdk` is used by one thread
 * at a time.
 */
#ifndef DSNFS_VMDK_H
#define DSNFS_VMDK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#define VMDK_SECTOR_BYTES 512u
/* nb / tbz count blocks of this size, VMFS's default file block. */
#define VMDK_ALLOC_BLOCK_BYTES (1u << 20)

/* Sectors to bytes and back: the only place the 512 is applied. */
static inline uint64_t vmdk_sectors_to_bytes(uint64_t sectors)
{
	return sectors * VMDK_SECTOR_BYTES;
}

/* Whole sectors in @bytes (rounds down). */
static inline uint64_t vmdk_bytes_to_sectors(uint64_t bytes)
{
	return bytes / VMDK_SECTOR_BYTES;
}

/* ---- file I/O -------------------------------------------------------- */

/*
 * One call per system call; each returns 0 (or a byte count / new offset,
 * where noted) or a negative errno.  @ctx is vmdk_io.ctx.
 */
struct fiemap;
struct vmdk_io_ops {
	int (*open)(void *ctx, const char *path, int flags, mode_t mode,
		    int *fd_out);
	int (*close)(void *ctx, int fd);
	/* One pread(2): bytes read (0 at end of file). */
	ssize_t (*pread)(void *ctx, int fd, void *buf, size_t len,
			 uint64_t off);
	/* One pwrite(2): bytes written. */
	ssize_t (*pwrite)(void *ctx, int fd, const void *buf, size_t len,
			  uint64_t off);
	int (*fstat)(void *ctx, int fd, struct stat *st);
	int (*stat)(void *ctx, const char *path, struct stat *st);
	int (*ftruncate)(void *ctx, int fd, uint64_t len);
	int (*fallocate)(void *ctx, int fd, int mode, uint64_t off,
			 uint64_t len);
	int (*fsync)(void *ctx, int fd);
	/* FS_IOC_FIEMAP on @fm (borrowed). */
	int (*fiemap)(void *ctx, int fd, struct fiemap *fm);
	/* lseek(2) with SEEK_DATA / SEEK_HOLE: the new offset. */
	int64_t (*seek)(void *ctx, int fd, uint64_t off, int whence);
	/* One copy_file_range(2): bytes copied. */
	ssize_t (*copy_range)(void *ctx, int fd_in, uint64_t off_in, int fd_out,
			      uint64_t off_out, size_t len);
	/* FICLONE: make @fd_out share all blocks of @fd_in (reflink). */
	int (*clone_file)(void *ctx, int fd_in, int fd_out);
	int (*rename)(void *ctx, const char *from, const char *to);
	int (*unlink)(void *ctx, const char *path);
	int (*chmod)(void *ctx, const char *path, mode_t mode);
};

struct vmdk_io {
	const struct vmdk_io_ops *ops;
	void *ctx;
};

/* The plain POSIX implementation.  Returns a static object. */
const struct vmdk_io *vmdk_io_posix(void);

/*
 * An implementation confined to one directory tree (io_beneath.c): every
 * path must be @root followed by "/" and a relative path, and is resolved
 * from @root's descriptor with openat2(2) RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV, so neither "..", an absolute
 * name in a descriptor nor a symlink leads out of it (-EXDEV, -ELOOP).
 * A disk opened through it cannot name extents or parents outside.
 */
struct vmdk_io_beneath {
	struct vmdk_io io; /* pass &b->io */
	struct vmdk_io_ops ops; /* io.ops: the POSIX ones, paths beneath */
	char *root; /* owned; without a trailing slash */
	size_t root_len;
	int root_fd; /* owned */
};

/* Opens @root (borrowed; a directory; trusted: a symlink is followed).  Returns
 * 0 and fills @b (release: vmdk_io_beneath_fini()), or -errno. */
int vmdk_io_beneath_init(struct vmdk_io_beneath *b, const char *root);
void vmdk_io_beneath_fini(struct vmdk_io_beneath *b);

/* ---- types ------------------------------------------------------------ */

/*
 * Provisioning of a new disk.  THIN, ZEROEDTHICK and EAGERZEROEDTHICK make
 * the ESXi layout (`x.vmdk` descriptor + `x-flat.vmdk`); SPARSE makes one
 * hosted monolithicSparse file.
 */
enum vmdk_type {
	VMDK_TYPE_THIN, /* sparse flat file */
	VMDK_TYPE_ZEROEDTHICK, /* fallocated, to be zeroed */
	VMDK_TYPE_EAGERZEROEDTHICK, /* fallocated and zeroed */
	VMDK_TYPE_SPARSE, /* monolithicSparse (KDMV) */
};

/* "thin" ... "sparse" -> @out.  Returns 0 or -EINVAL. */
int vmdk_type_parse(const char *name, enum vmdk_type *out);
/* The name vmdk_type_parse() accepts.  Returns a static string. */
const char *vmdk_type_name(enum vmdk_type type);

/* ---- create, open, read, write ---------------------------------------- */

struct vmdk_create_opts {
	uint64_t size_bytes; /* rounded up to a sector */
	enum vmdk_type type;
	const char *adapter; /* ddb.adapterType; NULL = "lsilogic" */
};

/*
 * Creates a new disk at @path (which must end in ".vmdk"; no file is
 * overwritten: -EEXIST).  On failure removes what it created.  Time: THIN and
 * SPARSE are constant, ZEROEDTHICK is one fallocate, EAGERZEROEDTHICK writes
 * every byte.  Borrows everything.
 */
int vmdk_create(const struct vmdk_io *io, const char *path,
		const struct vmdk_create_opts *opts, char *errbuf,
		size_t errlen);

struct vmdk;

#define VMDK_OPEN_RDWR 0x1u
/* Write even when the descriptor's mode has no write bit (a parent). */
#define VMDK_OPEN_FORCE 0x2u

/*
 * Opens the disk at @path and its whole chain of parents (always
 * read-only).  Detects missing parents (-ENOENT), CID / parentCID and size
 * mismatches (-EINVAL), loops (-ELOOP) and chains deeper than
 * VMDK_MAX_CHAIN_DEPTH (-ELOOP).  With VMDK_OPEN_RDWR a descriptor whose
 * mode has no write bit (made read-only by snapshot / clone --linked) gives
 * -EROFS unless VMDK_OPEN_FORCE.  Borrows @io for the life of the disk.
 * On success *out is returned owned (vmdk_close()).
 */
int vmdk_open(const struct vmdk_io *io, const char *path, unsigned flags,
	      struct vmdk **out, char *errbuf, size_t errlen);

/* Closes @v and its parents.  Takes @v (NULL is fine). */
void vmdk_close(struct vmdk *v);

/* Logical size in bytes. */
uint64_t vmdk_size_bytes(const struct vmdk *v);

/*
 * Reads @len bytes at @off_bytes through the chain.  Returns 0, -EINVAL when
 * the range leaves the disk or metadata is corrupt, or an I/O error.
 */
int vmdk_pread(struct vmdk *v, void *buf, size_t len, uint64_t off_bytes);

/*
 * Writes @len bytes at @off_bytes; unwritten grains of a delta are first
 * copied from the parent (copy-on-write at grain size).  The first write
 * after open gives the disk a new CID.  Returns 0, -EROFS (opened
 * read-only, or a COWD, seSparse, compressed or ZERO extent), -ENOSPC, -EFBIG
 * (a sparse extent outgrew 2 TiB), -EINVAL or an I/O error.  A failed write may
 * leave a leaked grain, never a table entry pointing at unwritten data.
 */
int vmdk_pwrite(struct vmdk *v, const void *buf, size_t len,
		uint64_t off_bytes);

/* fsync()s every extent file of the top disk. */
int vmdk_flush(struct vmdk *v);

enum vmdk_block {
	VMDK_BLOCK_DATA, /* stored somewhere in the chain */
	VMDK_BLOCK_ZERO, /* reads as zeros, stored nowhere */
};

/*
 * Status of the run that starts at @off_bytes: *status and its length
 * *run_bytes (>= 1, <= @len_bytes).  Sparse-aware copies walk a disk with it.
 */
int vmdk_block_status(struct vmdk *v, uint64_t off_bytes, uint64_t len_bytes,
		      enum vmdk_block *status, uint64_t *run_bytes);

/* ---- inspection ------------------------------------------------------- */

/* Allocation of one file, read from the file system (FIEMAP). */
struct vmdk_alloc {
	uint64_t nb; /* 1 MiB blocks with any space allocated */
	uint64_t tbz; /* of those, blocks never written */
	uint64_t allocated_bytes; /* st_blocks * 512 */
	uint64_t file_bytes; /* st_size */
	/* Bytes of extents the file system says another file shares too
	 * (FIEMAP_EXTENT_SHARED: reflink copies, snapshots). */
	uint64_t shared_bytes;
};

/*
 * Fills @a for the file open as @fd.  Returns 0, -EOPNOTSUPP when the file
 * system has no FIEMAP, or an I/O error.
 */
int vmdk_alloc_get(const struct vmdk_io *io, int fd, struct vmdk_alloc *a);

struct vmdk_info {
	const char *path; /* borrowed from @v */
	const char *create_type; /* borrowed from @v */
	const char *provisioning; /* thin, zeroedthick, ... (static) */
	const char *adapter; /* borrowed; "" when absent */
	const char *parent_hint; /* borrowed; NULL for a base disk */
	uint32_t cid;
	uint32_t parent_cid;
	uint64_t size_bytes;
	uint32_t cylinders, heads, sectors; /* 0 when absent */
	unsigned n_extents;
	unsigned depth; /* 0 for the disk opened, 1 its parent, ... */
	struct vmdk_alloc alloc; /* sum over the extent files */
};

/* The parent of @v, borrowed; NULL for a base disk. */
const struct vmdk *vmdk_parent(const struct vmdk *v);

/*
 * Describes @v alone (not its parents).  Returns 0, -EOPNOTSUPP when the
 * file system has no FIEMAP (all else filled, nb and tbz 0), or an I/O
 * error.
 */
int vmdk_info_get(const struct vmdk *v, struct vmdk_info *info);

struct vmdk_extent_info {
	const char *access; /* RW, RDONLY, NOACCESS (static) */
	const char *type; /* FLAT, VMFS, SPARSE, VMFSSPARSE, SESPARSE, ZERO */
	const char *file; /* borrowed; NULL for ZERO */
	uint64_t size_bytes;
	uint64_t grain_bytes; /* 0 for flat and zero extents */
	struct vmdk_alloc alloc;
};

/* Describes extent @i (< n_extents) of @v.  Returns 0, -ERANGE or -errno. */
int vmdk_extent_info_get(const struct vmdk *v, unsigned i,
			 struct vmdk_extent_info *info);

/* ---- whole-disk operations --------------------------------------------- */

/*
 * Progress of a long operation: @done_bytes of @total_bytes walked (the
 * disk's logical size).  Called from the thread that runs the operation,
 * between copy calls; a non-zero return (a negative errno, -ECANCELED)
 * stops the operation, which then fails with it and removes what it made.
 */
typedef int (*vmdk_progress_fn)(void *arg, uint64_t done_bytes,
				uint64_t total_bytes);

/*
 * Full clone: an independent copy of @src read through its chain, written as
 * @type (keep_type: the type of the source's base).  Only stored data is
 * copied (time follows used space, not size), with FICLONE or
 * copy_file_range() when the file system offers them.  @zero_detect also
 * drops written blocks that hold only zeros (vmkfstools -i ... -d thin).
 */
struct vmdk_clone_opts {
	bool keep_type;
	enum vmdk_type type;
	bool zero_detect;
	/* Never FICLONE the whole file: a storage-side copy, run by
	 * copy_file_range() (which a reflink file system may still serve by
	 * sharing extents: the kernel's choice). */
	bool no_reflink;
	vmdk_progress_fn progress; /* may be NULL */
	void *progress_arg;
};

/* Statistics of a full clone, convert or consolidate. */
struct vmdk_copy_stats {
	uint64_t copied_bytes; /* data read from the source and written */
	uint64_t offload_bytes; /* of those, moved by the kernel */
	uint64_t skipped_bytes; /* zero runs never read */
};

int vmdk_clone_full(const struct vmdk_io *io, const char *src, const char *dst,
		    const struct vmdk_clone_opts *opts,
		    struct vmdk_copy_stats *stats, char *errbuf, size_t errlen);

/*
 * Linked clone: a new monolithicSparse delta @dst whose parent is @src;
 * @src is then made read-only (mode a-w).  Constant time.
 */
int vmdk_clone_linked(const struct vmdk_io *io, const char *src,
		      const char *dst, char *errbuf, size_t errlen);

/*
 * Native clone: the file system's own copy on write.  @src must be a flat
 * disk without a parent (descriptor + flat extents, as ESXi makes them);
 * each extent is FICLONEd (XFS with reflink=1, btrfs), so the clone costs
 * no data copy and shares every block until one side writes it.  Where
 * the file system cannot share blocks, returns -EOPNOTSUPP with the reason
 * and leaves nothing behind: never a silent copy.  A delta or sparse
 * source is -EINVAL.  The clone keeps the source's provisioning.
 */
int vmdk_clone_native(const struct vmdk_io *io, const char *src,
		      const char *dst, char *errbuf, size_t errlen);

/*
 * Reserve space (VAAI-NAS Reserve Space): allocates every flat extent of
 * the disk at @path whole (fallocate), making a thin disk zeroedthick;
 * with @eager also writes zeros into every block not yet written
 * (eagerzeroedthick, as vmdk_inflate()).  @progress (may be NULL) is
 * called while zeroing.  ddb.thinProvisioned is removed.  Returns 0,
 * -EINVAL for a delta or sparse disk, -ENOSPC, or an I/O error; a failed
 * reservation leaves what it allocated (the disk stays valid).
 */
int vmdk_reserve(const struct vmdk_io *io, const char *path, bool eager,
		 vmdk_progress_fn progress, void *progress_arg, char *errbuf,
		 size_t errlen);

/*
 * Snapshot: like a linked clone, named after @path: "<base>-000001.vmdk"
 * (the next free number).  The name is written to @child (@child_len
 * bytes).
 */
int vmdk_snapshot(const struct vmdk_io *io, const char *path, char *child,
		  size_t child_len, char *errbuf, size_t errlen);

/*
 * Consolidate: writes every grain stored in the delta @path into its parent,
 * then removes the delta's files and gives the parent its write bit back.
 * Other children of that parent stop opening (their parentCID no longer
 * matches).
 */
int vmdk_consolidate(const struct vmdk_io *io, const char *path,
		     struct vmdk_copy_stats *stats, char *errbuf,
		     size_t errlen);

/*
 * Inflate a flat disk in place to eagerzeroedthick: every hole and every
 * unwritten extent is written with zeros (vmkfstools --inflatedisk).
 */
int vmdk_inflate(const struct vmdk_io *io, const char *path, char *errbuf,
		 size_t errlen);

/* vmdk_inflate() calling @progress (may be NULL) while it zeros; its
 * error stops the inflate (what was zeroed stays: the disk is valid). */
int vmdk_inflate_progress(const struct vmdk_io *io, const char *path,
			  vmdk_progress_fn progress, void *progress_arg,
			  char *errbuf, size_t errlen);

/* Result of vmdk_check(). */
struct vmdk_check_report {
	unsigned links; /* disks in the chain checked */
	unsigned errors; /* problems found */
	unsigned warnings; /* redundant copies lagging the primary */
	uint64_t allocated_grains; /* grains the tables point at */
	uint64_t leaked_bytes; /* file space no table points at */
};

typedef void (*vmdk_check_problem_fn)(void *arg, const char *msg);

/*
 * Checks the structure of @path and its chain: descriptors, headers, grain
 * directories (and their redundant copies), every grain table entry (inside
 * the file, outside metadata, no two grains overlapping), extent file
 * sizes, CIDs.  Each problem goes to @cb (may be NULL) as one message naming
 * the file and the field ("warning: " first for a redundant table that lags
 * its primary, as a crash leaves it), and is counted in @rep.  Returns 0 when
 * the check ran (rep->errors == 0: no problem; an I/O error on the way is
 * one more problem), or -errno when it could not start (@path missing, out
 * of memory; @cb is not called then).
 */
int vmdk_check(const struct vmdk_io *io, const char *path,
	       vmdk_check_problem_fn cb, void *arg,
	       struct vmdk_check_report *rep, char *errbuf, size_t errlen);

#endif
