/* SPDX-License-Identifier: Apache-2.0 */
/*
 * repl_decode: the body of POST /replications (docs/admin-api.md,
 * "Replication") into a relation, by the rules of [replication NAME]
 * (nfsd/repl/service.h repl_config_key()).
 */
#ifndef DSNFS_ADMIN_REPL_DECODE_H
#define DSNFS_ADMIN_REPL_DECODE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "nfsd/repl/relfile.h"
#include "nfsd/repl/service.h"

/* A POST /replications body. */
struct admin_repl_spec {
	struct repl_rel_config cfg; /* key_file and ca_file "" */
	char key[REPL_KEY_HEX_LEN + 1];
	bool has_ca;
	char ca[REPL_CA_PEM_MAX + 1]; /* PEM, when @has_ca */
};

/*
 * Reads body @in (borrowed) into @out (zeroed first):
 *   {"name", "role", "datastore", "key", ["destination_url"],
 *    ["destination_datastore"], ["schedule"], ["schedule_seconds"],
 *    ["timeout_seconds"], ["source_url"], ["source_datastore"], ["ca"]}
 * each checked as its key of [replication NAME] is; "key" is the key's
 * 64 hex digits and "ca" a PEM certificate of at most REPL_CA_PEM_MAX
 * bytes, given inline: key_file and ca_file (paths the server would
 * read) are refused.  A string with a control character or a space at
 * either end is refused (it could not be kept as a key = value line).
 * Returns 0 or -EINVAL with "body: ..." in errbuf.
 */
int admin__json_repl_spec(const json_t *in, struct admin_repl_spec *out,
			  char *errbuf, size_t errlen);

#endif
