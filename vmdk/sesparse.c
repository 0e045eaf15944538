// SPDX-License-Identifier: Apache-2.0
/*
 * vmdk/sesparse.c: ESXi space-efficient sparse deltas (seSparse, the
 * snapshot format ESXi 6.5 and later writes for disks over 2 TiB and on
 * VMFS 6 and NFS datastores).  Read-only, like COWD: the function that
 * converts and validates the constant and volatile headers, and the opening
 * of its grain map (grain.c).  VMware does not document the format; the
 * layout is the one QEMU's block/vmdk.c reads, and the checks are as strict
 * as QEMU's, since an unknown field may change what an entry means.  Writes
 * to seSparse extents fail with -EROFS in rw.c.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "vmdk/vmdk_int.h"

/*
 * No region of a seSparse file lies past 2^40 sectors (512 TiB): eight
 * times the 64 TiB capacity cap, and every offset + size stays far from
 * 64-bit overflow.
 */
#define SESPARSE_MAX_REGION_SECTORS (1ull << 40)

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i]) {
			return false;
		}
	}
	return true;
}

/* @name's offset and size are in range, and it starts inside the file if
 * @in_file (the regions read at open; the others grow with the file). */
static int region_check(const char *name, uint64_t off, uint64_t size,
			uint64_t file_sectors, bool in_file, char *errbuf,
			size_t errlen)
{
	if (off == 0 || off > SESPARSE_MAX_REGION_SECTORS ||
	    size > SESPARSE_MAX_REGION_SECTORS) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "%s offset %" PRIu64 " / size %" PRIu64
				  " (sectors) out of range",
				  name, off, size);
	}
	if (in_file && (off > file_sectors || size > file_sectors - off)) {
		return vmdk__errf(
			errbuf, errlen, -EINVAL,
			"%s at sector %" PRIu64 " (%" PRIu64
			" sectors) runs past the end of file (%" PRIu64
			" sectors)",
			name, off, size, file_sectors);
	}
	return 0;
}

static int const_fields_check(const struct vmdk_sesparse_header_disk *raw,
			      char *errbuf, size_t errlen)
{
	uint64_t v;

	if (le64toh(raw->magic) != VMDK_SESPARSE_MAGIC) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "magic 0x%016" PRIx64 " is not seSparse",
				  le64toh(raw->magic));
	}
	v = le64toh(raw->version);
	if (v != VMDK_SESPARSE_VERSION) {
		return vmdk__errf(errbuf, errlen, -ENOTSUP,
				  "version 0x%016" PRIx64 " is not 2.1", v);
	}
	if (le64toh(raw->grain_size) != VMDK_SESPARSE_GRAIN_SECTORS) {
		return vmdk__errf(errbuf, errlen, -ENOTSUP,
				  "grain size %" PRIu64 " (sectors) is not %u",
				  le64toh(raw->grain_size),
				  VMDK_SESPARSE_GRAIN_SECTORS);
	}
	if (le64toh(raw->grain_table_size) != VMDK_SESPARSE_GT_SECTORS) {
		return vmdk__errf(errbuf, errlen, -ENOTSUP,
				  "grain table size %" PRIu64
				  " (sectors) is not %u",
				  le64toh(raw->grain_table_size),
				  VMDK_SESPARSE_GT_SECTORS);
	}
	if (raw->flags != 0) {
		return vmdk__errf(errbuf, errlen, -ENOTSUP,
				  "flags 0x%016" PRIx64 ": unknown bits",
				  le64toh(raw->flags));
	}
	if (!all_zero((const uint8_t *)raw->reserved, sizeof(raw->reserved)) ||
	    !all_zero(raw->pad, sizeof(raw->pad))) {
		return vmdk__errf(errbuf, errlen, -ENOTSUP,
				  "reserved fields or padding not zero");
	}
	return 0;
}

