// SPDX-License-Identifier: Apache-2.0
/*
 * journal: a transfer's applied files (journal.h).
 */
#include "nfsd/repl/journal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nfsd/base/errbuf.h"

struct repl_journal {
	char *path;
	int fd;
	char **done; /* sorted */
	size_t ndone;
};

static int journal_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Loads the lines after the first of @f into @j. */
static int journal_load(struct repl_journal *j, FILE *f)
{
	char *line = NULL;
	size_t cap = 0, alloc = 0;
	ssize_t len;

	while ((len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] != '\n') {
			break; /* a line a kill cut: not recorded */
		}
		line[len - 1] = '\0';
		if (j->ndone == alloc) {
			size_t na = alloc ? alloc * 2 : 64;
			char **nd = realloc(j->done, na * sizeof(*nd));

			if (!nd) {
				free(line);
				return -ENOMEM;
			}
			j->done = nd;
			alloc = na;
		}
		j->done[j->ndone] = strdup(line);
		if (!j->done[j->ndone]) {
			free(line);
			return -ENOMEM;
		}
		j->ndone++;
	}
	free(line);
	if (j->ndone) {
		qsort(j->done, j->ndone, sizeof(*j->done), journal_cmp);
	}
	return 0;
}

int repl_journal_open(const char *path, const char *name, bool *resumed,
		      struct repl_journal **out, char *errbuf, size_t errlen)
{
	struct repl_journal *j = calloc(1, sizeof(*j));
	char *first = NULL;
	size_t cap = 0;
	FILE *f;
	int err;

	*resumed = false;
	if (!j || !(j->path = strdup(path))) {
		free(j);
		return -ENOMEM;
	}
	j->fd = -1;
	f = fopen(path, "r");
	if (f) {
		ssize_t len = getline(&first, &cap, f);

		if (len > 0 && first[len - 1] == '\n' &&
		    (size_t)len - 1 == strlen(name) &&
		    !strncmp(first, name, (size_t)len - 1)) {
			*resumed = true;
			err = journal_load(j, f);
			if (err) {
				free(first);
				fclose(f);
				repl_journal_close(j, false);
				return err;
			}
		}
		free(first);
		fclose(f);
	}
	j->fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_APPEND, 0600);
	if (j->fd < 0) {
		err = -errno;
		repl_journal_close(j, false);
		return errbuf_printf(errbuf, errlen, err, "journal %s: %s",
				     path, strerror(-err));
	}
	if (!*resumed &&
	    (ftruncate(j->fd, 0) < 0 || dprintf(j->fd, "%s\n", name) < 0 ||
	     fdatasync(j->fd) < 0)) {
		err = -errno;
		repl_journal_close(j, false);
		return errbuf_printf(errbuf, errlen, err, "journal %s: %s",
				     path, strerror(-err));
	}
	*out = j;
	return 0;
}

bool repl_journal_has(const struct repl_journal *j, const char *rel)
{
	return j->ndone && bsearch(&rel, j->done, j->ndone, sizeof(*j->done),
				   journal_cmp) != NULL;
}

int repl_journal_add(struct repl_journal *j, const char *rel)
{
	if (strchr(rel, '\n')) {
		return -EINVAL;
	}
	if (dprintf(j->fd, "%s\n", rel) < 0 || fdatasync(j->fd) < 0) {
		return -errno;
	}
	return 0;
}

int repl_journal_restart(struct repl_journal *j, const char *name)
{
	for (size_t i = 0; i < j->ndone; i++) {
		free(j->done[i]);
	}
	free(j->done);
	j->done = NULL;
	j->ndone = 0;
	if (ftruncate(j->fd, 0) < 0 || dprintf(j->fd, "%s\n", name) < 0 ||
	    fdatasync(j->fd) < 0) {
		return -errno;
	}
	return 0;
}

void repl_journal_close(struct repl_journal *j, bool done)
{
	if (!j) {
		return;
	}
	if (j->fd >= 0) {
		close(j->fd);
	}
	if (done) {
		(void)unlink(j->path);
	}
	for (size_t i = 0; i < j->ndone; i++) {
		free(j->done[i]);
	}
	free(j->done);
	free(j->path);
	free(j);
}
