// SPDX-License-Identifier: Apache-2.0
/*
 * vmdk/chain.c: opening a disk.  Reads its descriptor (a text file, the one
 * embedded in a monolithicSparse file, or none for a bare KDMV / COWD
 * extent), opens its extents, then its parent through parentFileNameHint,
 * checking parentCID against the parent's CID, equal sizes, loops (by
 * device and inode) and the depth cap.  Also rewrites the descriptor with a
 * new CID on the first write, as VMware does, so that children of a disk
 * that changed under them stop opening.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vmdk/vmdk_int.h"

struct seen_file {
	dev_t dev;
	ino_t ino;
};

struct open_ctx {
	const struct vmdk_io *io;
	unsigned flags;
	struct seen_file seen[VMDK_MAX_CHAIN_DEPTH + 1];
	unsigned n_seen;
	bool err_named; /* the message names the disk that failed */
	char *errbuf;
	size_t errlen;
};

static int open_link(struct open_ctx *c, const char *path, bool writable,
		     unsigned depth, struct vmdk **out);

static int file_sectors_get(const struct vmdk_io *io, int fd,
			    uint64_t *file_sectors)
{
	struct stat st;
	int err;

	err = vmdk__io_fstat(io, fd, &st);
	if (!err) {
		*file_sectors = vmdk__div_round_up((uint64_t)st.st_size,
						   VMDK_SECTOR_SIZE);
	}
	return err;
}

static int read_header(const struct vmdk_io *io, int fd, void *buf, size_t len,
		       uint64_t *file_sectors)
{
	size_t done;
	int err;

	err = file_sectors_get(io, fd, file_sectors);
	if (err) {
		return err;
	}
	memset(buf, 0, len);
	return vmdk__io_read_full(io, fd, buf, len, 0, &done);
}

static int open_sparse_extent(struct open_ctx *c, struct vmdk_extent *e,
			      bool writable)
{
	struct vmdk_sparse_header h;
	uint64_t file_sectors;
	int err;

	err = file_sectors_get(c->io, e->fd, &file_sectors);
	if (!err) {
		err = vmdk__sparse_header_read(c->io, e->fd, file_sectors, &h,
					       c->errbuf, c->errlen);
	}
	if (err) {
		return vmdk__err_prefix(c->errbuf, c->errlen, err, e->path);
	}
	if (h.capacity_sectors < e->len_sectors) {
		return vmdk__errf(
			c->errbuf, c->errlen, -EINVAL,
			"%s: capacity %" PRIu64
			" (sectors) is smaller than its extent line (%" PRIu64
			")",
			e->path, h.capacity_sectors, e->len_sectors);
	}
	return vmdk__sparse_gmap_open(c->io, e->fd, e->path, &h, writable,
				      &e->gmap, c->errbuf, c->errlen);
}

static int open_cowd_extent(struct open_ctx *c, struct vmdk_extent *e)
{
	struct vmdk_cowd_header_disk raw;
	struct vmdk_cowd_header h;
	uint64_t file_sectors;
	int err;

	err = read_header(c->io, e->fd, &raw, sizeof(raw), &file_sectors);
	if (!err) {
		err = vmdk__cowd_header_decode(&raw, file_sectors, &h,
					       c->errbuf, c->errlen);
	}
	if (err) {
		return vmdk__err_prefix(c->errbuf, c->errlen, err, e->path);
	}
	if (h.capacity_sectors < e->len_sectors) {
		return vmdk__errf(c->errbuf, c->errlen, -EINVAL,
				  "%s: numSectors %" PRIu32
				  " is smaller than its extent line (%" PRIu64
				  ")",
				  e->path, h.capacity_sectors, e->len_sectors);
	}
	return vmdk__cowd_gmap_open(c->io, e->fd, e->path, &h, &e->gmap,
				    c->errbuf, c->errlen);
}

static int open_sesparse_extent(struct open_ctx *c, struct vmdk_extent *e)
{
	struct vmdk_sesparse_header h;
	uint64_t file_sectors;
	int err;

	err = file_sectors_get(c->io, e->fd, &file_sectors);
	if (!err) {
		err = vmdk__sesparse_header_read(c->io, e->fd, file_sectors, &h,
						 c->errbuf, c->errlen);
	}
	if (err) {
		return vmdk__err_prefix(c->errbuf, c->errlen, err, e->path);
	}
	if (h.capacity_sectors < e->len_sectors) {
		return vmdk__errf(c->errbuf, c->errlen, -EINVAL,
				  "%s: capacity %" PRIu64
				  " (sectors) is smaller than its extent line "
				  "(%" PRIu64 ")",
				  e->path, h.capacity_sectors, e->len_sectors);
	}
	return vmdk__sesparse_gmap_open(c->io, e->fd, e->path, &h, &e->gmap,
					c->errbuf, c->errlen);
}

