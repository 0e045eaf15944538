// SPDX-License-Identifier: Apache-2.0
/*
 * auth: decodes AUTH_SYS credentials (RFC 5531 appendix A):
 *   stamp, machinename<255>, uid, gid, gids<16>.
 */
#include "nfsd/rpc/auth.h"

#include <stdbool.h>
#include <string.h>

struct auth_cursor {
	const uint8_t *buf;
	uint32_t len;
	uint32_t pos;
};

static bool auth_get_u32(struct auth_cursor *c, uint32_t *v)
{
	if (c->pos > c->len || 4 > c->len - c->pos) {
		return false;
	}
	const uint8_t *p = c->buf + c->pos;
	*v = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
	     p[3];
	c->pos += 4;
	return true;
}

static enum rpc_auth_stat auth_sys_parse(const struct rpc_call_header *call,
					 struct rpc_cred *cred)
{
	struct auth_cursor c = { .buf = call->cred_body,
				 .len = call->cred_len };
	uint32_t stamp, name_len, padded;

	if (!auth_get_u32(&c, &stamp) || !auth_get_u32(&c, &name_len)) {
		return RPC_AUTH_BADCRED;
	}
	if (name_len > 255) {
		return RPC_AUTH_BADCRED;
	}
	padded = (name_len + 3) & ~3u;
	if (padded > c.len - c.pos) {
		return RPC_AUTH_BADCRED;
	}
	memcpy(cred->machine, c.buf + c.pos, name_len);
	cred->machine[name_len] = '\0';
	c.pos += padded;
	if (!auth_get_u32(&c, &cred->uid) || !auth_get_u32(&c, &cred->gid) ||
	    !auth_get_u32(&c, &cred->ngroups)) {
		return RPC_AUTH_BADCRED;
	}
	if (cred->ngroups > RPC_AUTH_SYS_MAX_GROUPS) {
		return RPC_AUTH_BADCRED;
	}
	for (uint32_t i = 0; i < cred->ngroups; i++) {
		if (!auth_get_u32(&c, &cred->groups[i])) {
			return RPC_AUTH_BADCRED;
		}
	}
	if (c.pos != c.len) {
		return RPC_AUTH_BADCRED;
	}
	return RPC_AUTH_OK;
}

enum rpc_auth_stat rpc_auth_parse(const struct rpc_call_header *call,
				  struct rpc_cred *cred)
{
	memset(cred, 0, sizeof(*cred));
	cred->flavor = call->cred_flavor;
	switch (call->cred_flavor) {
	case RPC_AUTH_NONE:
		/* Anonymous: nobody/nogroup; exports squash it further. */
		cred->uid = 65534;
		cred->gid = 65534;
		return RPC_AUTH_OK;
	case RPC_AUTH_SYS:
		return auth_sys_parse(call, cred);
	default:
		return RPC_AUTH_REJECTEDCRED;
	}
}
