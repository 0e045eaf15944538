// SPDX-License-Identifier: Apache-2.0
/*
 * vmdk/rw.c: reads, writes and block status through the extents and the
 * delta chain.  A sparse extent's unallocated grains read from the parent
 * (or as zeros for a base disk); a write to such a grain first copies the
 * rest of the grain from below (copy-on-write at grain size) and allocates it
 * through grain.c; compressed (streamOptimized) grains are inflated by
 * stream.c and never written.  A whole grain of zeros is not stored: a base
 * disk leaves it unallocated, a delta marks it zeroed when its format allows.
 */
#include <errno.h>
#include <linux/fiemap.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmdk/vmdk_int.h"

/* Extents asked per FIEMAP call of a block status query. */
#define FLAT_FIEMAP_EXTENTS 32u

static uint64_t extent_end_bytes(const struct vmdk_extent *e)
{
	return vmdk_sectors_to_bytes(e->start_sectors + e->len_sectors);
}

static uint64_t grain_bytes(const struct vmdk_extent *e)
{
	return vmdk_sectors_to_bytes(e->gmap->p.grain_sectors);
}

static bool range_ok(const struct vmdk *v, size_t len, uint64_t off)
{
	uint64_t size = vmdk_sectors_to_bytes(v->size_sectors);

	return off <= size && len <= size - off;
}

static bool all_zero(const uint8_t *p, size_t len)
{
	return len == 0 || (p[0] == 0 && !memcmp(p, p + 1, len - 1));
}

/* SEEK_DATA / SEEK_HOLE: for file systems without FIEMAP. */
static void map_flat_seek(struct vmdk *v, const struct vmdk_extent *e,
			  uint64_t pos, uint64_t avail, struct vmdk_map *map)
{
	int64_t data = vmdk__io_seek(v->io, e->fd, pos, SEEK_DATA);
	int64_t hole;

	if (data == -ENXIO) {
		map->status = VMDK_BLOCK_ZERO;
		return;
	}
	if (data < 0) {
		return; /* no SEEK_DATA here: all of it is data */
	}
	if ((uint64_t)data > pos) {
		map->status = VMDK_BLOCK_ZERO;
		if ((uint64_t)data - pos < avail) {
			map->run_bytes = (uint64_t)data - pos;
		}
		return;
	}
	hole = vmdk__io_seek(v->io, e->fd, pos, SEEK_HOLE);
	if (hole > 0 && (uint64_t)hole > pos && (uint64_t)hole - pos < avail) {
		map->run_bytes = (uint64_t)hole - pos;
	}
}

/*
 * Flat extent: holes and unwritten (fallocated, never written) extents read
 * as zeros.  FIEMAP tells them apart after a sync; SEEK_DATA cannot, since
 * pages cached by a read of an unwritten extent count as data.
 */
static void map_flat_holes(struct vmdk *v, const struct vmdk_extent *e,
			   uint64_t pos, uint64_t avail, struct vmdk_map *map)
{
	struct fiemap *fm;
	const struct fiemap_extent *fe0;
	uint64_t end = pos;
	bool zero;

	fm = calloc(1, sizeof(*fm) + FLAT_FIEMAP_EXTENTS *
					     sizeof(struct fiemap_extent));
	if (!fm) {
		return; /* all data: slower, never wrong */
	}
	fm->fm_start = pos;
	fm->fm_length = avail;
	fm->fm_flags = FIEMAP_FLAG_SYNC;
	fm->fm_extent_count = FLAT_FIEMAP_EXTENTS;
	if (vmdk__io_fiemap(v->io, e->fd, fm)) {
		free(fm);
		map_flat_seek(v, e, pos, avail, map);
		return;
	}
	fe0 = &fm->fm_extents[0];
	if (fm->fm_mapped_extents == 0 || fe0->fe_logical > pos) {
		map->status = VMDK_BLOCK_ZERO;
		if (fm->fm_mapped_extents && fe0->fe_logical - pos < avail) {
			map->run_bytes = fe0->fe_logical - pos;
		}
		free(fm);
		return;
	}
	zero = fe0->fe_flags & FIEMAP_EXTENT_UNWRITTEN;
	for (uint32_t i = 0; i < fm->fm_mapped_extents; i++) {
		const struct fiemap_extent *fe = &fm->fm_extents[i];

		if (fe->fe_logical != end && i) {
			break; /* a hole follows */
		}
		if (!!(fe->fe_flags & FIEMAP_EXTENT_UNWRITTEN) != zero) {
			break;
		}
		end = fe->fe_logical + fe->fe_length;
	}
	free(fm);
	map->status = zero ? VMDK_BLOCK_ZERO : VMDK_BLOCK_DATA;
	if (end > pos && end - pos < avail) {
		map->run_bytes = end - pos;
	}
}

