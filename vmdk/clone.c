// SPDX-License-Identifier: Apache-2.0
/*
 * vmdk/clone.c: full clones (and conversions), linked clones, snapshots and
 * consolidation.  A full clone walks the source's block status through its
 * chain and copies only stored runs, so its time follows used space, never
 * size; the copy goes to the kernel (FICLONE for a whole flat file,
 * copy_file_range(2) per run) when the file system allows it.  A linked
 * clone or snapshot is a new monolithicSparse delta whose grain tables are
 * holes: constant time whatever the parent's size.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vmdk/vmdk_int.h"

/* Largest run handed to one copy call. */
#define COPY_RUN_BYTES (64ull << 20)
/* Buffer of the read/write path. */
#define COPY_BUF_BYTES (1u << 20)
/* Zero detection granularity of convert: the file system block. */
#define ZERO_BLOCK_BYTES 4096u

struct copier {
	struct vmdk *src;
	struct vmdk *dst;
	int dst_fd; /* flat destination: its data file, else -1 */
	bool zero_detect;
	bool offload; /* copy_file_range still worth trying */
	uint8_t *buf;
	struct vmdk_copy_stats *stats;
	vmdk_progress_fn progress; /* may be NULL */
	void *progress_arg;
};

static bool is_zero(const uint8_t *p, size_t len)
{
	return len == 0 || (p[0] == 0 && !memcmp(p, p + 1, len - 1));
}

static int dst_write(struct copier *c, const uint8_t *p, size_t n, uint64_t off)
{
	if (c->dst_fd >= 0) {
		return vmdk__io_write_full(c->dst->io, c->dst_fd, p, n, off);
	}
	return vmdk_pwrite(c->dst, p, n, off);
}

/* Writes @n bytes at @off, leaving out 4 KiB blocks of zeros. */
static int write_nonzero(struct copier *c, const uint8_t *p, size_t n,
			 uint64_t off)
{
	size_t i = 0;
	int err;

	while (i < n) {
		size_t b = n - i < ZERO_BLOCK_BYTES ? n - i : ZERO_BLOCK_BYTES;
		size_t start = i;

		if (is_zero(p + i, b)) {
			c->stats->skipped_bytes += b;
			i += b;
			continue;
		}
		while (i < n && !is_zero(p + i, b)) {
			i += b;
			b = n - i < ZERO_BLOCK_BYTES ? n - i : ZERO_BLOCK_BYTES;
		}
		err = dst_write(c, p + start, i - start, off + start);
		if (err) {
			return err;
		}
		c->stats->copied_bytes += i - start;
	}
	return 0;
}

static int copy_rw(struct copier *c, uint64_t off, uint64_t len)
{
	int err;

	while (len) {
		size_t n = len < COPY_BUF_BYTES ? (size_t)len : COPY_BUF_BYTES;

		err = vmdk_pread(c->src, c->buf, n, off);
		if (err) {
			return err;
		}
		if (c->zero_detect) {
			err = write_nonzero(c, c->buf, n, off);
		} else {
			err = dst_write(c, c->buf, n, off);
			c->stats->copied_bytes += n;
		}
		if (err) {
			return err;
		}
		off += n;
		len -= n;
	}
	return 0;
}

/* copy_file_range from the source file; falls back once it is refused. */
static int copy_offload(struct copier *c, const struct vmdk_map *m,
			uint64_t off)
{
	uint64_t done = 0;
	ssize_t n;

	while (done < m->run_bytes) {
		n = vmdk__io_copy_range(c->src->io, m->fd, m->file_off + done,
					c->dst_fd, off + done,
					(size_t)(m->run_bytes - done));
		if (n == -EXDEV || n == -EOPNOTSUPP || n == -EINVAL ||
		    n == -ENOSYS || n == 0) {
			c->offload = false;
			return copy_rw(c, off + done, m->run_bytes - done);
		}
		if (n < 0) {
			return (int)n;
		}
		done += (uint64_t)n;
		c->stats->copied_bytes += (uint64_t)n;
		c->stats->offload_bytes += (uint64_t)n;
	}
	return 0;
}

