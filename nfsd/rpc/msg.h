/* SPDX-License-Identifier: Apache-2.0 */
/*
 * msg: ONC RPC call and reply headers (RFC 5531 9).  Pure: decodes a call
 * header from a record and encodes reply headers into a buffer; shared by
 * dsnfsd and perf/dsload, so it knows nothing of the server.
 */
#ifndef DSNFS_RPC_MSG_H
#define DSNFS_RPC_MSG_H

#include <stddef.h>
#include <stdint.h>

#define RPC_MSG_RPCVERS 2
#define RPC_MSG_CALL 0
#define RPC_MSG_REPLY 1
#define RPC_AUTH_BODY_MAX 400 /* RFC 5531 8.2: opaque body<400> */

/* accept_stat and friends (RFC 5531 9), named apart from libtirpc's. */
enum rpc_accept_stat {
	RPC_ACCEPT_SUCCESS = 0,
	RPC_ACCEPT_PROG_UNAVAIL = 1,
	RPC_ACCEPT_PROG_MISMATCH = 2,
	RPC_ACCEPT_PROC_UNAVAIL = 3,
	RPC_ACCEPT_GARBAGE_ARGS = 4,
	RPC_ACCEPT_SYSTEM_ERR = 5,
};

enum rpc_reject_stat {
	RPC_REJECT_RPC_MISMATCH = 0,
	RPC_REJECT_AUTH_ERROR = 1,
};

enum rpc_auth_stat {
	RPC_AUTH_OK = 0,
	RPC_AUTH_BADCRED = 1,
	RPC_AUTH_REJECTEDCRED = 2,
	RPC_AUTH_BADVERF = 3,
	RPC_AUTH_REJECTEDVERF = 4,
	RPC_AUTH_TOOWEAK = 5,
};

enum rpc_auth_flavor {
	RPC_AUTH_NONE = 0,
	RPC_AUTH_SYS = 1,
};

/* A decoded call header.  The pointers borrow from the record. */
struct rpc_call_header {
	uint32_t xid;
	uint32_t rpcvers;
	uint32_t prog;
	uint32_t vers;
	uint32_t proc;
	uint32_t cred_flavor;
	const uint8_t *cred_body;
	uint32_t cred_len;
	uint32_t verf_flavor;
	const uint8_t *verf_body;
	uint32_t verf_len;
	size_t args_offset; /* where the procedure's arguments start */
};

/*
 * Reads the fixed words of a message: xid and type.  Returns 0, or
 * -EBADMSG when the record is shorter than 8 bytes.
 */
int rpc_msg_peek(const uint8_t *rec, size_t len, uint32_t *xid,
		 uint32_t *msg_type);

/*
 * Decodes a call header.  Returns 0, or -EBADMSG when the record is too
 * short or an auth body exceeds 400 bytes.  rpcvers is not checked here:
 * the caller answers RPC_MISMATCH.
 */
int rpc_call_decode(const uint8_t *rec, size_t len,
		    struct rpc_call_header *call);

/* Size in bytes of an accepted reply header with an AUTH_NONE verifier. */
#define RPC_REPLY_ACCEPTED_LEN 24

/*
 * Encodes an accepted reply header (xid, REPLY, MSG_ACCEPTED, AUTH_NONE
 * verifier, @stat) into buf.  For PROG_MISMATCH, @low / @high follow.
 * Returns the bytes written, or 0 when @len is too small (needs 32).
 */
size_t rpc_reply_accepted_encode(uint8_t *buf, size_t len, uint32_t xid,
				 enum rpc_accept_stat stat, uint32_t low,
				 uint32_t high);

/* Encodes a denied reply: RPC_MISMATCH (2, 2) or AUTH_ERROR with @why.
 * Returns the bytes written, or 0 when @len is too small (needs 24). */
size_t rpc_reply_denied_encode(uint8_t *buf, size_t len, uint32_t xid,
			       enum rpc_reject_stat stat,
			       enum rpc_auth_stat why);

/*
 * Encodes a call header with AUTH_SYS (uid, gid, @machine) or AUTH_NONE
 * (machine == NULL) credentials and an AUTH_NONE verifier.  Returns the
 * bytes written, or 0 when @len is too small.  Used by clients (dsload).
 */
size_t rpc_call_encode(uint8_t *buf, size_t len, uint32_t xid, uint32_t prog,
		       uint32_t vers, uint32_t proc, const char *machine,
		       uint32_t uid, uint32_t gid);

/* Decodes a reply header: returns 0 with *accept_stat and *body_offset set
 * for an accepted reply, -EACCES for a denied one, -EBADMSG if malformed. */
int rpc_reply_decode(const uint8_t *rec, size_t len, uint32_t *xid,
		     uint32_t *accept_stat, size_t *body_offset);

#endif
