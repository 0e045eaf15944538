// SPDX-License-Identifier: Apache-2.0
/*
 * test_conn_file: the output queue of a conn (nfsd/net/conn.c) with file
 * payloads (READ zero copy, sendfile).  The conn is opened on one end of a
 * socketpair whose send buffer is tiny, on a loop the test runs by hand;
 * the test reads the other end, running the loop whenever it has nothing
 * to read, so every reply goes out in many partial sends and resumptions
 * after EAGAIN.  Replies with and without payloads, from buffers and from
 * a file, come out whole and in order; a file that shrinks after its reply
 * was queued is followed by zeros up to the length the record mark
 * promised, and the next reply is intact; closing the conn drops the file
 * references it still held; output held (net__conn_output_hold) leaves
 * only at its release.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <ev.h>

#include "nfsd/net/net.h"
#include "nfsd/net/net_int.h"
#include "nfsd/rpc/pool.h"
#include "nfsd/rpc/dispatch.h"
#include "nfsd/rpc/record.h"

#define FILE_BYTES (4u << 20)
#define SPIN_MAX 1000000

struct fixture {
	struct ev_loop *loop;
	struct net net;
	struct worker w;
	struct conn *c;
	int peer_fd; /* the test's end */
	int file_fd;
	char path[64];
	uint8_t *orig; /* FILE_BYTES of the file as written */
	unsigned unrefs; /* file references dropped */
	uint8_t *got; /* everything read from peer_fd */
	size_t got_len, got_cap;
};

static void fixture_unref(void *ref)
{
	struct fixture *fx = ref;

	fx->unrefs++;
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct sockaddr_in peer = { .sin_family = AF_INET };
	int sv[2];
	int small = 4096;

	assert_non_null(fx);
	fx->loop = ev_loop_new(EVFLAG_AUTO);
	assert_non_null(fx->loop);
	fx->net.limits.max_record_bytes = 1 << 20;
	fx->net.limits.max_inflight = 128;
	fx->net.limits.max_output_bytes = 64 << 20;
	pthread_mutex_init(&fx->net.admit_lock, NULL);
	fx->w.net = &fx->net;
	fx->w.loop = fx->loop;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(
		setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)),
		0);
	assert_int_equal(
		setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)),
		0);
	assert_int_equal(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(fcntl(sv[1], F_SETFL, O_NONBLOCK), 0);
	peer.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	net__conn_open(&fx->w, sv[0], (const struct sockaddr *)&peer,
		       sizeof(peer), 0);
	fx->c = fx->w.conns;
	assert_non_null(fx->c);
	fx->peer_fd = sv[1];

	snprintf(fx->path, sizeof(fx->path), "/tmp/test_conn_file.XXXXXX");
	fx->file_fd = mkstemp(fx->path);
	assert_true(fx->file_fd >= 0);
	fx->orig = malloc(FILE_BYTES);
	assert_non_null(fx->orig);
	for (size_t i = 0; i < FILE_BYTES; i++) {
		fx->orig[i] = (uint8_t)(i * 7 + i / 251 + 1) | 1; /* never 0 */
	}
	assert_int_equal(pwrite(fx->file_fd, fx->orig, FILE_BYTES, 0),
			 FILE_BYTES);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	if (fx->w.conns) {
		net__conn_close(fx->w.conns);
	}
	close(fx->peer_fd);
	close(fx->file_fd);
	unlink(fx->path);
	ev_loop_destroy(fx->loop);
	pthread_mutex_destroy(&fx->net.admit_lock);
	free(fx->orig);
	free(fx->got);
	free(fx);
	return 0;
}

/* A reply head: room for the record mark, then @len - 4 bytes of @tag. */
static uint8_t *head_new(size_t len, uint8_t tag)
{
	/* conn.c gives replies back with rpc_buf_unref (dispatch.h). */
	uint8_t *buf = rpc_buf_alloc(NULL, len);

	assert_non_null(buf);
	memset(buf, tag, len);
	return buf;
}

static void queue_plain(struct fixture *fx, size_t len, uint8_t tag)
{
	net__conn_tops.send(fx->c, head_new(len, tag), len);
}

static void queue_buffer(struct fixture *fx, size_t len, uint8_t tag,
			 size_t payload_len, uint8_t ptag)
{
	struct rpc_payload p = { .fd = -1, .len = payload_len };

	p.buf = rpc_buf_alloc(NULL, payload_len);
	assert_non_null(p.buf);
	memset(p.buf, ptag, payload_len);
	net__conn_tops.send_payload(fx->c, head_new(len, tag), len, &p);
}

