// SPDX-License-Identifier: Apache-2.0
/*
 * nfs3_pooled_fixture: NFSv3 calls fed to the dispatcher as a connection
 * feeds them (tests/lib/nfs3_pooled_fixture.h; RFC 5531 11, record
 * marking).
 */
#include "tests/lib/nfs3_pooled_fixture.h"

#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "nfsd/rpc/drc.h"
#include "nfsd/rpc/work.h"
#include "tests/lib/rpc_wire.h"

void nfs3_pooled_fixture_open(struct nfs3_pooled_fixture *pf, const char *tag)
{
	nfs3_local_fixture_open(&pf->local, tag);
	pf->root = nfs3_fixture_root(pf->local.fx, NFS3_FIXTURE_DS1);
	/* The server's dispatcher, with tracing off as it runs by default. */
	assert_int_equal(rpc_dispatcher_add(&pf->d, &pf->local.fx->prog), 0);
	assert_int_equal(drc_new(64, 1024 * 1024, &pf->d.drc), 0);
	assert_int_equal(rpc_pool_new(RPC_POOL_DEFAULT_MAX_BYTES, &pf->pool),
			 0);
	rpc_record_init(&pf->rec, RPC_RECORD_DEFAULT_MAX);
	rpc_record_set_pool(&pf->rec, pf->pool);
	pf->peer.sin_family = AF_INET;
	pf->peer.sin_port = htons(811);
	pf->peer.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
}

void nfs3_pooled_fixture_close(struct nfs3_pooled_fixture *pf)
{
	struct rpc_pool_stats st;

	rpc_record_fini(&pf->rec);
	/* Every request, reply, held record and READ buffer came back. */
	rpc_pool_stats_get(pf->pool, &st);
	assert_int_equal(st.outstanding, 0);
	rpc_pool_free(pf->pool);
	if (pf->d.work_pool) {
		rpc_work_pool_free(pf->d.work_pool);
	}
	drc_free(pf->d.drc);
	nfs3_local_fixture_close(&pf->local);
}

void nfs3_pooled_fixture_send(struct nfs3_pooled_fixture *pf, uint32_t proc,
			      nfs3_pooled_fixture_encode_fn encode, void *args,
			      const struct rpc_transport_ops *tops,
			      void *transport)
{
	struct rpc_wire w;
	const uint8_t *rec;
	size_t used, rec_len, len;
	XDR xdrs;

	rpc_wire_call(&w, ++pf->xid, 2, NFS3_SERVICE_PROG, NFS3_SERVICE_VERS,
		      proc, 2);
	memcpy(pf->msg + 4, w.buf, w.len);
	len = w.len;
	if (encode) {
		xdrmem_create(&xdrs, (char *)pf->msg + 4 + len,
			      (u_int)(NFS3_POOLED_FIXTURE_MSG_MAX - len),
			      XDR_ENCODE);
		assert_true(encode(&xdrs, args));
		len += xdr_getpos(&xdrs);
		xdr_destroy(&xdrs);
	}
	rpc_record_mark_encode(pf->msg, (uint32_t)len);
	assert_int_equal(rpc_record_feed(&pf->rec, pf->msg, 4 + len, &used,
					 &rec, &rec_len),
			 1);
	rpc_dispatch_pooled(&pf->d, pf->pool, rec, rec_len, tops, transport,
			    (const struct sockaddr *)&pf->peer,
			    sizeof(pf->peer));
}
