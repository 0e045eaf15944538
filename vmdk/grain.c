// SPDX-License-Identifier: Apache-2.0
/*
 * vmdk/grain.c: the two-level map of sparse extents, common to hosted
 * sparse (KDMV), ESX redo logs (COWD) and ESXi seSparse deltas: a grain
 * directory of table offsets, grain tables of grain offsets.  KDMV and COWD
 * store sector numbers as little-endian uint32 (VMware "Virtual Disk Format
 * 5.0", "Grain Directories and Grain Tables"); seSparse stores typed uint64
 * indexes (format.h), decoded here to the same sector numbers.  Loads and
 * validates the directories, caches a few tables, looks grains up, and
 * allocates them (uint32 formats only) in crash-safe order: the grain
 * first, then its table entry, then (for a new table) the directory entry.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vmdk/vmdk_int.h"

static bool ranges_overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a < b + blen && b < a + alen;
}

static size_t entry_bytes(const struct vmdk_gmap *m)
{
	return m->p.format == VMDK_GMAP_SESPARSE ? 8 : 4;
}

static uint64_t dir_sectors(const struct vmdk_gmap *m)
{
	return vmdk__div_round_up((uint64_t)m->p.gd_entries * entry_bytes(m),
				  VMDK_SECTOR_SIZE);
}

/* The sector of the table a seSparse directory entry names, 0 for none. */
static int se_table_sector(const struct vmdk_gmap *m, uint64_t e,
			   uint64_t *sector)
{
	uint64_t idx = e & 0xffffffffu;

	*sector = 0;
	if (e == 0) {
		return 0;
	}
	if ((e >> 32) != VMDK_SESPARSE_GDE_HIGH ||
	    idx >= m->p.se.tables_count) {
		return -EINVAL;
	}
	*sector = m->p.se.tables_offset + idx * VMDK_SESPARSE_GT_SECTORS;
	return 0;
}

/* A seSparse grain table entry in the map's decoded form (vmdk_int.h). */
static uint64_t se_grain_entry(const struct vmdk_gmap *m, uint64_t e)
{
	uint64_t idx;

	switch (e >> VMDK_SESPARSE_TYPE_SHIFT) {
	case 0:
		return e == 0 ? 0 : VMDK_GTE_INVALID;
	case VMDK_SESPARSE_GTE_UNMAPPED:
	case VMDK_SESPARSE_GTE_ZERO:
		return VMDK_GTE_ZEROED;
	case VMDK_SESPARSE_GTE_ALLOCATED:
		idx = ((e >> 48) & 0xfffu) | ((e & 0xffffffffffffull) << 12);
		if (idx >= m->p.se.grains_count) {
			return VMDK_GTE_INVALID;
		}
		return m->p.se.grains_offset +
		       idx * VMDK_SESPARSE_GRAIN_SECTORS;
	default:
		return VMDK_GTE_INVALID;
	}
}

/* Directory entry @i of the raw directory @raw, as a table sector. */
static int dir_entry(const struct vmdk_gmap *m, const void *raw, uint32_t i,
		     uint64_t *table)
{
	uint64_t e64;
	uint32_t e32;

	if (m->p.format == VMDK_GMAP_SESPARSE) {
		memcpy(&e64, (const uint8_t *)raw + (size_t)i * 8, 8);
		return se_table_sector(m, le64toh(e64), table);
	}
	memcpy(&e32, (const uint8_t *)raw + (size_t)i * 4, 4);
	*table = le32toh(e32);
	return 0;
}

