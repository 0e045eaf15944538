// SPDX-License-Identifier: Apache-2.0
/*
 * test_export: the export table and its client rules (nfsd/export/export.c).
 * CIDR rules match IPv4 and IPv6 peers by prefix, IPv4 clients arriving
 * as v4-mapped IPv6 match IPv4 rules (and v4-mapped rules), an empty rule
 * list lets everyone in, and lookups by MNT path ignore trailing slashes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include <cmocka.h>

#include "nfsd/base/base.h"
#include "nfsd/export/export.h"

/* A peer address from text ("10.0.0.1" or "fd00::1"). */
static const struct sockaddr *peer(const char *text)
{
	static struct sockaddr_storage ss;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, text, &((struct sockaddr_in *)&ss)->sin_addr) ==
	    1) {
		ss.ss_family = AF_INET;
	} else {
		assert_int_equal(
			inet_pton(AF_INET6, text,
				  &((struct sockaddr_in6 *)&ss)->sin6_addr),
			1);
		ss.ss_family = AF_INET6;
	}
	return (const struct sockaddr *)&ss;
}

/* An export whose client list is the rules in @rules (NULL-terminated). */
static void export_with(struct export *exp, const char *const *rules)
{
	memset(exp, 0, sizeof(*exp));
	for (; *rules; rules++) {
		assert_true(exp->nclients < EXPORT_MAX_CLIENTS);
		assert_int_equal(export_client_parse(
					 *rules, &exp->clients[exp->nclients]),
				 0);
		exp->nclients++;
	}
}

static bool allowed(const char *rule, const char *addr)
{
	const char *rules[] = { rule, NULL };
	struct export exp;

	export_with(&exp, rules);
	return export_client_allowed(&exp, peer(addr));
}

static void test_export_v4_cidr_matches_prefix(void **state)
{
	(void)state;
	assert_true(allowed("10.0.0.0/8", "10.1.2.3"));
	assert_true(allowed("10.0.0.0/8", "10.255.255.255"));
	assert_false(allowed("10.0.0.0/8", "11.0.0.1"));
	assert_true(allowed("192.168.0.0/23", "192.168.1.200"));
	assert_false(allowed("192.168.0.0/23", "192.168.2.1"));
	/* Host bits in the rule do not matter. */
	assert_true(allowed("172.16.5.9/12", "172.31.0.1"));
	assert_false(allowed("172.16.5.9/12", "172.32.0.1"));
}

static void test_export_v4_slash_32_is_one_host(void **state)
{
	(void)state;
	assert_true(allowed("127.0.0.1/32", "127.0.0.1"));
	assert_false(allowed("127.0.0.1/32", "127.0.0.2"));
	assert_true(allowed("127.0.0.1", "127.0.0.1"));
	assert_false(allowed("127.0.0.1", "127.0.0.2"));
}

static void test_export_slash_0_is_its_whole_family(void **state)
{
	(void)state;
	assert_true(allowed("0.0.0.0/0", "1.2.3.4"));
	assert_true(allowed("0.0.0.0/0", "255.255.255.255"));
	assert_false(allowed("0.0.0.0/0", "2001:db8::1"));
	assert_true(allowed("::/0", "2001:db8::1"));
	assert_false(allowed("::/0", "1.2.3.4"));
}

static void test_export_v6_cidr_matches_prefix(void **state)
{
	(void)state;
	assert_true(allowed("fd00::/8", "fd12:3456::1"));
	assert_false(allowed("fd00::/8", "fe80::1"));
	assert_true(allowed("2001:db8::/33", "2001:db8:7fff::1"));
	assert_false(allowed("2001:db8::/33", "2001:db8:8000::1"));
	assert_true(allowed("::1", "::1"));
	assert_false(allowed("::1", "::2"));
	assert_false(allowed("::1", "127.0.0.1"));
}

static void test_export_v4_mapped_peer_matches_v4_rule(void **state)
{
	(void)state;
	assert_true(allowed("10.0.0.0/8", "::ffff:10.9.8.7"));
	assert_false(allowed("10.0.0.0/8", "::ffff:11.9.8.7"));
	assert_true(allowed("127.0.0.1", "::ffff:127.0.0.1"));
}

