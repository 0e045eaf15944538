/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admin_fixture: a live admin API without HTTP for the admin tests: a pool
 * registry with its ledger in a scratch directory and an injected clock,
 * a traffic object, two datastores ds1 and ds2 (directories in the
 * scratch directory) and the alarms, all wired into a struct admin_api.
 */
#ifndef DSNFS_TESTS_ADMIN_FIXTURE_H
#define DSNFS_TESTS_ADMIN_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "nfsd/admin/admin_int.h"
#include "nfsd/pool/ledger.h"

#define ADMIN_FIXTURE_EXPORTS 2

struct admin_fixture {
	char dir[64]; /* the scratch directory */
	char ledger_path[128];
	int64_t now_s; /* the registry's clock */
	struct pool_registry *reg;
	struct pool_ledger *ledger;
	struct traffic *traffic;
	struct export exports[ADMIN_FIXTURE_EXPORTS];
	struct export_table table;
	struct admin_api api;
	/* ctx.usage answers this for every volume when used_set */
	bool used_set;
	uint64_t used_bytes;
	struct admin_reply reply; /* of the last call */
	char error[512]; /* its "error" text, or "" */
};

/* Builds everything; fails the test on any error.  Returns owned:
 * admin_fixture_free(). */
struct admin_fixture *admin_fixture_new(void);

/* Frees it and removes the scratch directory. */
void admin_fixture_free(struct admin_fixture *fx);

/*
 * Sends @method @url with @body (a JSON text, or NULL) as
 * application/json through admin__api_handle().  Returns the status;
 * *doc (may be NULL) gets the reply parsed (owned: json_decref()), or NULL
 * for an empty body; fx->reply and fx->error keep the rest.
 */
unsigned admin_fixture_call(struct admin_fixture *fx, const char *method,
			    const char *url, const char *body, json_t **doc);

/* Creates @path under the scratch directory as a file of @size logical
 * bytes, @allocated of them written (the rest a hole). */
void admin_fixture_file(struct admin_fixture *fx, const char *path,
			uint64_t size, uint64_t allocated);

/* The ledger's events (owned, free()). */
struct pool_event *admin_fixture_events(struct admin_fixture *fx, size_t *n);

#endif
