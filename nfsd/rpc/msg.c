// SPDX-License-Identifier: Apache-2.0
/*
 * msg: encodes and decodes ONC RPC message headers (RFC 5531 9) by hand.
 * The header is a handful of 32-bit words; walking them with bounds checks
 * costs less than an XDR stream and allocates nothing.
 */
#include "nfsd/rpc/msg.h"

#include <errno.h>
#include <string.h>

/* A read cursor over a record; every step checks what is left. */
struct msg_cursor {
	const uint8_t *buf;
	size_t len;
	size_t pos;
};

static int msg_get_u32(struct msg_cursor *c, uint32_t *v)
{
	if (c->pos > c->len || 4 > c->len - c->pos) {
		return -EBADMSG;
	}
	const uint8_t *p = c->buf + c->pos;
	*v = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
	     p[3];
	c->pos += 4;
	return 0;
}

/* An opaque auth: flavor, then a body of at most 400 bytes padded to 4. */
static int msg_get_auth(struct msg_cursor *c, uint32_t *flavor,
			const uint8_t **body, uint32_t *body_len)
{
	uint32_t len;
	size_t padded;

	if (msg_get_u32(c, flavor) || msg_get_u32(c, &len)) {
		return -EBADMSG;
	}
	if (len > RPC_AUTH_BODY_MAX) {
		return -EBADMSG;
	}
	padded = ((size_t)len + 3) & ~(size_t)3;
	if (padded > c->len - c->pos) {
		return -EBADMSG;
	}
	*body = c->buf + c->pos;
	*body_len = len;
	c->pos += padded;
	return 0;
}

static size_t msg_put_u32(uint8_t *buf, size_t pos, uint32_t v)
{
	buf[pos] = (uint8_t)(v >> 24);
	buf[pos + 1] = (uint8_t)(v >> 16);
	buf[pos + 2] = (uint8_t)(v >> 8);
	buf[pos + 3] = (uint8_t)v;
	return pos + 4;
}

int rpc_msg_peek(const uint8_t *rec, size_t len, uint32_t *xid,
		 uint32_t *msg_type)
{
	struct msg_cursor c = { .buf = rec, .len = len };

	if (msg_get_u32(&c, xid) || msg_get_u32(&c, msg_type)) {
		return -EBADMSG;
	}
	return 0;
}

int rpc_call_decode(const uint8_t *rec, size_t len,
		    struct rpc_call_header *call)
{
	struct msg_cursor c = { .buf = rec, .len = len };
	uint32_t type;

	memset(call, 0, sizeof(*call));
	if (msg_get_u32(&c, &call->xid) || msg_get_u32(&c, &type)) {
		return -EBADMSG;
	}
	if (type != RPC_MSG_CALL) {
		return -EBADMSG;
	}
	if (msg_get_u32(&c, &call->rpcvers) || msg_get_u32(&c, &call->prog) ||
	    msg_get_u32(&c, &call->vers) || msg_get_u32(&c, &call->proc)) {
		return -EBADMSG;
	}
	if (msg_get_auth(&c, &call->cred_flavor, &call->cred_body,
			 &call->cred_len)) {
		return -EBADMSG;
	}
	if (msg_get_auth(&c, &call->verf_flavor, &call->verf_body,
			 &call->verf_len)) {
		return -EBADMSG;
	}
	call->args_offset = c.pos;
	return 0;
}

size_t rpc_reply_accepted_encode(uint8_t *buf, size_t len, uint32_t xid,
				 enum rpc_accept_stat stat, uint32_t low,
				 uint32_t high)
{
	size_t need = RPC_REPLY_ACCEPTED_LEN +
		      (stat == RPC_ACCEPT_PROG_MISMATCH ? 8 : 0);
	size_t pos = 0;

	if (len < need) {
		return 0;
	}
	pos = msg_put_u32(buf, pos, xid);
	pos = msg_put_u32(buf, pos, RPC_MSG_REPLY);
	pos = msg_put_u32(buf, pos, 0); /* MSG_ACCEPTED */
	pos = msg_put_u32(buf, pos, RPC_AUTH_NONE);
	pos = msg_put_u32(buf, pos, 0); /* verifier body length */
	pos = msg_put_u32(buf, pos, stat);
	if (stat == RPC_ACCEPT_PROG_MISMATCH) {
		pos = msg_put_u32(buf, pos, low);
		pos = msg_put_u32(buf, pos, high);
	}
	return pos;
}

