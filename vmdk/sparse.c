// SPDX-License-Identifier: Apache-2.0
/*
 * vmdk/sparse.c: hosted sparse extents (KDMV; VMware "Virtual Disk Format
 * 5.0", "Hosted Sparse Extent Header"): the one function that converts and
 * validates the header, the embedded descriptor of monolithicSparse files,
 * and the creation of new sparse files.  The grain map itself is grain.c;
 * the compressed grains of streamOptimized files (read-only) are stream.c.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vmdk/vmdk_int.h"

/* Sectors for the embedded descriptor of the files we create (QEMU's 20). */
#define SPARSE_DESC_SECTORS 20u
/* Grains of the files we create: 64 KiB, as VMware and QEMU. */
#define SPARSE_GRAIN_SECTORS 128u
/* An embedded descriptor never exceeds 1 MiB (VMDK_MAX_DESCRIPTOR_BYTES). */
#define SPARSE_MAX_DESC_SECTORS (VMDK_MAX_DESCRIPTOR_BYTES / VMDK_SECTOR_SIZE)

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

uint64_t vmdk__sparse_gd_entries(const struct vmdk_sparse_header *h)
{
	return vmdk__div_round_up(h->capacity_sectors,
				  h->grain_sectors * h->gtes_per_gt);
}

static int check_dir(const struct vmdk_sparse_header *h, uint64_t off,
		     uint64_t file_sectors, const char *name, char *errbuf,
		     size_t errlen)
{
	uint64_t sectors = vmdk__div_round_up(vmdk__sparse_gd_entries(h) * 4,
					      VMDK_SECTOR_SIZE);
	uint64_t desc_end = h->desc_offset_sectors + h->desc_size_sectors;

	if (off == 0 || off > file_sectors || sectors > file_sectors - off) {
		return vmdk__errf(
			errbuf, errlen, -EINVAL,
			"%s %" PRIu64 " (sectors): directory of %" PRIu64
			" sectors outside the file (%" PRIu64 " sectors)",
			name, off, sectors, file_sectors);
	}
	if (h->desc_size_sectors && off < desc_end &&
	    h->desc_offset_sectors < off + sectors) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "%s %" PRIu64 ": overlaps the descriptor",
				  name, off);
	}
	return 0;
}

static int check_flags(const struct vmdk_sparse_header_disk *raw,
		       uint32_t flags, char *errbuf, size_t errlen)
{
	bool compressed = flags & VMDK_SPARSE_FLAG_COMPRESSED;
	uint16_t algo = le16toh(raw->compress_algorithm);

	if (flags & ~VMDK_SPARSE_FLAGS_KNOWN) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "flags 0x%08" PRIx32 ": unknown bits", flags);
	}
	if (compressed && !(flags & VMDK_SPARSE_FLAG_MARKERS)) {
		return vmdk__errf(errbuf, errlen, -ENOTSUP,
				  "flags 0x%08" PRIx32
				  ": compressed grains without markers are "
				  "not supported",
				  flags);
	}
	if ((flags & VMDK_SPARSE_FLAG_NL_DETECT) &&
	    (raw->single_end_line_char != '\n' ||
	     raw->non_end_line_char != ' ' ||
	     raw->double_end_line_char1 != '\r' ||
	     raw->double_end_line_char2 != '\n')) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "newline detection characters: damaged by a "
				  "text-mode transfer");
	}
	if (algo != (compressed ? VMDK_COMPRESS_DEFLATE : 0)) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "compressAlgorithm %u %s", algo,
				  compressed ? "is not deflate (1)"
					     : "without compression");
	}
	return 0;
}