static int load_dir(struct vmdk_gmap *m, uint64_t off_sectors, uint32_t **out,
		    const char *name, char *errbuf, size_t errlen)
{
	size_t bytes = (size_t)m->p.gd_entries * entry_bytes(m);
	uint32_t *dir;
	void *raw;
	size_t done;
	int err;

	dir = malloc(m->p.gd_entries ? (size_t)m->p.gd_entries * 4 : 4);
	raw = malloc(bytes ? bytes : 4);
	if (!dir || !raw) {
		free(dir);
		free(raw);
		return -ENOMEM;
	}
	err = vmdk__io_read_full(m->io, m->fd, raw, bytes,
				 vmdk_sectors_to_bytes(off_sectors), &done);
	if (!err && done != bytes) {
		err = vmdk__errf(errbuf, errlen, -EINVAL,
				 "%s: %s at sector %" PRIu64
				 " runs past end of file",
				 m->path, name, off_sectors);
	}
	for (uint32_t i = 0; !err && i < m->p.gd_entries; i++) {
		uint64_t t;

		if (dir_entry(m, raw, i, &t) || t > UINT32_MAX) {
			err = vmdk__errf(errbuf, errlen, -EINVAL,
					 "%s: %s entry %" PRIu32
					 " names no grain table the file "
					 "can hold",
					 m->path, name, i);
			break;
		}
		dir[i] = (uint32_t)t;
		if (t == 0) {
			continue;
		}
		if (t < m->p.min_table_sector ||
		    t + m->gt_sectors > m->end_sector) {
			err = vmdk__errf(errbuf, errlen, -EINVAL,
					 "%s: %s entry %" PRIu32
					 ": grain table at sector %" PRIu64
					 " outside the file (%" PRIu64
					 " sectors) or in its header",
					 m->path, name, i, t, m->end_sector);
		} else if (ranges_overlap(t, m->gt_sectors,
					  m->p.gd_offset_sectors,
					  dir_sectors(m)) ||
			   (m->p.rgd_offset_sectors &&
			    ranges_overlap(t, m->gt_sectors,
					   m->p.rgd_offset_sectors,
					   dir_sectors(m)))) {
			err = vmdk__errf(errbuf, errlen, -EINVAL,
					 "%s: %s entry %" PRIu32
					 ": grain table at sector %" PRIu64
					 " overlaps a grain directory",
					 m->path, name, i, t);
		}
	}
	free(raw);
	if (err) {
		free(dir);
		return err;
	}
	*out = dir;
	return 0;
}

static int gmap_init(struct vmdk_gmap *m, const struct vmdk_io *io, int fd,
		     const char *path, const struct vmdk_gmap_params *p,
		     char *errbuf, size_t errlen)
{
	struct stat st;
	int err;

	memset(m, 0, sizeof(*m));
	m->io = io;
	m->fd = fd;
	m->path = path;
	m->p = *p;
	if (p->gd_entries > VMDK_MAX_GD_ENTRIES || p->gtes_per_gt == 0 ||
	    p->gtes_per_gt > VMDK_COWD_GTES || p->grain_sectors == 0 ||
	    p->grain_sectors > VMDK_MAX_GRAIN_SECTORS ||
	    (p->writable && p->format != VMDK_GMAP_SECTORS32)) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "%s: grain map geometry out of bounds", path);
	}
	m->gt_sectors = (uint32_t)vmdk__div_round_up(
		(uint64_t)p->gtes_per_gt * entry_bytes(m), VMDK_SECTOR_SIZE);
	err = vmdk__io_fstat(io, fd, &st);
	if (err) {
		return err;
	}
	m->end_sector =
		vmdk__div_round_up((uint64_t)st.st_size, VMDK_SECTOR_SIZE);
	err = load_dir(m, p->gd_offset_sectors, &m->gd, "grain directory",
		       errbuf, errlen);
	if (err) {
		return err;
	}
	if (p->rgd_offset_sectors) {
		err = load_dir(m, p->rgd_offset_sectors, &m->rgd,
			       "redundant grain directory", errbuf, errlen);
		if (err) {
			free(m->gd);
			m->gd = NULL;
			return err;
		}
	}
	return 0;
}

int vmdk__gmap_new(const struct vmdk_io *io, int fd, const char *path,
		   const struct vmdk_gmap_params *p, struct vmdk_gmap **out,
		   char *errbuf, size_t errlen)
{
	struct vmdk_gmap *m;
	int err;

	m = calloc(1, sizeof(*m));
	if (!m) {
		return -ENOMEM;
	}
	err = gmap_init(m, io, fd, path, p, errbuf, errlen);
	if (err) {
		free(m);
		return err;
	}
	*out = m;
	return 0;
}

