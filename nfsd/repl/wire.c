// SPDX-License-Identifier: Apache-2.0
/*
 * wire: the replication operations as messages, and their results
 * (wire.h).  Fixed little-endian fields, so that the decoder is a few
 * bounds checks and no parser.
 */
#include "nfsd/repl/wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "nfsd/base/errbuf.h"

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++) {
		p[i] = (unsigned char)(v >> (8 * i));
	}
}

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		p[i] = (unsigned char)(v >> (8 * i));
	}
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--) {
		v = v << 8 | p[i];
	}
	return v;
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--) {
		v = v << 8 | p[i];
	}
	return v;
}

uint64_t repl_write_hash(const void *data, size_t len)
{
	return XXH3_64bits(data, len);
}

const char *repl_op_name(unsigned op)
{
	static const char *const names[] = {
		[REPL_OP_HELLO] = "hello",     [REPL_OP_EMPTY] = "empty",
		[REPL_OP_STAT] = "stat",       [REPL_OP_REMOVE] = "remove",
		[REPL_OP_MKDIR] = "mkdir",     [REPL_OP_SYMLINK] = "symlink",
		[REPL_OP_OPEN] = "open",       [REPL_OP_WRITE] = "write",
		[REPL_OP_ATTRS] = "attrs",     [REPL_OP_PRUNE] = "prune",
		[REPL_OP_COMMIT] = "commit",   [REPL_OP_DELSNAP] = "delsnap",
		[REPL_OP_RESYNC] = "resync",   [REPL_OP_BREAK] = "break",
		[REPL_OP_BEGIN] = "begin",     [REPL_OP_ABORT] = "abort",
		[REPL_OP_REVERSE] = "reverse", [REPL_OP_HASSNAP] = "hassnap",
	};

	return op >= 1 && op <= REPL_OP_MAX ? names[op] : "?";
}

long repl_msg_encode_head(const struct repl_msg *m, unsigned char *b,
			  size_t cap)
{
	size_t pl = strnlen(m->path, REPL_PATH_MAX);
	size_t n = REPL_MSG_HEAD + pl + m->arg_len;

	if (pl >= REPL_PATH_MAX) {
		return -ENAMETOOLONG;
	}
	if (m->arg_len > REPL_ARG_MAX || m->len > REPL_WRITE_MAX) {
		return -E2BIG;
	}
	if (n > cap) {
		return -ENOBUFS;
	}
	memset(b, 0, REPL_MSG_HEAD);
	put32(b, REPL_MSG_MAGIC);
	b[4] = REPL_MSG_VERSION;
	b[5] = m->op;
	b[6] = m->flags;
	put32(b + 8, (uint32_t)pl);
	put32(b + 12, (uint32_t)m->arg_len);
	put32(b + 16, (uint32_t)m->len);
	put32(b + 20, m->mode);
	put32(b + 24, m->uid);
	put32(b + 28, m->gid);
	put64(b + 32, m->off);
	put64(b + 40, m->size);
	put64(b + 48, m->xxh);
	put64(b + 56, (uint64_t)m->atime_s);
	put64(b + 64, (uint64_t)m->mtime_s);
	put32(b + 72, m->atime_ns);
	put32(b + 76, m->mtime_ns);
	memcpy(b + REPL_MSG_HEAD, m->path, pl);
	if (m->arg_len) {
		memcpy(b + REPL_MSG_HEAD + pl, m->arg, m->arg_len);
	}
	return (long)n;
}

long repl_msg_encode(const struct repl_msg *m, unsigned char **out)
{
	size_t n = REPL_MSG_HEAD + strnlen(m->path, REPL_PATH_MAX) +
		   m->arg_len + m->len;
	unsigned char *b;
	long hl;

	if (m->arg_len > REPL_ARG_MAX || m->len > REPL_WRITE_MAX) {
		return -E2BIG;
	}
	b = malloc(n);
	if (!b) {
		return -ENOMEM;
	}
	hl = repl_msg_encode_head(m, b, n);
	if (hl < 0) {
		free(b);
		return hl;
	}
	if (m->len) {
		memcpy(b + hl, m->data, m->len);
	}
	*out = b;
	return (long)n;
}