static int map_link(struct vmdk *v, uint64_t off, uint64_t len, bool holes,
		    struct vmdk_map *map);

/* Sparse extent: one run of grains in the same state. */
static int map_sparse(struct vmdk *v, struct vmdk_extent *e, uint64_t off,
		      uint64_t avail, bool holes, struct vmdk_map *map)
{
	uint64_t gb = grain_bytes(e);
	uint64_t rel = off - vmdk_sectors_to_bytes(e->start_sectors);
	uint64_t grain = rel / gb;
	uint64_t in = rel % gb;
	enum vmdk_grain_state st, next_st;
	uint64_t sector = 0;
	uint64_t next_sector = 0;
	uint64_t first;
	uint64_t run;
	int err;

	err = vmdk__gmap_lookup(e->gmap, grain, &st, &sector);
	if (err) {
		return err;
	}
	first = sector;
	run = gb - in;
	/* Compressed grains are inflated one at a time. */
	while (run < avail &&
	       !(st == VMDK_GRAIN_ALLOCATED && e->gmap->p.compressed)) {
		err = vmdk__gmap_lookup(e->gmap, grain + 1, &next_st,
					&next_sector);
		if (err || next_st != st ||
		    (st == VMDK_GRAIN_ALLOCATED &&
		     next_sector != sector + e->gmap->p.grain_sectors)) {
			break;
		}
		grain++;
		sector = next_sector;
		run += gb;
	}
	map->run_bytes = run < avail ? run : avail;
	map->fd = -1;
	switch (st) {
	case VMDK_GRAIN_ALLOCATED:
		map->status = VMDK_BLOCK_DATA;
		if (e->gmap->p.compressed) {
			map->zext = e;
			map->zgrain = rel / gb;
			map->zsector = first;
			map->zin = in;
			return 0;
		}
		map->fd = e->fd;
		map->file_off = vmdk_sectors_to_bytes(first) + in;
		return 0;
	case VMDK_GRAIN_ZEROED:
		map->status = VMDK_BLOCK_ZERO;
		return 0;
	case VMDK_GRAIN_UNALLOCATED:
		break;
	}
	map->status = VMDK_BLOCK_ZERO;
	if (v->parent) {
		return map_link(v->parent, off, map->run_bytes, holes, map);
	}
	return 0;
}

static int map_link(struct vmdk *v, uint64_t off, uint64_t len, bool holes,
		    struct vmdk_map *map)
{
	struct vmdk_extent *e =
		vmdk__extent_find(v, vmdk_bytes_to_sectors(off));
	uint64_t avail = extent_end_bytes(e) - off;
	uint64_t rel = off - vmdk_sectors_to_bytes(e->start_sectors);