static int copy_all(struct copier *c)
{
	uint64_t size = vmdk_size_bytes(c->src);
	uint64_t off = 0;
	struct vmdk_map m;
	int err;

	while (off < size) {
		uint64_t len = size - off < COPY_RUN_BYTES ? size - off
							   : COPY_RUN_BYTES;

		err = vmdk__map(c->src, off, len, &m);
		if (err) {
			return err;
		}
		if (m.status == VMDK_BLOCK_ZERO) {
			c->stats->skipped_bytes += m.run_bytes;
		} else if (c->offload && c->dst_fd >= 0 && m.fd >= 0 &&
			   !c->zero_detect) {
			err = copy_offload(c, &m, off);
		} else {
			err = copy_rw(c, off, m.run_bytes);
		}
		if (err) {
			return err;
		}
		off += m.run_bytes;
		if (c->progress) {
			err = c->progress(c->progress_arg, off, size);
			if (err) {
				return err;
			}
		}
	}
	return 0;
}

/* The type a keep_type clone gets: that of the base when it is flat. */
static enum vmdk_type source_type(const struct vmdk *src)
{
	const struct vmdk *base = src;
	struct vmdk_info in;
	enum vmdk_type t;

	while (base->parent) {
		base = base->parent;
	}
	vmdk_info_get(base, &in);
	if (!in.provisioning || vmdk_type_parse(in.provisioning, &t)) {
		return VMDK_TYPE_SPARSE;
	}
	return t;
}

/* FICLONE of a whole flat file onto the new flat destination.  Returns
 * 0, -EINVAL when the source is not one flat file the size of the disk,
 * or the file system's refusal (-EOPNOTSUPP, -EXDEV, ...). */
static int try_reflink(struct copier *c)
{
	const struct vmdk *s = c->src;
	const struct vmdk_extent *e = &s->extents[0];
	struct stat st;
	int err;

	if (s->parent || s->n_extents != 1 || c->zero_detect || c->dst_fd < 0 ||
	    (e->type != VMDK_EXTENT_FLAT && e->type != VMDK_EXTENT_VMFS) ||
	    e->file_off_sectors != 0) {
		return -EINVAL;
	}
	err = vmdk__io_fstat(s->io, e->fd, &st);
	if (err) {
		return err;
	}
	if ((uint64_t)st.st_size != vmdk_size_bytes(s)) {
		return -EINVAL;
	}
	err = vmdk__io_clone_file(s->io, e->fd, c->dst_fd);
	if (err) {
		return err;
	}
	c->stats->copied_bytes += (uint64_t)st.st_blocks * 512;
	c->stats->offload_bytes += (uint64_t)st.st_blocks * 512;
	return 0;
}

/* How clone_into() moves the data. */
enum clone_how {
	CLONE_ANY, /* FICLONE when it can, else a copy */
	CLONE_COPY, /* copy_file_range or read/write, never FICLONE */
	CLONE_SHARE, /* FICLONE or nothing */
};

static void remove_disk(const struct vmdk_io *io, const char *path,
			enum vmdk_type type)
{
	char *flat = vmdk__flat_name(path);

	if (flat && type != VMDK_TYPE_SPARSE) {
		vmdk__io_unlink(io, flat);
	}
	vmdk__io_unlink(io, path);
	free(flat);
}

static int clone_into(struct copier *c, const char *dst, enum vmdk_type type,
		      enum clone_how how, char *errbuf, size_t errlen)
{
	const struct vmdk_io *io = c->src->io;
	const char *adapter =
		vmdk__descriptor_get(&c->src->desc, "ddb.adapterType");
	struct vmdk_create_opts o = {
		.size_bytes = vmdk_size_bytes(c->src),
		.type = type,
		.adapter = adapter,
	};
	int err;

