// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_admin_api: libFuzzer target for the admin API's request handling
 * (nfsd/admin/api.c and below): routing, strict JSON parsing of the body,
 * the body readers, the registry's rules and the replies.  Input: one
 * selector byte choosing method and path from fuzz_admin_routes, then the
 * body.  A reply must always be built: a status from the known set, and a
 * JSON body for every status but 204.  State carries over from input to
 * input (pools made stay, up to POOL_MAX_POOLS), as in a live server.
 * Seeds: tests/fuzz/corpus/admin_api/.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/admin/admin_int.h"
#include "nfsd/base/base.h"

static const struct {
	const char *method;
	const char *path;
} fuzz_admin_routes[] = {
	{ "POST", "/pools" },
	{ "PATCH", "/pools/p1" },
	{ "POST", "/volumes" },
	{ "PATCH", "/volumes/ds1" },
	{ "PATCH", "/caps" },
	{ "DELETE", "/pools/p1" },
	{ "DELETE", "/volumes/ds1" },
	{ "GET", "/metrics" },
	{ "GET", "/pools" },
	{ "GET", "/volumes" },
	{ "PUT", "/pools" },
	{ "GET", "/pools/p1/x" },
	{ "POST", "/volumes/ds1/clones" },
	{ "POST", "/volumes/ds1/snapshots" },
	{ "POST", "/volumes/ds1/snapshots/s1/restore" },
	{ "GET", "/operations/1" },
	/* Replication relations: the body decoder (repl_decode.c); no
	 * service runs here, so nothing is made. */
	{ "POST", "/replications" },
	{ "GET", "/replications" },
	{ "DELETE", "/replications/r1" },
};

static struct admin_api *fuzz_api(void)
{
	static struct admin_api api;
	static bool ready;

	if (ready) {
		return &api;
	}
	if (pool_registry_new(NULL, NULL, &api.ctx.pools) ||
	    traffic_new(&(struct traffic_caps){ .scale = 1, .burst_ms = 10 },
			&api.ctx.traffic)) {
		abort();
	}
	admin_config_default(&api.ctx.config);
	ready = true;
	return &api;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const size_t nroutes = ARRAY_SIZE(fuzz_admin_routes);
	struct admin_reply reply;
	size_t r;

	if (size < 1) {
		return 0;
	}
	r = data[0] % nroutes;
	admin__api_handle(fuzz_api(), fuzz_admin_routes[r].method,
			  fuzz_admin_routes[r].path, "application/json",
			  (const char *)data + 1, size - 1, &reply);
	switch (reply.status) {
	case 200:
	case 201:
	case 204:
	case 400:
	case 404:
	case 405:
	case 409:
		break;
	default:
		abort();
	}
	if (reply.status != 204 && (!reply.body || reply.len == 0)) {
		abort();
	}
	admin__reply_fini(&reply);
	return 0;
}
