// SPDX-License-Identifier: Apache-2.0
/*
 * vmdk/check.c: consistency check of a disk and its chain, like
 * `qemu-img check`.  Opening already validates descriptors, headers, grain
 * directories, CIDs, sizes and the chain's shape; this adds what opening
 * leaves to the first access: every grain table entry (inside the file, out
 * of the metadata, no two grains or tables overlapping), the redundant
 * directory and tables against the primary ones, flat files long enough for
 * their extents, and the space no table points at (leaks, not errors).
 * A redundant copy that lags the primary one is what a crash between their
 * two writes leaves: a warning, since reads use the primary.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vmdk/vmdk_int.h"

/* Grains and tables sorted for the overlap check (16 bytes each). */
#define CHECK_MAX_REGIONS (32u << 20)
/* Problems reported per extent before the rest are only counted. */
#define CHECK_REPORT_MAX 20u

struct checker {
	vmdk_check_problem_fn cb;
	void *arg;
	struct vmdk_check_report *rep;
	char *errbuf;
	size_t errlen;
	unsigned in_extent; /* problems in the current extent */
};

/* A region of a sparse file: a grain or a grain table. */
struct region {
	uint64_t start; /* sectors */
	uint32_t len; /* sectors */
	bool table;
};

static void report(struct checker *c, bool error, const char *fmt, va_list ap)
{
	char msg[512];
	int n;

	if (error) {
		c->rep->errors++;
	} else {
		c->rep->warnings++;
	}
	if (++c->in_extent > CHECK_REPORT_MAX) {
		return;
	}
	n = snprintf(msg, sizeof(msg), "%s", error ? "" : "warning: ");
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	if (error && c->rep->errors == 1 && c->errbuf && c->errlen) {
		snprintf(c->errbuf, c->errlen, "%s", msg);
	}
	if (c->cb) {
		c->cb(c->arg, msg);
	}
}

