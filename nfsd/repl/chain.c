// SPDX-License-Identifier: Apache-2.0
/*
 * chain: which source snapshots a relation carries, and the record of
 * those its destination holds (chain.h).
 */
#include "nfsd/repl/chain.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nfsd/base/errbuf.h"
#include "nfsd/snap/snap.h"

#define CHAIN_MAGIC "dsnfs-repl-snapshots 1"

bool repl_chain_carried(const char *name)
{
	return strncmp(name, "repl-", 5) != 0;
}

void repl_snaps_free(struct repl_snaps *s)
{
	free(s->s);
	s->s = NULL;
	s->n = 0;
}

int repl_snaps_find(const struct repl_snaps *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++) {
		if (!strcmp(s->s[i].name, name)) {
			return (int)i;
		}
	}
	return -1;
}

int repl_snaps_add(struct repl_snaps *s, const char *name, int64_t created_s)
{
	int i = repl_snaps_find(s, name);
	struct repl_snap *p;

	if (i >= 0) {
		s->s[i].created_s = created_s;
		return 0;
	}
	p = realloc(s->s, (s->n + 1) * sizeof(*p));
	if (!p) {
		return -ENOMEM;
	}
	s->s = p;
	memset(&p[s->n], 0, sizeof(p[s->n]));
	snprintf(p[s->n].name, sizeof(p[s->n].name), "%s", name);
	p[s->n].created_s = created_s;
	s->n++;
	return 0;
}

void repl_snaps_del(struct repl_snaps *s, const char *name)
{
	int i = repl_snaps_find(s, name);

	if (i >= 0) {
		memmove(&s->s[i], &s->s[i + 1],
			(s->n - (size_t)i - 1) * sizeof(s->s[0]));
		s->n--;
	}
}

int repl_snaps_load(const char *path, struct repl_snaps *out, char *errbuf,
		    size_t errlen)
{
	char line[160], name[SNAP_NAME_MAX + 2], why[128];
	long long created;
	unsigned lineno = 1;
	int err = 0;
	FILE *f;

	memset(out, 0, sizeof(*out));
	f = fopen(path, "re");
	if (!f) {
		return errno == ENOENT
			       ? 0
			       : errbuf_printf(errbuf, errlen, -errno, "%s: %s",
					       path, strerror(errno));
	}
	if (!fgets(line, sizeof(line), f) ||
	    strncmp(line, CHAIN_MAGIC "\n", sizeof(CHAIN_MAGIC))) {
		fclose(f);
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "%s: not a record of carried snapshots "
				     "(its first line is not '" CHAIN_MAGIC
				     "')",
				     path);
	}
	while (!err && fgets(line, sizeof(line), f)) {
		lineno++;
		if (sscanf(line, "%64s %lld", name, &created) != 2 ||
		    snap_name_check(name, why, sizeof(why))) {
			err = errbuf_printf(errbuf, errlen, -EINVAL,
					    "%s:%u: a bad line", path, lineno);
		} else {
			err = repl_snaps_add(out, name, (int64_t)created);
		}
	}
	fclose(f);
	if (err) {
		repl_snaps_free(out);
	}
	return err;
}

int repl_snaps_save(const char *path, const struct repl_snaps *s, char *errbuf,
		    size_t errlen)
{
	char tmp[PATH_MAX + 8], dir[PATH_MAX];
	int fd, dfd, err = 0;
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
		return -ENAMETOOLONG;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f) {
		err = -errno;
		if (fd >= 0) {
			close(fd);
		}
		return errbuf_printf(errbuf, errlen, err, "%s: %s", tmp,
				     strerror(-err));
	}
	fprintf(f, CHAIN_MAGIC "\n");
	for (size_t i = 0; i < s->n; i++) {
		fprintf(f, "%s %" PRId64 "\n", s->s[i].name, s->s[i].created_s);
	}
	if (fflush(f) || fsync(fd)) {
		err = -errno;
	}
	if (fclose(f) && !err) {
		err = -errno;
	}
	if (!err && rename(tmp, path)) {
		err = -errno;
	}
	if (err) {
		(void)unlink(tmp);
		return errbuf_printf(errbuf, errlen, err, "%s: %s", path,
				     strerror(-err));
	}
	snprintf(dir, sizeof(dir), "%s", path);
	dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		(void)fsync(dfd);
		close(dfd);
	}
	return 0;
}

static int chain_cmp(const void *a, const void *b)
{
	const struct repl_snap *x = a, *y = b;

	if (x->created_s != y->created_s) {
		return x->created_s < y->created_s ? -1 : 1;
	}
	return strcmp(x->name, y->name);
}

int repl_chain_plan(const struct snap_entry *src, size_t ns,
		    const struct repl_snaps *held, struct repl_snaps *send,
		    struct repl_snaps *gone)
{
	int err = 0;

	memset(send, 0, sizeof(*send));
	memset(gone, 0, sizeof(*gone));
	for (size_t i = 0; !err && i < ns; i++) {
		int h = repl_snaps_find(held, src[i].name);

		if (repl_chain_carried(src[i].name) &&
		    (h < 0 || held->s[h].created_s != src[i].created_s)) {
			err = repl_snaps_add(send, src[i].name,
					     src[i].created_s);
		}
	}
	for (size_t i = 0; !err && i < held->n; i++) {
		bool same = false;

		for (size_t k = 0; k < ns && !same; k++) {
			same = !strcmp(src[k].name, held->s[i].name) &&
			       src[k].created_s == held->s[i].created_s;
		}
		if (!same) {
			err = repl_snaps_add(gone, held->s[i].name,
					     held->s[i].created_s);
		}
	}
	if (err) {
		repl_snaps_free(send);
		repl_snaps_free(gone);
		return err;
	}
	if (send->n > 1) {
		qsort(send->s, send->n, sizeof(send->s[0]), chain_cmp);
	}
	return 0;
}