void vmdk__gmap_free(struct vmdk_gmap *m)
{
	if (!m) {
		return;
	}
	for (unsigned i = 0; i < VMDK_GT_CACHE_SLOTS; i++) {
		free(m->cache[i].gte);
	}
	free(m->gd);
	free(m->rgd);
	free(m);
}

int vmdk__gmap_read_table(struct vmdk_gmap *m, uint64_t table_sector,
			  uint64_t *gte)
{
	size_t bytes = (size_t)m->p.gtes_per_gt * entry_bytes(m);
	size_t done;
	int err;

	err = vmdk__io_read_full(m->io, m->fd, gte, bytes,
				 vmdk_sectors_to_bytes(table_sector), &done);
	if (err) {
		return err;
	}
	if (done != bytes) {
		return -EINVAL;
	}
	if (m->p.format == VMDK_GMAP_SESPARSE) {
		for (uint32_t i = 0; i < m->p.gtes_per_gt; i++) {
			gte[i] = se_grain_entry(m, le64toh(gte[i]));
		}
		return 0;
	}
	/* uint32 entries fill the first half: widen from the last one down. */
	for (uint32_t i = m->p.gtes_per_gt; i-- > 0;) {
		uint32_t e;

		memcpy(&e, (const uint8_t *)gte + (size_t)i * 4, 4);
		gte[i] = le32toh(e);
	}
	return 0;
}

static int table_get(struct vmdk_gmap *m, uint32_t gd_index,
		     struct vmdk_gt_slot **out)
{
	struct vmdk_gt_slot *slot;
	int err;

	for (unsigned i = 0; i < VMDK_GT_CACHE_SLOTS; i++) {
		if (m->cache[i].valid && m->cache[i].gd_index == gd_index) {
			*out = &m->cache[i];
			return 0;
		}
	}
	slot = &m->cache[m->next_slot];
	m->next_slot = (m->next_slot + 1) % VMDK_GT_CACHE_SLOTS;
	if (!slot->gte) {
		slot->gte = malloc((size_t)m->p.gtes_per_gt * sizeof(uint64_t));
		if (!slot->gte) {
			return -ENOMEM;
		}
	}
	slot->valid = false;
	err = vmdk__gmap_read_table(m, m->gd[gd_index], slot->gte);
	if (err) {
		return err;
	}
	slot->gd_index = gd_index;
	slot->valid = true;
	*out = slot;
	return 0;
}

int vmdk__gmap_lookup(struct vmdk_gmap *m, uint64_t grain,
		      enum vmdk_grain_state *state, uint64_t *sector)
{
	uint64_t gd_index = grain / m->p.gtes_per_gt;
	uint32_t idx = (uint32_t)(grain % m->p.gtes_per_gt);
	struct vmdk_gt_slot *slot;
	uint64_t e;
	int err;

	if (gd_index >= m->p.gd_entries) {
		return -EINVAL;
	}
	if (m->gd[gd_index] == 0) {
		*state = VMDK_GRAIN_UNALLOCATED;
		return 0;
	}
	err = table_get(m, (uint32_t)gd_index, &slot);
	if (err) {
		return err;
	}
	e = slot->gte[idx];
	if (e == 0) {
		*state = VMDK_GRAIN_UNALLOCATED;
	} else if (e == VMDK_GTE_ZEROED && m->p.zero_grain) {
		*state = VMDK_GRAIN_ZEROED;
	} else if (e < m->p.min_data_sector || e >= m->end_sector) {
		return -EINVAL;
	} else {
		*state = VMDK_GRAIN_ALLOCATED;
		*sector = e;
	}
	return 0;
}

static int write_le32(struct vmdk_gmap *m, uint64_t off_bytes, uint32_t v)
{
	uint32_t le = htole32(v);

	return vmdk__io_write_full(m->io, m->fd, &le, sizeof(le), off_bytes);
}