	if (avail > len) {
		avail = len;
	}
	*map = (struct vmdk_map){ .status = VMDK_BLOCK_ZERO,
				  .run_bytes = avail,
				  .fd = -1 };
	if (e->access == VMDK_ACCESS_NOACCESS) {
		return -EACCES;
	}
	switch (e->type) {
	case VMDK_EXTENT_ZERO:
		return 0;
	case VMDK_EXTENT_FLAT:
	case VMDK_EXTENT_VMFS:
		map->status = VMDK_BLOCK_DATA;
		map->fd = e->fd;
		map->file_off =
			vmdk_sectors_to_bytes(e->file_off_sectors) + rel;
		if (holes) {
			map_flat_holes(v, e, map->file_off, avail, map);
		}
		return 0;
	case VMDK_EXTENT_SPARSE:
	case VMDK_EXTENT_VMFSSPARSE:
	case VMDK_EXTENT_SESPARSE:
		return map_sparse(v, e, off, avail, holes, map);
	}
	return -EINVAL;
}

int vmdk__map(struct vmdk *v, uint64_t off_bytes, uint64_t len_bytes,
	      struct vmdk_map *map)
{
	return map_link(v, off_bytes, len_bytes, true, map);
}

int vmdk_block_status(struct vmdk *v, uint64_t off_bytes, uint64_t len_bytes,
		      enum vmdk_block *status, uint64_t *run_bytes)
{
	struct vmdk_map map;
	int err;

	if (len_bytes == 0 || !range_ok(v, len_bytes, off_bytes)) {
		return -EINVAL;
	}
	err = map_link(v, off_bytes, len_bytes, true, &map);
	if (err) {
		return err;
	}
	*status = map.status;
	*run_bytes = map.run_bytes;
	return 0;
}

static int grain_buf_get(struct vmdk *v, size_t bytes, uint8_t **out);

/* A run inside one compressed grain: inflate it, copy the run out. */
static int read_compressed(struct vmdk *v, const struct vmdk_map *m, uint8_t *p)
{
	uint8_t *g;
	int err;

	err = grain_buf_get(v, grain_bytes(m->zext), &g);
	if (!err) {
		err = vmdk__stream_grain_read(v->io, m->zext, m->zgrain,
					      m->zsector, g);
	}
	if (!err) {
		memcpy(p, g + m->zin, m->run_bytes);
	}
	return err;
}

int vmdk_pread(struct vmdk *v, void *buf, size_t len, uint64_t off_bytes)
{
	uint8_t *p = buf;
	struct vmdk_map map;
	int err;

	if (!range_ok(v, len, off_bytes)) {
		return -EINVAL;
	}
	while (len) {
		err = map_link(v, off_bytes, len, false, &map);
		if (err) {
			return err;
		}
		if (map.zext) {
			err = read_compressed(v, &map, p);
			if (err) {
				return err;
			}
		} else if (map.fd >= 0) {
			err = vmdk__io_read_zfill(v->io, map.fd, p,
						  map.run_bytes, map.file_off);
			if (err) {
				return err;
			}
		} else {
			memset(p, 0, map.run_bytes);
		}
		p += map.run_bytes;
		off_bytes += map.run_bytes;
		len -= map.run_bytes;
	}
	return 0;
}

static int grain_buf_get(struct vmdk *v, size_t bytes, uint8_t **out)
{
	if (v->grain_buf_len < bytes) {
		uint8_t *b = realloc(v->grain_buf, bytes);

		if (!b) {
			return -ENOMEM;
		}
		v->grain_buf = b;
		v->grain_buf_len = bytes;
	}
	*out = v->grain_buf;
	return 0;
}

/* What a grain of @e holds below this disk: the parent's data, or zeros. */
static int grain_fill_below(struct vmdk *v, struct vmdk_extent *e,
			    uint64_t grain_off, uint8_t *buf, uint64_t gb,
			    enum vmdk_grain_state st)
{
	uint64_t end = extent_end_bytes(e);
	uint64_t n = grain_off + gb <= end ? gb : end - grain_off;

	memset(buf, 0, gb);
	if (st == VMDK_GRAIN_UNALLOCATED && v->parent) {
		return vmdk_pread(v->parent, buf, n, grain_off);
	}
	return 0;
}

