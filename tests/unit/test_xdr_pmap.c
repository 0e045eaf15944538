// SPDX-License-Identifier: Apache-2.0
/*
 * test_xdr_pmap: the rpcgen routines of nfsd/proto/pmap.x (RFC 1833 3).
 * Every procedure's arguments and results round-trip unchanged; the wire
 * bytes of a mapping are the RFC's four words; CALLIT payloads above
 * PMAP2_CALLIT_BOUND fail to decode.  The header is included together with
 * libtirpc's <rpc/pmap_prot.h> on purpose: the names must not clash.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <rpc/rpc.h>
#include <rpc/pmap_prot.h>

#include "pmap.h"
#include "tests/lib/xdr_roundtrip.h"

static void roundtrip(xdrproc_t proc, const void *obj, size_t size)
{
	void *decoded = NULL;

	assert_int_equal(xdr_roundtrip(proc, obj, size, &decoded), 0);
	xdr_roundtrip_release(proc, decoded);
}

static void test_mapping_is_four_words(void **state)
{
	pmap2_mapping m = { .prog = 100003,
			    .vers = 3,
			    .prot = PMAP2_IPPROTO_TCP,
			    .port = 2049 };
	const uint8_t want[16] = { 0, 1, 0x86, 0xa3, 0, 0, 0, 3,
				   0, 0, 0,    6,    0, 0, 8, 1 };
	uint8_t buf[64];
	size_t len = 0;

	(void)state;
	assert_int_equal(xdr_roundtrip_encode((xdrproc_t)xdr_pmap2_mapping, &m,
					      buf, sizeof(buf), &len),
			 0);
	assert_int_equal(len, sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));
	roundtrip((xdrproc_t)xdr_pmap2_mapping, &m, sizeof(m));
}

static void test_set_getport_results_roundtrip(void **state)
{
	bool_t yes = TRUE;
	u_int port = 20048;

	(void)state;
	roundtrip((xdrproc_t)xdr_bool, &yes, sizeof(yes));
	roundtrip((xdrproc_t)xdr_u_int, &port, sizeof(port));
}

static void test_dump_roundtrips(void **state)
{
	struct pmap2_node n[2] = {
		{ .map = { 100000, 2, PMAP2_IPPROTO_TCP, 111 }, .next = &n[1] },
		{ .map = { 100005, 3, PMAP2_IPPROTO_UDP, 20048 } },
	};
	pmap2_list list = &n[0];
	pmap2_list empty = NULL;
	pmap2_list *decoded = NULL;

	(void)state;
	roundtrip((xdrproc_t)xdr_pmap2_list, &empty, sizeof(empty));
	assert_int_equal(xdr_roundtrip((xdrproc_t)xdr_pmap2_list, &list,
				       sizeof(list), (void **)&decoded),
			 0);
	assert_int_equal((*decoded)->next->map.port, 20048);
	assert_null((*decoded)->next->next);
	xdr_roundtrip_release((xdrproc_t)xdr_pmap2_list, decoded);
}

/* Our DUMP reply decodes with libtirpc's own pmaplist routine. */
static void test_dump_reply_decodes_with_libtirpc(void **state)
{
	struct pmap2_node n[2] = {
		{ .map = { 100003, 3, PMAP2_IPPROTO_TCP, 2049 },
		  .next = &n[1] },
		{ .map = { 100005, 3, PMAP2_IPPROTO_TCP, 20048 } },
	};
	pmap2_list list = &n[0];
	struct pmaplist *theirs = NULL;
	uint8_t buf[256];
	size_t len = 0;
	XDR xdrs;

	(void)state;
	assert_int_equal(xdr_roundtrip_encode((xdrproc_t)xdr_pmap2_list, &list,
					      buf, sizeof(buf), &len),
			 0);
	xdrmem_create(&xdrs, (char *)buf, (u_int)len, XDR_DECODE);
	assert_true(xdr_pmaplist(&xdrs, &theirs));
	assert_int_equal(xdr_getpos(&xdrs), len);
	xdr_destroy(&xdrs);
	assert_non_null(theirs);
	assert_int_equal(theirs->pml_map.pm_prog, 100003);
	assert_int_equal(theirs->pml_map.pm_port, 2049);
	assert_int_equal(theirs->pml_next->pml_map.pm_port, 20048);
	assert_null(theirs->pml_next->pml_next);
	xdr_free((xdrproc_t)xdr_pmaplist, &theirs);
}

static void test_callit_roundtrips(void **state)
{
	pmap2_call_args args = { .prog = 100003,
				 .vers = 3,
				 .proc = 0,
				 .args = { .args_len = 4,
					   .args_val = (char *)"\0\0\0\1" } };
	pmap2_call_result res = { .port = 2049,
				  .res = { .res_len = 0, .res_val = NULL } };

	(void)state;
	roundtrip((xdrproc_t)xdr_pmap2_call_args, &args, sizeof(args));
	roundtrip((xdrproc_t)xdr_pmap2_call_result, &res, sizeof(res));
}

static int callit_decode(u_int len)
{
	pmap2_call_args head = { .prog = 1, .vers = 2, .proc = 3 };
	struct xdr_wire w;
	int ret;

	assert_int_equal(xdr_wire_open(&w, 2 * PMAP2_CALLIT_BOUND), 0);
	assert_true(xdr_u_int(&w.xdrs, &head.prog));
	assert_true(xdr_u_int(&w.xdrs, &head.vers));
	assert_true(xdr_u_int(&w.xdrs, &head.proc));
	assert_int_equal(xdr_wire_counted(&w, len), 0);
	ret = xdr_wire_decode(&w, (xdrproc_t)xdr_pmap2_call_args,
			      sizeof(pmap2_call_args));
	xdr_wire_close(&w);
	return ret;
}

static void test_callit_args_bound(void **state)
{
	(void)state;
	assert_int_equal(callit_decode(PMAP2_CALLIT_BOUND), 0);
	assert_int_equal(callit_decode(PMAP2_CALLIT_BOUND + 1), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mapping_is_four_words),
		cmocka_unit_test(test_set_getport_results_roundtrip),
		cmocka_unit_test(test_dump_roundtrips),
		cmocka_unit_test(test_dump_reply_decodes_with_libtirpc),
		cmocka_unit_test(test_callit_roundtrips),
		cmocka_unit_test(test_callit_args_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