/* A new table holding @value at @idx, written before its directory entry. */
static int table_new(struct vmdk_gmap *m, uint32_t gd_index, uint32_t idx,
		     uint32_t value)
{
	size_t bytes = vmdk_sectors_to_bytes(m->gt_sectors);
	uint64_t gt = m->end_sector;
	uint64_t rgt = gt + m->gt_sectors;
	uint32_t *buf;
	int err;

	if (rgt + m->gt_sectors > UINT32_MAX) {
		return -EFBIG;
	}
	buf = calloc(1, bytes);
	if (!buf) {
		return -ENOMEM;
	}
	buf[idx] = htole32(value);
	err = vmdk__io_write_full(m->io, m->fd, buf, bytes,
				  vmdk_sectors_to_bytes(gt));
	m->end_sector += m->gt_sectors;
	if (!err && m->rgd) {
		err = vmdk__io_write_full(m->io, m->fd, buf, bytes,
					  vmdk_sectors_to_bytes(rgt));
		m->end_sector += m->gt_sectors;
	}
	free(buf);
	if (!err && m->rgd) {
		err = write_le32(
			m,
			vmdk_sectors_to_bytes(m->p.rgd_offset_sectors) +
				(uint64_t)gd_index * 4,
			(uint32_t)rgt);
		if (!err) {
			m->rgd[gd_index] = (uint32_t)rgt;
		}
	}
	if (!err) {
		err = write_le32(m,
				 vmdk_sectors_to_bytes(m->p.gd_offset_sectors) +
					 (uint64_t)gd_index * 4,
				 (uint32_t)gt);
		if (!err) {
			m->gd[gd_index] = (uint32_t)gt;
		}
	}
	return err;
}

static int entry_set(struct vmdk_gmap *m, uint64_t grain, uint32_t value)
{
	uint32_t gd_index = (uint32_t)(grain / m->p.gtes_per_gt);
	uint32_t idx = (uint32_t)(grain % m->p.gtes_per_gt);
	int err;

	if (m->gd[gd_index] == 0) {
		return table_new(m, gd_index, idx, value);
	}
	err = write_le32(
		m, vmdk_sectors_to_bytes(m->gd[gd_index]) + (uint64_t)idx * 4,
		value);
	if (!err && m->rgd && m->rgd[gd_index]) {
		err = write_le32(m,
				 vmdk_sectors_to_bytes(m->rgd[gd_index]) +
					 (uint64_t)idx * 4,
				 value);
	}
	for (unsigned i = 0; i < VMDK_GT_CACHE_SLOTS; i++) {
		if (m->cache[i].valid && m->cache[i].gd_index == gd_index) {
			if (err) {
				m->cache[i].valid = false;
			} else {
				m->cache[i].gte[idx] = value;
			}
		}
	}
	return err;
}

int vmdk__gmap_alloc(struct vmdk_gmap *m, uint64_t grain, const void *data,
		     uint64_t *sector)
{
	uint64_t at = m->end_sector;
	int err;

	if (!m->p.writable) {
		return -EROFS;
	}
	if (grain / m->p.gtes_per_gt >= m->p.gd_entries) {
		return -EINVAL;
	}
	if (at + m->p.grain_sectors > UINT32_MAX) {
		return -EFBIG;
	}
	err = vmdk__io_write_full(m->io, m->fd, data,
				  vmdk_sectors_to_bytes(m->p.grain_sectors),
				  vmdk_sectors_to_bytes(at));
	if (err) {
		return err;
	}
	/* From here a failure leaks the grain; nothing points at it. */
	m->end_sector = at + m->p.grain_sectors;
	err = entry_set(m, grain, (uint32_t)at);
	if (!err) {
		*sector = at;
	}
	return err;
}

int vmdk__gmap_mark_zero(struct vmdk_gmap *m, uint64_t grain)
{
	if (!m->p.writable) {
		return -EROFS;
	}
	if (!m->p.zero_grain || grain / m->p.gtes_per_gt >= m->p.gd_entries) {
		return -EINVAL;
	}
	return entry_set(m, grain, VMDK_GTE_ZEROED);
}
