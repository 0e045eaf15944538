// SPDX-License-Identifier: Apache-2.0
/*
 * vmdk/stream.c: the compressed grains of streamOptimized extents (VMware
 * "Virtual Disk Format 5.0", "Stream-Optimized Compressed Sparse Extents"),
 * read-only: a grain table entry points at a marker (the grain's LBA and the
 * length of what follows) and zlib deflate data that inflate to one grain.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "vmdk/vmdk_int.h"

/*
 * Deflate's worst case grows data by 5 bytes per 16 KiB block plus 6 for
 * zlib; a marker's data never exceeds a grain and a half plus a sector.
 */
static uint64_t max_data(uint64_t grain_bytes)
{
	return grain_bytes + grain_bytes / 2 + VMDK_SECTOR_SIZE;
}

static int marker_read(const struct vmdk_io *io, const struct vmdk_extent *e,
		       uint64_t grain, uint64_t sector, uint32_t *size)
{
	uint64_t gb = vmdk_sectors_to_bytes(e->gmap->p.grain_sectors);
	struct vmdk_grain_marker_disk mk;
	size_t done;
	int err;

	err = vmdk__io_read_full(io, e->fd, &mk, sizeof(mk),
				 vmdk_sectors_to_bytes(sector), &done);
	if (err) {
		return err;
	}
	if (done != sizeof(mk) ||
	    le64toh(mk.lba) != grain * e->gmap->p.grain_sectors) {
		return -EINVAL;
	}
	*size = le32toh(mk.size);
	if (*size == 0 || *size > max_data(gb)) {
		return -EINVAL;
	}
	return 0;
}

int vmdk__stream_grain_sectors(const struct vmdk_io *io,
			       const struct vmdk_extent *e, uint64_t grain,
			       uint64_t sector, uint64_t *sectors)
{
	uint32_t size;
	int err = marker_read(io, e, grain, sector, &size);

	if (!err) {
		*sectors = (sizeof(struct vmdk_grain_marker_disk) + size +
			    VMDK_SECTOR_SIZE - 1) /
			   VMDK_SECTOR_SIZE;
	}
	return err;
}

int vmdk__stream_grain_read(const struct vmdk_io *io,
			    const struct vmdk_extent *e, uint64_t grain,
			    uint64_t sector, uint8_t *out)
{
	uint64_t gb = vmdk_sectors_to_bytes(e->gmap->p.grain_sectors);
	uLongf out_len = (uLongf)gb;
	uint8_t *data;
	uint32_t size;
	size_t done;
	int err;

	err = marker_read(io, e, grain, sector, &size);
	if (err) {
		return err;
	}
	data = malloc(size);
	if (!data) {
		return -ENOMEM;
	}
	err = vmdk__io_read_full(io, e->fd, data, size,
				 vmdk_sectors_to_bytes(sector) +
					 sizeof(struct vmdk_grain_marker_disk),
				 &done);
	if (!err &&
	    (done != size || uncompress(out, &out_len, data, size) != Z_OK)) {
		err = -EINVAL;
	}
	free(data);
	if (!err) {
		memset(out + out_len, 0, gb - out_len);
	}
	return err;
}
