/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nfs3_pooled_fixture: the server's dispatcher as a connection drives it,
 * for tests of the hot path (test_dispatch_alloc.c, test_dispatch_offload.c):
 * the NFSv3 program of an nfs3_local_fixture (ds1 on the real local store)
 * with a duplicate request cache, an rpc_pool, and a record reader
 * (rpc/record.c) on that pool.  A call goes in as bytes with a record mark
 * and reaches rpc_dispatch_pooled() from 127.0.0.1:811, as conn.c delivers
 * it; the test supplies the transport.
 */
#ifndef DSNFS_TESTS_NFS3_POOLED_FIXTURE_H
#define DSNFS_TESTS_NFS3_POOLED_FIXTURE_H

#include <netinet/in.h>
#include <stdint.h>

#include "nfsd/rpc/dispatch.h"
#include "nfsd/rpc/pool.h"
#include "nfsd/rpc/record.h"
#include "tests/lib/nfs3_local_fixture.h"

/* The largest call body nfs3_pooled_fixture_send() builds. */
#define NFS3_POOLED_FIXTURE_MSG_MAX (65536 + 1024)

/* Encodes a call's arguments (an xdr_*3args routine). */
typedef bool_t (*nfs3_pooled_fixture_encode_fn)(XDR *xdrs, void *args);

struct nfs3_pooled_fixture {
	struct nfs3_local_fixture local;
	struct rpc_dispatcher d; /* tracing off; no work pool until a test
				  * sets one (closed with the fixture) */
	struct rpc_pool *pool;
	struct rpc_record rec;
	struct sockaddr_in peer; /* 127.0.0.1:811 */
	nfs_fh3 root; /* ds1's */
	uint32_t xid; /* of the last call sent */
	uint8_t msg[4 + NFS3_POOLED_FIXTURE_MSG_MAX]; /* the last call */
};

/* Sets up @pf (zeroed by the caller); @tag names its directory as in
 * nfs3_local_fixture_open().  Asserts success. */
void nfs3_pooled_fixture_open(struct nfs3_pooled_fixture *pf, const char *tag);

/*
 * Asserts that every request, reply and held record came back to the
 * pool, then frees the record reader, the pool, the dispatcher's work
 * pool (if any) and DRC, and closes the local fixture.  The transport's
 * requests must all be finished.
 */
void nfs3_pooled_fixture_close(struct nfs3_pooled_fixture *pf);

/*
 * Sends one call of NFSv3 @proc with @args (borrowed) encoded by @encode
 * (NULL: no arguments) and the next xid, as a connection delivers it:
 * record mark, rpc_record_feed(), then rpc_dispatch_pooled() over @tops
 * and @transport (borrowed).  Returns when dispatch does: a deferred call
 * has not replied yet.
 */
void nfs3_pooled_fixture_send(struct nfs3_pooled_fixture *pf, uint32_t proc,
			      nfs3_pooled_fixture_encode_fn encode, void *args,
			      const struct rpc_transport_ops *tops,
			      void *transport);

#endif
