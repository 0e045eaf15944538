#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Replication over a connection that is cut (issue 28 item 3;
# docs/replication.md, "timeout_seconds").  In a network namespace of its
# own (netns.sh): the destination dsnfsd runs in namespace $ns behind a
# veth pair (10.98.0.2, its admin endpoint over HTTPS: beyond loopback it
# must be), the source on this side (10.98.0.1; its own API on
# 127.0.0.1), [replication r1] with timeout_seconds = 3.
#  1. A baseline, then a transfer of 96 MiB cut in the middle (ip link
#     set down on the destination's end): the transfer fails within
#     timeout_seconds (GET's last_error_s, the server's stamp of the
#     failure), last_error ETIMEDOUT and the reason names it, the
#     destination still holds the transfer (state applying) and its last
#     replica reads whole; a transfer asked while the link is down fails
#     too (its connect: ETIMEDOUT, or EHOSTUNREACH when the kernel gives
#     up on the address first).
#  2. The link back: the next transfer completes (the same snapshot,
#     resumed), no error left, big.img on the destination over NFS and
#     in its replica has the source's sha256, and so has the file of the
#     baseline.
# Fails on the old code: no timeout_seconds (the config is refused), a
# message waited 60 s, no last_error, last_error_s the failed transfer's
# start.  Needs root and ip(8).
. "$(dirname "$0")/netns.sh"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/repl_lib.sh"

if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null; then
	echo "skip: needs root and ip(8) for a network namespace"
	exit 0
fi
ns=dsnfs-t5018-$$
host_if=t5018s$$
dst_if=t5018d$$
timeout=3

src=$TEST_TMP/src
dsr=$TEST_TMP/dsr
xfs_loop "$src"
xfs_loop "$dsr"
repl_key
t5018_cleanup() {
	srv_cleanup
	ip link del "$host_if" 2>/dev/null # its peer goes with it
	ip netns del "$ns" 2>/dev/null
	xfs_loop_cleanup
}
trap t5018_cleanup EXIT

ip netns add "$ns" || exit 1
ip link add "$host_if" type veth peer name "$dst_if" || exit 1
ip link set "$dst_if" netns "$ns" || exit 1
ip addr add 10.98.0.1/24 dev "$host_if" || exit 1
ip link set "$host_if" up || exit 1
ip -n "$ns" addr add 10.98.0.2/24 dev "$dst_if" || exit 1
ip -n "$ns" link set "$dst_if" up || exit 1
ip -n "$ns" link set lo up || exit 1

openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=10.98.0.2 \
	-addext subjectAltName=IP:10.98.0.2 -keyout "$TEST_TMP/key.pem" \
	-out "$TEST_TMP/cert.pem" 2>/dev/null
chmod 600 "$TEST_TMP/key.pem"

access() { printf 'clients = 127.0.0.0/8, 10.98.0.0/24\nsquash = none\nsecure = false\n'; }
{
	printf '[server]\nadmin_listen = 10.98.0.2\n'
	printf '[admin]\ntls_cert = %s\ntls_key = %s\n' "$TEST_TMP/cert.pem" "$TEST_TMP/key.pem"
	printf '[datastore dsr]\npath = %s\n' "$dsr"
	access
	repl_section destination r1 dsr
} >"$TEST_TMP/dst.conf"
SRV_CACERT=$TEST_TMP/cert.pem srv_start dst "$TEST_TMP/dst.conf" 10.98.0.2 \
	ip netns exec "$ns" || exit 1
{
	printf '[datastore src]\npath = %s\n' "$src"
	access
	repl_section source r1 src destination_url="$dst_URL" \
		destination_datastore=dsr ca_file="$TEST_TMP/cert.pem" \
		schedule=none timeout_seconds=$timeout
} >"$TEST_TMP/src.conf"
srv_start src "$TEST_TMP/src.conf" || exit 1

srel() { rel src src r1 "$1"; }
drel() { rel dst dsr r1 "$1"; }
transfer() { rel_act src src transfer r1 >/dev/null; }
ok_after() { [ "$(srel "r['transfers_ok']")" -gt "$1" ] && [ "$(srel "r['running']")" = False ]; }
failed_after() { [ "$(srel "r['transfers_failed']")" -gt "$1" ] && [ "$(srel "r['running']")" = False ]; }
# The last failure came at most timeout_seconds after UTC second $1 (the
# server's own stamp: this test's polls lag behind it; + 1 for the
# seconds' rounding).  The old code stamped the transfer's start.
failed_within() {
	local at
	at=$(srel "r['last_error_s']")
	[ "$at" -ge "$1" ] && [ "$at" -le $(($1 + timeout + 1)) ]
}

