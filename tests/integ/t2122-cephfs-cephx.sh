#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A cephfs datastore under cephx with the key `ceph fs authorize` gives,
# restricted to the datastore's directory (the suite's clusters run
# without auth, so no other test exercises a cap), on a cluster whose MDS
# evicts without blocklisting (t2122-cephfs-cephx.py):
#  1. client.dsnfs (rws), with the mon cap `allow command "osd blocklist"`
#     added: the datastore mounts and serves, reads max_file_size and the
#     MDS's setting; a snapshot is made, listed and deleted; then an
#     eviction with UNSTABLE writes in its cache is found through the
#     mount's own admin socket and recovered from (the COMMIT answered
#     JUKEBOX within 30 s though the snapshot's OSD map hid the blocklist
#     from the old mount, a new verifier, the writes sent again read
#     back), and SIGTERM ends dsnfsd at once;
#  2. client.noblock, as `ceph fs authorize ... rw` gives it: a snapshot
#     is refused, with the reason; the same eviction is found, the
#     blocklist refused and logged, the datastore stays down (JUKEBOX),
#     and SIGTERM still ends dsnfsd within its grace;
#  3. client.dsnfs with the RADOS intent log (/ds/rlog): 8 KiB FILE_SYNC
#     writes, dsnfsd SIGKILLed, and another gateway process (a state
#     directory of its own, the handle key copied) takes its log over: it
#     resets the MDS session the dead one left (without that, this key's
#     mount waited for the MDS to time it out: 60 s), fences the dead
#     one's clients, replays its records, and every acknowledged write
#     reads back.
# A cluster of its own.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../ceph/lib.sh"

unset DSNFS_CEPH_CONF
CEPH_AUTH=cephx ceph_up || exit 1
/usr/bin/python3 - "$CEPH_CONF" <<'PY' || exit 1
import sys
import cephfs
fs = cephfs.LibCephFS(conffile=sys.argv[1])
fs.mount()
fs.mkdir("/ds", 0o755)
fs.mkdir("/ds/rlog", 0o755)
fs.shutdown()
PY
c() { timeout 60 ceph -c "$CEPH_CONF" "$@"; }
c fs authorize cephfs client.dsnfs /ds rws >"$TEST_TMP/gw.keyring" || exit 1
c auth caps client.dsnfs mds 'allow rws fsname=cephfs path=/ds' \
	mon 'allow r fsname=cephfs, allow command "osd blocklist"' \
	osd 'allow rw tag cephfs data=cephfs' >/dev/null 2>&1 || exit 1
c fs authorize cephfs client.noblock /ds rw >>"$TEST_TMP/gw.keyring" || exit 1
c config set mds mds_session_blocklist_on_evict false || exit 1
# The gateway's ceph.conf names a keyring with these two keys alone.
sed "s|^keyring = .*|keyring = $TEST_TMP/gw.keyring|" "$CEPH_CONF" \
	>"$TEST_TMP/gw-ceph.conf"
gw_conf() {
	ceph_ds_conf cephds "$TEST_TMP/gw-ceph.conf" /ds
	echo "ceph_user = $1"
}
session() {
	sed -n 's/.*cephfs: cephds: mounted .* session \([0-9]*\),.*/\1/p' \
		"$TEST_TMP/dsnfsd.log" | tail -1
}
py="$(dirname "$0")/t2122-cephfs-cephx.py"

echo "client.dsnfs (restricted to /ds, may blocklist):"
gw_conf dsnfs >"$TEST_TMP/dsnfs.conf"
dsnfsd_start -c "$TEST_TMP/dsnfs.conf" || exit 1
check "it mounts /ds as client.dsnfs, files up to 64 TiB" grep -q \
	"cephfs: cephds: mounted /ds of .* as client.dsnfs, session [0-9]*, files up to 65536 GiB" \
	"$TEST_TMP/dsnfsd.log"
check "it reads the MDS's setting and says it" grep -q \
	"cephfs: cephds: cluster .* evicts clients without blocklisting them" \
	"$TEST_TMP/dsnfsd.log"
# Before the eviction: the OSD map of the snapshot's removal is the one
# the idle old mount is sent once its MDS dropped it, and the COMMIT
# waited for good until the gateway told that mount to drop its stale
# session (docs/ceph.md, "Evicted without a blocklist").
check "snapshot create with the path's key (its s cap)" \
	ctl snapshot create cephds s1
check "snapshot list names it" bash -c \
	"'$DSNFS_BIN/dsnfsctl' -s 127.0.0.1:$ADMIN_PORT snapshot list cephds | grep -q '^s1 '"
