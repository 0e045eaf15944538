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
#     back); a snapshot (keep) is made and kept, and SIGTERM ends dsnfsd
#     at once;
#  2. client.noblock, as `ceph fs authorize ... rw` gives it: a
#     snapshot's create and delete are refused (422), the reason naming
#     the `s` flag; keep is restored (a file rewritten since reads its
#     data, one made since is gone: a restore needs no `s`); a
#     replication baseline (relation r2, to a dsnfsd on a loop-mounted
#     XFS) fails at its snapshot with that reason and makes nothing on
#     either end; the same eviction is found, the
#     blocklist refused and logged, the datastore stays down (JUKEBOX),
#     and SIGTERM still ends dsnfsd within its grace;
#  3. client.dsnfs on /ds/ops, the storage-side operations: a 32 MiB thin
#     disk (1 MiB at 0, 13 and 31 MiB) written over NFS; Extended
#     Statistics count its 3 RADOS objects (12 MiB); a full clone reads
#     back the same bytes over NFS with its holes kept (12 MiB); a linked
#     clone's files read over NFS are a delta of the disk (qemu-img
#     compare); Reserve Space (zeroedthick) of the full clone allocates
#     32 MiB and keeps its bytes; snapshot s3 reads through .snapshot the
#     bytes from before a rewrite, and its restore brings them back and
#     removes a later file; then the datastore as a replication source
#     (relation r1): the baseline's files on the destination have the
#     source's sha256, and after 64 KiB rewritten at an unaligned offset
#     the incremental reads only the two 64 KiB blocks written (RADOS
#     stats and the OSDs' hashes at the two snapshots, under this key's
#     osd cap), the destination has the new sha256, the older snapshot
#     is gone;
#  4. client.dsnfs with the RADOS intent log (/ds/rlog): 8 KiB FILE_SYNC
#     writes, dsnfsd SIGKILLed, and another gateway process (a state
#     directory of its own, the handle key copied) takes its log over: it
#     resets the MDS session the dead one left (without that, this key's
#     mount waited for the MDS to time it out: 60 s), fences the dead
#     one's clients, replays its records, and every acknowledged write
#     reads back.
# Under these keys, of 2 and 3 only the refusal's reason was wrong (a
# 500 without it, until cephfs_snap.c said it).  A cluster of its own;
# needs root (the loop-mounted XFS).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../ceph/lib.sh"
. "$(dirname "$0")/repl_lib.sh"