static void test_export_v4_mapped_rule_matches_v4_peer(void **state)
{
	(void)state;
	assert_true(allowed("::ffff:10.0.0.0/104", "10.1.2.3"));
	assert_true(allowed("::ffff:10.0.0.0/104", "::ffff:10.1.2.3"));
	assert_false(allowed("::ffff:10.0.0.0/104", "11.1.2.3"));
	assert_true(allowed("::ffff:127.0.0.1", "127.0.0.1"));
	/* A mapped rule shorter than the mapping prefix stays IPv6. */
	assert_false(allowed("::ffff:0.0.0.0/64", "10.1.2.3"));
}

static void test_export_empty_list_is_everyone(void **state)
{
	const char *none[] = { NULL };
	struct export exp;

	(void)state;
	export_with(&exp, none);
	assert_true(export_client_allowed(&exp, peer("203.0.113.9")));
	assert_true(export_client_allowed(&exp, peer("2001:db8::9")));
}

static void test_export_several_rules_any_matches(void **state)
{
	const char *rules[] = { "10.0.0.0/8", "192.168.1.0/24", "::1", NULL };
	struct export exp;
	struct sockaddr_un un = { .sun_family = AF_UNIX };

	(void)state;
	export_with(&exp, rules);
	assert_true(export_client_allowed(&exp, peer("192.168.1.7")));
	assert_true(export_client_allowed(&exp, peer("::1")));
	assert_true(export_client_allowed(&exp, peer("10.0.0.1")));
	assert_false(export_client_allowed(&exp, peer("192.168.2.7")));
	assert_false(export_client_allowed(&exp, (struct sockaddr *)&un));
}

/* @text as a peer with source port @port. */
static const struct sockaddr *peer_port(const char *text, uint16_t port)
{
	struct sockaddr_storage *ss = (struct sockaddr_storage *)peer(text);

	if (ss->ss_family == AF_INET) {
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	} else {
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
	}
	return (const struct sockaddr *)ss;
}

/* Issue 23: the default export (no clients given) is loopback only and
 * secure; each refusal names its rule and how to allow the client. */
static void test_export_default_is_loopback_and_secure(void **state)
{
	const char *rules[] = { "127.0.0.0/8", "::1", NULL };
	struct export exp;
	char why[256];

	(void)state;
	export_with(&exp, rules);
	exp.clients_default = true;
	exp.secure = true;
	assert_int_equal(export_client_check(&exp, peer_port("127.0.0.1", 900)),
			 EXPORT_ALLOWED);
	assert_int_equal(
		export_client_check(&exp, peer_port("127.0.0.2", 1023)),
		EXPORT_ALLOWED);
	assert_int_equal(export_client_check(&exp, peer_port("::1", 700)),
			 EXPORT_ALLOWED);
	/* IPv4 through a "::" listener. */
	assert_int_equal(
		export_client_check(&exp, peer_port("::ffff:127.0.0.1", 700)),
		EXPORT_ALLOWED);
	assert_int_equal(
		export_client_check(&exp, peer_port("127.0.0.1", 1024)),
		EXPORT_REFUSED_PORT);
	assert_int_equal(export_client_check(&exp, peer_port("10.0.0.1", 700)),
			 EXPORT_REFUSED_ADDR_DEFAULT);
	assert_int_equal(
		export_client_check(&exp, peer_port("::ffff:10.0.0.1", 700)),
		EXPORT_REFUSED_ADDR_DEFAULT);
	assert_int_equal(export_client_check(&exp, peer_port("::2", 700)),
			 EXPORT_REFUSED_ADDR_DEFAULT);

	export_refusal_format(EXPORT_REFUSED_PORT, "ds1",
			      peer_port("127.0.0.1", 40000), why, sizeof(why));
	assert_non_null(strstr(why, "source port 40000 is not privileged"));
	assert_non_null(strstr(why, "secure = false in [datastore ds1]"));
	export_refusal_format(EXPORT_REFUSED_ADDR_DEFAULT, "ds1",
			      peer_port("10.0.0.1", 700), why, sizeof(why));
	assert_non_null(strstr(why, "10.0.0.1 is not loopback"));
	assert_non_null(strstr(why, "list it in clients in [datastore ds1]"));
	exp.clients_default = false;
	assert_int_equal(export_client_check(&exp, peer_port("10.0.0.1", 700)),
			 EXPORT_REFUSED_ADDR);
	export_refusal_format(EXPORT_REFUSED_ADDR, "ds1",
			      peer_port("10.0.0.1", 700), why, sizeof(why));
	assert_non_null(strstr(why, "10.0.0.1 is not in clients"));
}