int vmdk__sparse_header_decode(const struct vmdk_sparse_header_disk *raw,
			       uint64_t file_sectors,
			       struct vmdk_sparse_header *h, char *errbuf,
			       size_t errlen)
{
	uint64_t desc_end;
	int err;

	memset(h, 0, sizeof(*h));
	if (le32toh(raw->magic_number) != VMDK_SPARSE_MAGIC) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "magicNumber 0x%08" PRIx32 " is not KDMV",
				  le32toh(raw->magic_number));
	}
	h->version = le32toh(raw->version);
	h->flags = le32toh(raw->flags);
	h->capacity_sectors = le64toh(raw->capacity);
	h->grain_sectors = le64toh(raw->grain_size);
	h->desc_offset_sectors = le64toh(raw->descriptor_offset);
	h->desc_size_sectors = le64toh(raw->descriptor_size);
	h->gtes_per_gt = le32toh(raw->num_gtes_per_gt);
	h->rgd_offset_sectors = le64toh(raw->rgd_offset);
	h->gd_offset_sectors = le64toh(raw->gd_offset);
	h->overhead_sectors = le64toh(raw->over_head);
	if (h->version < 1 || h->version > 3) {
		return vmdk__errf(errbuf, errlen, -ENOTSUP,
				  "version %" PRIu32 " is not 1, 2 or 3",
				  h->version);
	}
	err = check_flags(raw, h->flags, errbuf, errlen);
	if (err) {
		return err;
	}
	if (h->capacity_sectors == 0 ||
	    h->capacity_sectors > VMDK_MAX_CAPACITY_SECTORS) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "capacity %" PRIu64
				  " (sectors) is not in 1..2^37",
				  h->capacity_sectors);
	}
	if (!is_pow2(h->grain_sectors) ||
	    h->grain_sectors > VMDK_MAX_GRAIN_SECTORS) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "grainSize %" PRIu64
				  " (sectors) is not a power of 2 up to %u",
				  h->grain_sectors, VMDK_MAX_GRAIN_SECTORS);
	}
	if (h->gtes_per_gt == 0 || h->gtes_per_gt > VMDK_SPARSE_MAX_GTES) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "numGTEsPerGT %" PRIu32 " is not in 1..%u",
				  h->gtes_per_gt, VMDK_SPARSE_MAX_GTES);
	}
	if (vmdk__sparse_gd_entries(h) > VMDK_MAX_GD_ENTRIES) {
		return vmdk__errf(
			errbuf, errlen, -EINVAL,
			"grain directory of %" PRIu64 " entries exceeds %u",
			vmdk__sparse_gd_entries(h), VMDK_MAX_GD_ENTRIES);
	}
	if (h->desc_offset_sectors || h->desc_size_sectors) {
		if (h->desc_offset_sectors == 0 || h->desc_size_sectors == 0 ||
		    h->desc_size_sectors > SPARSE_MAX_DESC_SECTORS ||
		    h->desc_offset_sectors > file_sectors ||
		    h->desc_size_sectors >
			    file_sectors - h->desc_offset_sectors) {
			return vmdk__errf(errbuf, errlen, -EINVAL,
					  "descriptorOffset %" PRIu64
					  " descriptorSize %" PRIu64
					  " (sectors): outside the file or "
					  "over 1 MiB",
					  h->desc_offset_sectors,
					  h->desc_size_sectors);
		}
	}
	if (h->gd_offset_sectors == VMDK_SPARSE_GD_AT_END &&
	    !(h->flags & VMDK_SPARSE_FLAG_COMPRESSED)) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "gdOffset: directory in a footer without "
				  "compressed grains");
	}
	if (h->gd_offset_sectors == VMDK_SPARSE_GD_AT_END) {
		err = 0; /* the footer copy holds the real offsets */
	} else {
		err = check_dir(h, h->gd_offset_sectors, file_sectors,
				"gdOffset", errbuf, errlen);
	}
	if (!err && h->gd_offset_sectors != VMDK_SPARSE_GD_AT_END &&
	    (h->flags & VMDK_SPARSE_FLAG_RGD)) {
		err = check_dir(h, h->rgd_offset_sectors, file_sectors,
				"rgdOffset", errbuf, errlen);
	}
	if (err) {
		return err;
	}
	if (!(h->flags & VMDK_SPARSE_FLAG_RGD)) {
		h->rgd_offset_sectors = 0;
	}
	desc_end = h->desc_offset_sectors + h->desc_size_sectors;
	if (h->overhead_sectors < 1 || h->overhead_sectors < desc_end ||
	    h->overhead_sectors > file_sectors) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "overHead %" PRIu64
				  " (sectors) is before the descriptor end or "
				  "past the end of file (%" PRIu64 " sectors)",
				  h->overhead_sectors, file_sectors);
	}
	if (raw->unclean_shutdown > 1) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "uncleanShutdown %u is not 0 or 1",
				  raw->unclean_shutdown);
	}
	h->unclean_shutdown = raw->unclean_shutdown;
	return 0;
}

