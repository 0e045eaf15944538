// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_overlay: libFuzzer target for the decoder of
 * STATE_DIR/admin-state.json (nfsd/overlay/codec.c) and what is done with
 * what it accepts.  Any input either decodes or is refused with a reason;
 * an accepted overlay encodes to text that decodes to the same text again
 * (round trip), and laid over a small valid config it always gives a state
 * that passes every pool rule (overlay.c drops what does not fit).
 * Seeds: tests/fuzz/corpus/overlay/.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/overlay/overlay.h"

/* p1: Premium 4 TiB, ds1 in it with 1 TiB; p2: Flexible, manual. */
static void fuzz_base(struct pool_state *st)
{
	memset(st, 0, sizeof(*st));
	st->npools = 2;
	strcpy(st->pools[0].name, "p1");
	st->pools[0].level = POOL_LEVEL_PREMIUM;
	st->pools[0].size_tib = 4;
	strcpy(st->pools[1].name, "p2");
	st->pools[1].level = POOL_LEVEL_FLEXIBLE;
	st->pools[1].qos = POOL_QOS_MANUAL;
	st->pools[1].size_tib = 2;
	st->nvolumes = 1;
	strcpy(st->volumes[0].name, "ds1");
	strcpy(st->volumes[0].pool, "p1");
	st->volumes[0].quota_bytes = POOL_TIB_BYTES;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct overlay *ov = malloc(sizeof(*ov));
	struct overlay *again = malloc(sizeof(*again));
	struct pool_state *base = malloc(sizeof(*base));
	struct pool_state *out = malloc(sizeof(*out));
	struct traffic_caps caps, caps_out;
	char err[512], *t1 = NULL, *t2 = NULL;
	size_t l1, l2;

	if (!ov || !again || !base || !out) {
		abort();
	}
	if (overlay_decode((const char *)data, size, ov, err, sizeof(err))) {
		if (!err[0] || !overlay_empty(ov)) {
			abort(); /* a refusal says why and leaves nothing */
		}
		goto out;
	}
	if (overlay_encode(ov, &t1, &l1) ||
	    overlay_decode(t1, l1, again, err, sizeof(err)) ||
	    overlay_encode(again, &t2, &l2) || l1 != l2 || memcmp(t1, t2, l1)) {
		abort();
	}
	fuzz_base(base);
	traffic_caps_default(&caps);
	if (overlay_apply(ov, base, &caps, NULL, out, &caps_out, NULL, NULL,
			  NULL) ||
	    pool_state_check(out, NULL, 0)) {
		abort();
	}
out:
	free(t2);
	free(t1);
	free(out);
	free(base);
	free(again);
	free(ov);
	return 0;
}