static void queue_file(struct fixture *fx, size_t len, uint8_t tag,
		       uint64_t off, size_t payload_len)
{
	struct rpc_payload p = {
		.len = payload_len,
		.fd = fx->file_fd,
		.off_bytes = off,
		.unref = fixture_unref,
		.ref = fx,
	};

	net__conn_tops.send_payload(fx->c, head_new(len, tag), len, &p);
}

/* Reads until @want bytes in all have arrived, running the conn's loop
 * whenever the socket is empty. */
static void read_until(struct fixture *fx, size_t want)
{
	unsigned spins = 0;

	if (fx->got_cap < want) {
		fx->got = realloc(fx->got, want);
		assert_non_null(fx->got);
		fx->got_cap = want;
	}
	while (fx->got_len < want) {
		ssize_t n = read(fx->peer_fd, fx->got + fx->got_len,
				 want - fx->got_len);

		if (n > 0) {
			fx->got_len += (size_t)n;
			continue;
		}
		assert_true(n < 0 && errno == EAGAIN);
		assert_true(++spins < SPIN_MAX);
		ev_run(fx->loop, EVRUN_NOWAIT);
	}
}

/* Nothing more is queued, and the peer has nothing more to read. */
static void assert_drained(struct fixture *fx)
{
	uint8_t byte;

	ev_run(fx->loop, EVRUN_NOWAIT);
	assert_null(fx->c->out_head);
	assert_int_equal(fx->c->out_bytes, 0);
	assert_int_equal(read(fx->peer_fd, &byte, 1), -1);
	assert_int_equal(errno, EAGAIN);
}

/* Checks one record at *pos: its mark says @body bytes, then the head's
 * tag bytes; returns where the payload starts. */
static size_t expect_head(struct fixture *fx, size_t *pos, size_t len,
			  uint8_t tag, size_t payload_len)
{
	size_t pad = (4 - payload_len % 4) % 4;
	uint32_t mark = 0x80000000u | (uint32_t)(len - 4 + payload_len + pad);
	uint8_t want[4] = { mark >> 24, mark >> 16, mark >> 8, mark };

	assert_true(*pos + len + payload_len + pad <= fx->got_len);
	assert_memory_equal(fx->got + *pos, want, 4);
	for (size_t i = 4; i < len; i++) {
		assert_int_equal(fx->got[*pos + i], tag);
	}
	*pos += len;
	return *pos;
}

static void expect_pad(struct fixture *fx, size_t *pos, size_t payload_len)
{
	size_t pad = (4 - payload_len % 4) % 4;

	for (size_t i = 0; i < pad; i++) {
		assert_int_equal(fx->got[*pos + i], 0);
	}
	*pos += pad;
}

static void test_mixed_replies_come_out_whole_and_in_order(void **state)
{
	struct fixture *fx = *state;
	size_t total = 0, pos = 0;

	/* Batched as after one read: everything queued, then flushed. */
	fx->c->batching = true;
	queue_plain(fx, 28, 'a');
	queue_file(fx, 120, 'b', 1000, 200001); /* 3 bytes of padding */
	queue_buffer(fx, 40, 'c', 70000, 'C');
	queue_file(fx, 120, 'd', 0, 1 << 20);
	queue_file(fx, 120, 'e', FILE_BYTES - 5, 5);
	queue_plain(fx, 32, 'f');
	fx->c->batching = false;
	total = fx->c->out_bytes;
	assert_int_equal(total, 28 + 120 + 200004 + 40 + 70000 + 120 +
					(1 << 20) + 120 + 8 + 32);
	net__conn_tops.send(fx->c, head_new(24, 'g'), 24); /* kicks */
	total += 24;
	read_until(fx, total);

	expect_head(fx, &pos, 28, 'a', 0);
	expect_head(fx, &pos, 120, 'b', 200001);
	assert_memory_equal(fx->got + pos, fx->orig + 1000, 200001);
	pos += 200001;
	expect_pad(fx, &pos, 200001);
	expect_head(fx, &pos, 40, 'c', 70000);
	for (size_t i = 0; i < 70000; i++) {
		assert_int_equal(fx->got[pos + i], 'C');
	}
	pos += 70000;
	expect_head(fx, &pos, 120, 'd', 1 << 20);
	assert_memory_equal(fx->got + pos, fx->orig, 1 << 20);
	pos += 1 << 20;
	expect_head(fx, &pos, 120, 'e', 5);
	assert_memory_equal(fx->got + pos, fx->orig + FILE_BYTES - 5, 5);
	pos += 5;
	expect_pad(fx, &pos, 5);
	expect_head(fx, &pos, 32, 'f', 0);
	expect_head(fx, &pos, 24, 'g', 0);
	assert_int_equal(pos, total);
	assert_drained(fx);
	assert_int_equal(fx->unrefs, 3);
}

