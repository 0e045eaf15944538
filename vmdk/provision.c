// SPDX-License-Identifier: Apache-2.0
/*
 * vmdk/provision.c: provisioning on the backing file, the way VMware shows
 * it.  thin = a sparse flat file; zeroedthick (lazy zeroed) = space reserved
 * with fallocate(2), left unwritten ("to be zeroed"); eagerzeroedthick =
 * reserved and zeroed up front.  The allocation is read back from the file
 * system with FIEMAP and counted like `vmkfstools -D`: nb = 1 MiB blocks
 * with space allocated, tbz = those never written (every allocated extent
 * in them is FIEMAP_EXTENT_UNWRITTEN).  Also creates new disks and inflates
 * thin ones (vmkfstools --inflatedisk).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fiemap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vmdk/vmdk_int.h"

/* Extents asked per FIEMAP call. */
#define FIEMAP_BATCH 256u
/* Zeros written per call when zeroing. */
#define ZERO_CHUNK_BYTES (1u << 20)

static const char *const type_names[] = {
	[VMDK_TYPE_THIN] = "thin",
	[VMDK_TYPE_ZEROEDTHICK] = "zeroedthick",
	[VMDK_TYPE_EAGERZEROEDTHICK] = "eagerzeroedthick",
	[VMDK_TYPE_SPARSE] = "sparse",
};

static const char *const adapters[] = { "ide", "buslogic", "lsilogic",
					"legacyESX" };

