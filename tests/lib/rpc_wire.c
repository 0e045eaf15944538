// SPDX-License-Identifier: Apache-2.0
/*
 * rpc_wire: hand-built RPC call records for tests (see rpc_wire.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "nfsd/rpc/msg.h"
#include "tests/lib/rpc_wire.h"

void rpc_wire_u32(struct rpc_wire *w, uint32_t v)
{
	assert_true(w->len + 4 <= sizeof(w->buf));
	w->buf[w->len++] = (uint8_t)(v >> 24);
	w->buf[w->len++] = (uint8_t)(v >> 16);
	w->buf[w->len++] = (uint8_t)(v >> 8);
	w->buf[w->len++] = (uint8_t)v;
}

void rpc_wire_call(struct rpc_wire *w, uint32_t xid, uint32_t rpcvers,
		   uint32_t prog, uint32_t vers, uint32_t proc,
		   uint32_t ngroups)
{
	w->len = 0;
	rpc_wire_u32(w, xid);
	rpc_wire_u32(w, RPC_MSG_CALL);
	rpc_wire_u32(w, rpcvers);
	rpc_wire_u32(w, prog);
	rpc_wire_u32(w, vers);
	rpc_wire_u32(w, proc);
	rpc_wire_u32(w, RPC_AUTH_SYS);
	rpc_wire_u32(w, 4 + 4 + 4 + 4 + 4 + 4 + 4 * ngroups);
	rpc_wire_u32(w, 0); /* stamp */
	rpc_wire_u32(w, 4); /* machine name */
	rpc_wire_u32(w, 0x686f7374); /* "host" */
	rpc_wire_u32(w, 1000);
	rpc_wire_u32(w, 100);
	rpc_wire_u32(w, ngroups);
	for (uint32_t i = 0; i < ngroups; i++) {
		rpc_wire_u32(w, i);
	}
	rpc_wire_u32(w, RPC_AUTH_NONE);
	rpc_wire_u32(w, 0);
}

uint32_t rpc_wire_get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}
