// SPDX-License-Identifier: Apache-2.0
/*
 * lanes: a transfer's WRITEs in flight while the next chunk is read
 * (lanes.h).
 */
#include "nfsd/repl/lanes.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nfsd/base/errbuf.h"
#include "nfsd/repl/src.h"

struct lane_run {
	uint64_t off;
	size_t boff, len;
};

struct repl_lane {
	struct repl_lanes *p;
	pthread_t thread;
	struct repl_dst *to;
	bool own_to; /* a copy: closed with the lane */
	unsigned char *buf; /* REPL_WRITE_MAX: the chunk */
	unsigned char *bbuf; /* REPL_BLOCK: the base's block */
	char path[REPL_PATH_MAX];
	struct repl_src_file *sf, *bf; /* bf NULL: no base */
	uint64_t bsize, off;
	size_t len;
	struct lane_run runs[REPL_WRITE_BLOCKS];
	size_t n;
	bool busy; /* taken or working */
	bool go; /* its chunk is to be read and sent */
};

struct repl_lanes {
	pthread_mutex_t lock;
	pthread_cond_t wake; /* a lane has work, or stop */
	pthread_cond_t idle; /* a lane went idle */
	struct repl_lane lane[REPL_LANES_MAX];
	unsigned n, started;
	bool stop;
	int err; /* the first failure */
	char reason[512];
	uint64_t sent;
};

static void lane_add(struct repl_lane *l, size_t boff, size_t len)
{
	if (l->n < REPL_WRITE_BLOCKS) { /* a chunk's runs: fewer */
		l->runs[l->n++] = (struct lane_run){ l->off + boff, boff, len };
	}
}

/* Reads @l's chunk and splits it into the runs to send: the blocks the
 * base has the same are left out.  Returns 0 or -errno with the reason
 * in @why. */
static int lane_read(struct repl_lane *l, char *why, size_t wlen)
{
	ssize_t n = l->sf->ops->pread(l->sf, l->buf, l->len, l->off);
	size_t run = 0, run_len = 0;

	if (n < 0 || (size_t)n != l->len) {
		return errbuf_printf(why, wlen, n < 0 ? (int)n : -EIO,
				     "%s: source read at %llu failed", l->path,
				     (unsigned long long)l->off);
	}
	if (!l->bf || l->off >= l->bsize) {
		lane_add(l, 0, l->len);
		return 0;
	}
	for (size_t b = 0; b < l->len; b += REPL_BLOCK) {
		size_t bl = l->len - b < REPL_BLOCK ? l->len - b : REPL_BLOCK;
		bool same = l->off + b + bl <= l->bsize &&
			    l->bf->ops->pread(l->bf, l->bbuf, bl, l->off + b) ==
				    (ssize_t)bl &&
			    !memcmp(l->bbuf, l->buf + b, bl);

		if (!same) {
			run = run_len ? run : b;
			run_len += bl;
		} else if (run_len) {
			/* rewritten with the same bytes: not sent */
			lane_add(l, run, run_len);
			run_len = 0;
		}
	}
	if (run_len) {
		lane_add(l, run, run_len);
	}
	return 0;
}

/* Sends @l's runs (the lock not held).  Returns 0 or -errno with the
 * reason in @why. */
static int lane_send(struct repl_lane *l, uint64_t *sent, char *why, size_t len)
{
	int err = lane_read(l, why, len);

	if (err) {
		return err;
	}
	for (size_t i = 0; i < l->n; i++) {
		const struct lane_run *r = &l->runs[i];
		struct repl_msg m = {
			.op = REPL_OP_WRITE,
			.off = r->off,
			.data = l->buf + r->boff,
			.len = r->len,
			.xxh = repl_write_hash(l->buf + r->boff, r->len),
		};
		struct repl_result res;

		memcpy(m.path, l->path, sizeof(m.path));
		err = repl_dst_call(l->to, &m, &res, why, len);
		if (err) {
			return err;
		}
		*sent += r->len;
	}
	return 0;
}

