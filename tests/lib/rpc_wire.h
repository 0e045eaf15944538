/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rpc_wire: hand-built RPC call records for tests that feed dispatch
 * bytes directly (RFC 5531 9), and a big-endian word reader for checking
 * replies word by word.
 */
#ifndef DSNFS_TESTS_RPC_WIRE_H
#define DSNFS_TESTS_RPC_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define RPC_WIRE_MAX 1024

/* A record being built: buf[0..len) is written. */
struct rpc_wire {
	uint8_t buf[RPC_WIRE_MAX];
	size_t len;
};

/* Appends @v big endian; fails the test if @w is full. */
void rpc_wire_u32(struct rpc_wire *w, uint32_t v);

/*
 * Restarts @w with a call header for @prog @vers @proc at RPC version
 * @rpcvers, with an AUTH_SYS credential (stamp 0, machine "host", uid
 * 1000, gid 100, @ngroups groups 0, 1, ...) and an AUTH_NONE verifier.
 * The arguments, if any, follow through rpc_wire_u32().
 */
void rpc_wire_call(struct rpc_wire *w, uint32_t xid, uint32_t rpcvers,
		   uint32_t prog, uint32_t vers, uint32_t proc,
		   uint32_t ngroups);

/* Borrows @p (4 bytes); returns the big-endian word there. */
uint32_t rpc_wire_get_u32(const uint8_t *p);

#endif