static void problem(struct checker *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Corruption: data may be lost or misread. */
static void problem(struct checker *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report(c, true, fmt, ap);
	va_end(ap);
}

static void warning(struct checker *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Harmless for reads: a redundant copy behind the primary (a crash). */
static void warning(struct checker *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report(c, false, fmt, ap);
	va_end(ap);
}

static int region_cmp(const void *a, const void *b)
{
	const struct region *x = a;
	const struct region *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

struct regions {
	struct region *r;
	size_t n, cap, max;
};

static int region_add(struct regions *rs, uint64_t start, uint32_t len,
		      bool table)
{
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 1024;
		struct region *g;

		if (cap > rs->max) {
			cap = rs->max;
		}
		if (rs->n >= cap) {
			return -E2BIG;
		}
		g = realloc(rs->r, cap * sizeof(*g));
		if (!g) {
			return -ENOMEM;
		}
		rs->r = g;
		rs->cap = cap;
	}
	rs->r[rs->n++] = (struct region){ start, len, table };
	return 0;
}

/* Sectors grain @grain at @s occupies: a grain, or its compressed marker. */
static int grain_sectors(struct checker *c, struct vmdk_extent *e,
			 uint64_t grain, uint64_t s, uint32_t *len)
{
	uint64_t n;
	int err;

	(void)c;
	if (!e->gmap->p.compressed) {
		*len = e->gmap->p.grain_sectors;
		return 0;
	}
	err = vmdk__stream_grain_sectors(e->gmap->io, e, grain, s, &n);
	if (!err) {
		*len = (uint32_t)n;
	}
	return err;
}

/* Grain tables of @dir: each entry checked, grains collected. */
static int check_tables(struct checker *c, struct vmdk_extent *e,
			const uint32_t *dir, const char *name,
			struct regions *rs, uint64_t *gte, uint64_t *other)
{
	struct vmdk_gmap *m = e->gmap;
	int err;

	for (uint32_t i = 0; i < m->p.gd_entries; i++) {
		if (!dir[i]) {
			continue;
		}
		err = region_add(rs, dir[i], m->gt_sectors, true);
		if (!err) {
			err = vmdk__gmap_read_table(m, dir[i], gte);
		}
		if (err) {
			return err;
		}
		if (dir == m->rgd) {
			/* Redundant tables must equal the primary ones. */
			if (!m->gd[i] ||
			    vmdk__gmap_read_table(m, m->gd[i], other) ||
			    memcmp(gte, other,
				   m->p.gtes_per_gt * sizeof(*gte))) {
				warning(c,
					"%s: %s table %" PRIu32
					" differs from the primary one",
					e->path, name, i);
			}
			continue;
		}
		for (uint32_t j = 0; j < m->p.gtes_per_gt; j++) {
			uint64_t s = gte[j];
			uint32_t len;

			if (s == 0 ||
			    (s == VMDK_GTE_ZEROED && m->p.zero_grain)) {
				continue;
			}
			if (s == VMDK_GTE_INVALID) {
				problem(c,
					"%s: grain table %" PRIu32
					" entry %" PRIu32
					": not a valid grain entry",
					e->path, i, j);
				continue;
			}
			if (s < m->p.min_data_sector || s >= m->end_sector) {
				problem(c,
					"%s: grain table %" PRIu32
					" entry %" PRIu32
					": grain at sector %" PRIu64 " is %s",
					e->path, i, j, s,
					s < m->p.min_data_sector
						? "inside the metadata"
						: "past the end of file");
				continue;
			}
			c->rep->allocated_grains++;
			err = grain_sectors(c, e,
					    (uint64_t)i * m->p.gtes_per_gt + j,
					    s, &len);
			if (err == -EINVAL) {
				problem(c,
					"%s: grain table %" PRIu32
					" entry %" PRIu32
					": no valid grain marker at sector "
					"%" PRIu64,
					e->path, i, j, s);
				continue;
			}
			if (!err) {
				err = region_add(rs, s, len, false);
			}
			if (err) {
				return err;
			}
		}
	}
	return 0;
}

static void check_overlaps(struct checker *c, struct vmdk_extent *e,
			   struct regions *rs)
{
	struct vmdk_gmap *m = e->gmap;
	uint64_t used = 0;
	uint64_t end = 0;

	/* qsort() may not be given a NULL array, even an empty one. */
	if (rs->n > 1) {
		qsort(rs->r, rs->n, sizeof(*rs->r), region_cmp);
	}
	for (size_t i = 0; i < rs->n; i++) {
		const struct region *r = &rs->r[i];

		if (i && r->start < end) {
			problem(c,
				"%s: %s at sector %" PRIu64
				" overlaps the region before it",
				e->path, r->table ? "grain table" : "grain",
				r->start);
		}
		if (r->start >= m->p.min_data_sector) {
			used += r->len;
		}
		if (r->start + r->len > end) {
			end = r->start + r->len;
		}
	}
	if (m->end_sector > m->p.min_data_sector &&
	    m->end_sector - m->p.min_data_sector > used) {
		c->rep->leaked_bytes += vmdk_sectors_to_bytes(
			m->end_sector - m->p.min_data_sector - used);
	}
}

static int check_sparse(struct checker *c, struct vmdk_extent *e)
{
	struct vmdk_gmap *m = e->gmap;
	struct regions rs = { 0 };
	uint64_t *gte = malloc((size_t)m->p.gtes_per_gt * sizeof(*gte) * 2);
	bool capped;
	uint64_t fit;
	int err;

	if (!gte) {
		return -ENOMEM;
	}
	/* More grains than fit in the file can only overlap. */
	fit = (m->p.compressed ? m->end_sector
			       : m->end_sector / m->p.grain_sectors) +
	      (uint64_t)m->p.gd_entries * 2 + 1;
	capped = fit > CHECK_MAX_REGIONS;
	rs.max = capped ? CHECK_MAX_REGIONS : (size_t)fit;
	if (m->rgd) {
		for (uint32_t i = 0; i < m->p.gd_entries; i++) {
			if (!m->gd[i] != !m->rgd[i]) {
				warning(c,
					"%s: grain directory entry %" PRIu32
					" is %" PRIu32
					" but its redundant copy is %" PRIu32,
					e->path, i, m->gd[i], m->rgd[i]);
			}
		}
	}
	err = check_tables(c, e, m->gd, "grain directory", &rs, gte,
			   gte + m->p.gtes_per_gt);
	if (!err && m->rgd) {
		err = check_tables(c, e, m->rgd, "redundant", &rs, gte,
				   gte + m->p.gtes_per_gt);
	}
	if (err == -E2BIG && capped) {
		warning(c, "%s: over %u grains: overlaps not checked", e->path,
			CHECK_MAX_REGIONS);
		err = 0;
	} else if (err == -E2BIG) {
		problem(c, "%s: more grains than the file can hold: overlaps",
			e->path);
		err = 0;
	} else if (!err) {
		check_overlaps(c, e, &rs);
	}
	free(rs.r);
	free(gte);
	return err;
}

static int check_flat(struct checker *c, const struct vmdk_io *io,
		      struct vmdk_extent *e)
{
	uint64_t need =
		vmdk_sectors_to_bytes(e->file_off_sectors + e->len_sectors);
	struct stat st;
	int err;

	err = vmdk__io_fstat(io, e->fd, &st);
	if (err) {
		return err;
	}
	if ((uint64_t)st.st_size < need) {
		problem(c,
			"%s: file is %" PRIu64
			" bytes, its extent needs %" PRIu64,
			e->path, (uint64_t)st.st_size, need);
	}
	return 0;
}

int vmdk_check(const struct vmdk_io *io, const char *path,
	       vmdk_check_problem_fn cb, void *arg,
	       struct vmdk_check_report *rep, char *errbuf, size_t errlen)
{
	struct checker c = { .cb = cb,
			     .arg = arg,
			     .rep = rep,
			     .errbuf = errbuf,
			     .errlen = errlen };
	char msg[512] = "";
	struct stat st;
	struct vmdk *v;
	int err;

	if (!io) {
		io = vmdk_io_posix();
	}
	memset(rep, 0, sizeof(*rep));
	if (errbuf && errlen) {
		errbuf[0] = '\0';
	}
	err = vmdk__io_stat(io, path, &st);
	if (err) {
		return vmdk__errf(errbuf, errlen, err, "%s: %s", path,
				  strerror(-err));
	}
	err = vmdk_open(io, path, 0, &v, msg, sizeof(msg));
	if (err == -ENOMEM) {
		return err;
	}
	if (err) {
		problem(&c, "%s", msg[0] ? msg : strerror(-err));
		return 0;
	}
	for (struct vmdk *l = v; l && !err; l = l->parent) {
		rep->links++;
		for (size_t i = 0; i < l->n_extents && !err; i++) {
			struct vmdk_extent *e = &l->extents[i];

			c.in_extent = 0;
			if (e->gmap) {
				err = check_sparse(&c, e);
			} else if (e->fd >= 0) {
				err = check_flat(&c, io, e);
			}
		}
	}
	vmdk_close(v);
	if (err) {
		/* The callback may have run: a failure is one more finding. */
		problem(&c, "%s: check stopped: %s", path, strerror(-err));
	}
	return 0;
}
