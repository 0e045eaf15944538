// SPDX-License-Identifier: Apache-2.0
/*
 * patch: a change of several fields as one.  The registry checks every
 * operation on its own and some valid end states can be reached only in
 * one order (a pool becomes Flexible before it buys throughput; an Ultra
 * pool shrinks only after its volumes left), so the orders are tried on a
 * scratch registry, which has no ledger, before the live one is touched.
 */
#include "nfsd/admin/admin_int.h"
#include "nfsd/admin/patch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The next order of @a in lexicographic order; false after the last. */
static bool patch_next_order(int *a, size_t n)
{
	size_t i, j;
	int t;

	if (n < 2) {
		return false;
	}
	i = n - 1;
	while (i > 0 && a[i - 1] >= a[i]) {
		i--;
	}
	if (i == 0) {
		return false;
	}
	j = n - 1;
	while (a[j] <= a[i - 1]) {
		j--;
	}
	t = a[i - 1];
	a[i - 1] = a[j];
	a[j] = t;
	for (j = n - 1; i < j; i++, j--) {
		t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
	return true;
}

static int patch_cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Finds an order of @steps in which each one passes, on a scratch copy.
 * Returns 0 with it in @order, or the error of the first order tried. */
static int patch_plan(struct admin_api *api, const int *steps, size_t n,
		      admin_step_fn *fn, void *arg, int *order, char *errbuf,
		      size_t errlen)
{
	struct pool_registry *scratch = NULL;
	struct pool_state *st = admin__state_get(api);
	int first = 0, err = -ENOMEM;
	char why[300];

	if (!st || pool_registry_new(NULL, NULL, &scratch)) {
		snprintf(errbuf, errlen, "out of memory");
		goto out;
	}
	memcpy(order, steps, n * sizeof(*order));
	qsort(order, n, sizeof(*order), patch_cmp);
	do {
		err = pool_registry_load(scratch, st, NULL, why, sizeof(why));
		for (size_t i = 0; !err && i < n; i++) {
			err = fn(scratch, order[i], arg, NULL, why,
				 sizeof(why));
		}
		if (!err) {
			break;
		}
		if (!first) {
			first = err;
			snprintf(errbuf, errlen, "%s", why);
		}
	} while (patch_next_order(order, n));
	if (err) {
		err = first;
	}
out:
	pool_registry_free(scratch);
	free(st);
	return err;
}

int admin__patch_apply(struct admin_api *api, const int *steps, size_t n,
		       admin_step_fn *fn, void *arg,
		       const char *const *step_names,
		       struct pool_limits *limits, char *errbuf, size_t errlen)
{
	int order[ADMIN_PATCH_MAX_STEPS];
	char why[300], done[128] = "";
	size_t used = 0;
	int err;

	if (n == 0 || n > ADMIN_PATCH_MAX_STEPS) {
		snprintf(errbuf, errlen, "body: nothing to change");
		return -EINVAL;
	}
	err = patch_plan(api, steps, n, fn, arg, order, errbuf, errlen);
	if (err) {
		return err;
	}
	for (size_t i = 0; i < n; i++) {
		err = fn(api->ctx.pools, order[i], arg, limits, why,
			 sizeof(why));
		if (err) {
			snprintf(errbuf, errlen, "%s%s%s%s", why,
				 i ? " (applied before: " : "", done,
				 i ? ")" : "");
			return err;
		}
		used += (size_t)snprintf(done + used, sizeof(done) - used,
					 "%s%s", i ? ", " : "",
					 step_names[order[i]]);
		if (used >= sizeof(done)) {
			used = sizeof(done) - 1;
		}
	}
	return 0;
}
