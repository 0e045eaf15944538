// SPDX-License-Identifier: Apache-2.0
/*
 * fd_budget: the descriptor budget of the exports' open-file caches.
 * Every cached file holds one or two descriptors (store.h), every
 * connection one, and the process has RLIMIT_NOFILE of them (main.c raises
 * the soft limit to the hard one at start).  The caches share what is left
 * after max_conns connections and a reserve for everything else, in equal
 * parts: each export's cache holds budget / exports / 2 files.  A SIGHUP
 * that adds exports shares it again (a removed export keeps its store and
 * its part until the restart).  [server] file_cache_fds sets the budget
 * instead.  Each computation is logged with its figures.
 */
#include <string.h>
#include <sys/resource.h>

#include "nfsd/base/log.h"
#include "nfsd/server/server_int.h"
#include "nfsd/store/store.h"

/* Descriptors kept out of the budget whatever the config: stdio and the
 * log, listeners (TCP and UDP, three programs), the portmapper client,
 * the ledger and the admin state, the secret, the admin endpoint's 64
 * connections, /proc reads. */
#define SERVER_FD_RESERVE_BASE 160
/* A cache never goes below this (a descriptor limit far too low is
 * logged, and opens then fail with NFS3ERR_JUKEBOX, not a crash). */
#define SERVER_FCACHE_MIN_FILES 16
/* Nor, by itself, above this: beyond, a file costs memory (its object,
 * its sync group, the kernel's open file) more than it saves lookups. */
#define SERVER_FCACHE_AUTO_MAX_FILES 65536

static uint64_t server_sub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

void server__fd_budget_compute(const struct server_fd_inputs *in,
			       uint64_t nofile, size_t nexports,
			       struct server_fd_budget *out)
{
	uint64_t files;

	out->nofile = nofile;
	out->conns = in->max_conns;
	/* Per loop an epoll and an eventfd; per work thread one transient
	 * open (a readdir's "."); per export its root, opened twice. */
	out->reserve = SERVER_FD_RESERVE_BASE + 2ull * in->loops +
		       in->work_threads + 2ull * nexports;
	out->overridden = in->file_cache_fds != 0;
	out->total = out->overridden
			     ? in->file_cache_fds
			     : server_sub(server_sub(nofile, out->conns),
					  out->reserve);
	out->nexports = nexports;
	files = nexports ? out->total / nexports / 2 : 0;
	out->too_low = files < SERVER_FCACHE_MIN_FILES;
	if (out->too_low) {
		files = SERVER_FCACHE_MIN_FILES;
	}
	if (!out->overridden && files > SERVER_FCACHE_AUTO_MAX_FILES) {
		files = SERVER_FCACHE_AUTO_MAX_FILES;
	}
	if (files > STORE_CACHE_MAX_ENTRIES) {
		files = STORE_CACHE_MAX_ENTRIES;
	}
	out->files_per_export = (size_t)files;
}

/* The soft limit as it is now; 0 when unknown or unlimited (then the
 * budget is the cap of each cache). */
static uint64_t server_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 ||
	    rl.rlim_cur == RLIM_INFINITY) {
		return UINT64_MAX / 4;
	}
	return rl.rlim_cur;
}

void server__fcache_budget_apply(struct server *srv, const char *when)
{
	struct export_table *tab = &srv->exports;
	struct server_fd_budget b;
	size_t n = 0;

	for (size_t i = 0; i < tab->count; i++) {
		n += export_store(&tab->exports[i]) != NULL;
	}
	if (n == 0) {
		return;
	}
	server__fd_budget_compute(&srv->fd_inputs, server_nofile(), n, &b);
	for (size_t i = 0; i < tab->count; i++) {
		struct store *st = export_store(&tab->exports[i]);
		int err;

		if (!st) {
			continue;
		}
		err = store_cache_resize(st, b.files_per_export);
		if (err) {
			log_warn("fcache: %s: cannot bound its file cache to "
				 "%zu "
				 "files: %s",
				 tab->exports[i].name, b.files_per_export,
				 strerror(-err));
		}
	}
	if (b.overridden) {
		log_info("fcache (%s): file_cache_fds %llu for %zu exports: "
			 "%zu files each, up to 2 descriptors a file "
			 "(RLIMIT_NOFILE %llu, max_conns %llu)",
			 when, (unsigned long long)b.total, n,
			 b.files_per_export, (unsigned long long)b.nofile,
			 (unsigned long long)b.conns);
	} else {
		log_info("fcache (%s): RLIMIT_NOFILE %llu - max_conns %llu - "
			 "reserve %llu = %llu descriptors for %zu exports: "
			 "%zu files each, up to 2 descriptors a file",
			 when, (unsigned long long)b.nofile,
			 (unsigned long long)b.conns,
			 (unsigned long long)b.reserve,
			 (unsigned long long)b.total, n, b.files_per_export);
	}
	if (b.too_low) {
		log_warn("fcache: the descriptor limit leaves too few for the "
			 "file caches; each keeps %d files, and opens may fail "
			 "(NFS3ERR_JUKEBOX): raise the hard RLIMIT_NOFILE, or "
			 "lower max_conns",
			 SERVER_FCACHE_MIN_FILES);
	}
}