int vmdk__sesparse_header_decode(const struct vmdk_sesparse_header_disk *raw,
				 uint64_t file_sectors,
				 struct vmdk_sesparse_header *h, char *errbuf,
				 size_t errlen)
{
	uint64_t need, dir_entries;
	int err;

	memset(h, 0, sizeof(*h));
	err = const_fields_check(raw, errbuf, errlen);
	if (err) {
		return err;
	}
	h->capacity_sectors = le64toh(raw->capacity);
	h->volatile_offset_sectors = le64toh(raw->volatile_header_offset);
	h->gd_offset_sectors = le64toh(raw->grain_dir_offset);
	h->gd_size_sectors = le64toh(raw->grain_dir_size);
	h->tables_offset_sectors = le64toh(raw->grain_tables_offset);
	h->tables_size_sectors = le64toh(raw->grain_tables_size);
	h->grains_offset_sectors = le64toh(raw->grains_offset);
	h->grains_size_sectors = le64toh(raw->grains_size);
	if (h->capacity_sectors == 0 ||
	    h->capacity_sectors > VMDK_MAX_CAPACITY_SECTORS) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "capacity %" PRIu64
				  " (sectors) is 0 or over 64 TiB",
				  h->capacity_sectors);
	}
	err = region_check("volatile header", h->volatile_offset_sectors,
			   le64toh(raw->volatile_header_size), file_sectors,
			   true, errbuf, errlen);
	if (!err) {
		err = region_check("grain directory", h->gd_offset_sectors,
				   h->gd_size_sectors, file_sectors, true,
				   errbuf, errlen);
	}
	if (!err) {
		err = region_check("grain tables", h->tables_offset_sectors,
				   h->tables_size_sectors, file_sectors, false,
				   errbuf, errlen);
	}
	if (!err) {
		err = region_check("grains", h->grains_offset_sectors,
				   h->grains_size_sectors, file_sectors, false,
				   errbuf, errlen);
	}
	if (err) {
		return err;
	}
	if (le64toh(raw->volatile_header_size) == 0) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "volatile header size is 0");
	}
	/* One directory entry per 16 MiB; the directory may be larger. */
	need = vmdk__div_round_up(h->capacity_sectors,
				  (uint64_t)VMDK_SESPARSE_GTES *
					  VMDK_SESPARSE_GRAIN_SECTORS);
	dir_entries = h->gd_size_sectors * (VMDK_SECTOR_SIZE / 8);
	if (dir_entries < need) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "grain directory of %" PRIu64
				  " sectors holds %" PRIu64
				  " entries, capacity needs %" PRIu64,
				  h->gd_size_sectors, dir_entries, need);
	}
	h->gd_entries = (uint32_t)need;
	return 0;
}

int vmdk__sesparse_volatile_decode(
	const struct vmdk_sesparse_volatile_disk *raw, char *errbuf,
	size_t errlen)
{
	if (le64toh(raw->magic) != VMDK_SESPARSE_VOLATILE_MAGIC) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "volatile header magic 0x%016" PRIx64
				  " is not seSparse",
				  le64toh(raw->magic));
	}
	if (raw->replay_journal != 0) {
		return vmdk__errf(errbuf, errlen, -ENOTSUP,
				  "its journal must be replayed first (the "
				  "disk was not closed cleanly: power the VM "
				  "on and off once on ESXi)");
	}
	if (!all_zero(raw->pad, sizeof(raw->pad))) {
		return vmdk__errf(errbuf, errlen, -ENOTSUP,
				  "volatile header padding not zero");
	}
	return 0;
}

int vmdk__sesparse_gmap_open(const struct vmdk_io *io, int fd, const char *path,
			     const struct vmdk_sesparse_header *h,
			     struct vmdk_gmap **out, char *errbuf,
			     size_t errlen)
{
	struct vmdk_gmap_params p = {
		.format = VMDK_GMAP_SESPARSE,
		.se = {
			.tables_offset = h->tables_offset_sectors,
			.tables_count = h->tables_size_sectors /
					VMDK_SESPARSE_GT_SECTORS,
			.grains_offset = h->grains_offset_sectors,
			.grains_count = h->grains_size_sectors /
					VMDK_SESPARSE_GRAIN_SECTORS,
		},
		.capacity_sectors = h->capacity_sectors,
		.grain_sectors = VMDK_SESPARSE_GRAIN_SECTORS,
		.gtes_per_gt = VMDK_SESPARSE_GTES,
		.gd_entries = h->gd_entries,
		.gd_offset_sectors = h->gd_offset_sectors,
		.min_table_sector = h->tables_offset_sectors,
		.min_data_sector = h->grains_offset_sectors,
		/* Unmapped and zero grains decode to the zeroed entry. */
		.zero_grain = true,
		.writable = false,
	};

	return vmdk__gmap_new(io, fd, path, &p, out, errbuf, errlen);
}

int vmdk__sesparse_header_read(const struct vmdk_io *io, int fd,
			       uint64_t file_sectors,
			       struct vmdk_sesparse_header *h, char *errbuf,
			       size_t errlen)
{
	struct vmdk_sesparse_header_disk raw;
	struct vmdk_sesparse_volatile_disk vol;
	size_t done;
	int err;

	memset(&raw, 0, sizeof(raw));
	err = vmdk__io_read_full(io, fd, &raw, sizeof(raw), 0, &done);
	if (!err) {
		err = vmdk__sesparse_header_decode(&raw, file_sectors, h,
						   errbuf, errlen);
	}
	if (err) {
		return err;
	}
	memset(&vol, 0, sizeof(vol));
	err = vmdk__io_read_full(
		io, fd, &vol, sizeof(vol),
		vmdk_sectors_to_bytes(h->volatile_offset_sectors), &done);
	if (!err) {
		err = vmdk__sesparse_volatile_decode(&vol, errbuf, errlen);
	}
	return err;
}
