// SPDX-License-Identifier: Apache-2.0
/*
 * vmdk/snapshot.c: snapshots and their consolidation.  A snapshot is a
 * linked clone named after its parent ("disk-000001.vmdk", ESXi's naming);
 * consolidating writes every grain the delta stores into its parent, then
 * removes the delta, the way deleting a snapshot does in vSphere.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vmdk/vmdk_int.h"

/* ESXi numbers deltas with six digits. */
#define SNAPSHOT_MAX 999999u

/* "disk-000002" -> "disk": a snapshot of a snapshot keeps the base name. */
static void strip_number(char *stem)
{
	size_t len = strlen(stem);

	if (len < 8 || stem[len - 7] != '-') {
		return;
	}
	for (size_t i = len - 6; i < len; i++) {
		if (!isdigit((unsigned char)stem[i])) {
			return;
		}
	}
	stem[len - 7] = '\0';
}

int vmdk_snapshot(const struct vmdk_io *io, const char *path, char *child,
		  size_t child_len, char *errbuf, size_t errlen)
{
	char *stem = vmdk__path_stem(path);
	char *name = NULL;
	struct stat st;
	int err = -EEXIST;

	if (!io) {
		io = vmdk_io_posix();
	}
	if (!stem) {
		return vmdk__errf(errbuf, errlen, -EINVAL,
				  "%s: name must end in .vmdk", path);
	}
	strip_number(stem);
	for (unsigned n = 1; n <= SNAPSHOT_MAX; n++) {
		free(name);
		if (asprintf(&name, "%s-%06u.vmdk", stem, n) < 0) {
			name = NULL;
			err = -ENOMEM;
			break;
		}
		if (vmdk__io_stat(io, name, &st) == -ENOENT) {
			err = 0;
			break;
		}
	}
	if (!err && strlen(name) >= child_len) {
		err = -ENAMETOOLONG;
	}
	if (!err) {
		err = vmdk_clone_linked(io, path, name, errbuf, errlen);
	}
	if (!err) {
		memcpy(child, name, strlen(name) + 1);
	} else if (err == -EEXIST) {
		vmdk__errf(errbuf, errlen, err,
			   "%s: all %u snapshot names used", path,
			   SNAPSHOT_MAX);
	}
	free(name);
	free(stem);
	return err;
}

struct merge {
	struct vmdk *child;
	struct vmdk *parent;
	uint8_t *buf;
	size_t buf_len;
	struct vmdk_copy_stats *stats;
};

/* Copies [@off, @off + @len) as the child reads it into the parent. */
static int merge_run(struct merge *m, uint64_t off, uint64_t len)
{
	int err;

	while (len) {
		size_t n = len < m->buf_len ? (size_t)len : m->buf_len;

		err = vmdk_pread(m->child, m->buf, n, off);
		if (!err) {
			err = vmdk_pwrite(m->parent, m->buf, n, off);
		}
		if (err) {
			return err;
		}
		m->stats->copied_bytes += n;
		off += n;
		len -= n;
	}
	return 0;
}

/* The grains the delta stores (or marks zeroed), never its parent's. */
static int merge_sparse(struct merge *m, struct vmdk_extent *e)
{
	uint64_t gb = vmdk_sectors_to_bytes(e->gmap->p.grain_sectors);
	uint64_t start = vmdk_sectors_to_bytes(e->start_sectors);
	uint64_t len = vmdk_sectors_to_bytes(e->len_sectors);
	enum vmdk_grain_state st;
	uint64_t sector = 0;
	int err;

	for (uint64_t g = 0; g * gb < len; g++) {
		uint64_t n = len - g * gb < gb ? len - g * gb : gb;

		err = vmdk__gmap_lookup(e->gmap, g, &st, &sector);
		if (!err && st != VMDK_GRAIN_UNALLOCATED) {
			err = merge_run(m, start + g * gb, n);
		}
		if (err) {
			return err;
		}
	}
	return 0;
}

static int merge_all(struct merge *m)
{
	int err = 0;

	for (size_t i = 0; i < m->child->n_extents && !err; i++) {
		struct vmdk_extent *e = &m->child->extents[i];

		if (e->gmap) {
			err = merge_sparse(m, e);
		} else {
			err = merge_run(m,
					vmdk_sectors_to_bytes(e->start_sectors),
					vmdk_sectors_to_bytes(e->len_sectors));
		}
	}
	return err;
}

/* Unlinks the descriptor and every extent file of @v (each once). */
static void remove_files(struct vmdk *v)
{
	for (size_t i = 0; i < v->n_extents; i++) {
		const char *p = v->extents[i].path;
		bool dup = !p || !strcmp(p, v->path);

		for (size_t j = 0; j < i && !dup; j++) {
			dup = v->extents[j].path &&
			      !strcmp(v->extents[j].path, p);
		}
		if (!dup) {
			vmdk__io_unlink(v->io, p);
		}
	}
	vmdk__io_unlink(v->io, v->path);
}

int vmdk_consolidate(const struct vmdk_io *io, const char *path,
		     struct vmdk_copy_stats *stats, char *errbuf, size_t errlen)
{
	struct vmdk_copy_stats local;
	struct merge m = { .buf_len = 1u << 20 };
	int err;

	if (!io) {
		io = vmdk_io_posix();
	}
	m.stats = stats ? stats : &local;
	memset(m.stats, 0, sizeof(*m.stats));
	err = vmdk_open(io, path, 0, &m.child, errbuf, errlen);
	if (err) {
		return err;
	}
	if (!m.child->parent) {
		err = vmdk__errf(errbuf, errlen, -EINVAL,
				 "%s: not a delta: it has no parent", path);
		goto out;
	}
	err = vmdk__files_set_writable(m.child->parent, true);
	if (!err) {
		err = vmdk_open(io, m.child->parent->path, VMDK_OPEN_RDWR,
				&m.parent, errbuf, errlen);
	}
	if (err) {
		goto out;
	}
	m.buf = malloc(m.buf_len);
	err = m.buf ? merge_all(&m) : -ENOMEM;
	if (!err) {
		err = vmdk_flush(m.parent);
	}
	if (err) {
		vmdk__errf(errbuf, errlen, err, "%s: merging into %s: %s", path,
			   m.parent->path, strerror(-err));
	} else {
		remove_files(m.child);
	}
out:
	free(m.buf);
	vmdk_close(m.parent);
	vmdk_close(m.child);
	return err;
}
