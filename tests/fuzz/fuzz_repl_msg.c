// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_repl_msg: libFuzzer target for the decoder of the replication
 * route's body (nfsd/repl/wire.c), what a destination dsnfsd reads from
 * the network before anything else: every length checked against the
 * body.  A message that decodes must encode back to the same bytes; a
 * result body decodes or is refused, its reason always terminated.
 * Seeds: tests/fuzz/corpus/repl_msg/.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/repl/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct repl_msg *m = malloc(sizeof(*m));
	struct repl_result r;
	unsigned char *b = NULL;
	char why[256], *arg = NULL;
	long n;

	if (!m) {
		return 0;
	}
	if (!repl_msg_decode(data, size, m, &arg, why, sizeof(why))) {
		if (strlen(m->path) >= REPL_PATH_MAX ||
		    m->len > REPL_WRITE_MAX || m->arg_len > REPL_ARG_MAX ||
		    m->arg[m->arg_len] != '\0') {
			abort();
		}
		n = repl_msg_encode(m, &b);
		if (n != (long)size || memcmp(b, data, size)) {
			abort();
		}
		free(b);
	}
	free(arg);
	free(m);
	if (!repl_result_decode(data, size, &r) &&
	    strlen(r.reason) >= REPL_REASON_MAX) {
		abort();
	}
	return 0;
}