int vmdk__sparse_header_read(const struct vmdk_io *io, int fd,
			     uint64_t file_sectors,
			     struct vmdk_sparse_header *h, char *errbuf,
			     size_t errlen)
{
	struct vmdk_sparse_header_disk raw;
	uint64_t at = 0;
	size_t done;
	int err;

	for (int copy = 0; copy < 2; copy++) {
		memset(&raw, 0, sizeof(raw));
		err = vmdk__io_read_full(io, fd, &raw, sizeof(raw),
					 vmdk_sectors_to_bytes(at), &done);
		if (!err) {
			err = vmdk__sparse_header_decode(&raw, file_sectors, h,
							 errbuf, errlen);
		}
		if (err && copy) {
			return vmdk__err_prefix(errbuf, errlen, err,
						"footer (gdOffset at the end)");
		}
		if (err || h->gd_offset_sectors != VMDK_SPARSE_GD_AT_END) {
			return err;
		}
		if (copy ||
		    file_sectors < VMDK_SPARSE_FOOTER_BACK_SECTORS + 1) {
			break;
		}
		at = file_sectors - VMDK_SPARSE_FOOTER_BACK_SECTORS;
	}
	return vmdk__errf(errbuf, errlen, -EINVAL,
			  "gdOffset: no footer with the grain directory at "
			  "the end of the file");
}

void vmdk__sparse_header_encode(const struct vmdk_sparse_header *h,
				struct vmdk_sparse_header_disk *raw)
{
	memset(raw, 0, sizeof(*raw));
	raw->magic_number = htole32(VMDK_SPARSE_MAGIC);
	raw->version = htole32(h->version);
	raw->flags = htole32(h->flags);
	raw->capacity = htole64(h->capacity_sectors);
	raw->grain_size = htole64(h->grain_sectors);
	raw->descriptor_offset = htole64(h->desc_offset_sectors);
	raw->descriptor_size = htole64(h->desc_size_sectors);
	raw->num_gtes_per_gt = htole32(h->gtes_per_gt);
	raw->rgd_offset = htole64(h->rgd_offset_sectors);
	raw->gd_offset = htole64(h->gd_offset_sectors);
	raw->over_head = htole64(h->overhead_sectors);
	raw->unclean_shutdown = h->unclean_shutdown;
	if (h->flags & VMDK_SPARSE_FLAG_COMPRESSED) {
		raw->compress_algorithm = htole16(VMDK_COMPRESS_DEFLATE);
	}
	raw->single_end_line_char = '\n';
	raw->non_end_line_char = ' ';
	raw->double_end_line_char1 = '\r';
	raw->double_end_line_char2 = '\n';
}

int vmdk__sparse_gmap_open(const struct vmdk_io *io, int fd, const char *path,
			   const struct vmdk_sparse_header *h, bool writable,
			   struct vmdk_gmap **out, char *errbuf, size_t errlen)
{
	struct vmdk_gmap_params p = {
		.capacity_sectors = h->capacity_sectors,
		.grain_sectors = (uint32_t)h->grain_sectors,
		.gtes_per_gt = h->gtes_per_gt,
		.gd_entries = (uint32_t)vmdk__sparse_gd_entries(h),
		.gd_offset_sectors = h->gd_offset_sectors,
		.rgd_offset_sectors = h->rgd_offset_sectors,
		.min_table_sector =
			h->desc_offset_sectors + h->desc_size_sectors,
		.min_data_sector = h->overhead_sectors,
		.zero_grain = h->flags & VMDK_SPARSE_FLAG_ZERO_GRAIN,
		.compressed = h->flags & VMDK_SPARSE_FLAG_COMPRESSED,
		.writable =
			writable && !(h->flags & VMDK_SPARSE_FLAG_COMPRESSED),
	};

	if (p.min_table_sector < 1) {
		p.min_table_sector = 1;
	}
	return vmdk__gmap_new(io, fd, path, &p, out, errbuf, errlen);
}

int vmdk__sparse_desc_read(const struct vmdk_io *io, int fd,
			   const struct vmdk_sparse_header *h, char **text,
			   size_t *len)
{
	size_t bytes = vmdk_sectors_to_bytes(h->desc_size_sectors);
	size_t done;
	char *buf;
	int err;

	buf = malloc(bytes + 1);
	if (!buf) {
		return -ENOMEM;
	}
	err = vmdk__io_read_full(io, fd, buf, bytes,
				 vmdk_sectors_to_bytes(h->desc_offset_sectors),
				 &done);
	if (err) {
		free(buf);
		return err;
	}
	buf[done] = '\0';
	*text = buf;
	*len = strlen(buf);
	return 0;
}

