// SPDX-License-Identifier: Apache-2.0
/*
 * plan: the changed-block planner of an incremental transfer (plan.h).
 */
#include "nfsd/repl/plan.h"

#include <errno.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* What covers offset @off of a file: data at @phys (mapped), or a hole;
 * @end is where that answer stops holding. */
struct plan_at {
	bool mapped;
	bool unsure;
	uint64_t phys;
	uint64_t end;
};

static struct plan_at plan_lookup(const struct repl_extent *e, size_t n,
				  uint64_t off)
{
	struct plan_at at = { .end = UINT64_MAX };
	size_t lo = 0, hi = n;

	/* The first extent that ends past @off. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e[mid].logical + e[mid].length <= off) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	if (lo == n) {
		return at;
	}
	if (e[lo].logical > off) {
		at.end = e[lo].logical;
		return at;
	}
	at.mapped = true;
	at.unsure = (e[lo].flags & REPL_EXTENT_UNSURE) != 0;
	at.phys = e[lo].physical + (off - e[lo].logical);
	at.end = e[lo].logical + e[lo].length;
	return at;
}

/* Whether [@s, @e) reads the same from both files without reading them. */
static bool plan_same(const struct repl_extent *cur, size_t ncur,
		      const struct repl_extent *base, size_t nbase, uint64_t s,
		      uint64_t e, uint64_t base_size)
{
	uint64_t pos = s;

	while (pos < e) {
		struct plan_at a = plan_lookup(cur, ncur, pos);
		struct plan_at b = plan_lookup(base, nbase, pos);
		uint64_t end = a.end < b.end ? a.end : b.end;

		if (a.mapped != b.mapped) {
			return false;
		}
		if (a.mapped && (a.unsure || b.unsure || a.phys != b.phys ||
				 pos >= base_size)) {
			return false;
		}
		pos = end < e ? end : e;
	}
	return true;
}

int repl_plan_changed(const struct repl_extent *cur, size_t ncur,
		      const struct repl_extent *base, size_t nbase,
		      uint64_t size, uint64_t base_size, uint64_t block,
		      struct repl_range **out, size_t *nout)
{
	struct repl_range *r = NULL;
	size_t n = 0, cap = 0;

	*out = NULL;
	*nout = 0;
	if (!block || (block & (block - 1))) {
		return -EINVAL;
	}
	for (uint64_t s = 0; s < size; s += block) {
		uint64_t e = size - s < block ? size : s + block;

		if (plan_same(cur, ncur, base, nbase, s, e, base_size)) {
			continue;
		}
		if (n && r[n - 1].off + r[n - 1].len == s) {
			r[n - 1].len += e - s;
			continue;
		}
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			struct repl_range *nr = realloc(r, ncap * sizeof(*r));

			if (!nr) {
				free(r);
				return -ENOMEM;
			}
			r = nr;
			cap = ncap;
		}
		r[n].off = s;
		r[n].len = e - s;
		n++;
	}
	*out = r;
	*nout = n;
	return 0;
}

#define PLAN_FIEMAP_BATCH 256

int repl_plan_fiemap(int fd, struct repl_extent **out, size_t *n)
{
	size_t sz = sizeof(struct fiemap) +
		    PLAN_FIEMAP_BATCH * sizeof(struct fiemap_extent);
	struct fiemap *fm = malloc(sz);
	struct repl_extent *e = NULL;
	size_t cnt = 0, cap = 0;
	uint64_t start = 0;
	bool last = false;

	*out = NULL;
	*n = 0;
	if (!fm) {
		return -ENOMEM;
	}
	while (!last) {
		memset(fm, 0, sz);
		fm->fm_start = start;
		fm->fm_length = FIEMAP_MAX_OFFSET - start;
		fm->fm_flags = FIEMAP_FLAG_SYNC;
		fm->fm_extent_count = PLAN_FIEMAP_BATCH;
		if (ioctl(fd, FS_IOC_FIEMAP, fm) < 0) {
			int err = errno == ENOTTY ? -EOPNOTSUPP : -errno;

			free(fm);
			free(e);
			return err;
		}
		if (!fm->fm_mapped_extents) {
			break;
		}
		for (uint32_t i = 0; i < fm->fm_mapped_extents; i++) {
			const struct fiemap_extent *fe = &fm->fm_extents[i];

			if (cnt == cap) {
				size_t ncap = cap ? cap * 2 : 64;
				struct repl_extent *ne =
					realloc(e, ncap * sizeof(*e));

				if (!ne) {
					free(fm);
					free(e);
					return -ENOMEM;
				}
				e = ne;
				cap = ncap;
			}
			e[cnt].logical = fe->fe_logical;
			e[cnt].physical = fe->fe_physical;
			e[cnt].length = fe->fe_length;
			e[cnt].flags =
				(fe->fe_flags & (FIEMAP_EXTENT_UNKNOWN |
						 FIEMAP_EXTENT_DELALLOC |
						 FIEMAP_EXTENT_ENCODED |
						 FIEMAP_EXTENT_DATA_INLINE |
						 FIEMAP_EXTENT_NOT_ALIGNED))
					? REPL_EXTENT_UNSURE
					: 0;
			cnt++;
			start = fe->fe_logical + fe->fe_length;
			if (fe->fe_flags & FIEMAP_EXTENT_LAST) {
				last = true;
			}
		}
	}
	free(fm);
	*out = e;
	*n = cnt;
	return 0;
}