# The baseline, over the link.
head -c 4M /dev/urandom >"$TEST_TMP/disk.img"
cp "$TEST_TMP/disk.img" "$src/disk.img"
transfer
check "the baseline over the veth pair and HTTPS ends" wait_for 60 ok_after 0
check "... disk.img on dsr over NFS (from its namespace): same sha256" \
	same_on dst dsr disk.img "$TEST_TMP/disk.img"
snap1=$(srel "r['last_snapshot']")
check "the source's log gives the timeout" \
	grep -q "r1: source of datastore src to https://10.98.0.2:.*, $timeout s a message" "$TEST_TMP/src.log"

# 1. The link cut in the middle of a transfer.
head -c 96M /dev/urandom >"$TEST_TMP/big.img"
cp "$TEST_TMP/big.img" "$src/big.img"
f=$(srel "r['transfers_failed']")
transfer
grown() { [ -f "$dsr/big.img" ] && [ "$(du -k "$dsr/big.img" | cut -f1)" -ge 8192 ]; }
check "the transfer is under way (8 MiB of big.img on dsr)" wait_for 60 grown
t0=$(date +%s.%N)
ip -n "$ns" link set "$dst_if" down
check "the link is cut mid-transfer (a part of big.img on dsr)" \
	[ "$(du -k "$dsr/big.img" | cut -f1)" -lt 98304 ]
check "the source's transfer fails" wait_for 30 failed_after "$f"
check "... within timeout_seconds of the cut (last_error_s $(srel "r['last_error_s']"), cut at ${t0%.*}, $timeout s)" \
	failed_within "${t0%.*}"
check "GET: last_error ETIMEDOUT" [ "$(srel "r['last_error']")" = ETIMEDOUT ]
check "... the reason names the timeout: $(srel "r['error']")" \
	has "$(srel "r['error']")" 'Timeout was reached'
check "... state idle, the last replica still $snap1" \
	[ "$(srel "r['state'] + ' ' + r['last_snapshot']")" = "idle $snap1" ]
check "the destination holds the transfer (GET in its namespace: applying)" \
	[ "$(drel "r['state']")" = applying ]
check "... its last replica $snap1 reads whole" \
	cmp -s "$dsr/.snapshot/$snap1/disk.img" "$TEST_TMP/disk.img"
f=$(srel "r['transfers_failed']")
t0=$(date +%s.%N)
transfer
check "a transfer asked while the link is down fails too" wait_for 30 failed_after "$f"
check "... within timeout_seconds (last_error_s $(srel "r['last_error_s']"), asked at ${t0%.*})" \
	failed_within "${t0%.*}"
# Its connect waits out the timeout, or the kernel gives up on the
# destination's address first (no ARP answer: EHOSTUNREACH).
connect_failed() {
	case "$(srel "r['last_error']")" in
	ETIMEDOUT | EHOSTUNREACH) return 0 ;;
	esac
	return 1
}
check "... $(srel "r['last_error']"): $(srel "r['error']")" connect_failed

# 2. The link back.
ip -n "$ns" link set "$dst_if" up
n=$(srel "r['transfers_ok']")
transfer
check "the link back: the next transfer completes" wait_for 120 ok_after "$n"
check "... no error left" [ -z "$(srel "r['last_error']")" ]
check "... the same transfer taken up, not restarted" \
	[ "$(srel "r['last']['restarted']")" = False ]
check "big.img on dsr over NFS: same sha256" same_on dst dsr big.img "$TEST_TMP/big.img"
check "disk.img on dsr over NFS: same sha256" same_on dst dsr disk.img "$TEST_TMP/disk.img"
snap2=$(srel "r['last_snapshot']")
check "... and in the replica $snap2" cmp -s "$dsr/.snapshot/$snap2/big.img" "$TEST_TMP/big.img"
check "the destination's GET: idle, last replica $snap2" \
	[ "$(drel "r['state'] + ' ' + r['last_snapshot']")" = "idle $snap2" ]

srv_stop src || FAILS=$((FAILS + 1))
srv_stop dst || FAILS=$((FAILS + 1))
if [ "$FAILS" -ne 0 ]; then
	grep -h 'replication' "$TEST_TMP/src.log" "$TEST_TMP/dst.log" | tail -30
fi
test_done
