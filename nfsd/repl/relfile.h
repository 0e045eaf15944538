/* SPDX-License-Identifier: Apache-2.0 */
/*
 * repl relfile: the relations made through the admin API (POST
 * /replications), kept in the state directory so that they outlive a
 * restart (docs/replication.md, "Relations made through the API"):
 *
 *   STATE_DIR/repl-NAME.relation  its keys, as [replication NAME] has
 *                                 them, one "key = value" a line after
 *                                 the header line, "end" last (a file
 *                                 without it is refused as truncated)
 *   STATE_DIR/repl-NAME.key       its key, 64 hex digits
 *   STATE_DIR/repl-NAME.ca        the CA that checks an HTTPS other end
 *                                 (when one was given)
 *
 * Each is mode 0600, written to NAME.tmp, fsync'd and renamed, the
 * directory fsync'd; the .relation last (its rename makes the relation),
 * removed first.  Its keys are read back through repl_config_key(): a
 * kept relation passes the config's rules, as a section does.
 */
#ifndef DSNFS_REPL_RELFILE_H
#define DSNFS_REPL_RELFILE_H

#include <stddef.h>

#include "nfsd/repl/service.h"

/* The largest CA (PEM) an API caller may give, and the largest
 * .relation file read back. */
#define REPL_CA_PEM_MAX (16 * 1024)
#define REPL_RELFILE_MAX (8 * 1024)

/* Writes @key (64 hex digits) and @ca_pem (NULL: none) of relation
 * @c->name to the state directory @state_dir and points @c->key_file and
 * @c->ca_file ("" without a CA) at them.  Returns 0 or -errno with the
 * reason (nothing left behind). */
int repl_relfile_secrets_save(const char *state_dir, struct repl_rel_config *c,
			      const char *key, const char *ca_pem, char *errbuf,
			      size_t errlen);

/* Writes @c's .relation (after repl_relfile_secrets_save()): the
 * relation is kept from here.  Returns 0 or -errno with the reason. */
int repl_relfile_save(const char *state_dir, const struct repl_rel_config *c,
		      char *errbuf, size_t errlen);

/* Removes relation @name's files (the .relation first); missing ones are
 * fine.  Returns 0 or the first -errno. */
int repl_relfile_remove(const char *state_dir, const char *name);

/* Reads relation @name's .relation into @out (zeroed first; key_file and
 * ca_file pointing at its .key and .ca) and checks its key file.
 * Returns 0 or -errno with the reason (-ENOENT: no such file). */
int repl_relfile_load(const char *state_dir, const char *name,
		      struct repl_rel_config *out, char *errbuf, size_t errlen);

/* Every kept relation of @state_dir into @out (zeroed first; at most
 * REPL_PEERS_MAX): a file that cannot be read back is left out with
 * one error line in the log.  Returns 0 or -errno (the directory). */
int repl_relfile_load_all(const char *state_dir, struct repl_config *out);

#endif