/* An extent file stays in (or below) its descriptor's directory. */
static bool extent_name_ok(const char *name)
{
	const char *p = name;

	if (name[0] == '/') {
		return false;
	}
	while (p) {
		if (!strncmp(p, "..", 2) && (p[2] == '/' || p[2] == '\0')) {
			return false;
		}
		p = strchr(p, '/');
		p = p ? p + 1 : NULL;
	}
	return true;
}

/*
 * The extent of a monolithicSparse file is the file itself, whatever name
 * its embedded descriptor gives (the file may have been copied or renamed).
 */
static int check_embedded(struct open_ctx *c, const struct vmdk *v)
{
	const struct vmdk_descriptor *d = &v->desc;

	if (d->n_extents != 1 || d->extents[0].type != VMDK_EXTENT_SPARSE) {
		return vmdk__errf(c->errbuf, c->errlen, -EINVAL,
				  "%s: an embedded descriptor must describe "
				  "one SPARSE extent (the file itself)",
				  v->path);
	}
	return 0;
}

static int open_extents(struct open_ctx *c, struct vmdk *v)
{
	uint64_t start = 0;
	int err;

	if (v->desc_home == VMDK_DESC_EMBEDDED) {
		err = check_embedded(c, v);
		if (err) {
			return err;
		}
	}

	v->extents = calloc(v->desc.n_extents, sizeof(*v->extents));
	if (!v->extents) {
		return -ENOMEM;
	}
	for (size_t i = 0; i < v->desc.n_extents; i++) {
		const struct vmdk_desc_extent *d = &v->desc.extents[i];
		struct vmdk_extent *e = &v->extents[i];
		bool rw = v->writable && d->access == VMDK_ACCESS_RW;

		v->n_extents++;
		*e = (struct vmdk_extent){ .type = d->type,
					   .access = d->access,
					   .start_sectors = start,
					   .len_sectors = d->len_sectors,
					   .file_off_sectors =
						   d->offset_sectors,
					   .fd = -1 };
		start += d->len_sectors;
		if (d->type == VMDK_EXTENT_ZERO ||
		    d->access == VMDK_ACCESS_NOACCESS) {
			continue;
		}
		if (vmdk__extent_type_read_only(d->type)) {
			rw = false;
		}
		if (v->desc_home != VMDK_DESC_TEXT) {
			e->path = strdup(v->path);
		} else if (!extent_name_ok(d->file)) {
			return vmdk__errf(c->errbuf, c->errlen, -EINVAL,
					  "%s: extent %zu '%s': absolute or "
					  "'..' path leaves the descriptor's "
					  "directory",
					  v->path, i, d->file);
		} else {
			e->path = vmdk__path_join(v->dir, d->file);
		}
		if (!e->path) {
			return -ENOMEM;
		}
		err = vmdk__io_open(c->io, e->path, rw ? O_RDWR : O_RDONLY, 0,
				    &e->fd, c->errbuf, c->errlen);
		if (err) {
			char where[64];

			snprintf(where, sizeof(where), "extent %zu", i);
			vmdk__err_prefix(c->errbuf, c->errlen, err, where);
			return vmdk__err_prefix(c->errbuf, c->errlen, err,
						v->path);
		}
		if (d->type == VMDK_EXTENT_SPARSE) {
			err = open_sparse_extent(c, e, rw);
		} else if (d->type == VMDK_EXTENT_VMFSSPARSE) {
			err = open_cowd_extent(c, e);
		} else if (d->type == VMDK_EXTENT_SESPARSE) {
			err = open_sesparse_extent(c, e);
		}
		if (err) {
			return err;
		}
	}
	v->size_sectors = start;
	return 0;
}

/* A descriptor for a bare extent file opened directly. */
static int synth_desc(struct vmdk *v, const char *create_type,
		      enum vmdk_extent_type type, uint64_t capacity)
{
	int err = vmdk__descriptor_init(&v->desc, create_type);

