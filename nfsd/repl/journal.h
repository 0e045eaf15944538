/* SPDX-License-Identifier: Apache-2.0 */
/*
 * repl journal: the files a transfer has applied to the destination, one
 * relative path a line after the transfer's name, each appended and
 * fdatasync'd once its file is applied and checked (xfer.h): what a
 * transfer started again after a kill skips.
 */
#ifndef DSNFS_REPL_JOURNAL_H
#define DSNFS_REPL_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>

struct repl_journal;

/* Opens @path for transfer @name: resumes it (*resumed true, its files
 * loaded) when it names @name, else starts it empty.  Returns 0 and *out,
 * or -errno with the reason. */
int repl_journal_open(const char *path, const char *name, bool *resumed,
		      struct repl_journal **out, char *errbuf, size_t errlen);

/* Whether @rel was applied by an earlier run. */
bool repl_journal_has(const struct repl_journal *j, const char *rel);

/* Records @rel as applied (durably).  Returns 0, -EINVAL (a newline in
 * the name) or -errno. */
int repl_journal_add(struct repl_journal *j, const char *rel);

/* Starts @j again empty for transfer @name (what it recorded is void:
 * the destination undid it).  Returns 0 or -errno. */
int repl_journal_restart(struct repl_journal *j, const char *name);

/* Closes @j; @done: the transfer is committed, the file goes. */
void repl_journal_close(struct repl_journal *j, bool done);

#endif