static struct export table_exports[3];

static struct export_table make_table(void)
{
	static const char *const names[] = { "ds1", "ds10", "root" };
	static const char *const paths[] = { "/ds1", "/ds10", "/" };

	memset(table_exports, 0, sizeof(table_exports));
	for (size_t i = 0; i < 3; i++) {
		strcpy(table_exports[i].name, names[i]);
		strcpy(table_exports[i].path, paths[i]);
		table_exports[i].id = export_id_from_name(names[i]);
	}
	return (struct export_table){ .exports = table_exports, .count = 3 };
}

static void test_export_find_by_path_ignores_trailing_slash(void **state)
{
	struct export_table tab = make_table();

	(void)state;
	assert_ptr_equal(export_find_by_path(&tab, "/ds1"), &table_exports[0]);
	assert_ptr_equal(export_find_by_path(&tab, "/ds1/"), &table_exports[0]);
	assert_ptr_equal(export_find_by_path(&tab, "/ds1///"),
			 &table_exports[0]);
	assert_ptr_equal(export_find_by_path(&tab, "/ds10/"),
			 &table_exports[1]);
	assert_ptr_equal(export_find_by_path(&tab, "/"), &table_exports[2]);
	assert_ptr_equal(export_find_by_path(&tab, "//"), &table_exports[2]);
	assert_null(export_find_by_path(&tab, "/ds"));
	assert_null(export_find_by_path(&tab, "/ds1/sub"));
	assert_null(export_find_by_path(&tab, "ds1"));
	assert_null(export_find_by_path(&tab, ""));
}

static void test_export_find_by_id(void **state)
{
	struct export_table tab = make_table();

	(void)state;
	assert_ptr_equal(export_find_by_id(&tab, export_id_from_name("ds10")),
			 &table_exports[1]);
	assert_ptr_equal(export_find_by_id(&tab, table_exports[0].id),
			 &table_exports[0]);
	assert_null(export_find_by_id(&tab, export_id_from_name("ds2")));
}

/* A removed export (SIGHUP) is found by no lookup: its handles are STALE
 * and MNT does not see it; back again, it is found again. */
static void test_export_removed_is_not_found(void **state)
{
	struct export_table tab = make_table();
	const char *rest;

	(void)state;
	export_table_set_removed(&table_exports[0], true);
	assert_false(export_is_live(&table_exports[0]));
	assert_null(export_find_by_id(&tab, table_exports[0].id));
	assert_null(export_find_by_path(&tab, "/ds1"));
	assert_null(export_find_by_prefix(&tab, "/ds1/x", &rest));
	export_table_set_removed(&table_exports[0], false);
	assert_ptr_equal(export_find_by_id(&tab, table_exports[0].id),
			 &table_exports[0]);
}

/* Publication stops at the capacity, and a published slot is found. */
static void test_export_publish_respects_capacity(void **state)
{
	struct export_table tab = make_table();

	(void)state;
	tab.count = 2;
	tab.cap = 3;
	assert_null(export_find_by_path(&tab, "/"));
	assert_int_equal(export_table_publish(&tab), 0);
	assert_int_equal(export_table_count(&tab), 3);
	assert_ptr_equal(export_find_by_path(&tab, "/"), &table_exports[2]);
	assert_int_equal(export_table_publish(&tab), -ENOSPC);
	assert_int_equal(export_table_count(&tab), 3);
}