	if (!err) {
		err = vmdk__descriptor_add_extent(&v->desc, VMDK_ACCESS_RW,
						  capacity, type,
						  vmdk__path_base(v->path), 0);
	}
	v->desc_home = VMDK_DESC_NONE;
	return err;
}

static int parse_text(struct open_ctx *c, struct vmdk *v, const char *text,
		      size_t len)
{
	int err = vmdk__descriptor_parse(text, len, &v->desc, c->errbuf,
					 c->errlen);

	if (err) {
		return vmdk__err_prefix(c->errbuf, c->errlen, err, v->path);
	}
	return 0;
}

static int read_kdmv_desc(struct open_ctx *c, struct vmdk *v, int fd,
			  uint64_t file_sectors)
{
	struct vmdk_sparse_header *h = &v->embed_hdr;
	size_t len;
	char *text;
	int err;

	err = vmdk__sparse_header_read(c->io, fd, file_sectors, h, c->errbuf,
				       c->errlen);
	if (err) {
		return vmdk__err_prefix(c->errbuf, c->errlen, err, v->path);
	}
	if (!h->desc_size_sectors) {
		return synth_desc(v, "monolithicSparse", VMDK_EXTENT_SPARSE,
				  h->capacity_sectors);
	}
	err = vmdk__sparse_desc_read(c->io, fd, h, &text, &len);
	if (err) {
		return err;
	}
	v->desc_home = VMDK_DESC_EMBEDDED;
	err = parse_text(c, v, text, len);
	free(text);
	return err;
}

/*
 * The descriptor in a file of @len bytes: its text up to the first NUL,
 * as QEMU reads it (a C string), in *@n.  QEMU pads descriptor files with
 * NULs, and what follows the first NUL is ignored: twice in CI a
 * descriptor qemu-img had just written (its grep found the extents) held
 * bytes after its NUL, which QEMU opens and a stricter reader refused.
 * Binary data (a control byte other than tab, CR or LF in the text) is
 * not a descriptor, nor some text with no line end: random bytes hold a
 * NUL after a few others often enough (one file in 29) that such a text
 * is taken for binary too.  An empty text is an empty descriptor (it
 * says it has no version line).
 */
static bool descriptor_text(const char *text, size_t len, size_t *n)
{
	*n = strnlen(text, len);
	if (*n > 0 && !memchr(text, '\n', *n)) {
		return false;
	}
	for (size_t i = 0; i < *n; i++) {
		unsigned char ch = (unsigned char)text[i];

		if (ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') {
			return false;
		}
	}
	return true;
}

static int read_desc(struct open_ctx *c, struct vmdk *v, int fd)
{
	union {
		struct vmdk_sparse_header_disk kdmv;
		struct vmdk_cowd_header_disk cowd;
		struct vmdk_sesparse_header_disk se;
	} raw;
	struct vmdk_sesparse_header sh;
	struct vmdk_cowd_header ch;
	uint64_t file_sectors;
	uint32_t magic;
	size_t len;
	char *text;
	int err;

	err = read_header(c->io, fd, &raw, sizeof(raw), &file_sectors);
	if (err) {
		return err;
	}
	memcpy(&magic, &raw, sizeof(magic));
	magic = le32toh(magic);
	if (magic == VMDK_SPARSE_MAGIC) {
		return read_kdmv_desc(c, v, fd, file_sectors);
	}
	if (magic == VMDK_COWD_MAGIC) {
		err = vmdk__cowd_header_decode(&raw.cowd, file_sectors, &ch,
					       c->errbuf, c->errlen);
		if (err) {
			return vmdk__err_prefix(c->errbuf, c->errlen, err,
						v->path);
		}
		return synth_desc(v, "vmfsSparse", VMDK_EXTENT_VMFSSPARSE,
				  ch.capacity_sectors);
	}
	if (le64toh(raw.se.magic) == VMDK_SESPARSE_MAGIC) {
		err = vmdk__sesparse_header_decode(&raw.se, file_sectors, &sh,
						   c->errbuf, c->errlen);
		if (err) {
			return vmdk__err_prefix(c->errbuf, c->errlen, err,
						v->path);
		}
		return synth_desc(v, "seSparse", VMDK_EXTENT_SESPARSE,
				  sh.capacity_sectors);
	}
	if (file_sectors > VMDK_MAX_DESCRIPTOR_BYTES / VMDK_SECTOR_SIZE) {
		return vmdk__errf(
			c->errbuf, c->errlen, -EFBIG,
			"%s: not a VMDK: no KDMV, COWD or seSparse magic, and "
			"over %u bytes for a descriptor",
			v->path, VMDK_MAX_DESCRIPTOR_BYTES);
	}
	text = malloc(vmdk_sectors_to_bytes(file_sectors) + 1);
	if (!text) {
		return -ENOMEM;
	}
	err = vmdk__io_read_full(c->io, fd, text,
				 vmdk_sectors_to_bytes(file_sectors), 0, &len);
	if (!err && !descriptor_text(text, len, &len)) {
		err = vmdk__errf(
			c->errbuf, c->errlen, -EINVAL,
			"%s: not a VMDK: no KDMV, COWD or seSparse magic, and "
			"binary data where a descriptor should be",
			v->path);
	} else if (!err) {
		text[len] = '\0';
		v->desc_home = VMDK_DESC_TEXT;
		err = parse_text(c, v, text, len);
	}
	free(text);
	return err;
}

