// SPDX-License-Identifier: Apache-2.0
/*
 * test_dsload_nfsc: dsload's client-side codecs (perf/dsload/nfsc.c)
 * against the generated XDR.  A WRITE built in place decodes as the
 * WRITE3args it claims to be; READ replies give their payload without a
 * copy and refuse a payload longer than the record; a call header carries
 * the rpcconn's machine name and a fresh XID.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nfsd/rpc/msg.h"
#include "perf/dsload/nfsc.h"

/* An rpcconn that is never opened: call encoding needs its XID counter and
 * machine name only. */
static void fake_rpcconn(struct rpcconn *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->machine, sizeof(c->machine), "esx7");
	c->xid_next = 1000;
}

static void test_nfsc_write_in_place_decodes_as_write3args(void **state)
{
	struct rpcconn c;
	struct rpcconn_call call = { 0 };
	struct nfsc_fh fh = { .len = 12 };
	struct rpc_call_header hdr;
	WRITE3args a;
	uint8_t *data;
	XDR x;
	int len;

	(void)state;
	fake_rpcconn(&c);
	memcpy(fh.data, "handle-bytes", 12);
	call.cap = 1024;
	call.buf = calloc(1, call.cap);
	len = nfsc_write_encode(&c, &call, &fh, 1 << 20, 13, UNSTABLE, &data);
	assert_true(len > 0);
	memset(data, 0xab, 13);
	/* record mark slot, then the call header */
	assert_int_equal(rpc_call_decode(call.buf + 4, (size_t)len - 4, &hdr),
			 0);
	assert_int_equal(hdr.xid, 1000);
	assert_int_equal(hdr.prog, NFS_PROGRAM);
	assert_int_equal(hdr.proc, NFSPROC3_WRITE);
	assert_int_equal(hdr.cred_flavor, RPC_AUTH_SYS);
	assert_non_null(memmem(hdr.cred_body, hdr.cred_len, "esx7", 4));
	memset(&a, 0, sizeof(a));
	xdrmem_create(&x, (char *)call.buf + 4 + hdr.args_offset,
		      (u_int)((size_t)len - 4 - hdr.args_offset), XDR_DECODE);
	assert_true(xdr_WRITE3args(&x, &a));
	/* everything was consumed: 13 bytes plus 3 of padding */
	assert_int_equal(xdr_getpos(&x), (size_t)len - 4 - hdr.args_offset);
	xdr_destroy(&x);
	assert_int_equal(a.offset, 1 << 20);
	assert_int_equal(a.count, 13);
	assert_int_equal(a.stable, UNSTABLE);
	assert_int_equal(a.file.data.data_len, 12);
	assert_memory_equal(a.file.data.data_val, "handle-bytes", 12);
	assert_int_equal(a.data.data_len, 13);
	assert_int_equal((uint8_t)a.data.data_val[12], 0xab);
	xdr_free((xdrproc_t)xdr_WRITE3args, (char *)&a);
	/* the next call gets the next XID */
	assert_true(nfsc_read_encode(&c, &call, &fh, 0, 8192) > 0);
	assert_int_equal(call.xid, 1001);
	free(call.buf);
}

static void test_nfsc_write_refuses_a_small_buffer(void **state)
{
	struct rpcconn c;
	struct rpcconn_call call = { 0 };
	struct nfsc_fh fh = { .len = 8 };
	uint8_t *data;

	(void)state;
	fake_rpcconn(&c);
	call.cap = 200;
	call.buf = calloc(1, call.cap);
	assert_int_equal(
		nfsc_write_encode(&c, &call, &fh, 0, 8192, FILE_SYNC, &data),
		-ENOBUFS);
	free(call.buf);
}

/* Encodes a READ3res with @n payload bytes; returns its length. */
static size_t read_reply(uint8_t *buf, size_t cap, uint32_t n)
{
	READ3res r;
	char payload[64];
	XDR x;
	size_t len;

	memset(&r, 0, sizeof(r));
	memset(payload, 'z', sizeof(payload));
	r.status = NFS3_OK;
	r.READ3res_u.resok.count = n;
	r.READ3res_u.resok.eof = TRUE;
	r.READ3res_u.resok.data.data_len = n;
	r.READ3res_u.resok.data.data_val = payload;
	xdrmem_create(&x, (char *)buf, (u_int)cap, XDR_ENCODE);
	assert_true(xdr_READ3res(&x, &r));
	len = xdr_getpos(&x);
	xdr_destroy(&x);
	return len;
}

static void test_nfsc_read_reply_payload_borrowed(void **state)
{
	uint8_t buf[256];
	size_t len = read_reply(buf, sizeof(buf), 40);
	const uint8_t *data = NULL;
	uint32_t dlen = 0;
	nfsstat3 st;
	bool eof = false;

	(void)state;
	assert_int_equal(nfsc_read_decode(buf, len, &st, &eof, &data, &dlen),
			 0);
	assert_int_equal(st, NFS3_OK);
	assert_true(eof);
	assert_int_equal(dlen, 40);
	assert_true(data > buf && data + 40 <= buf + len);
	assert_int_equal(data[0], 'z');
}

static void test_nfsc_read_reply_longer_than_record_refused(void **state)
{
	uint8_t buf[256];
	size_t len = read_reply(buf, sizeof(buf), 40);
	const uint8_t *data;
	uint32_t dlen;
	nfsstat3 st;
	bool eof;

	(void)state;
	/* cut the record inside the payload */
	assert_int_equal(
		nfsc_read_decode(buf, len - 8, &st, &eof, &data, &dlen),
		-EBADMSG);
	/* or claim more bytes than follow: status, attributes_follow (no),
	 * count, eof, then the data length at offset 16 */
	assert_int_equal(len, 20 + 40);
	buf[8 + 3] = 60;
	buf[16 + 3] = 60;
	assert_int_equal(nfsc_read_decode(buf, len, &st, &eof, &data, &dlen),
			 -EBADMSG);
}

static void test_nfsc_read_reply_error_status(void **state)
{
	uint8_t buf[64];
	READ3res r;
	XDR x;
	const uint8_t *data;
	uint32_t dlen;
	nfsstat3 st;
	bool eof;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.status = NFS3ERR_STALE;
	xdrmem_create(&x, (char *)buf, sizeof(buf), XDR_ENCODE);
	assert_true(xdr_READ3res(&x, &r));
	assert_int_equal(
		nfsc_read_decode(buf, xdr_getpos(&x), &st, &eof, &data, &dlen),
		0);
	xdr_destroy(&x);
	assert_int_equal(st, NFS3ERR_STALE);
	assert_string_equal(nfsc_status_name(st), "NFS3ERR_STALE");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			test_nfsc_write_in_place_decodes_as_write3args),
		cmocka_unit_test(test_nfsc_write_refuses_a_small_buffer),
		cmocka_unit_test(test_nfsc_read_reply_payload_borrowed),
		cmocka_unit_test(
			test_nfsc_read_reply_longer_than_record_refused),
		cmocka_unit_test(test_nfsc_read_reply_error_status),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