int vmdk_type_parse(const char *name, enum vmdk_type *out)
{
	for (size_t i = 0; i < ARRAY_SIZE(type_names); i++) {
		if (!strcmp(name, type_names[i])) {
			*out = (enum vmdk_type)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *vmdk_type_name(enum vmdk_type type)
{
	return type_names[type];
}

char *vmdk__flat_name(const char *path)
{
	char *stem = vmdk__path_stem(path);
	char *out;

	if (!stem) {
		return NULL;
	}
	if (asprintf(&out, "%s-flat.vmdk", stem) < 0) {
		out = NULL;
	}
	free(stem);
	return out;
}

static int write_zeros(const struct vmdk_io *io, int fd, uint64_t off,
		       uint64_t len)
{
	size_t chunk = len < ZERO_CHUNK_BYTES ? (size_t)len : ZERO_CHUNK_BYTES;
	void *zeros;
	int err = 0;

	if (!len) {
		return 0;
	}
	zeros = calloc(1, chunk);
	if (!zeros) {
		return -ENOMEM;
	}
	while (len && !err) {
		size_t n = len < chunk ? (size_t)len : chunk;

		err = vmdk__io_write_full(io, fd, zeros, n, off);
		off += n;
		len -= n;
	}
	free(zeros);
	return err;
}

static struct fiemap *fiemap_new(void)
{
	return calloc(1, sizeof(struct fiemap) +
				 FIEMAP_BATCH * sizeof(struct fiemap_extent));
}

/* Calls @fn for each extent of @fd at or after @start, in order. */
static int fiemap_walk(const struct vmdk_io *io, int fd,
		       int (*fn)(void *arg, uint64_t off, uint64_t len,
				 uint32_t flags),
		       void *arg)
{
	struct fiemap *fm = fiemap_new();
	uint64_t start = 0;
	bool last = false;
	int err = 0;

	if (!fm) {
		return -ENOMEM;
	}
	while (!last && !err) {
		memset(fm, 0, sizeof(*fm));
		fm->fm_start = start;
		fm->fm_length = FIEMAP_MAX_OFFSET - start;
		fm->fm_flags = FIEMAP_FLAG_SYNC;
		fm->fm_extent_count = FIEMAP_BATCH;
		err = vmdk__io_fiemap(io, fd, fm);
		if (err || fm->fm_mapped_extents == 0) {
			break;
		}
		for (uint32_t i = 0; i < fm->fm_mapped_extents && !err; i++) {
			struct fiemap_extent *fe = &fm->fm_extents[i];

			err = fn(arg, fe->fe_logical, fe->fe_length,
				 fe->fe_flags);
			last = fe->fe_flags & FIEMAP_EXTENT_LAST;
			start = fe->fe_logical + fe->fe_length;
		}
	}
	free(fm);
	if (err == -ENOTTY) {
		err = -EOPNOTSUPP;
	}
	return err;
}

/* Block accounting: one block at a time, extents arrive sorted. */
struct nb_count {
	struct vmdk_alloc *a;
	uint64_t block; /* current block, UINT64_MAX before the first */
	bool written;
};

static void nb_close(struct nb_count *c)
{
	if (c->block != UINT64_MAX) {
		c->a->nb++;
		c->a->tbz += !c->written;
	}
}

static void nb_touch(struct nb_count *c, uint64_t block, bool written)
{
	if (block != c->block) {
		nb_close(c);
		c->block = block;
		c->written = written;
	} else {
		c->written |= written;
	}
}

static int nb_extent(void *arg, uint64_t off, uint64_t len, uint32_t flags)
{
	bool unwritten = flags & FIEMAP_EXTENT_UNWRITTEN;
	struct nb_count *c = arg;
	uint64_t first = off / VMDK_ALLOC_BLOCK_BYTES;
	uint64_t last = (off + len - 1) / VMDK_ALLOC_BLOCK_BYTES;

	if (!len) {
		return 0;
	}
	if (flags & FIEMAP_EXTENT_SHARED) {
		c->a->shared_bytes += len;
	}
	nb_touch(c, first, !unwritten);
	if (last > first + 1) {
		/* Blocks strictly inside lie in this extent alone. */
		nb_close(c);
		c->a->nb += last - first - 1;
		c->a->tbz += unwritten ? last - first - 1 : 0;
		c->block = UINT64_MAX;
	}
	if (last > first) {
		nb_touch(c, last, !unwritten);
	}
	return 0;
}

int vmdk_alloc_get(const struct vmdk_io *io, int fd, struct vmdk_alloc *a)
{
	struct nb_count c = { .a = a, .block = UINT64_MAX };
	struct stat st;
	int err;

	if (!io) {
		io = vmdk_io_posix();
	}
	memset(a, 0, sizeof(*a));
	err = vmdk__io_fstat(io, fd, &st);
	if (err) {
		return err;
	}
	a->file_bytes = (uint64_t)st.st_size;
	a->allocated_bytes = (uint64_t)st.st_blocks * 512;
	err = fiemap_walk(io, fd, nb_extent, &c);
	nb_close(&c);
	return err;
}

/* Zero filling: holes before each extent and unwritten extents. */
struct zfill {
	const struct vmdk_io *io;
	int fd;
	uint64_t pos;
	uint64_t size;
	vmdk_progress_fn progress; /* may be NULL */
	void *progress_arg;
};

/* Zeros in pieces of this, the progress reported between them. */
#define ZFILL_PIECE_BYTES (64ull << 20)

static int zfill_range(struct zfill *z, uint64_t off, uint64_t end)
{
	int err = 0;

	if (end > z->size) {
		end = z->size;
	}
	while (off < end && !err) {
		uint64_t n = end - off < ZFILL_PIECE_BYTES ? end - off
							   : ZFILL_PIECE_BYTES;

		err = write_zeros(z->io, z->fd, off, n);
		off += n;
		if (!err && z->progress) {
			err = z->progress(z->progress_arg, off, z->size);
		}
	}
	return err;
}

static int zfill_extent(void *arg, uint64_t off, uint64_t len, uint32_t flags)
{
	bool unwritten = flags & FIEMAP_EXTENT_UNWRITTEN;
	struct zfill *z = arg;
	int err;

	err = zfill_range(z, z->pos, off);
	if (!err && unwritten) {
		err = zfill_range(z, off, off + len);
	}
	if (off + len > z->pos) {
		z->pos = off + len;
	}
	return err;
}

int vmdk__flat_fill_zeros(const struct vmdk_io *io, int fd, uint64_t size_bytes,
			  vmdk_progress_fn progress, void *progress_arg)
{
	struct zfill z = { .io = io,
			   .fd = fd,
			   .size = size_bytes,
			   .progress = progress,
			   .progress_arg = progress_arg };
	int err;

	err = fiemap_walk(io, fd, zfill_extent, &z);
	if (!err) {
		err = zfill_range(&z, z.pos, size_bytes);
	}
	if (!err) {
		err = vmdk__io_fsync(io, fd);
	}
	return err;
}

int vmdk__flat_create(const struct vmdk_io *io, const char *path,
		      uint64_t size_bytes, enum vmdk_type type, char *errbuf,
		      size_t errlen)
{
	int fd = -1;
	int err;

	err = vmdk__io_open(io, path, O_RDWR | O_CREAT | O_EXCL, 0644, &fd,
			    NULL, 0);
	if (err) {
		return vmdk__errf(errbuf, errlen, err, "%s: create: %s", path,
				  strerror(-err));
	}
	if (type == VMDK_TYPE_THIN) {
		err = vmdk__io_ftruncate(io, fd, size_bytes);
	} else {
		err = vmdk__io_fallocate(io, fd, 0, 0, size_bytes);
		if (err == -EOPNOTSUPP && type == VMDK_TYPE_EAGERZEROEDTHICK) {
			err = 0;
		}
		if (!err && type == VMDK_TYPE_EAGERZEROEDTHICK) {
			err = write_zeros(io, fd, 0, size_bytes);
		}
	}
	if (!err) {
		err = vmdk__io_fsync(io, fd);
	}
	vmdk__io_close(io, fd);
	if (err) {
		vmdk__io_unlink(io, path);
		return vmdk__errf(errbuf, errlen, err, "%s: %s %s: %s", path,
				  type == VMDK_TYPE_THIN ? "ftruncate"
							 : "fallocate/zero",
				  type_names[type], strerror(-err));
	}
	return 0;
}

static bool adapter_ok(const char *a)
{
	for (size_t i = 0; i < ARRAY_SIZE(adapters); i++) {
		if (!strcmp(a, adapters[i])) {
			return true;
		}
	}
	return false;
}

static int build_desc(struct vmdk_descriptor *d, const char *path,
		      const char *flat, uint64_t sectors,
		      const struct vmdk_create_opts *o, const char *adapter)
{
	bool sparse = o->type == VMDK_TYPE_SPARSE;
	int err;

	err = vmdk__descriptor_init(d, sparse ? "monolithicSparse" : "vmfs");
	if (err) {
		return err;
	}
	err = vmdk__descriptor_add_extent(
		d, VMDK_ACCESS_RW, sectors,
		sparse ? VMDK_EXTENT_SPARSE : VMDK_EXTENT_VMFS,
		vmdk__path_base(sparse ? path : flat), 0);
	if (!err) {
		err = vmdk__descriptor_set(d, "ddb.virtualHWVersion", "4");
	}
	if (!err) {
		err = vmdk__descriptor_set_geometry(d, sectors, adapter);
	}
	if (!err && o->type == VMDK_TYPE_THIN) {
		err = vmdk__descriptor_set(d, "ddb.thinProvisioned", "1");
	}
	return err;
}

static int create_flat(const struct vmdk_io *io, const char *path,
		       const char *flat, const struct vmdk_descriptor *d,
		       uint64_t bytes, enum vmdk_type type, char *errbuf,
		       size_t errlen)
{
	size_t len;
	char *text;
	int err;

	err = vmdk__descriptor_format(d, &text, &len);
	if (err) {
		return err;
	}
	err = vmdk__flat_create(io, flat, bytes, type, errbuf, errlen);
	if (!err) {
		err = vmdk__io_write_new_file(io, path, text, len, 0644);
		if (err) {
			vmdk__io_unlink(io, flat);
			vmdk__errf(errbuf, errlen, err, "%s: create: %s", path,
				   strerror(-err));
		}
	}
	free(text);
	return err;
}

int vmdk_create(const struct vmdk_io *io, const char *path,
		const struct vmdk_create_opts *opts, char *errbuf,
		size_t errlen)
{
	const char *adapter = opts->adapter ? opts->adapter : "lsilogic";
	uint64_t sectors =
		vmdk_bytes_to_sectors(opts->size_bytes + VMDK_SECTOR_BYTES - 1);
	struct vmdk_descriptor d;
	struct stat st;
	char *flat = NULL;
	int err;

	if (!io) {
		io = vmdk_io_posix();
	}
	if (opts->size_bytes == 0 || sectors > VMDK_MAX_CAPACITY_SECTORS) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "%s: size %" PRIu64
				  " bytes is not in 1 byte..64 TiB",
				  path, opts->size_bytes);
	}
	if (opts->type == VMDK_TYPE_SPARSE && sectors > UINT32_MAX) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "%s: a sparse disk holds at most 2 TiB",
				  path);
	}
	if (!adapter_ok(adapter)) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "%s: adapter '%s' is not ide, buslogic, "
				  "lsilogic or legacyESX",
				  path, adapter);
	}
	flat = vmdk__flat_name(path);
	if (!flat) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "%s: name must end in .vmdk", path);
	}
	if (!vmdk__io_stat(io, path, &st)) {
		free(flat);
		return vmdk__errf(errbuf, errlen, -EEXIST, "%s: exists", path);
	}
	err = build_desc(&d, path, flat, sectors, opts, adapter);
	if (err) {
		free(flat);
		return err;
	}
	if (opts->type == VMDK_TYPE_SPARSE) {
		err = vmdk__sparse_create(io, path, &d, sectors, errbuf,
					  errlen);
	} else {
		err = create_flat(io, path, flat, &d,
				  vmdk_sectors_to_bytes(sectors), opts->type,
				  errbuf, errlen);
	}
	vmdk__descriptor_fini(&d);
	free(flat);
	return err;
}

