/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vmdk/format.h: the on-disk structures of the VMDK formats we read and
 * write, packed and little endian, with the caps that bound every length read
 * from a disk before it sizes anything.  Sources: VMware "Virtual Disk Format
 * 5.0" (hosted sparse extents, KDMV; grain directories and tables; the
 * descriptor), the ESX 3 vmfsSparse redo log (COWD) and the ESXi 6.5+
 * space-efficient sparse delta (seSparse; undocumented by VMware, layout as
 * QEMU's block/vmdk.c reads it).  Only sparse.c, cowd.c and sesparse.c turn
 * these bytes into host structs, one decode function per struct; nothing
 * else casts a buffer.
 */
#ifndef DSNFS_VMDK_FORMAT_H
#define DSNFS_VMDK_FORMAT_H

#include <stdint.h>

#define VMDK_SECTOR_SIZE 512u

/* ---- caps (each one says why) ------------------------------------------ */

/*
 * A disk never exceeds 64 TiB: VMFS 5/6 stops at 62 TiB, and 2^37 sectors
 * keep every sector-to-byte product far from 64-bit overflow.
 */
#define VMDK_MAX_CAPACITY_SECTORS (1ull << 37)
/*
 * A descriptor never exceeds 1 MiB: VMware's are under 2 KiB, and a
 * twoGbMaxExtent descriptor of a 64 TiB disk (32768 extent lines) fits.
 */
#define VMDK_MAX_DESCRIPTOR_BYTES (1u << 20)
/* Extent lines per descriptor: 32768 x 2 GiB = 64 TiB. */
#define VMDK_MAX_EXTENTS 32768u
/* ddb.* and other key=value lines per descriptor. */
#define VMDK_MAX_DESCRIPTOR_KEYS 1024u
/* A path in a descriptor (extent file name, parentFileNameHint). */
#define VMDK_MAX_PATH_BYTES 4096u
/*
 * A grain directory of at most 4 Mi entries (16 MiB in memory): with 64 KiB
 * grains and 512-entry tables that covers 128 TiB, twice the capacity cap.
 * QEMU vmdk_add_extent() caps its L1 at 32 Mi entries for the same reason.
 */
#define VMDK_MAX_GD_ENTRIES (1u << 22)
/* Grains of 1 sector (ESX redo logs) up to 1 MiB (2048 sectors). */
#define VMDK_MAX_GRAIN_SECTORS 2048u
/* Grain table entries per table: 512 in KDMV (spec), 4096 in COWD. */
#define VMDK_SPARSE_MAX_GTES 512u
#define VMDK_COWD_GTES 4096u
/*
 * Links in a delta chain: ESXi refuses more than 255 redo logs on a disk;
 * each link costs a file descriptor per extent and a stack frame per read.
 */
#define VMDK_MAX_CHAIN_DEPTH 255u

/* ---- hosted sparse extent (KDMV) --------------------------------------- */

#define VMDK_SPARSE_MAGIC 0x564d444bu /* "KDMV" */
#define VMDK_SPARSE_FLAG_NL_DETECT (1u << 0)
#define VMDK_SPARSE_FLAG_RGD (1u << 1)
#define VMDK_SPARSE_FLAG_ZERO_GRAIN (1u << 2)
#define VMDK_SPARSE_FLAG_COMPRESSED (1u << 16)
#define VMDK_SPARSE_FLAG_MARKERS (1u << 17)
#define VMDK_SPARSE_FLAGS_KNOWN                                                \
	(VMDK_SPARSE_FLAG_NL_DETECT | VMDK_SPARSE_FLAG_RGD |                   \
	 VMDK_SPARSE_FLAG_ZERO_GRAIN | VMDK_SPARSE_FLAG_COMPRESSED |           \
	 VMDK_SPARSE_FLAG_MARKERS)
/* streamOptimized files put the real directory offset in a footer. */
#define VMDK_SPARSE_GD_AT_END 0xffffffffffffffffull
/* A grain table entry of 1 means "zeroed grain" when the flag is set. */
#define VMDK_GTE_ZEROED 1u

struct vmdk_sparse_header_disk {
	uint32_t magic_number;
	uint32_t version;
	uint32_t flags;
	uint64_t capacity; /* sectors */
	uint64_t grain_size; /* sectors */
	uint64_t descriptor_offset; /* sectors, 0 = none */
	uint64_t descriptor_size; /* sectors */
	uint32_t num_gtes_per_gt;
	uint64_t rgd_offset; /* sectors */
	uint64_t gd_offset; /* sectors */
	uint64_t over_head; /* sectors of metadata before the first grain */
	uint8_t unclean_shutdown;
	uint8_t single_end_line_char; /* '\n' */
	uint8_t non_end_line_char; /* ' ' */
	uint8_t double_end_line_char1; /* '\r' */
	uint8_t double_end_line_char2; /* '\n' */
	uint16_t compress_algorithm;
	uint8_t pad[433];
} __attribute__((packed));

_Static_assert(sizeof(struct vmdk_sparse_header_disk) == 512,
	       "KDMV header is one sector");

/*
 * streamOptimized: a grain table entry points at this marker, followed by
 * @size bytes of zlib (RFC 1950) deflate data that inflate to one grain.
 */
#define VMDK_COMPRESS_DEFLATE 1u
struct vmdk_grain_marker_disk {
	uint64_t lba; /* first sector of the grain in the extent */
	uint32_t size; /* bytes of compressed data that follow */
} __attribute__((packed));

_Static_assert(sizeof(struct vmdk_grain_marker_disk) == 12,
	       "grain marker header is 12 bytes");

/*
 * With gdOffset == VMDK_SPARSE_GD_AT_END, the header that counts is the
 * footer copy, two sectors before the end of file (footer marker, footer
 * header, end-of-stream marker).
 */
#define VMDK_SPARSE_FOOTER_BACK_SECTORS 2u

/* ---- ESX vmfsSparse redo log (COWD) ------------------------------------ */

#define VMDK_COWD_MAGIC 0x44574f43u /* "COWD" */
#define VMDK_COWD_FLAGS_KNOWN 0x3u
/* The header fills sectors 0-3. */
#define VMDK_COWD_HEADER_SECTORS 4u

struct vmdk_cowd_header_disk {
	uint32_t magic_number;
	uint32_t version;
	uint32_t flags;
	uint32_t num_sectors; /* capacity */
	uint32_t grain_size; /* sectors */
	uint32_t gd_offset; /* sectors */
	uint32_t num_gd_entries;
	uint32_t free_sector;
	union {
		struct {
			uint32_t cylinders;
			uint32_t heads;
			uint32_t sectors;
		} root;
		struct {
			char parent_file_name[1024];
			uint32_t parent_generation;
		} child;
	} u;
	uint32_t generation;
	char name[60];
	char description[512];
	uint32_t saved_generation;
	char reserved[8];
	uint32_t unclean_shutdown;
	char padding[396];
} __attribute__((packed));

_Static_assert(sizeof(struct vmdk_cowd_header_disk) == 2048,
	       "COWD header is four sectors");

/* ---- ESXi space-efficient sparse delta (seSparse) ---------------------- */

#define VMDK_SESPARSE_MAGIC 0x00000000cafebabeull
#define VMDK_SESPARSE_VOLATILE_MAGIC 0x00000000cafecafeull
/* The one version ESXi 6.5-8 writes (major 2, minor 1). */
#define VMDK_SESPARSE_VERSION 0x0000000200000001ull
/* Fixed by the format: 4 KiB grains, 32 KiB tables of 4096 entries. */
#define VMDK_SESPARSE_GRAIN_SECTORS 8u
#define VMDK_SESPARSE_GT_SECTORS 64u
#define VMDK_SESPARSE_GTES 4096u
/*
 * Directory and table entries are uint64 with a type in the top nibble.
 * A directory entry is 0 (no table) or 0x1 << 60 | table index (the top 32
 * bits exactly 0x10000000).  A table entry is 0 (unallocated: the parent's
 * data), 0x1 (SCSI-unmapped) or 0x2 (zero) with any low bits, both reading
 * as zeros, or 0x3 with a grain index split in two: bits 48-59 hold its low
 * 12 bits and bits 0-47 the rest.
 */
#define VMDK_SESPARSE_TYPE_SHIFT 60u
#define VMDK_SESPARSE_GDE_TABLE 0x1u
#define VMDK_SESPARSE_GDE_HIGH 0x10000000u
#define VMDK_SESPARSE_GTE_UNMAPPED 0x1u
#define VMDK_SESPARSE_GTE_ZERO 0x2u
#define VMDK_SESPARSE_GTE_ALLOCATED 0x3u

struct vmdk_sesparse_header_disk {
	uint64_t magic;
	uint64_t version;
	uint64_t capacity; /* sectors */
	uint64_t grain_size; /* sectors */
	uint64_t grain_table_size; /* sectors */
	uint64_t flags;
	uint64_t reserved[4];
	/* Each region: offset and size, in sectors. */
	uint64_t volatile_header_offset;
	uint64_t volatile_header_size;
	uint64_t journal_header_offset;
	uint64_t journal_header_size;
	uint64_t journal_offset;
	uint64_t journal_size;
	uint64_t grain_dir_offset;
	uint64_t grain_dir_size;
	uint64_t grain_tables_offset;
	uint64_t grain_tables_size;
	uint64_t free_bitmap_offset;
	uint64_t free_bitmap_size;
	uint64_t backmap_offset;
	uint64_t backmap_size;
	uint64_t grains_offset;
	uint64_t grains_size;
	uint8_t pad[304];
} __attribute__((packed));

_Static_assert(sizeof(struct vmdk_sesparse_header_disk) == 512,
	       "seSparse constant header is one sector");

struct vmdk_sesparse_volatile_disk {
	uint64_t magic;
	uint64_t free_gt_number;
	uint64_t next_txn_seq_number;
	uint64_t replay_journal; /* nonzero: a journal ESXi must replay */
	uint8_t pad[480];
} __attribute__((packed));

_Static_assert(sizeof(struct vmdk_sesparse_volatile_disk) == 512,
	       "seSparse volatile header is one sector");

#endif