static int open_parent(struct open_ctx *c, struct vmdk *v, unsigned depth)
{
	const char *hint = vmdk__descriptor_get(&v->desc, "parentFileNameHint");
	char *ppath;
	int err;

	if (!hint) {
		return 0;
	}
	ppath = vmdk__path_join(v->dir, hint);
	if (!ppath) {
		return -ENOMEM;
	}
	err = open_link(c, ppath, false, depth + 1, &v->parent);
	free(ppath);
	if (err) {
		/* Only the child of the failing disk adds its name. */
		if (!c->err_named) {
			c->err_named = true;
			vmdk__err_prefix(c->errbuf, c->errlen, err, v->path);
		}
		return err;
	}
	c->err_named = true;
	if (v->parent->desc.cid != v->desc.parent_cid) {
		return vmdk__errf(c->errbuf, c->errlen, -EINVAL,
				  "%s: parentCID %08" PRIx32
				  " does not match CID %08" PRIx32
				  " of parent %s (the parent changed after "
				  "the delta was made)",
				  v->path, v->desc.parent_cid,
				  v->parent->desc.cid, v->parent->path);
	}
	if (v->parent->size_sectors != v->size_sectors) {
		return vmdk__errf(c->errbuf, c->errlen, -EINVAL,
				  "%s: size %" PRIu64
				  " sectors differs from parent %s (%" PRIu64
				  ")",
				  v->path, v->size_sectors, v->parent->path,
				  v->parent->size_sectors);
	}
	return 0;
}

static int check_identity(struct open_ctx *c, const char *path, bool writable,
			  unsigned depth)
{
	struct stat st;
	int err;

	if (depth >= VMDK_MAX_CHAIN_DEPTH) {
		return vmdk__errf(c->errbuf, c->errlen, -ELOOP,
				  "%s: chain deeper than %u disks", path,
				  VMDK_MAX_CHAIN_DEPTH);
	}
	err = vmdk__io_stat(c->io, path, &st);
	if (err) {
		return vmdk__errf(c->errbuf, c->errlen, err, "%s: %s", path,
				  strerror(-err));
	}
	for (unsigned i = 0; i < c->n_seen; i++) {
		if (c->seen[i].dev == st.st_dev &&
		    c->seen[i].ino == st.st_ino) {
			return vmdk__errf(c->errbuf, c->errlen, -ELOOP,
					  "%s: loop: the chain comes back to "
					  "this disk",
					  path);
		}
	}
	c->seen[c->n_seen++] = (struct seen_file){ st.st_dev, st.st_ino };
	if (writable && !(st.st_mode & 0222) && !(c->flags & VMDK_OPEN_FORCE)) {
		return vmdk__errf(c->errbuf, c->errlen, -EROFS,
				  "%s: read-only (mode %04o): the parent of a "
				  "snapshot or linked clone",
				  path, (unsigned)(st.st_mode & 07777));
	}
	return 0;
}