int vmdk_inflate(const struct vmdk_io *io, const char *path, char *errbuf,
		 size_t errlen)
{
	return vmdk_inflate_progress(io, path, NULL, NULL, errbuf, errlen);
}

int vmdk_inflate_progress(const struct vmdk_io *io, const char *path,
			  vmdk_progress_fn progress, void *progress_arg,
			  char *errbuf, size_t errlen)
{
	struct vmdk *v;
	int err;

	err = vmdk_open(io, path, VMDK_OPEN_RDWR, &v, errbuf, errlen);
	if (err) {
		return err;
	}
	if (v->parent) {
		err = vmdk__errf(errbuf, errlen, -EINVAL,
				 "%s: a delta cannot be inflated; consolidate "
				 "it first",
				 path);
		goto out;
	}
	for (size_t i = 0; i < v->n_extents && !err; i++) {
		const struct vmdk_extent *e = &v->extents[i];

		if (e->type != VMDK_EXTENT_FLAT &&
		    e->type != VMDK_EXTENT_VMFS) {
			err = vmdk__errf(
				errbuf, errlen, -EINVAL,
				"%s: extent %zu is %s: only flat disks "
				"inflate",
				path, i, vmdk__extent_type_name(e->type));
			goto out;
		}
	}
	for (size_t i = 0; i < v->n_extents && !err; i++) {
		const struct vmdk_extent *e = &v->extents[i];

		err = vmdk__flat_fill_zeros(
			v->io, e->fd,
			vmdk_sectors_to_bytes(e->file_off_sectors +
					      e->len_sectors),
			progress, progress_arg);
		if (err) {
			vmdk__errf(errbuf, errlen, err, "%s: zeroing: %s",
				   e->path, strerror(-err));
		}
	}
	if (!err && vmdk__descriptor_get(&v->desc, "ddb.thinProvisioned")) {
		vmdk__descriptor_unset(&v->desc, "ddb.thinProvisioned");
		err = vmdk__desc_save(v);
	}
out:
	vmdk_close(v);
	return err;
}