static void test_file_shrunk_before_sending_is_padded_with_zeros(void **state)
{
	struct fixture *fx = *state;
	size_t total, pos = 0;

	/* The first reply fills the socket; the file reply waits behind
	 * it, and the file shrinks before any of its data went out. */
	queue_buffer(fx, 40, 'a', 512 * 1024, 'A');
	queue_file(fx, 120, 'b', 0, 65537);
	queue_plain(fx, 28, 'c');
	assert_non_null(fx->c->out_head);
	assert_int_equal(ftruncate(fx->file_fd, 10000), 0);
	total = 40 + 512 * 1024 + 120 + 65537 + 3 + 28;
	read_until(fx, total);

	expect_head(fx, &pos, 40, 'a', 512 * 1024);
	pos += 512 * 1024;
	expect_head(fx, &pos, 120, 'b', 65537);
	assert_memory_equal(fx->got + pos, fx->orig, 10000);
	for (size_t i = 10000; i < 65537; i++) {
		assert_int_equal(fx->got[pos + i], 0);
	}
	pos += 65537;
	expect_pad(fx, &pos, 65537);
	expect_head(fx, &pos, 28, 'c', 0);
	assert_int_equal(pos, total);
	assert_drained(fx);
	assert_int_equal(fx->unrefs, 1);
}

static void test_file_shrunk_while_sending_keeps_the_stream(void **state)
{
	struct fixture *fx = *state;
	size_t data_len = 4u << 20;
	size_t total = 120 + data_len + 28, pos = 0;
	size_t cut = 300000;

	queue_file(fx, 120, 'b', 0, data_len);
	queue_plain(fx, 28, 'c');
	/* Part of the data is out when the file shrinks under it. */
	read_until(fx, 120 + 65536);
	assert_int_equal(ftruncate(fx->file_fd, (off_t)cut), 0);
	read_until(fx, total);

	expect_head(fx, &pos, 120, 'b', data_len);
	/* Before the cut: the file's bytes.  Past it: the file's bytes
	 * that were already under way, then zeros; never anything else,
	 * and zeros only well past what the buffers could hold. */
	assert_memory_equal(fx->got + pos, fx->orig, cut);
	for (size_t i = cut; i < data_len; i++) {
		uint8_t b = fx->got[pos + i];

		assert_true(b == 0 || (i < (2u << 20) && b == fx->orig[i]));
	}
	pos += data_len;
	expect_head(fx, &pos, 28, 'c', 0);
	assert_int_equal(pos, total);
	assert_drained(fx);
	assert_int_equal(fx->unrefs, 1);
}

static void test_close_drops_queued_file_references(void **state)
{
	struct fixture *fx = *state;

	queue_buffer(fx, 40, 'a', 512 * 1024, 'A');
	queue_file(fx, 120, 'b', 0, 65536);
	queue_file(fx, 120, 'c', 65536, 65536);
	assert_int_equal(fx->unrefs, 0);
	net__conn_ref(fx->c); /* as a request in flight would */
	net__conn_close(fx->c);
	assert_int_equal(fx->unrefs, 2);
	/* A reply to a closed conn is dropped, its reference with it. */
	queue_file(fx, 120, 'd', 0, 4096);
	assert_int_equal(fx->unrefs, 3);
	net__conn_unref(fx->c);
}

/* The replies of deferred calls handed back together (loop.c) wait for
 * the release, then leave together; a second hold while held does
 * nothing, and a closed conn's release drops nothing it should send. */
static void test_held_output_leaves_at_release(void **state)
{
	struct fixture *fx = *state;
	size_t pos = 0, total = 28 + 32 + 36;
	uint8_t byte;

	assert_true(net__conn_output_hold(fx->c));
	assert_false(net__conn_output_hold(fx->c));
	queue_plain(fx, 28, 'a');
	queue_plain(fx, 32, 'b');
	queue_plain(fx, 36, 'c');
	ev_run(fx->loop, EVRUN_NOWAIT);
	assert_int_equal(fx->c->out_bytes, total);
	assert_int_equal(read(fx->peer_fd, &byte, 1), -1);
	assert_int_equal(errno, EAGAIN);
	net__conn_output_release(fx->c);
	read_until(fx, total);
	expect_head(fx, &pos, 28, 'a', 0);
	expect_head(fx, &pos, 32, 'b', 0);
	expect_head(fx, &pos, 36, 'c', 0);
	assert_drained(fx);

	/* Closed while held: the release only drops its reference. */
	assert_true(net__conn_output_hold(fx->c));
	net__conn_close(fx->c);
	net__conn_output_release(fx->c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_mixed_replies_come_out_whole_and_in_order, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_file_shrunk_before_sending_is_padded_with_zeros,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_file_shrunk_while_sending_keeps_the_stream, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_close_drops_queued_file_references, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_held_output_leaves_at_release, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