static int open_link(struct open_ctx *c, const char *path, bool writable,
		     unsigned depth, struct vmdk **out)
{
	struct vmdk *v;
	int fd = -1;
	int err;

	err = check_identity(c, path, writable, depth);
	if (err) {
		return err;
	}
	v = calloc(1, sizeof(*v));
	if (!v) {
		return -ENOMEM;
	}
	v->io = c->io;
	v->writable = writable;
	v->depth = depth;
	v->path = strdup(path);
	v->dir = vmdk__path_dir(path);
	if (!v->path || !v->dir) {
		err = -ENOMEM;
		goto fail;
	}
	err = vmdk__io_open(c->io, path, O_RDONLY, 0, &fd, c->errbuf,
			    c->errlen);
	if (err) {
		goto fail;
	}
	err = read_desc(c, v, fd);
	vmdk__io_close(c->io, fd);
	if (err) {
		goto fail;
	}
	err = open_extents(c, v);
	if (!err) {
		err = open_parent(c, v, depth);
	}
	if (err) {
		goto fail;
	}
	*out = v;
	return 0;
fail:
	vmdk_close(v);
	return err;
}

int vmdk_open(const struct vmdk_io *io, const char *path, unsigned flags,
	      struct vmdk **out, char *errbuf, size_t errlen)
{
	struct open_ctx *c;
	int err;

	if (errbuf && errlen) {
		errbuf[0] = '\0';
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		return -ENOMEM;
	}
	c->io = io ? io : vmdk_io_posix();
	c->flags = flags;
	c->errbuf = errbuf;
	c->errlen = errlen;
	err = open_link(c, path, flags & VMDK_OPEN_RDWR, 0, out);
	free(c);
	return err;
}

void vmdk_close(struct vmdk *v)
{
	if (!v) {
		return;
	}
	vmdk_close(v->parent);
	for (size_t i = 0; i < v->n_extents; i++) {
		vmdk__gmap_free(v->extents[i].gmap);
		vmdk__io_close(v->io, v->extents[i].fd);
		free(v->extents[i].path);
	}
	free(v->extents);
	vmdk__descriptor_fini(&v->desc);
	free(v->grain_buf);
	free(v->dir);
	free(v->path);
	free(v);
}

uint64_t vmdk_size_bytes(const struct vmdk *v)
{
	return vmdk_sectors_to_bytes(v->size_sectors);
}

const struct vmdk *vmdk_parent(const struct vmdk *v)
{
	return v->parent;
}

struct vmdk_extent *vmdk__extent_find(struct vmdk *v, uint64_t sector)
{
	size_t lo = 0;
	size_t hi = v->n_extents;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (v->extents[mid].start_sectors <= sector) {
			lo = mid;
		} else {
			hi = mid;
		}
	}
	return &v->extents[lo];
}

int vmdk__desc_save(struct vmdk *v)
{
	size_t len;
	char *text;
	int fd = -1;
	int err;

	if (v->desc_home == VMDK_DESC_NONE) {
		return 0;
	}
	err = vmdk__descriptor_format(&v->desc, &text, &len);
	if (err) {
		return err;
	}
	if (v->desc_home == VMDK_DESC_TEXT) {
		err = vmdk__io_replace_file(v->io, v->path, text, len);
	} else {
		err = vmdk__io_open(v->io, v->path, O_RDWR, 0, &fd, NULL, 0);
		if (!err) {
			err = vmdk__sparse_desc_write(v->io, fd, &v->embed_hdr,
						      text, len);
			vmdk__io_close(v->io, fd);
		}
	}
	free(text);
	return err;
}

int vmdk__cid_update(struct vmdk *v)
{
	uint32_t old = v->desc.cid;
	uint32_t cid = vmdk__cid_random();
	int err;

	if (v->cid_updated || v->desc_home == VMDK_DESC_NONE) {
		v->cid_updated = true;
		return 0;
	}
	while (cid == old) {
		cid = vmdk__cid_random();
	}
	vmdk__descriptor_set_cid(&v->desc, cid);
	err = vmdk__desc_save(v);
	if (err) {
		vmdk__descriptor_set_cid(&v->desc, old);
		return err;
	}
	v->cid_updated = true;
	return 0;
}

int vmdk__files_set_writable(const struct vmdk *v, bool writable)
{
	struct stat st;
	int err;

	for (size_t i = 0; i <= v->n_extents; i++) {
		const char *p = i < v->n_extents ? v->extents[i].path : v->path;

		if (!p) {
			continue;
		}
		err = vmdk__io_stat(v->io, p, &st);
		if (!err && !writable) {
			err = vmdk__io_chmod(v->io, p, st.st_mode & 07555);
		} else if (!err && !(st.st_mode & 0200)) {
			err = vmdk__io_chmod(v->io, p,
					     (st.st_mode & 07777) | 0200);
		}
		if (err) {
			return err;
		}
	}
	return 0;
}
