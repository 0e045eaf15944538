// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests for rpc/drc.c: the duplicate request cache.
 */
#include "nfsd/rpc/drc.h"
#include "nfsd/rpc/auth.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static struct drc_key key_for(uint32_t xid, const char *ip, uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(port) };
	struct drc_key key;

	memset(&key, 0, sizeof(key));
	inet_pton(AF_INET, ip, &sin.sin_addr);
	drc_key_addr(&key, (struct sockaddr *)&sin);
	key.xid = xid;
	key.prog = 100003;
	key.vers = 3;
	key.proc = 12;
	key.args_hash = 0xabcdef;
	return key;
}

/* A retransmission from the same address, port and caller is replayed. */
static void test_drc_replays_a_finished_call(void **state)
{
	struct drc *drc;
	struct drc_entry *e;
	struct drc_key first = key_for(7, "10.0.0.1", 900);
	struct drc_key again = key_for(7, "10.0.0.1", 900);
	uint8_t *reply = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(drc_new(16, 4096, &drc), 0);
	assert_int_equal(drc_lookup(drc, &first, &e, &reply, &len), DRC_NEW);
	assert_non_null(e);
	drc_finish(drc, e, (const uint8_t *)"reply-1", 7);
	assert_int_equal(drc_lookup(drc, &again, &e, &reply, &len), DRC_REPLAY);
	assert_int_equal(len, 7);
	assert_memory_equal(reply, "reply-1", 7);
	free(reply);
	drc_free(drc);
}

/* Issue 23: the key holds the source port and the credential (as knfsd
 * keys on address and port: the Linux client reconnects from its port),
 * so that another local user sending a call with someone's XID, from
 * another port or as another uid, runs it (and is checked as itself)
 * instead of getting the other user's reply. */
static void test_drc_port_and_credential_are_in_the_key(void **state)
{
	struct rpc_cred alice = { .flavor = 1, .uid = 1000, .gid = 1000 };
	struct rpc_cred mallory = { .flavor = 1, .uid = 1001, .gid = 1000 };
	struct rpc_cred alice_groups = alice;
	struct drc *drc;
	struct drc_entry *e;
	struct drc_key first = key_for(7, "10.0.0.1", 900);
	struct drc_key other_port = key_for(7, "10.0.0.1", 901);
	struct drc_key other_uid = first, other_groups = first, same = first;
	uint8_t *reply = NULL;
	size_t len = 0;

	(void)state;
	alice_groups.ngroups = 1;
	alice_groups.groups[0] = 0;
	drc_key_cred(&first, &alice);
	drc_key_cred(&same, &alice);
	drc_key_cred(&other_port, &alice);
	drc_key_cred(&other_uid, &mallory);
	drc_key_cred(&other_groups, &alice_groups);
	assert_int_equal(drc_new(16, 4096, &drc), 0);
	assert_int_equal(drc_lookup(drc, &first, &e, &reply, &len), DRC_NEW);
	drc_finish(drc, e, (const uint8_t *)"reply-1", 7);
	assert_int_equal(drc_lookup(drc, &other_port, &e, &reply, &len),
			 DRC_NEW);
	drc_forget(drc, e);
	assert_int_equal(drc_lookup(drc, &other_uid, &e, &reply, &len),
			 DRC_NEW);
	drc_forget(drc, e);
	assert_int_equal(drc_lookup(drc, &other_groups, &e, &reply, &len),
			 DRC_NEW);
	drc_forget(drc, e);
	assert_int_equal(drc_lookup(drc, &same, &e, &reply, &len), DRC_REPLAY);
	assert_memory_equal(reply, "reply-1", 7);
	free(reply);
	drc_free(drc);
}

static void test_drc_drops_a_copy_while_the_first_runs(void **state)
{
	struct drc *drc;
	struct drc_entry *e, *e2;
	struct drc_key k = key_for(8, "10.0.0.1", 900);
	uint8_t *reply;
	size_t len;
	struct drc_stats st;

	(void)state;
	assert_int_equal(drc_new(16, 4096, &drc), 0);
	assert_int_equal(drc_lookup(drc, &k, &e, &reply, &len), DRC_NEW);
	assert_int_equal(drc_lookup(drc, &k, &e2, &reply, &len),
			 DRC_IN_PROGRESS);
	assert_null(e2);
	drc_forget(drc, e);
	/* Forgotten (dropped before replying): the next copy runs. */
	assert_int_equal(drc_lookup(drc, &k, &e, &reply, &len), DRC_NEW);
	drc_forget(drc, e);
	drc_stats_get(drc, &st);
	assert_int_equal(st.in_progress, 1);
	assert_int_equal(st.entries, 0);
	drc_free(drc);
}