static void *lane_main(void *arg)
{
	struct repl_lane *l = arg;
	struct repl_lanes *p = l->p;
	char why[512];

	pthread_mutex_lock(&p->lock);
	for (;;) {
		uint64_t sent = 0;
		int err = 0;

		while (!l->go && !p->stop) {
			pthread_cond_wait(&p->wake, &p->lock);
		}
		if (!l->go) {
			break; /* stop */
		}
		if (!p->err) {
			pthread_mutex_unlock(&p->lock);
			err = lane_send(l, &sent, why, sizeof(why));
			pthread_mutex_lock(&p->lock);
		}
		p->sent += sent;
		if (err && !p->err) {
			p->err = err;
			snprintf(p->reason, sizeof(p->reason), "%s", why);
		}
		l->go = false;
		l->busy = false;
		l->n = 0;
		pthread_cond_broadcast(&p->idle);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int repl_lanes_new(struct repl_dst *to, unsigned n, struct repl_lanes **out,
		   char *errbuf, size_t errlen)
{
	struct repl_lanes *p = calloc(1, sizeof(*p));
	int err = 0;

	if (!p) {
		return -ENOMEM;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, NULL);
	pthread_cond_init(&p->idle, NULL);
	n = n < 1 ? 1 : n > REPL_LANES_MAX ? REPL_LANES_MAX : n;
	for (unsigned i = 0; i < n && !err; i++) {
		struct repl_lane *l = &p->lane[i];

		l->p = p;
		l->to = to;
		if (i > 0) {
			if (!to->dup) {
				break; /* one lane: no copy of it */
			}
			err = to->dup(to, &l->to, errbuf, errlen);
			if (err) {
				break;
			}
			l->own_to = true;
		}
		l->buf = malloc(REPL_WRITE_MAX);
		l->bbuf = malloc(REPL_BLOCK);
		err = l->buf && l->bbuf ? 0 : -ENOMEM;
		if (!err) {
			p->n++;
			err = -pthread_create(&l->thread, NULL, lane_main, l);
		}
		if (!err) {
			p->started++;
		}
	}
	if (err) {
		repl_lanes_free(p);
		return err;
	}
	*out = p;
	return 0;
}

int repl_lanes_take(struct repl_lanes *p, struct repl_lane **lane, char *errbuf,
		    size_t errlen)
{
	int err;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		if (p->err) {
			break;
		}
		for (unsigned i = 0; i < p->n; i++) {
			if (!p->lane[i].busy) {
				*lane = &p->lane[i];
				(*lane)->busy = true;
				(*lane)->n = 0;
				pthread_mutex_unlock(&p->lock);
				return 0;
			}
		}
		pthread_cond_wait(&p->idle, &p->lock);
	}
	err = p->err;
	snprintf(errbuf, errlen, "%s", p->reason);
	pthread_mutex_unlock(&p->lock);
	return err;
}

void repl_lane_chunk(struct repl_lane *lane, const char *path,
		     struct repl_src_file *sf, struct repl_src_file *bf,
		     uint64_t bsize, uint64_t off, size_t len)
{
	struct repl_lanes *p = lane->p;

	snprintf(lane->path, sizeof(lane->path), "%s", path);
	lane->sf = sf;
	lane->bf = bf;
	lane->bsize = bsize;
	lane->off = off;
	lane->len = len < REPL_WRITE_MAX ? len : REPL_WRITE_MAX;
	lane->n = 0;
	pthread_mutex_lock(&p->lock);
	lane->go = true;
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
}

int repl_lanes_drain(struct repl_lanes *p, uint64_t *sent, char *errbuf,
		     size_t errlen)
{
	int err;

	pthread_mutex_lock(&p->lock);
	for (unsigned i = 0; i < p->n; i++) {
		while (p->lane[i].busy) {
			pthread_cond_wait(&p->idle, &p->lock);
		}
	}
	*sent += p->sent;
	p->sent = 0;
	err = p->err;
	if (err) {
		snprintf(errbuf, errlen, "%s", p->reason);
	}
	pthread_mutex_unlock(&p->lock);
	return err;
}

void repl_lanes_free(struct repl_lanes *p)
{
	uint64_t ignored = 0;
	char why[8];

	if (!p) {
		return;
	}
	(void)repl_lanes_drain(p, &ignored, why, sizeof(why));
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < REPL_LANES_MAX; i++) {
		struct repl_lane *l = &p->lane[i];

		if (i < p->started) {
			pthread_join(l->thread, NULL);
		}
		if (l->own_to && l->to->close) {
			l->to->close(l->to);
		}
		free(l->buf);
		free(l->bbuf);
	}
	pthread_cond_destroy(&p->idle);
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
