// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_record: the bytes a TCP peer controls, end to end up to dispatch.
 * Input: one byte N, then N chunk sizes (each byte + 1, used in turn), then
 * the stream.  The stream is fed to rpc_record_feed() in chunks of those
 * sizes (all at once when N is 0), as reads from a socket would cut it,
 * and every record is decoded with rpc_call_decode() and rpc_auth_parse().
 * A chunk whose size byte is odd is read in place where the record offers
 * a place (rpc_record_direct, as conn.c reads large records), else fed.
 * Seeds (tests/fuzz/corpus/record/) are valid calls with N = 0 or a few
 * small chunks.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nfsd/rpc/auth.h"
#include "nfsd/rpc/msg.h"
#include "nfsd/rpc/record.h"

#define FUZZ_RECORD_MAX (64 * 1024)
#define FUZZ_DIRECT_MIN 64 /* records from this size are read in place */

/* Decodes one record as dispatch would, checking what it may borrow. */
static void fuzz_record_decode(const uint8_t *rec, size_t len)
{
	struct rpc_call_header call;
	struct rpc_cred cred;
	uint32_t xid, type;

	if (rpc_msg_peek(rec, len, &xid, &type) != 0 && len >= 8) {
		__builtin_trap();
	}
	if (rpc_call_decode(rec, len, &call) != 0) {
		return;
	}
	if (call.args_offset > len || call.cred_len > RPC_AUTH_BODY_MAX ||
	    call.verf_len > RPC_AUTH_BODY_MAX) {
		__builtin_trap();
	}
	if (rpc_auth_parse(&call, &cred) == RPC_AUTH_OK &&
	    (cred.ngroups > RPC_AUTH_SYS_MAX_GROUPS ||
	     cred.machine[sizeof(cred.machine) - 1] != '\0')) {
		__builtin_trap();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpc_record rec;
	const uint8_t *sizes, *stream;
	size_t nsizes, len, pos = 0, turn = 0;

	if (size < 1) {
		return 0;
	}
	nsizes = data[0];
	if (nsizes > size - 1) {
		nsizes = size - 1;
	}
	sizes = data + 1;
	stream = sizes + nsizes;
	len = size - 1 - nsizes;

	rpc_record_init(&rec, FUZZ_RECORD_MAX);
	while (pos < len) {
		uint8_t size_byte = nsizes ? sizes[turn++ % nsizes] : 0;
		size_t chunk = nsizes ? (size_t)size_byte + 1 : len - pos;
		bool direct = (size_byte & 1) != 0;

		if (chunk > len - pos) {
			chunk = len - pos;
		}
		/* A chunk may hold several records, as one read may. */
		while (chunk > 0) {
			const uint8_t *out = NULL;
			size_t used = 0, out_len = 0, room = 0;
			uint8_t *at =
				direct ? rpc_record_direct(
						 &rec, FUZZ_DIRECT_MIN, &room)
				       : NULL;
			int rc;

			if (at) {
				if (at != rec.buf + rec.len ||
				    rec.len + room > rec.cap) {
					__builtin_trap();
				}
				used = chunk < room ? chunk : room;
				memcpy(at, stream + pos, used);
				rc = rpc_record_direct_done(&rec, used, &out,
							    &out_len);
			} else {
				rc = rpc_record_feed(&rec, stream + pos, chunk,
						     &used, &out, &out_len);
			}
			if (used > chunk) {
				__builtin_trap();
			}
			pos += used;
			chunk -= used;
			if (rc < 0) {
				goto done;
			}
			if (rc == 0 && at) {
				continue;
			}
			if (rc == 0) {
				if (chunk != 0) {
					__builtin_trap();
				}
				break;
			}
			if (out_len > FUZZ_RECORD_MAX) {
				__builtin_trap();
			}
			fuzz_record_decode(out, out_len);
		}
	}
done:
	rpc_record_fini(&rec);
	return 0;
}