/* export_access_get() copies the options a call needs, or refuses. */
static void test_export_access_get(void **state)
{
	struct export_table tab = make_table();
	struct export *exp = &table_exports[1];
	struct sockaddr_in in = { .sin_family = AF_INET,
				  .sin_port = htons(2000) };
	struct export_access acc;

	(void)state;
	inet_pton(AF_INET, "10.1.2.3", &in.sin_addr);
	exp->read_only = true;
	exp->squash = EXPORT_SQUASH_ALL;
	exp->anon_uid = 7;
	exp->anon_gid = 8;
	assert_int_equal(export_access_get(&tab, exp,
					   (const struct sockaddr *)&in, &acc),
			 0);
	assert_true(acc.read_only);
	assert_int_equal(acc.squash, EXPORT_SQUASH_ALL);
	assert_int_equal(acc.anon_uid, 7);
	assert_int_equal(acc.anon_gid, 8);
	assert_int_equal(
		export_client_parse("192.168.0.0/16", &exp->clients[0]), 0);
	exp->nclients = 1;
	assert_int_equal(export_access_get(&tab, exp,
					   (const struct sockaddr *)&in, &acc),
			 -EACCES);
	exp->nclients = 0;
	exp->secure = true;
	assert_int_equal(export_access_get(&tab, exp,
					   (const struct sockaddr *)&in, &acc),
			 -EACCES);
}

static void test_export_id_from_name_is_stable_and_nonzero(void **state)
{
	(void)state;
	assert_int_equal(export_id_from_name("ds1"),
			 export_id_from_name("ds1"));
	assert_int_not_equal(export_id_from_name("ds1"),
			     export_id_from_name("ds2"));
	assert_int_not_equal(export_id_from_name(""), 0);
}

static void test_export_client_parse_accepts_forms(void **state)
{
	struct export_client c;

	(void)state;
	assert_int_equal(export_client_parse("10.1.2.3", &c), 0);
	assert_int_equal(c.family, AF_INET);
	assert_int_equal(c.prefix_len, 32);
	assert_memory_equal(c.addr, "\x0a\x01\x02\x03", 4);
	assert_int_equal(export_client_parse("10.0.0.0/8", &c), 0);
	assert_int_equal(c.prefix_len, 8);
	assert_int_equal(export_client_parse("2001:db8::/32", &c), 0);
	assert_int_equal(c.family, AF_INET6);
	assert_int_equal(c.prefix_len, 32);
	assert_int_equal(export_client_parse("::1", &c), 0);
	assert_int_equal(c.prefix_len, 128);
	assert_int_equal(export_client_parse("::ffff:10.0.0.0/104", &c), 0);
	assert_int_equal(c.family, AF_INET);
	assert_int_equal(c.prefix_len, 8);
	assert_memory_equal(c.addr, "\x0a\x00\x00\x00", 4);
}

static void test_export_client_parse_errors(void **state)
{
	static const char *const bad[] = {
		"",
		"/8",
		"10.0.0.1/",
		"10.0.0.1/33",
		"::1/129",
		"10.0.0.1/abc",
		"10.0.0.1/8x",
		"10.0.0.0/8/9",
		"10.0.0",
		"host.example",
		"10.0.0.256",
		"1111:2222:3333:4444:5555:6666:7777:8888:9999:aaaa:bbbb:cccc:"
		"dddd/64",
	};
	struct export_client c;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		if (export_client_parse(bad[i], &c) != -EINVAL) {
			fail_msg("export_client_parse(\"%s\") accepted",
				 bad[i]);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_export_v4_cidr_matches_prefix),
		cmocka_unit_test(test_export_v4_slash_32_is_one_host),
		cmocka_unit_test(test_export_slash_0_is_its_whole_family),
		cmocka_unit_test(test_export_v6_cidr_matches_prefix),
		cmocka_unit_test(test_export_v4_mapped_peer_matches_v4_rule),
		cmocka_unit_test(test_export_v4_mapped_rule_matches_v4_peer),
		cmocka_unit_test(test_export_empty_list_is_everyone),
		cmocka_unit_test(test_export_several_rules_any_matches),
		cmocka_unit_test(test_export_default_is_loopback_and_secure),
		cmocka_unit_test(
			test_export_find_by_path_ignores_trailing_slash),
		cmocka_unit_test(test_export_find_by_id),
		cmocka_unit_test(
			test_export_id_from_name_is_stable_and_nonzero),
		cmocka_unit_test(test_export_removed_is_not_found),
		cmocka_unit_test(test_export_publish_respects_capacity),
		cmocka_unit_test(test_export_access_get),
		cmocka_unit_test(test_export_client_parse_accepts_forms),
		cmocka_unit_test(test_export_client_parse_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