	err = vmdk_create(io, dst, &o, errbuf, errlen);
	if (err == -EINVAL && o.adapter) {
		/* An adapter VMware writes that we do not create: default. */
		o.adapter = NULL;
		err = vmdk_create(io, dst, &o, errbuf, errlen);
	}
	if (err) {
		return err;
	}
	err = vmdk_open(io, dst, VMDK_OPEN_RDWR, &c->dst, errbuf, errlen);
	if (err) {
		goto fail;
	}
	if (type != VMDK_TYPE_SPARSE) {
		c->dst_fd = c->dst->extents[0].fd;
	}
	if (how == CLONE_SHARE) {
		err = try_reflink(c);
		if (err == -EINVAL || err == -ENOTTY || err == -EXDEV ||
		    err == -EOPNOTSUPP) {
			vmdk__errf(errbuf, errlen, -EOPNOTSUPP,
				   "%s: the file system cannot share its "
				   "blocks with %s (FICLONE: %s): a native "
				   "clone needs XFS with reflink=1 or btrfs",
				   c->src->path, dst, strerror(-err));
			err = -EOPNOTSUPP;
		} else if (err) {
			vmdk__errf(errbuf, errlen, err, "%s: FICLONE to %s: %s",
				   c->src->path, dst, strerror(-err));
		}
	} else {
		/* The reflink of a thick source would drop its reserved,
		 * unwritten blocks: those get a copy. */
		if (how == CLONE_COPY || type == VMDK_TYPE_EAGERZEROEDTHICK ||
		    try_reflink(c)) {
			err = copy_all(c);
		}
		if (err) {
			vmdk__errf(errbuf, errlen, err, "%s: copy to %s: %s",
				   c->src->path, dst, strerror(-err));
		}
	}
	if (!err) {
		err = vmdk_flush(c->dst);
		if (err) {
			vmdk__errf(errbuf, errlen, err, "%s: sync: %s", dst,
				   strerror(-err));
		}
	}
	vmdk_close(c->dst);
	c->dst = NULL;
	if (!err) {
		return 0;
	}
fail:
	remove_disk(io, dst, type);
	return err;
}

int vmdk_clone_full(const struct vmdk_io *io, const char *src, const char *dst,
		    const struct vmdk_clone_opts *opts,
		    struct vmdk_copy_stats *stats, char *errbuf, size_t errlen)
{
	struct vmdk_copy_stats local;
	struct copier c = { .dst_fd = -1, .offload = true };
	enum vmdk_type type;
	int err;

	if (!io) {
		io = vmdk_io_posix();
	}
	c.stats = stats ? stats : &local;
	memset(c.stats, 0, sizeof(*c.stats));
	c.zero_detect = opts->zero_detect;
	c.progress = opts->progress;
	c.progress_arg = opts->progress_arg;
	err = vmdk_open(io, src, 0, &c.src, errbuf, errlen);
	if (err) {
		return err;
	}
	type = opts->keep_type ? source_type(c.src) : opts->type;
	c.buf = malloc(COPY_BUF_BYTES);
	if (!c.buf) {
		err = -ENOMEM;
	} else {
		err = clone_into(&c, dst, type,
				 opts->no_reflink ? CLONE_COPY : CLONE_ANY,
				 errbuf, errlen);
	}
	free(c.buf);
	vmdk_close(c.src);
	return err;
}