static void test_drc_tells_apart_clients_xids_and_arguments(void **state)
{
	struct drc *drc;
	struct drc_entry *e;
	struct drc_key a = key_for(9, "10.0.0.1", 900);
	struct drc_key other_client = key_for(9, "10.0.0.2", 900);
	struct drc_key other_xid = key_for(10, "10.0.0.1", 900);
	struct drc_key other_args = a;
	uint8_t *reply;
	size_t len;

	(void)state;
	other_args.args_hash ^= 1;
	assert_int_equal(drc_new(16, 4096, &drc), 0);
	assert_int_equal(drc_lookup(drc, &a, &e, &reply, &len), DRC_NEW);
	drc_finish(drc, e, (const uint8_t *)"x", 1);
	assert_int_equal(drc_lookup(drc, &other_client, &e, &reply, &len),
			 DRC_NEW);
	drc_forget(drc, e);
	assert_int_equal(drc_lookup(drc, &other_xid, &e, &reply, &len),
			 DRC_NEW);
	drc_forget(drc, e);
	assert_int_equal(drc_lookup(drc, &other_args, &e, &reply, &len),
			 DRC_NEW);
	drc_forget(drc, e);
	drc_free(drc);
}

static void test_drc_evicts_oldest_finished_entries_by_count(void **state)
{
	struct drc *drc;
	struct drc_entry *e;
	uint8_t *reply;
	size_t len;
	struct drc_stats st;

	(void)state;
	assert_int_equal(drc_new(4, 1 << 20, &drc), 0);
	for (uint32_t xid = 1; xid <= 10; xid++) {
		struct drc_key k = key_for(xid, "10.0.0.1", 900);

		assert_int_equal(drc_lookup(drc, &k, &e, &reply, &len),
				 DRC_NEW);
		drc_finish(drc, e, (const uint8_t *)"r", 1);
	}
	drc_stats_get(drc, &st);
	assert_true(st.entries <= 4);
	struct drc_key newest = key_for(10, "10.0.0.1", 900);
	struct drc_key oldest = key_for(1, "10.0.0.1", 900);
	assert_int_equal(drc_lookup(drc, &newest, &e, &reply, &len),
			 DRC_REPLAY);
	free(reply);
	assert_int_equal(drc_lookup(drc, &oldest, &e, &reply, &len), DRC_NEW);
	drc_forget(drc, e);
	drc_free(drc);
}

static void test_drc_bounds_reply_bytes(void **state)
{
	struct drc *drc;
	struct drc_entry *e;
	uint8_t big[1000] = { 0 };
	uint8_t *reply;
	size_t len;
	struct drc_stats st;

	(void)state;
	assert_int_equal(drc_new(100, 2500, &drc), 0);
	for (uint32_t xid = 1; xid <= 5; xid++) {
		struct drc_key k = key_for(xid, "10.0.0.1", 900);

		assert_int_equal(drc_lookup(drc, &k, &e, &reply, &len),
				 DRC_NEW);
		drc_finish(drc, e, big, sizeof(big));
		drc_stats_get(drc, &st);
		assert_true(st.bytes <= 2500);
	}
	assert_int_equal(st.entries, 2);
	assert_int_equal(st.evictions, 3);
	drc_free(drc);
}

static void test_drc_never_evicts_running_calls(void **state)
{
	struct drc *drc;
	struct drc_entry *running[3], *e;
	uint8_t *reply;
	size_t len;

	(void)state;
	assert_int_equal(drc_new(2, 4096, &drc), 0);
	for (uint32_t i = 0; i < 2; i++) {
		struct drc_key k = key_for(100 + i, "10.0.0.1", 900);
		assert_int_equal(drc_lookup(drc, &k, &running[i], &reply, &len),
				 DRC_NEW);
		assert_non_null(running[i]);
	}
	/* Full of running calls: the third runs uncached. */
	struct drc_key k3 = key_for(102, "10.0.0.1", 900);
	assert_int_equal(drc_lookup(drc, &k3, &running[2], &reply, &len),
			 DRC_NEW);
	assert_null(running[2]);
	struct drc_key k0 = key_for(100, "10.0.0.1", 900);
	assert_int_equal(drc_lookup(drc, &k0, &e, &reply, &len),
			 DRC_IN_PROGRESS);
	drc_finish(drc, running[0], (const uint8_t *)"a", 1);
	drc_finish(drc, running[1], (const uint8_t *)"b", 1);
	drc_free(drc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drc_replays_a_finished_call),
		cmocka_unit_test(test_drc_port_and_credential_are_in_the_key),
		cmocka_unit_test(test_drc_drops_a_copy_while_the_first_runs),
		cmocka_unit_test(
			test_drc_tells_apart_clients_xids_and_arguments),
		cmocka_unit_test(
			test_drc_evicts_oldest_finished_entries_by_count),
		cmocka_unit_test(test_drc_bounds_reply_bytes),
		cmocka_unit_test(test_drc_never_evicts_running_calls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