check "snapshot delete" ctl snapshot delete cephds s1
python3 "$py" "$NFS_PORT" "$MOUNT_PORT" recover "$CEPH_CONF" "$(session)"
check "serves; evicted without a blocklist: found, recovered" [ $? -eq 0 ]
check "the log says the eviction found and the new mount" bash -c \
	"grep -q 'cephfs: cephds: cluster .* evicted this gateway.s session without blocklisting it: blocklisted its own client' '$TEST_TMP/dsnfsd.log' &&
	 grep -q 'export: cephds: mounted anew after an eviction: serving' '$TEST_TMP/dsnfsd.log'"
if grep -q 'cephfs: cephds: calls still wait in the blocklisted mount: telling it to drop its stale MDS session' \
	"$TEST_TMP/dsnfsd.log"; then
	echo "    the old mount, a call still in it, was told to drop its stale MDS session"
fi
t0=$SECONDS
check "server exits cleanly" dsnfsd_stop
check "at once: nothing left waiting in the old mount ($((SECONDS - t0)) s)" \
	[ $((SECONDS - t0)) -lt 5 ]

echo "client.noblock (as ceph fs authorize gives it):"
gw_conf noblock >"$TEST_TMP/noblock.conf"
dsnfsd_start -c "$TEST_TMP/noblock.conf" || exit 1
nosnap() {
	local out
	out=$(ctl snapshot create cephds s2 2>&1) && return 1
	echo "    $out"
	[ -n "$out" ]
}
check "a key without the s cap: snapshot create fails, and says why" nosnap
python3 "$py" "$NFS_PORT" "$MOUNT_PORT" stuck "$CEPH_CONF" "$(session)"
check "evicted without a blocklist: the datastore stays down" [ $? -eq 0 ]
check "the log says it cannot blocklist itself, and why" grep -q \
	"cephfs: cephds: cluster .* evicted this gateway's session without blocklisting it, and the gateway cannot blocklist itself (Permission denied)" \
	"$TEST_TMP/dsnfsd.log"
t0=$SECONDS
check "SIGTERM ends it, status 0" dsnfsd_stop
check "within its stop grace (10 s, and 5 s more)" [ $((SECONDS - t0)) -le 15 ]
echo "client.dsnfs, the RADOS log: SIGKILL, fence, replay:"
{
	printf '[server]\nintent_log_mib = 8\nintent_log_checkpoint_ms = 3600000\n'
	ceph_ds_conf cephds "$TEST_TMP/gw-ceph.conf" /ds/rlog
	printf 'ceph_user = dsnfs\nintent_log = rados\nintent_log_gateway = t2122\n'
} >"$TEST_TMP/rlog.conf"
dsnfsd_start -c "$TEST_TMP/rlog.conf" || exit 1
python3 "$py" "$NFS_PORT" "$MOUNT_PORT" rlog-write "$CEPH_CONF" 0 \
	"$TEST_TMP/acked.json"
check "8 KiB FILE_SYNC writes through the RADOS log" [ $? -eq 0 ]
kill -KILL "$DSNFSD_PID"
wait "$DSNFSD_PID" 2>/dev/null
DSNFSD_PID=""
mv "$TEST_TMP/dsnfsd.log" "$TEST_TMP/dsnfsd-killed.log"
mkdir -m 0700 "$TEST_TMP/state-b"
cp "$TEST_TMP/state/cephfs.key" "$TEST_TMP/state-b/"
t0=$SECONDS
dsnfsd_start -c "$TEST_TMP/rlog.conf" -s "$TEST_TMP/state-b" || exit 1
check "gateway b resets the session the dead one left" grep -q \
	"cephfs: cephds: reset the MDS session dsnfsd-gw-t2122-cephds left by a previous run of this gateway" \
	"$TEST_TMP/dsnfsd.log"
check "it started and mounted in under 10 s, the mount timeout ($((SECONDS - t0)) s)" \
	[ $((SECONDS - t0)) -lt 10 ]
check "it mounted, fenced the dead one's clients and replayed" bash -c \
	"grep -q 'cephfs: cephds: mounted /ds/rlog ' '$TEST_TMP/dsnfsd.log' &&
	 grep -q 'rlog: cephds: .* the last owner, gateway t2122, did not close its log: fenced its clients' '$TEST_TMP/dsnfsd.log' &&
	 grep -q 'rlog: cephds: .* replayed [1-9][0-9]* records' '$TEST_TMP/dsnfsd.log'"
python3 "$py" "$NFS_PORT" "$MOUNT_PORT" rlog-check "$CEPH_CONF" 0 \
	"$TEST_TMP/acked.json"
check "every acknowledged write reads back" [ $? -eq 0 ]
check "server exits cleanly" dsnfsd_stop
if [ "$FAILS" -gt 0 ]; then
	echo "dsnfsd's log (cephfs, mount and export lines):"
	grep -E 'cephfs|mount|export' "$TEST_TMP/dsnfsd.log" | tail -30
fi
test_done