int vmdk_clone_native(const struct vmdk_io *io, const char *src,
		      const char *dst, char *errbuf, size_t errlen)
{
	struct vmdk_copy_stats stats;
	struct copier c = { .dst_fd = -1, .stats = &stats };
	struct vmdk *d = NULL;
	bool thin;
	int err;

	if (!io) {
		io = vmdk_io_posix();
	}
	memset(&stats, 0, sizeof(stats));
	err = vmdk_open(io, src, 0, &c.src, errbuf, errlen);
	if (err) {
		return err;
	}
	if (c.src->parent || c.src->n_extents != 1 ||
	    (c.src->extents[0].type != VMDK_EXTENT_FLAT &&
	     c.src->extents[0].type != VMDK_EXTENT_VMFS)) {
		err = vmdk__errf(errbuf, errlen, -EINVAL,
				 "%s: a native clone is of a flat disk with "
				 "one extent and no parent",
				 src);
		goto out;
	}
	thin = vmdk__descriptor_get(&c.src->desc, "ddb.thinProvisioned");
	/* Made thin (no blocks), then every block shared by FICLONE. */
	err = clone_into(&c, dst, VMDK_TYPE_THIN, CLONE_SHARE, errbuf, errlen);
	if (err || thin) {
		goto out;
	}
	err = vmdk_open(io, dst, VMDK_OPEN_RDWR, &d, errbuf, errlen);
	if (!err) {
		vmdk__descriptor_unset(&d->desc, "ddb.thinProvisioned");
		err = vmdk__desc_save(d);
		vmdk_close(d);
	}
	if (err) {
		remove_disk(io, dst, VMDK_TYPE_THIN);
	}
out:
	vmdk_close(c.src);
	return err;
}

static int delta_desc(const struct vmdk *parent, const char *dst,
		      struct vmdk_descriptor *d)
{
	static const char *const copied[] = { "ddb.virtualHWVersion",
					      "ddb.adapterType",
					      "ddb.geometry.cylinders",
					      "ddb.geometry.heads",
					      "ddb.geometry.sectors" };
	char *dir = vmdk__path_dir(dst);
	char *hint = dir ? vmdk__path_hint(dir, parent->path) : NULL;
	int err = hint ? 0 : -ENOMEM;

	if (!err) {
		err = vmdk__descriptor_init(d, "monolithicSparse");
	}
	if (!err) {
		err = vmdk__descriptor_set_parent(d, parent->desc.cid, hint);
		if (!err) {
			err = vmdk__descriptor_add_extent(
				d, VMDK_ACCESS_RW, parent->size_sectors,
				VMDK_EXTENT_SPARSE, vmdk__path_base(dst), 0);
		}
		for (size_t i = 0; !err && i < ARRAY_SIZE(copied); i++) {
			const char *val =
				vmdk__descriptor_get(&parent->desc, copied[i]);

			if (val) {
				err = vmdk__descriptor_set(d, copied[i], val);
			}
		}
		if (err) {
			vmdk__descriptor_fini(d);
		}
	}
	free(hint);
	free(dir);
	return err;
}

int vmdk_clone_linked(const struct vmdk_io *io, const char *src,
		      const char *dst, char *errbuf, size_t errlen)
{
	struct vmdk_descriptor d;
	struct stat st;
	struct vmdk *p;
	char *stem;
	int err;

	if (!io) {
		io = vmdk_io_posix();
	}
	stem = vmdk__path_stem(dst);
	if (!stem) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "%s: name must end in .vmdk", dst);
	}
	free(stem);
	if (!vmdk__io_stat(io, dst, &st)) {
		return vmdk__errf(errbuf, errlen, -EEXIST, "%s: exists", dst);
	}
	err = vmdk_open(io, src, 0, &p, errbuf, errlen);
	if (err) {
		return err;
	}
	if (p->size_sectors > UINT32_MAX) {
		err = vmdk__errf(errbuf, errlen, -EINVAL,
				 "%s: over 2 TiB: a sparse delta cannot "
				 "hold it",
				 src);
		goto out;
	}
	err = delta_desc(p, dst, &d);
	if (err) {
		goto out;
	}
	err = vmdk__sparse_create(io, dst, &d, p->size_sectors, errbuf, errlen);
	vmdk__descriptor_fini(&d);
	if (!err) {
		err = vmdk__files_set_writable(p, false);
		if (err) {
			vmdk__errf(errbuf, errlen, err, "%s: chmod: %s", src,
				   strerror(-err));
			vmdk__io_unlink(io, dst);
		}
	}
out:
	vmdk_close(p);
	return err;
}
