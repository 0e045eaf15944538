// SPDX-License-Identifier: Apache-2.0
/*
 * vmdk/cowd.c: ESX vmfsSparse redo logs (the COWD format of ESX 3-6 snapshot
 * deltas: a 2048-byte header, a grain directory, 4096-entry grain tables
 * allocated on demand, usually 1-sector grains).  Read-only: the one
 * function that converts and validates the header, and the opening of its
 * grain map (grain.c).  Writes to COWD extents fail with -EROFS in rw.c.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "vmdk/vmdk_int.h"

int vmdk__cowd_header_decode(const struct vmdk_cowd_header_disk *raw,
			     uint64_t file_sectors, struct vmdk_cowd_header *h,
			     char *errbuf, size_t errlen)
{
	uint64_t need, gd_sectors;
	uint32_t unclean;

	memset(h, 0, sizeof(*h));
	if (le32toh(raw->magic_number) != VMDK_COWD_MAGIC) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "magicNumber 0x%08" PRIx32 " is not COWD",
				  le32toh(raw->magic_number));
	}
	if (le32toh(raw->version) != 1) {
		return vmdk__errf(errbuf, errlen, -ENOTSUP,
				  "version %" PRIu32 " is not 1",
				  le32toh(raw->version));
	}
	h->flags = le32toh(raw->flags);
	h->capacity_sectors = le32toh(raw->num_sectors);
	h->grain_sectors = le32toh(raw->grain_size);
	h->gd_offset_sectors = le32toh(raw->gd_offset);
	h->gd_entries = le32toh(raw->num_gd_entries);
	h->free_sector = le32toh(raw->free_sector);
	unclean = le32toh(raw->unclean_shutdown);
	if (h->flags & ~VMDK_COWD_FLAGS_KNOWN) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "flags 0x%08" PRIx32 ": unknown bits",
				  h->flags);
	}
	if (h->capacity_sectors == 0) {
		return vmdk__errf(errbuf, errlen, -EINVAL, "numSectors is 0");
	}
	if (h->grain_sectors == 0 ||
	    (h->grain_sectors & (h->grain_sectors - 1)) ||
	    h->grain_sectors > VMDK_MAX_GRAIN_SECTORS) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "grainSize %" PRIu32
				  " (sectors) is not a power of 2 up to %u",
				  h->grain_sectors, VMDK_MAX_GRAIN_SECTORS);
	}
	need = vmdk__div_round_up(h->capacity_sectors,
				  (uint64_t)VMDK_COWD_GTES * h->grain_sectors);
	if (h->gd_entries < need || h->gd_entries > VMDK_MAX_GD_ENTRIES) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "numGDEntries %" PRIu32 " is not in %" PRIu64
				  "..%u",
				  h->gd_entries, need, VMDK_MAX_GD_ENTRIES);
	}
	gd_sectors = vmdk__div_round_up((uint64_t)h->gd_entries * 4,
					VMDK_SECTOR_SIZE);
	if (h->gd_offset_sectors < VMDK_COWD_HEADER_SECTORS ||
	    h->gd_offset_sectors > file_sectors ||
	    gd_sectors > file_sectors - h->gd_offset_sectors) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "gdOffset %" PRIu32
				  " (sectors): directory inside the header or "
				  "past the end of file (%" PRIu64 " sectors)",
				  h->gd_offset_sectors, file_sectors);
	}
	if (h->free_sector < h->gd_offset_sectors + gd_sectors) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "freeSector %" PRIu32
				  " is inside the grain directory",
				  h->free_sector);
	}
	if (unclean > 1) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "uncleanShutdown %" PRIu32 " is not 0 or 1",
				  unclean);
	}
	h->unclean_shutdown = unclean;
	return 0;
}

int vmdk__cowd_gmap_open(const struct vmdk_io *io, int fd, const char *path,
			 const struct vmdk_cowd_header *h,
			 struct vmdk_gmap **out, char *errbuf, size_t errlen)
{
	uint64_t gd_sectors = vmdk__div_round_up((uint64_t)h->gd_entries * 4,
						 VMDK_SECTOR_SIZE);
	struct vmdk_gmap_params p = {
		.capacity_sectors = h->capacity_sectors,
		.grain_sectors = h->grain_sectors,
		.gtes_per_gt = VMDK_COWD_GTES,
		.gd_entries = h->gd_entries,
		.gd_offset_sectors = h->gd_offset_sectors,
		.min_table_sector = VMDK_COWD_HEADER_SECTORS,
		.min_data_sector = h->gd_offset_sectors + gd_sectors,
		.zero_grain = false,
		.writable = false,
	};

	return vmdk__gmap_new(io, fd, path, &p, out, errbuf, errlen);
}