/* A flat disk of its own (no parent), or -EINVAL naming what it is. */
static int reserve_check(const struct vmdk *v, const char *path, char *errbuf,
			 size_t errlen)
{
	if (v->parent) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "%s: a delta: space is reserved for flat "
				  "disks; consolidate it first",
				  path);
	}
	for (size_t i = 0; i < v->n_extents; i++) {
		const struct vmdk_extent *e = &v->extents[i];

		if (e->type != VMDK_EXTENT_FLAT &&
		    e->type != VMDK_EXTENT_VMFS) {
			return vmdk__errf(errbuf, errlen, -EINVAL,
					  "%s: extent %zu is %s: space is "
					  "reserved for flat disks",
					  path, i,
					  vmdk__extent_type_name(e->type));
		}
	}
	return 0;
}

int vmdk_reserve(const struct vmdk_io *io, const char *path, bool eager,
		 vmdk_progress_fn progress, void *progress_arg, char *errbuf,
		 size_t errlen)
{
	struct vmdk *v;
	int err;

	if (!io) {
		io = vmdk_io_posix();
	}
	err = vmdk_open(io, path, VMDK_OPEN_RDWR, &v, errbuf, errlen);
	if (err) {
		return err;
	}
	err = reserve_check(v, path, errbuf, errlen);
	for (size_t i = 0; i < v->n_extents && !err; i++) {
		const struct vmdk_extent *e = &v->extents[i];
		uint64_t end = vmdk_sectors_to_bytes(e->file_off_sectors +
						     e->len_sectors);

		/* Mode 0: blocks already written keep their data. */
		err = vmdk__io_fallocate(v->io, e->fd, 0, 0, end);
		if (!err && eager) {
			err = vmdk__flat_fill_zeros(v->io, e->fd, end, progress,
						    progress_arg);
		} else if (!err) {
			err = vmdk__io_fsync(v->io, e->fd);
		}
		if (err) {
			vmdk__errf(errbuf, errlen, err, "%s: %s: %s", e->path,
				   eager ? "reserve and zero" : "reserve",
				   strerror(-err));
		}
	}
	if (!err && vmdk__descriptor_get(&v->desc, "ddb.thinProvisioned")) {
		vmdk__descriptor_unset(&v->desc, "ddb.thinProvisioned");
		err = vmdk__desc_save(v);
		if (err) {
			vmdk__errf(errbuf, errlen, err, "%s: descriptor: %s",
				   path, strerror(-err));
		}
	}
	vmdk_close(v);
	return err;
}