static int write_grain_new(struct vmdk *v, struct vmdk_extent *e,
			   uint64_t grain, enum vmdk_grain_state st,
			   const uint8_t *src, uint64_t in, uint64_t n)
{
	uint64_t gb = grain_bytes(e);
	uint64_t grain_off =
		vmdk_sectors_to_bytes(e->start_sectors) + grain * gb;
	const uint8_t *data = src;
	uint64_t sector;
	uint8_t *buf;
	int err;

	if (n == gb && all_zero(src, n)) {
		if (st == VMDK_GRAIN_ZEROED ||
		    (st == VMDK_GRAIN_UNALLOCATED && !v->parent)) {
			return 0;
		}
		if (e->gmap->p.zero_grain) {
			return vmdk__gmap_mark_zero(e->gmap, grain);
		}
	}
	if (n != gb) {
		err = grain_buf_get(v, gb, &buf);
		if (!err) {
			err = grain_fill_below(v, e, grain_off, buf, gb, st);
		}
		if (err) {
			return err;
		}
		memcpy(buf + in, src, n);
		data = buf;
	}
	return vmdk__gmap_alloc(e->gmap, grain, data, &sector);
}

static int write_sparse(struct vmdk *v, struct vmdk_extent *e,
			const uint8_t *src, uint64_t len, uint64_t off)
{
	uint64_t gb = grain_bytes(e);
	uint64_t rel = off - vmdk_sectors_to_bytes(e->start_sectors);
	enum vmdk_grain_state st;
	uint64_t sector = 0;
	int err;

	while (len) {
		uint64_t grain = rel / gb;
		uint64_t in = rel % gb;
		uint64_t n = gb - in < len ? gb - in : len;

		err = vmdk__gmap_lookup(e->gmap, grain, &st, &sector);
		if (err) {
			return err;
		}
		if (st == VMDK_GRAIN_ALLOCATED) {
			err = vmdk__io_write_full(
				v->io, e->fd, src, n,
				vmdk_sectors_to_bytes(sector) + in);
		} else {
			err = write_grain_new(v, e, grain, st, src, in, n);
		}
		if (err) {
			return err;
		}
		src += n;
		rel += n;
		len -= n;
	}
	return 0;
}

int vmdk_pwrite(struct vmdk *v, const void *buf, size_t len, uint64_t off_bytes)
{
	const uint8_t *p = buf;
	int err;

	if (!v->writable) {
		return -EROFS;
	}
	if (!range_ok(v, len, off_bytes)) {
		return -EINVAL;
	}
	if (len && !v->cid_updated) {
		err = vmdk__cid_update(v);
		if (err) {
			return err;
		}
	}
	while (len) {
		struct vmdk_extent *e =
			vmdk__extent_find(v, vmdk_bytes_to_sectors(off_bytes));
		uint64_t n = extent_end_bytes(e) - off_bytes;
		uint64_t rel =
			off_bytes - vmdk_sectors_to_bytes(e->start_sectors);

		if (n > len) {
			n = len;
		}
		if (e->access != VMDK_ACCESS_RW ||
		    e->type == VMDK_EXTENT_ZERO ||
		    vmdk__extent_type_read_only(e->type) ||
		    (e->gmap && e->gmap->p.compressed)) {
			return -EROFS;
		}
		if (e->type == VMDK_EXTENT_SPARSE) {
			err = write_sparse(v, e, p, n, off_bytes);
		} else {
			err = vmdk__io_write_full(
				v->io, e->fd, p, n,
				vmdk_sectors_to_bytes(e->file_off_sectors) +
					rel);
		}
		if (err) {
			return err;
		}
		p += n;
		off_bytes += n;
		len -= n;
	}
	return 0;
}

int vmdk_flush(struct vmdk *v)
{
	int err;

	for (size_t i = 0; i < v->n_extents; i++) {
		if (v->extents[i].fd < 0 || !v->writable) {
			continue;
		}
		err = vmdk__io_fsync(v->io, v->extents[i].fd);
		if (err) {
			return err;
		}
	}
	return 0;
}