int repl_msg_decode(const unsigned char *b, size_t n, struct repl_msg *m,
		    char **argbuf, char *errbuf, size_t errlen)
{
	uint64_t pl, al, dl;
	char *arg = NULL;

	*argbuf = NULL;
	memset(m, 0, sizeof(*m));
	if (n < REPL_MSG_HEAD || get32(b) != REPL_MSG_MAGIC) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "not a replication message");
	}
	if (b[4] != REPL_MSG_VERSION) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "replication message version %u, this "
				     "server speaks %u",
				     b[4], REPL_MSG_VERSION);
	}
	if (b[5] < 1 || b[5] > REPL_OP_MAX ||
	    (b[6] & ~(REPL_FLAG_WHOLE | REPL_FLAG_SYNC | REPL_FLAG_SIZE)) ||
	    b[7]) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "unknown operation %u or flags %#x", b[5],
				     b[6]);
	}
	pl = get32(b + 8);
	al = get32(b + 12);
	dl = get32(b + 16);
	if (pl >= REPL_PATH_MAX || al > REPL_ARG_MAX || dl > REPL_WRITE_MAX ||
	    REPL_MSG_HEAD + pl + al + dl != n) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "lengths (path %llu, argument %llu, data "
				     "%llu) do not fit the body of %zu bytes",
				     (unsigned long long)pl,
				     (unsigned long long)al,
				     (unsigned long long)dl, n);
	}
	if (memchr(b + REPL_MSG_HEAD, '\0', pl)) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "a NUL inside the path");
	}
	m->op = b[5];
	m->flags = b[6];
	m->mode = get32(b + 20);
	m->uid = get32(b + 24);
	m->gid = get32(b + 28);
	m->off = get64(b + 32);
	m->size = get64(b + 40);
	m->xxh = get64(b + 48);
	m->atime_s = (int64_t)get64(b + 56);
	m->mtime_s = (int64_t)get64(b + 64);
	m->atime_ns = get32(b + 72);
	m->mtime_ns = get32(b + 76);
	if (m->atime_ns >= 1000000000u || m->mtime_ns >= 1000000000u ||
	    get64(b + 80)) {
		return errbuf_printf(errbuf, errlen, -EINVAL,
				     "nanoseconds past a second, or a reserved "
				     "field set");
	}
	memcpy(m->path, b + REPL_MSG_HEAD, pl);
	m->path[pl] = '\0';
	arg = malloc(al + 1);
	if (!arg) {
		return -ENOMEM;
	}
	memcpy(arg, b + REPL_MSG_HEAD + pl, al);
	arg[al] = '\0';
	m->arg = arg;
	m->arg_len = al;
	m->data = dl ? b + REPL_MSG_HEAD + pl + al : NULL;
	m->len = dl;
	*argbuf = arg;
	return 0;
}

size_t repl_result_encode(const struct repl_result *r, unsigned char *out)
{
	size_t rl = strnlen(r->reason, REPL_REASON_MAX - 1);

	put32(out, REPL_MSG_MAGIC);
	put32(out + 4, (uint32_t)r->err);
	out[8] = r->type;
	out[9] = 0;
	out[10] = (unsigned char)rl;
	out[11] = (unsigned char)(rl >> 8);
	put64(out + 12, r->value);
	memcpy(out + REPL_RESULT_HEAD, r->reason, rl);
	return REPL_RESULT_HEAD + rl;
}

int repl_result_decode(const unsigned char *b, size_t n, struct repl_result *r)
{
	size_t rl;

	memset(r, 0, sizeof(*r));
	if (n < REPL_RESULT_HEAD || get32(b) != REPL_MSG_MAGIC) {
		return -EINVAL;
	}
	rl = (size_t)b[10] | (size_t)b[11] << 8;
	if (rl >= REPL_REASON_MAX || REPL_RESULT_HEAD + rl != n) {
		return -EINVAL;
	}
	r->err = (int32_t)get32(b + 4);
	if (r->err > 0 || r->err < -4095) {
		return -EINVAL;
	}
	r->type = b[8];
	r->value = get64(b + 12);
	memcpy(r->reason, b + REPL_RESULT_HEAD, rl);
	r->reason[rl] = '\0';
	return 0;
}