# The replication destination's XFS first: without one the test skips
# before a cluster starts.
xfs_loop "$TEST_TMP/dfs"
trap 'srv_cleanup; xfs_loop_cleanup' EXIT
unset DSNFS_CEPH_CONF
CEPH_AUTH=cephx ceph_up || exit 1
/usr/bin/python3 - "$CEPH_CONF" <<'PY' || exit 1
import sys
import cephfs
fs = cephfs.LibCephFS(conffile=sys.argv[1])
fs.mount()
fs.mkdir("/ds", 0o755)
fs.mkdir("/ds/rlog", 0o755)
fs.mkdir("/ds/ops", 0o755)
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
gw_conf() { # USER [PATH]: the datastore cephds, /ds unless PATH
	ceph_ds_conf cephds "$TEST_TMP/gw-ceph.conf" "${2:-/ds}"
	echo "ceph_user = $1"
}
session() {
	sed -n 's/.*cephfs: cephds: mounted .* session \([0-9]*\),.*/\1/p' \
		"$TEST_TMP/dsnfsd.log" | tail -1
}
# snaps_are CTL NAMES: cephds's snapshots, as CTL (ctl, sctl) lists them.
snaps_are() {
	local got
	got=$("$1" --json snapshot list cephds | python3 -c \
		'import json,sys; print(" ".join(sorted(s["name"] for s in json.load(sys.stdin)["snapshots"])))')
	[ "$got" = "$2" ] || { echo "    snapshots: $got"; return 1; }
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
echo before >"$TEST_TMP/note.txt"
check "a note over NFS" bash -c \
	"nfs-cp '$TEST_TMP/note.txt' '$(nfs_url cephds note.txt)' >/dev/null"
check "snapshot keep, which client.noblock may not delete but restores" \
	ctl snapshot create cephds keep
t0=$SECONDS
check "server exits cleanly" dsnfsd_stop
check "at once: nothing left waiting in the old mount ($((SECONDS - t0)) s)" \
	[ $((SECONDS - t0)) -lt 5 ]

# The replication destination, for both keys.
mkdir -p "$TEST_TMP/dfs/dsr" "$TEST_TMP/dfs/dsr2"
repl_key
{
	printf '[datastore dsr]\npath = %s\n' "$TEST_TMP/dfs/dsr"
	lab_access
	printf '[datastore dsr2]\npath = %s\n' "$TEST_TMP/dfs/dsr2"
	lab_access
	repl_section destination r1 dsr
	repl_section destination r2 dsr2
} >"$TEST_TMP/dst.conf"
srv_start dst "$TEST_TMP/dst.conf" || exit 1
dsr2_was=$(ls -A "$TEST_TMP/dfs/dsr2")

echo "client.noblock (as ceph fs authorize gives it):"
{
	gw_conf noblock
	repl_section source r2 cephds destination_url="$dst_URL" \
		destination_datastore=dsr2 schedule=none
} >"$TEST_TMP/noblock.conf"
dsnfsd_start -c "$TEST_TMP/noblock.conf" || exit 1
# nosnap VERB NAME: refused with 422, the reason naming the cap.
nosnap() {
	local out
	out=$(ctl snapshot "$1" cephds "$2" 2>&1) && return 1
	echo "    $out"
	has "$out" "mds cap needs the 's' flag" &&
		ctl --json operations | python3 -c 'import json,sys; o=json.load(sys.stdin)["operations"]; sys.exit(not any(x["target"]==sys.argv[1] and x["state"]=="failed" and x["status"]==422 for x in o))' "$2"
}
check "a key without the s cap: snapshot create fails (422), and says why" nosnap create s2
check "... and delete" nosnap delete keep
# A restore reads .snap and writes the live tree: rw is enough.  (This
# server as repl_lib.sh's nfs_write knows one.)
nb_ADDR=127.0.0.1 nb_NFS=$NFS_PORT nb_MOUNT=$MOUNT_PORT
printf 'AFTER!\n' >"$TEST_TMP/note.txt"
after_keep() {
	nfs_write nb cephds note.txt 0 "$TEST_TMP/note.txt" &&
		[ "$(nfs-cat "$(nfs_url cephds note.txt)")" = AFTER! ] &&
		nfs-cp "$TEST_TMP/note.txt" "$(nfs_url cephds late.txt)" >/dev/null
}
check "the note rewritten over NFS, a file made" after_keep
check "snapshot restore of keep (made with s) under rw" ctl snapshot restore cephds keep
check "... the note reads the snapshot's data, the later file is gone" bash -c \
	"[ \"\$(nfs-cat '$(nfs_url cephds note.txt)')\" = before ] &&
	 ! nfs-cat '$(nfs_url cephds late.txt)' >/dev/null 2>&1"
# A replication baseline makes a snapshot first: refused, and nothing
# made on either end.
r2() { # EXPR of relation r2 (r)
	ctl --json replication show cephds |
		python3 -c "import json,sys; r=[r for r in json.load(sys.stdin)['relations'] if r['name']=='r2'][0]; print($1)"
}
r2_failed() { [ "$(r2 "r['transfers_failed']")" -ge 1 ] && [ "$(r2 "r['running']")" = False ]; }
check "a replication transfer under rw: queued" ctl replication transfer cephds --relation r2
check "... it fails" wait_for 30 r2_failed
err=$(r2 "r['error'] or r['last_error']")
check "... and says why: $err" has "$err" "mds cap needs the 's' flag"
nothing_made() {
	snaps_are ctl keep || return 1
	[ "$(ls -A "$TEST_TMP/dfs/dsr2")" = "$dsr2_was" ] ||
		{ echo "    dsr2: $(ls -A "$TEST_TMP/dfs/dsr2")"; return 1; }
	[ "$(rel dst dsr2 r2 "r['last_snapshot'] or ''")" = "" ]
}
check "... nothing made: no snapshot but keep, nothing new in dsr2, no replica" nothing_made
python3 "$py" "$NFS_PORT" "$MOUNT_PORT" stuck "$CEPH_CONF" "$(session)"
check "evicted without a blocklist: the datastore stays down" [ $? -eq 0 ]
check "the log says it cannot blocklist itself, and why" grep -q \
	"cephfs: cephds: cluster .* evicted this gateway's session without blocklisting it, and the gateway cannot blocklist itself (Permission denied)" \
	"$TEST_TMP/dsnfsd.log"
t0=$SECONDS
check "SIGTERM ends it, status 0" dsnfsd_stop
check "within its stop grace (10 s, and 5 s more)" [ $((SECONDS - t0)) -le 15 ]

echo "client.dsnfs on /ds/ops: clones, Reserve Space, stats, a restore, a replication source:"
{
	gw_conf dsnfs /ds/ops
	repl_section source r1 cephds destination_url="$dst_URL" \
		destination_datastore=dsr schedule=none
} >"$TEST_TMP/ops.conf"
srv_start src "$TEST_TMP/ops.conf" || exit 1
sctl() { "$DSNFS_BIN/dsnfsctl" -s "127.0.0.1:$src_ADMIN" --state-dir "$TEST_TMP/src.state" "$@"; }
# alloc_is PATH BYTES: Extended Statistics' allocated bytes of a disk.
alloc_is() {
	local got
	got=$(sctl --json vmdk stats cephds "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["allocated_bytes"])')
	[ "$got" = "$2" ] || { echo "    allocated $got"; return 1; }
}
# A 32 MiB thin disk, 1 MiB written at 0, 13 and 31 MiB: RADOS objects
# 0, 3 and 7 of 4 MiB (12 MiB); the rest holes, written over NFS.
d=$TEST_TMP/disk
mkdir "$d"
"$DSNFS_BIN/dsvmdk" create -t thin -s 32M "$d/src.vmdk" >/dev/null
: >"$d/empty"
put_disk() {
	nfs-cp "$d/src.vmdk" "$(srv_nfs_url src cephds src.vmdk)" >/dev/null &&
		nfs-cp "$d/empty" "$(srv_nfs_url src cephds src-flat.vmdk)" >/dev/null || return 1
	local mib
	for mib in 0 13 31; do
		head -c 1M /dev/urandom >"$d/piece"
		dd if="$d/piece" of="$d/src-flat.vmdk" bs=1M seek="$mib" conv=notrunc status=none
		nfs_write src cephds src-flat.vmdk $((mib << 20)) "$d/piece" || return 1
	done
	same_on src cephds src-flat.vmdk "$d/src-flat.vmdk"
}
check "a 32 MiB thin disk written over NFS (3 MiB of data)" put_disk
check "stats: 3 RADOS objects of 4 MiB allocated" alloc_is src.vmdk 12582912
check "full clone" sctl vmdk clone cephds src.vmdk full.vmdk --full
check "... reads back over NFS the source's bytes" same_on src cephds full-flat.vmdk "$d/src-flat.vmdk"
check "... holes kept: 12 MiB allocated" alloc_is full.vmdk 12582912
# The linked clone's two files read over NFS beside a copy of its
# parent, then compared by qemu-img.
linked_reads() {
	local ext
	mkdir -p "$d/l" && cp "$d/src.vmdk" "$d/src-flat.vmdk" "$d/l/" &&
		nfs-cat "$(srv_nfs_url src cephds linked.vmdk)" >"$d/l/linked.vmdk" || return 1
	ext=$(sed -n 's/^RW [0-9]* [A-Z]* "\(.*\)".*/\1/p' "$d/l/linked.vmdk")
	[ -n "$ext" ] && grep -q '^parentFileNameHint="src.vmdk"' "$d/l/linked.vmdk" &&
		nfs-cat "$(srv_nfs_url src cephds "$ext")" >"$d/l/$ext" &&
		qemu-img compare -q "$d/l/src.vmdk" "$d/l/linked.vmdk"
}
check "linked clone" sctl vmdk clone cephds src.vmdk linked.vmdk --linked
check "... a delta of src.vmdk that reads its bytes (qemu-img compare)" linked_reads
check "reserve --zeroedthick on the full clone" sctl vmdk reserve cephds full.vmdk --zeroedthick
check "... every object allocated (32 MiB)" alloc_is full.vmdk 33554432
check "... its data kept" same_on src cephds full-flat.vmdk "$d/src-flat.vmdk"
# A restore: 64 KiB of the clone rewritten and a file made after the
# snapshot; back to it.
head -c 64K /dev/urandom >"$d/patch"
check "snapshot s3" sctl snapshot create cephds s3
after_s3() {
	nfs_write src cephds full-flat.vmdk 65536 "$d/patch" &&
		nfs-cp "$d/patch" "$(srv_nfs_url src cephds late.bin)" >/dev/null
}
check "... then 64 KiB of the clone rewritten, a file made" after_s3
check "... .snapshot/s3 over NFS reads the data then" \
	same_on src cephds .snapshot/s3/full-flat.vmdk "$d/src-flat.vmdk"
check "snapshot restore" sctl snapshot restore cephds s3
check "... the clone reads the snapshot's bytes again" same_on src cephds full-flat.vmdk "$d/src-flat.vmdk"
check "... the file made after is gone" bash -c "! nfs-cat '$(srv_nfs_url src cephds late.bin)' >/dev/null 2>&1"
check "snapshot delete" sctl snapshot delete cephds s3

# The datastore as a replication source: a baseline, then 64 KiB
# rewritten at an unaligned offset: the incremental finds it from the
# RADOS objects' stats and the OSDs' block hashes at the two snapshots
# (cephfs_snapread.c), with this key's osd cap.
ok_count() { rel src cephds r1 "r['transfers_ok']"; }
done_after() { [ "$(ok_count)" -gt "$1" ] && [ "$(rel src cephds r1 "r['running']")" = False ]; }
last() { rel src cephds r1 "r['last']$1"; }
check "transfer: 202" status_is "$(rel_act src cephds transfer r1)" 202
check "the baseline ends" wait_for 60 done_after 0
check "... without error" [ -z "$(rel src cephds r1 "r['error']")" ]
both_on_dsr() {
	same_on dst dsr src-flat.vmdk "$d/src-flat.vmdk" &&
		same_on dst dsr full-flat.vmdk "$d/src-flat.vmdk"
}
check "... dsr has the disk and its clone (sha256 over NFS)" both_on_dsr
check "... its snapshot is a CephFS one of /ds/ops" snaps_are sctl repl-r1-1
off=$((13 * 1048576 + 4096))
check "64 KiB rewritten over NFS at 13 MiB + 4 KiB" nfs_write src cephds src-flat.vmdk "$off" "$d/patch"
dd if="$d/patch" of="$d/src-flat.vmdk" bs=4096 seek=$((off / 4096)) conv=notrunc status=none
check "incremental: 202" status_is "$(rel_act src cephds transfer r1)" 202
check "the incremental ends" wait_for 60 done_after 1
check "... without error" [ -z "$(rel src cephds r1 "r['error']")" ]
echo "    incremental: $(last "['sent_bytes']") bytes sent, $(last "['candidate_bytes']") read and compared"
check "... it read only the two 64 KiB blocks written (RADOS stats and hashes)" \
	[ "$(last "['candidate_bytes']")" -le 131072 ]
check "... dsr has the source's bytes again" same_on dst dsr src-flat.vmdk "$d/src-flat.vmdk"
check "... the older snapshot is gone" snaps_are sctl repl-r1-2
check "server exits cleanly" srv_stop src
check "the destination exits cleanly" srv_stop dst

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
	echo "the /ds/ops gateway's and the destination's logs:"
	tail -n 15 "$TEST_TMP/src.log" "$TEST_TMP/dst.log"
fi
test_done
