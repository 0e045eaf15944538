// SPDX-License-Identifier: Apache-2.0
/*
 * placement: the three placement policies (see placement.h), as the
 * AVS / ANF tests place VMDKs: all on one datastore, spread round-robin,
 * or one datastore per VM.
 */
#include "perf/dsload/placement.h"

#include <errno.h>
#include <string.h>

#include "nfsd/base/base.h"

static const char *const place_names[] = {
	[PLACE_ONE] = "one",
	[PLACE_SPREAD] = "spread",
	[PLACE_PER_VM] = "per-vm",
};

int place_policy_parse(const char *name, enum place_policy *out)
{
	for (unsigned i = 0; i < ARRAY_SIZE(place_names); i++) {
		if (!strcmp(name, place_names[i])) {
			*out = (enum place_policy)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *place_policy_name(enum place_policy policy)
{
	if ((unsigned)policy < ARRAY_SIZE(place_names)) {
		return place_names[policy];
	}
	return "?";
}

unsigned place_datastore(const struct place_shape *s, unsigned host,
			 unsigned vm, unsigned disk)
{
	unsigned g = host * s->vms + vm;

	switch (s->policy) {
	case PLACE_ONE:
		return 0;
	case PLACE_SPREAD:
		return (g + disk) % s->datastores;
	case PLACE_PER_VM:
		return g % s->datastores;
	}
	return 0;
}

unsigned place_flows(const struct place_shape *s)
{
	unsigned flows = 0;

	for (unsigned h = 0; h < s->hosts; h++) {
		for (unsigned d = 0; d < s->datastores; d++) {
			int used = 0;

			for (unsigned v = 0; v < s->vms && !used; v++) {
				for (unsigned k = 0; k < s->vmdks && !used;
				     k++) {
					used = place_datastore(s, h, v, k) == d;
				}
			}
			flows += used;
		}
	}
	return flows;
}
