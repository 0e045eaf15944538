/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vmdk_int.h: declarations shared inside vmdk/ only.  The descriptor model
 * (descriptor.c), the grain map common to KDMV and COWD extents (grain.c),
 * the extent and disk objects (chain.c), and the helpers every file uses:
 * the errbuf convention (err.c), paths (path.c) and file I/O (io.c).
 */
#ifndef DSNFS_VMDK_INT_H
#define DSNFS_VMDK_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "nfsd/base/base.h"
#include "vmdk/format.h"
#include "vmdk/vmdk.h"

/* @a / @b rounded up (@b > 0): the sectors @a bytes take, the tables @a
 * grains need. */
static inline uint64_t vmdk__div_round_up(uint64_t a, uint64_t b)
{
	return a / b + (a % b != 0);
}

/* ---- err.c ------------------------------------------------------------- */

/* Formats into @errbuf (may be NULL) and returns @err, for `return` chains. */
int vmdk__errf(char *errbuf, size_t errlen, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Prefixes the message already in @errbuf with "@prefix: ". Returns @err. */
int vmdk__err_prefix(char *errbuf, size_t errlen, int err, const char *prefix);

/* ---- path.c ------------------------------------------------------------ */

/* Directory part of @path ("." when none).  Returns owned or NULL. */
char *vmdk__path_dir(const char *path);
/* Last component of @path.  Borrows: points into @path. */
const char *vmdk__path_base(const char *path);
/* @name if absolute, else @dir/@name.  Returns owned or NULL. */
char *vmdk__path_join(const char *dir, const char *name);
/* @path without its ".vmdk" suffix.  Returns owned, NULL if no suffix. */
char *vmdk__path_stem(const char *path);
/*
 * How a descriptor in directory @from_dir names @target: its base name when
 * both share a directory, else a path relative to @from_dir ("../a/b"),
 * never the server's absolute one.  Returns owned.
 */
char *vmdk__path_hint(const char *from_dir, const char *target);

/* ---- io.c -------------------------------------------------------------- */

/* Opens @path with O_NONBLOCK added; anything but a regular file is
 * refused (-EINVAL, "not a regular file: PATH (a FIFO)" in @errbuf, which
 * may be NULL), as is every open error ("PATH: reason"). */
int vmdk__io_open(const struct vmdk_io *io, const char *path, int flags,
		  mode_t mode, int *fd_out, char *errbuf, size_t errlen);
void vmdk__io_close(const struct vmdk_io *io, int fd);
/* Reads until @len or end of file; *done = bytes read. */
int vmdk__io_read_full(const struct vmdk_io *io, int fd, void *buf, size_t len,
		       uint64_t off, size_t *done);
/* Reads @len bytes; bytes past end of file read as zeros. */
int vmdk__io_read_zfill(const struct vmdk_io *io, int fd, void *buf, size_t len,
			uint64_t off);
/* Writes all @len bytes (loops on short writes). */
int vmdk__io_write_full(const struct vmdk_io *io, int fd, const void *buf,
			size_t len, uint64_t off);
int vmdk__io_fstat(const struct vmdk_io *io, int fd, struct stat *st);
int vmdk__io_stat(const struct vmdk_io *io, const char *path, struct stat *st);
int vmdk__io_ftruncate(const struct vmdk_io *io, int fd, uint64_t len);
int vmdk__io_fallocate(const struct vmdk_io *io, int fd, int mode, uint64_t off,
		       uint64_t len);
int vmdk__io_fsync(const struct vmdk_io *io, int fd);
int vmdk__io_fiemap(const struct vmdk_io *io, int fd, struct fiemap *fm);
int64_t vmdk__io_seek(const struct vmdk_io *io, int fd, uint64_t off,
		      int whence);
ssize_t vmdk__io_copy_range(const struct vmdk_io *io, int fd_in,
			    uint64_t off_in, int fd_out, uint64_t off_out,
			    size_t len);
int vmdk__io_clone_file(const struct vmdk_io *io, int fd_in, int fd_out);
int vmdk__io_rename(const struct vmdk_io *io, const char *from, const char *to);
int vmdk__io_unlink(const struct vmdk_io *io, const char *path);
int vmdk__io_chmod(const struct vmdk_io *io, const char *path, mode_t mode);
/* Writes @len bytes to a new file @path (O_EXCL), fsync()ed. */
int vmdk__io_write_new_file(const struct vmdk_io *io, const char *path,
			    const void *buf, size_t len, mode_t mode);
/* Replaces @path atomically (write "@path.tmp", fsync, rename). */
int vmdk__io_replace_file(const struct vmdk_io *io, const char *path,
			  const void *buf, size_t len);

/* ---- descriptor.c ------------------------------------------------------ */

enum vmdk_access {
	VMDK_ACCESS_RW,
	VMDK_ACCESS_RDONLY,
	VMDK_ACCESS_NOACCESS,
};

enum vmdk_extent_type {
	VMDK_EXTENT_FLAT,
	VMDK_EXTENT_VMFS,
	VMDK_EXTENT_SPARSE,
	VMDK_EXTENT_VMFSSPARSE,
	VMDK_EXTENT_SESPARSE,
	VMDK_EXTENT_ZERO,
};

/* A delta format this library reads but never writes (COWD, seSparse). */
static inline bool vmdk__extent_type_read_only(enum vmdk_extent_type t)
{
	return t == VMDK_EXTENT_VMFSSPARSE || t == VMDK_EXTENT_SESPARSE;
}

#define VMDK_CID_NONE 0xffffffffu

struct vmdk_desc_extent {
	enum vmdk_access access;
	uint64_t len_sectors;
	enum vmdk_extent_type type;
	char *file; /* owned; NULL for ZERO */
	uint64_t offset_sectors; /* FLAT / VMFS only */
};

struct vmdk_kv {
	char *key; /* owned */
	char *value; /* owned, without quotes */
	bool quoted;
};

/*
 * A parsed descriptor.  keys[] keeps every header line in file order
 * (version, CID, createType, and those we do not know) so that a rewrite
 * keeps them; ddb[] the ddb.* lines.
 */
struct vmdk_descriptor {
	struct vmdk_kv *keys;
	size_t n_keys;
	struct vmdk_desc_extent *extents;
	size_t n_extents;
	struct vmdk_kv *ddb;
	size_t n_ddb;
	uint32_t version;
	uint32_t cid;
	uint32_t parent_cid;
	uint64_t size_sectors; /* sum of the extents */
};

/*
 * Parses @len bytes of descriptor text (stops at the first NUL: embedded
 * descriptors are padded).  Validates the grammar, version, CIDs, createType,
 * extent lines and the caps of format.h.  Errors name the line.  On success
 * @d is returned owned (vmdk__descriptor_fini()); on failure it is empty.
 */
int vmdk__descriptor_parse(const char *text, size_t len,
			   struct vmdk_descriptor *d, char *errbuf,
			   size_t errlen);

/* A new descriptor: version=1, a random CID, no parent, @create_type. */
int vmdk__descriptor_init(struct vmdk_descriptor *d, const char *create_type);

void vmdk__descriptor_fini(struct vmdk_descriptor *d);

/* Value of header key or ddb.* key @key, borrowed; NULL when absent. */
const char *vmdk__descriptor_get(const struct vmdk_descriptor *d,
				 const char *key);

/* Removes header key or ddb.* key @key (absent is fine). */
void vmdk__descriptor_unset(struct vmdk_descriptor *d, const char *key);

/* Sets (or adds) header key or ddb.* key @key.  Borrows the strings. */
int vmdk__descriptor_set(struct vmdk_descriptor *d, const char *key,
			 const char *value);

void vmdk__descriptor_set_cid(struct vmdk_descriptor *d, uint32_t cid);

/* Sets parentCID and parentFileNameHint (@hint NULL: none). */
int vmdk__descriptor_set_parent(struct vmdk_descriptor *d, uint32_t cid,
				const char *hint);

/* Appends an extent line.  Borrows @file. */
int vmdk__descriptor_add_extent(struct vmdk_descriptor *d,
				enum vmdk_access access, uint64_t len_sectors,
				enum vmdk_extent_type type, const char *file,
				uint64_t offset_sectors);

/* Sets ddb.geometry.* and ddb.adapterType for @size_sectors. */
int vmdk__descriptor_set_geometry(struct vmdk_descriptor *d,
				  uint64_t size_sectors, const char *adapter);

/*
 * The text of @d.  *text is returned owned (NUL-terminated), *len excludes
 * the NUL.
 */
int vmdk__descriptor_format(const struct vmdk_descriptor *d, char **text,
			    size_t *len);

/* Names as written in descriptors.  Static strings. */
const char *vmdk__access_name(enum vmdk_access access);
const char *vmdk__extent_type_name(enum vmdk_extent_type type);

/* A random CID (never 0xffffffff / 0xfffffffe). */
uint32_t vmdk__cid_random(void);

/* ---- grain.c: grain directory + grain tables (KDMV, COWD, seSparse) ----- */

enum vmdk_grain_state {
	VMDK_GRAIN_UNALLOCATED, /* read from the parent, or zeros */
	VMDK_GRAIN_ALLOCATED, /* stored at *sector in this file */
	VMDK_GRAIN_ZEROED, /* reads as zeros (zeroed-grain entry) */
};

#define VMDK_GT_CACHE_SLOTS 16u

/*
 * A table entry as the map holds it, whatever the format: 0 unallocated,
 * VMDK_GTE_ZEROED (with zero_grain) zeroed, VMDK_GTE_INVALID an entry no
 * format allows, else the grain's sector in the file.
 */
#define VMDK_GTE_INVALID UINT64_MAX

struct vmdk_gt_slot {
	uint32_t gd_index;
	bool valid;
	uint64_t *gte; /* gtes_per_gt entries, decoded */
};

enum vmdk_gmap_format {
	VMDK_GMAP_SECTORS32, /* KDMV, COWD: uint32 sector numbers */
	VMDK_GMAP_SESPARSE, /* uint64 typed indexes (format.h) */
};

/* Where a seSparse map's indexes point (sectors; counts in entries). */
struct vmdk_gmap_sesparse {
	uint64_t tables_offset;
	uint64_t tables_count;
	uint64_t grains_offset;
	uint64_t grains_count;
};

struct vmdk_gmap_params {
	enum vmdk_gmap_format format;
	struct vmdk_gmap_sesparse se; /* VMDK_GMAP_SESPARSE only */
	uint64_t capacity_sectors;
	uint32_t grain_sectors;
	uint32_t gtes_per_gt;
	uint32_t gd_entries;
	uint64_t gd_offset_sectors;
	uint64_t rgd_offset_sectors; /* 0: no redundant directory */
	uint64_t min_table_sector; /* tables start here or later */
	uint64_t min_data_sector; /* grains start here or later */
	bool zero_grain; /* entry 1 = zeroed grain */
	bool compressed; /* entries point at grain markers */
	bool writable;
};

struct vmdk_gmap {
	const struct vmdk_io *io; /* borrowed */
	int fd;
	const char *path; /* borrowed, for messages */
	struct vmdk_gmap_params p;
	uint32_t gt_sectors; /* sectors one table occupies */
	uint64_t end_sector; /* end of file: where the next grain goes */
	uint32_t *gd; /* host order, validated */
	uint32_t *rgd; /* NULL without a redundant directory */
	struct vmdk_gt_slot cache[VMDK_GT_CACHE_SLOTS];
	unsigned next_slot;
};

/*
 * Loads and validates the directories of the extent open as @fd (borrowed,
 * with @io and @path, for the life of the map): *out returns owned (free
 * with vmdk__gmap_free()).  Returns 0 or -EINVAL (message in @errbuf),
 * -ENOMEM, an I/O error.
 */
int vmdk__gmap_new(const struct vmdk_io *io, int fd, const char *path,
		   const struct vmdk_gmap_params *p, struct vmdk_gmap **out,
		   char *errbuf, size_t errlen);
/* Frees @m (may be NULL) and its tables. */
void vmdk__gmap_free(struct vmdk_gmap *m);

/* Where grain @grain is.  *sector is set for VMDK_GRAIN_ALLOCATED only. */
int vmdk__gmap_lookup(struct vmdk_gmap *m, uint64_t grain,
		      enum vmdk_grain_state *state, uint64_t *sector);

/*
 * Allocates grain @grain with @data (one grain, borrowed): writes the grain
 * at the end of the file, then its table entries, then (for a new table)
 * the directories.  Returns 0, -EFBIG (past 2 TiB) or an I/O error.
 */
int vmdk__gmap_alloc(struct vmdk_gmap *m, uint64_t grain, const void *data,
		     uint64_t *sector);

/* Marks @grain zeroed (needs zero_grain).  Same order as alloc. */
int vmdk__gmap_mark_zero(struct vmdk_gmap *m, uint64_t grain);

/*
 * Reads the table at @table_sector into @gte (gtes_per_gt entries),
 * decoded but not range-checked.
 */
int vmdk__gmap_read_table(struct vmdk_gmap *m, uint64_t table_sector,
			  uint64_t *gte);

/* ---- sparse.c (KDMV) and cowd.c (COWD) --------------------------------- */

struct vmdk_sparse_header {
	uint32_t version;
	uint32_t flags;
	uint64_t capacity_sectors;
	uint64_t grain_sectors;
	uint64_t desc_offset_sectors;
	uint64_t desc_size_sectors;
	uint32_t gtes_per_gt;
	uint64_t rgd_offset_sectors;
	uint64_t gd_offset_sectors;
	uint64_t overhead_sectors;
	bool unclean_shutdown;
};

/*
 * Converts a KDMV header from disk order and validates every field against
 * @file_sectors.  Errors name the field.  Returns 0 or -EINVAL / -ENOTSUP.
 */
int vmdk__sparse_header_decode(const struct vmdk_sparse_header_disk *raw,
			       uint64_t file_sectors,
			       struct vmdk_sparse_header *h, char *errbuf,
			       size_t errlen);
void vmdk__sparse_header_encode(const struct vmdk_sparse_header *h,
				struct vmdk_sparse_header_disk *raw);

/*
 * Reads and decodes the KDMV header of @fd (@file_sectors long); for a
 * streamOptimized file whose header defers to its footer, the footer's.
 */
int vmdk__sparse_header_read(const struct vmdk_io *io, int fd,
			     uint64_t file_sectors,
			     struct vmdk_sparse_header *h, char *errbuf,
			     size_t errlen);

/* Grain directory entries of a KDMV header. */
uint64_t vmdk__sparse_gd_entries(const struct vmdk_sparse_header *h);

/* Opens the grain map of a KDMV extent whose header is @h. */
int vmdk__sparse_gmap_open(const struct vmdk_io *io, int fd, const char *path,
			   const struct vmdk_sparse_header *h, bool writable,
			   struct vmdk_gmap **out, char *errbuf, size_t errlen);

/* Reads the embedded descriptor of @h.  *text returned owned. */
int vmdk__sparse_desc_read(const struct vmdk_io *io, int fd,
			   const struct vmdk_sparse_header *h, char **text,
			   size_t *len);

/*
 * Creates a new monolithicSparse file at @path holding descriptor @d (its
 * one SPARSE extent must name @path's base name) and @capacity_sectors of
 * unallocated grains.  Constant time: the tables are holes.
 */
int vmdk__sparse_create(const struct vmdk_io *io, const char *path,
			const struct vmdk_descriptor *d,
			uint64_t capacity_sectors, char *errbuf, size_t errlen);

/* Rewrites the embedded descriptor of the KDMV file @fd.  -ENOSPC if big. */
int vmdk__sparse_desc_write(const struct vmdk_io *io, int fd,
			    const struct vmdk_sparse_header *h,
			    const char *text, size_t len);

struct vmdk_cowd_header {
	uint32_t flags;
	uint32_t capacity_sectors;
	uint32_t grain_sectors;
	uint32_t gd_offset_sectors;
	uint32_t gd_entries;
	uint32_t free_sector;
	bool unclean_shutdown;
};

/* Converts and validates a COWD header, as the KDMV one. */
int vmdk__cowd_header_decode(const struct vmdk_cowd_header_disk *raw,
			     uint64_t file_sectors, struct vmdk_cowd_header *h,
			     char *errbuf, size_t errlen);

/* Opens the grain map of a COWD extent (always read-only). */
int vmdk__cowd_gmap_open(const struct vmdk_io *io, int fd, const char *path,
			 const struct vmdk_cowd_header *h,
			 struct vmdk_gmap **out, char *errbuf, size_t errlen);

/* ---- sesparse.c (seSparse) --------------------------------------------- */

struct vmdk_sesparse_header {
	uint64_t capacity_sectors;
	uint64_t volatile_offset_sectors;
	uint64_t gd_offset_sectors;
	uint64_t gd_size_sectors;
	uint32_t gd_entries; /* those the capacity needs */
	uint64_t tables_offset_sectors;
	uint64_t tables_size_sectors;
	uint64_t grains_offset_sectors;
	uint64_t grains_size_sectors;
};

/* Converts and validates a seSparse constant header, as the KDMV one. */
int vmdk__sesparse_header_decode(const struct vmdk_sesparse_header_disk *raw,
				 uint64_t file_sectors,
				 struct vmdk_sesparse_header *h, char *errbuf,
				 size_t errlen);

/* Validates a volatile header: -ENOTSUP if its journal needs replaying. */
int vmdk__sesparse_volatile_decode(
	const struct vmdk_sesparse_volatile_disk *raw, char *errbuf,
	size_t errlen);

/* Reads and validates both headers of the seSparse file @fd. */
int vmdk__sesparse_header_read(const struct vmdk_io *io, int fd,
			       uint64_t file_sectors,
			       struct vmdk_sesparse_header *h, char *errbuf,
			       size_t errlen);

/* Opens the grain map of a seSparse extent (always read-only). */
int vmdk__sesparse_gmap_open(const struct vmdk_io *io, int fd, const char *path,
			     const struct vmdk_sesparse_header *h,
			     struct vmdk_gmap **out, char *errbuf,
			     size_t errlen);

/* ---- chain.c: the disk object ------------------------------------------ */

struct vmdk_extent {
	enum vmdk_extent_type type;
	enum vmdk_access access;
	uint64_t start_sectors; /* first sector of the disk it holds */
	uint64_t len_sectors;
	uint64_t file_off_sectors; /* FLAT / VMFS */
	char *path; /* owned; NULL for ZERO */
	int fd; /* -1 for ZERO */
	struct vmdk_gmap *gmap; /* owned; SPARSE, VMFSSPARSE, SESPARSE */
};

enum vmdk_desc_home {
	VMDK_DESC_TEXT, /* a descriptor file of its own */
	VMDK_DESC_EMBEDDED, /* inside a KDMV file */
	VMDK_DESC_NONE, /* a bare extent opened directly */
};

struct vmdk {
	const struct vmdk_io *io; /* borrowed */
	char *path; /* owned */
	char *dir; /* owned */
	bool writable;
	bool cid_updated;
	enum vmdk_desc_home desc_home;
	struct vmdk_sparse_header embed_hdr; /* VMDK_DESC_EMBEDDED */
	struct vmdk_descriptor desc;
	struct vmdk_extent *extents;
	size_t n_extents;
	uint64_t size_sectors;
	struct vmdk *parent; /* owned, read-only */
	unsigned depth; /* 0 for the disk opened */
	uint8_t *grain_buf; /* scratch for copy-on-write, one grain */
	size_t grain_buf_len;
};

/* Extent holding disk sector @sector (< size_sectors). */
struct vmdk_extent *vmdk__extent_find(struct vmdk *v, uint64_t sector);

/* Writes the descriptor of @v back where it came from. */
int vmdk__desc_save(struct vmdk *v);

/* Rewrites the descriptor of @v with a new CID (once per open). */
int vmdk__cid_update(struct vmdk *v);

/* Takes every write bit off the descriptor and extent files of @v, or with
 * @writable gives the owner's back to those that lack it.  Returns 0 or
 * the first error. */
int vmdk__files_set_writable(const struct vmdk *v, bool writable);

/* ---- rw.c -------------------------------------------------------------- */

/* Where a run of the disk is stored. */
struct vmdk_map {
	enum vmdk_block status;
	uint64_t run_bytes;
	int fd; /* DATA in a file: its fd, else -1 */
	uint64_t file_off; /* and the offset there */
	struct vmdk_extent *zext; /* DATA in a compressed grain of zext */
	uint64_t zgrain; /* that grain */
	uint64_t zsector; /* its marker */
	uint64_t zin; /* offset of the run in the grain */
};

/* Maps the run at @off_bytes (at most @len_bytes) through the chain. */
int vmdk__map(struct vmdk *v, uint64_t off_bytes, uint64_t len_bytes,
	      struct vmdk_map *map);

/* ---- stream.c: compressed grains (streamOptimized) --------------------- */

/*
 * Inflates grain @grain of extent @e, whose marker is at @sector, into @out
 * (one grain).  Returns 0, -EINVAL (bad marker or data), -ENOMEM or an
 * I/O error.
 */
int vmdk__stream_grain_read(const struct vmdk_io *io,
			    const struct vmdk_extent *e, uint64_t grain,
			    uint64_t sector, uint8_t *out);

/* Sectors the marker at @sector and its data occupy; checks its lba. */
int vmdk__stream_grain_sectors(const struct vmdk_io *io,
			       const struct vmdk_extent *e, uint64_t grain,
			       uint64_t sector, uint64_t *sectors);

/* ---- provision.c ------------------------------------------------------- */

/* Name of a flat disk's data file: "x.vmdk" -> "x-flat.vmdk", owned. */
char *vmdk__flat_name(const char *path);

/* Creates the data file of a flat disk of @type.  Removes it on failure. */
int vmdk__flat_create(const struct vmdk_io *io, const char *path,
		      uint64_t size_bytes, enum vmdk_type type, char *errbuf,
		      size_t errlen);

/* Writes zeros over every hole and unwritten extent of @fd below @size,
 * calling @progress (may be NULL) between pieces; its error stops it. */
int vmdk__flat_fill_zeros(const struct vmdk_io *io, int fd, uint64_t size_bytes,
			  vmdk_progress_fn progress, void *progress_arg);

#endif