size_t rpc_reply_denied_encode(uint8_t *buf, size_t len, uint32_t xid,
			       enum rpc_reject_stat stat,
			       enum rpc_auth_stat why)
{
	size_t pos = 0;

	if (len < 24) {
		return 0;
	}
	pos = msg_put_u32(buf, pos, xid);
	pos = msg_put_u32(buf, pos, RPC_MSG_REPLY);
	pos = msg_put_u32(buf, pos, 1); /* MSG_DENIED */
	pos = msg_put_u32(buf, pos, stat);
	if (stat == RPC_REJECT_RPC_MISMATCH) {
		pos = msg_put_u32(buf, pos, RPC_MSG_RPCVERS);
		pos = msg_put_u32(buf, pos, RPC_MSG_RPCVERS);
	} else {
		pos = msg_put_u32(buf, pos, why);
	}
	return pos;
}

size_t rpc_call_encode(uint8_t *buf, size_t len, uint32_t xid, uint32_t prog,
		       uint32_t vers, uint32_t proc, const char *machine,
		       uint32_t uid, uint32_t gid)
{
	size_t name_len = machine ? strlen(machine) : 0;
	size_t name_padded = (name_len + 3) & ~(size_t)3;
	size_t cred_len = machine ? 4 + 4 + name_padded + 4 + 4 + 4 : 0;
	size_t pos = 0;

	if (name_len > 255 || len < 40 + cred_len) {
		return 0;
	}
	pos = msg_put_u32(buf, pos, xid);
	pos = msg_put_u32(buf, pos, RPC_MSG_CALL);
	pos = msg_put_u32(buf, pos, RPC_MSG_RPCVERS);
	pos = msg_put_u32(buf, pos, prog);
	pos = msg_put_u32(buf, pos, vers);
	pos = msg_put_u32(buf, pos, proc);
	if (machine) {
		pos = msg_put_u32(buf, pos, RPC_AUTH_SYS);
		pos = msg_put_u32(buf, pos, (uint32_t)cred_len);
		pos = msg_put_u32(buf, pos, 0); /* stamp */
		pos = msg_put_u32(buf, pos, (uint32_t)name_len);
		memcpy(buf + pos, machine, name_len);
		memset(buf + pos + name_len, 0, name_padded - name_len);
		pos += name_padded;
		pos = msg_put_u32(buf, pos, uid);
		pos = msg_put_u32(buf, pos, gid);
		pos = msg_put_u32(buf, pos, 0); /* no supplementary groups */
	} else {
		pos = msg_put_u32(buf, pos, RPC_AUTH_NONE);
		pos = msg_put_u32(buf, pos, 0);
	}
	pos = msg_put_u32(buf, pos, RPC_AUTH_NONE);
	pos = msg_put_u32(buf, pos, 0);
	return pos;
}

int rpc_reply_decode(const uint8_t *rec, size_t len, uint32_t *xid,
		     uint32_t *accept_stat, size_t *body_offset)
{
	struct msg_cursor c = { .buf = rec, .len = len };
	uint32_t type, reply_stat, flavor, body_len;
	const uint8_t *body;

	if (msg_get_u32(&c, xid) || msg_get_u32(&c, &type) ||
	    type != RPC_MSG_REPLY || msg_get_u32(&c, &reply_stat)) {
		return -EBADMSG;
	}
	if (reply_stat != 0) {
		return -EACCES;
	}
	if (msg_get_auth(&c, &flavor, &body, &body_len) ||
	    msg_get_u32(&c, accept_stat)) {
		return -EBADMSG;
	}
	*body_offset = c.pos;
	return 0;
}