int vmdk__sparse_desc_write(const struct vmdk_io *io, int fd,
			    const struct vmdk_sparse_header *h,
			    const char *text, size_t len)
{
	size_t bytes = vmdk_sectors_to_bytes(h->desc_size_sectors);
	char *buf;
	int err;

	if (len >= bytes) {
		return -ENOSPC;
	}
	buf = calloc(1, bytes);
	if (!buf) {
		return -ENOMEM;
	}
	memcpy(buf, text, len);
	err = vmdk__io_write_full(
		io, fd, buf, bytes,
		vmdk_sectors_to_bytes(h->desc_offset_sectors));
	free(buf);
	return err;
}

/* Writes directory @dir_off whose tables start at @gt_off, @gt_sectors apart.
 */
static int write_dir(const struct vmdk_io *io, int fd, uint64_t dir_off,
		     uint64_t entries, uint64_t gt_off, uint64_t gt_sectors)
{
	uint32_t *dir = malloc(entries * 4);
	int err;

	if (!dir) {
		return -ENOMEM;
	}
	for (uint64_t i = 0; i < entries; i++) {
		dir[i] = htole32((uint32_t)(gt_off + i * gt_sectors));
	}
	err = vmdk__io_write_full(io, fd, dir, entries * 4,
				  vmdk_sectors_to_bytes(dir_off));
	free(dir);
	return err;
}

int vmdk__sparse_create(const struct vmdk_io *io, const char *path,
			const struct vmdk_descriptor *d,
			uint64_t capacity_sectors, char *errbuf, size_t errlen)
{
	struct vmdk_sparse_header h = {
		.version = 2,
		.flags = VMDK_SPARSE_FLAG_NL_DETECT | VMDK_SPARSE_FLAG_RGD |
			 VMDK_SPARSE_FLAG_ZERO_GRAIN,
		.capacity_sectors = capacity_sectors,
		.grain_sectors = SPARSE_GRAIN_SECTORS,
		.desc_offset_sectors = 1,
		.gtes_per_gt = VMDK_SPARSE_MAX_GTES,
	};
	struct vmdk_sparse_header_disk raw;
	uint64_t entries, dir_sectors, gt_sectors;
	size_t text_len;
	char *text;
	int fd = -1;
	int err;

	err = vmdk__descriptor_format(d, &text, &text_len);
	if (err) {
		return err;
	}
	h.desc_size_sectors =
		vmdk__div_round_up(text_len + 1, VMDK_SECTOR_SIZE);
	if (h.desc_size_sectors < SPARSE_DESC_SECTORS) {
		h.desc_size_sectors = SPARSE_DESC_SECTORS;
	}
	entries = vmdk__sparse_gd_entries(&h);
	dir_sectors = vmdk__div_round_up(entries * 4, VMDK_SECTOR_SIZE);
	gt_sectors = vmdk__div_round_up((uint64_t)h.gtes_per_gt * 4,
					VMDK_SECTOR_SIZE);
	h.rgd_offset_sectors = h.desc_offset_sectors + h.desc_size_sectors;
	h.gd_offset_sectors =
		h.rgd_offset_sectors + dir_sectors + entries * gt_sectors;
	h.overhead_sectors =
		vmdk__div_round_up(h.gd_offset_sectors + dir_sectors +
					   entries * gt_sectors,
				   h.grain_sectors) *
		h.grain_sectors;
	vmdk__sparse_header_encode(&h, &raw);

	err = vmdk__io_open(io, path, O_RDWR | O_CREAT | O_EXCL, 0644, &fd,
			    NULL, 0);
	if (err) {
		free(text);
		return vmdk__errf(errbuf, errlen, err, "%s: create: %s", path,
				  strerror(-err));
	}
	/* The tables stay holes: they read as zeros, so creation is O(1). */
	err = vmdk__io_ftruncate(io, fd,
				 vmdk_sectors_to_bytes(h.overhead_sectors));
	if (!err) {
		err = vmdk__io_write_full(io, fd, &raw, sizeof(raw), 0);
	}
	if (!err) {
		err = vmdk__sparse_desc_write(io, fd, &h, text, text_len);
	}
	if (!err) {
		err = write_dir(io, fd, h.rgd_offset_sectors, entries,
				h.rgd_offset_sectors + dir_sectors, gt_sectors);
	}
	if (!err) {
		err = write_dir(io, fd, h.gd_offset_sectors, entries,
				h.gd_offset_sectors + dir_sectors, gt_sectors);
	}
	if (!err) {
		err = vmdk__io_fsync(io, fd);
	}
	vmdk__io_close(io, fd);
	free(text);
	if (err) {
		vmdk__io_unlink(io, path);
		return vmdk__errf(errbuf, errlen, err, "%s: create: %s", path,
				  strerror(-err));
	}
	return 0;
}
