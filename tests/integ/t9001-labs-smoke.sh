#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/labs.md cannot rot: the quickest, deterministic command of each of
# its ten labs, checked against the outputs the page shows (statuses,
# counts, rules and bill lines; never a rate).  fh.py and pools.conf are
# taken from the page itself.  The labs use the default ports (2049,
# 20048, 111, 8049), so this runs in a private network namespace where
# they are free and nothing else sees them.
. "$(dirname "$0")/netns.sh"
. "$(dirname "$0")/lib.sh"
DOC=docs/labs.md
BIN=$(cd "$DSNFS_BIN" && pwd)
T=$TEST_TMP

# The text of a heredoc in the page: the lines after the one that is
# $1 (leading spaces aside), up to its "EOF" line; with $2 = indented, the
# 4 spaces of an indented code block are removed.
doc_heredoc() {
	awk -v start="$1" -v indented="${2:-}" '
		{ line = $0; sub(/^ +/, "", line) }
		!on && line == start { on = 1; next }
		on && line == "EOF" { exit }
		on { if (indented != "") sub(/^    /, ""); print }' "$DOC"
}

# Starts dsnfsd with ARGS on the default ports (cwd: $T), log in $T/$1.log.
srv_start() {
	local name=$1
	shift
	: >"$T/$name.out"
	(cd "$T" && exec "$BIN/dsnfsd" -f "$@") >"$T/$name.out" \
		2>>"$T/$name.log" &
	DSNFSD_PID=$!
	for _ in $(seq 1 100); do
		grep -q '^dsnfsd: listening' "$T/$name.out" && return 0
		kill -0 "$DSNFSD_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "dsnfsd did not start:" >&2
	tail "$T/$name.log" >&2
	return 1
}
srv_stop() {
	kill "${1:--TERM}" "$DSNFSD_PID" 2>/dev/null
	wait "$DSNFSD_PID" 2>/dev/null
	DSNFSD_PID=""
}
has() { grep -Eq -- "$2" "$1"; }

echo "== lab 1: libnfs, qemu-img, --trace"
mkdir -p "$T/ds1/vm1" "$T/state"
srv_start l1 -c "$PWD/etc/lab/access.conf" -e ds1="$T/ds1" -s "$T/state" --trace || exit 1
check "default ports on the listening line" grep -qx \
	'dsnfsd: listening on 127.0.0.1 nfs=2049 mount=20048 portmap=111 admin=8049' \
	"$T/l1.out"
rpcinfo -p 127.0.0.1 >"$T/rpcinfo.txt" 2>&1
check "rpcinfo lists nfs 3 tcp 2049" has "$T/rpcinfo.txt" '100003 +3 +tcp +2049 +nfs'
sed -n '/^    \$ rpcinfo -p 127.0.0.1$/,/^    \$ showmount/p' "$DOC" | sed '1d;$d' |
	tr -s ' ' >"$T/rpcinfo-page.txt"
check "rpcinfo -p prints the page's table" diff "$T/rpcinfo-page.txt" \
	<(tr -s ' ' <"$T/rpcinfo.txt")
qemu-img create -f vmdk nfs://127.0.0.1/ds1/vm1.vmdk 1G >/dev/null 2>&1
nfs-ls nfs://127.0.0.1/ds1/ >"$T/ls.txt" 2>&1
check "nfs-ls shows the 196608-byte sparse VMDK" has "$T/ls.txt" ' 196608 vm1\.vmdk$'
re='trace: 127\.0\.0\.1:[0-9]+ xid=0x[0-9a-f]+'
check "trace: MNT" has "$T/l1.log" "$re mount MNT ds1 path=/ds1 -> status=OK"
check "trace: CREATE" has "$T/l1.log" "$re nfs CREATE ds1:/vm1\.vmdk dir=[0-9a-f]+ -> status=NFS3_OK"
check "trace: UNSTABLE WRITE" has "$T/l1.log" \
	"$re nfs WRITE ds1:/vm1\.vmdk off=0 count=4 stable=UNSTABLE -> status=NFS3_OK count=4 committed=UNSTABLE"
check "trace: COMMIT" has "$T/l1.log" "$re nfs COMMIT ds1:/vm1\.vmdk off=0 count=0 -> status=NFS3_OK"
# Every kind of call the page's trace excerpt shows ("rpcbind GETADDR",
# "mount MNT") is one that was made: the page drifts from the clients
# and the server otherwise.
showmount -e 127.0.0.1 >/dev/null 2>&1
trace_kinds() { awk '$1 == "trace:" { print $4, $5 }' | sort -u; }
sed -n '/^and in T1 one `trace:` line per call/,/^\*\*Why\.\*\*/p' "$DOC" |
	sed 's/^ *//' | trace_kinds >"$T/page-kinds.txt"
sed 's/^.*trace: /trace: /' "$T/l1.log" | trace_kinds >"$T/real-kinds.txt"
check "the page shows 10 kinds of call or more" \
	[ "$(wc -l <"$T/page-kinds.txt")" -ge 10 ]
check "every kind of call in the page's trace was made" \
	bash -c "comm -23 '$T/page-kinds.txt' '$T/real-kinds.txt' | sed 's/^/    not made: /' | grep . && exit 1 || exit 0"
srv_stop

echo "== lab 2: file handles"
doc_heredoc "cat > /tmp/lab/fh.py <<'EOF'" >"$T/fh.py"
check "fh.py is in the page" has "$T/fh.py" '^elif cmd == "commit":'
srv_start l2 -c "$PWD/etc/lab/access.conf" -e ds1="$T/ds1" -s "$T/state" || exit 1
echo "disk data" >"$T/ds1/vm1/disk-flat.vmdk"
python3 "$T/fh.py" lookup vm1/disk-flat.vmdk >"$T/lookup.txt" 2>&1
cat "$T/lookup.txt"
FH=$(awk '/^handle/ { print $2 }' "$T/lookup.txt")
ino=$(stat -c %i "$T/ds1/vm1/disk-flat.vmdk")
ino_le=$(printf '%08x' "$ino" | sed 's/\(..\)\(..\)\(..\)\(..\)/\4\3\2\1/')
check "a 23-byte ext4 handle, version 2, kernel len 8" has "$T/lookup.txt" \
	'^  version 2 \| export id [0-9a-f]{8} \| kernel type 1 \| kernel len 8$'
check "the kernel handle starts with the inode, little-endian" has \
	"$T/lookup.txt" "^  kernel handle ${ino_le}[0-9a-f]{8} \\| tag [0-9a-f]{16}\$"
check "fileid is the inode" has "$T/lookup.txt" "^  fileid $ino\$"
check "23 bytes in all" has "$T/lookup.txt" '^handle  02[0-9a-f]{44} \(23 bytes\)$'
srv_stop
srv_start l2 -c "$PWD/etc/lab/access.conf" -e ds1="$T/ds1" -s "$T/state" || exit 1
getattr() { python3 "$T/fh.py" getattr "$1" 2>&1; }
check "the handle works after a restart" [ "$(getattr "$FH")" = "GETATTR NFS3_OK fileid $ino size 10" ]
mv "$T/ds1/vm1/disk-flat.vmdk" "$T/ds1/vm1/renamed-flat.vmdk"
check "and after a rename" [ "$(getattr "$FH")" = "GETATTR NFS3_OK fileid $ino size 10" ]
bad=${FH%?}0
[ "$bad" = "$FH" ] && bad=${FH%?}1
check "a changed digit: BADHANDLE" [ "$(getattr "$bad")" = "GETATTR NFS3ERR_BADHANDLE" ]
rm "$T/ds1/vm1/renamed-flat.vmdk"
check "deleted: STALE" [ "$(getattr "$FH")" = "GETATTR NFS3ERR_STALE" ]

echo "== lab 4: UNSTABLE, FILE_SYNC, COMMIT, the verifier"
echo first >"$T/ds1/vm1/log.txt"
python3 "$T/fh.py" lookup vm1/log.txt >"$T/l4.txt"
FH=$(awk '/^handle/ { print $2 }' "$T/l4.txt")
{
	python3 "$T/fh.py" write "$FH" unstable AAAA
	python3 "$T/fh.py" write "$FH" file_sync CCCC
	python3 "$T/fh.py" commit "$FH"
} >"$T/w1.txt" 2>&1
cat "$T/w1.txt"
v1=$(sed -n '1s/.*verf=//p' "$T/w1.txt")
check "UNSTABLE answered UNSTABLE" has "$T/w1.txt" '^WRITE NFS3_OK committed=UNSTABLE verf=[0-9a-f]{16}$'
check "FILE_SYNC answered FILE_SYNC" has "$T/w1.txt" "^WRITE NFS3_OK committed=FILE_SYNC verf=$v1\$"
check "COMMIT: the same verifier" has "$T/w1.txt" "^COMMIT NFS3_OK verf=$v1\$"
srv_stop -KILL
srv_start l2 -c "$PWD/etc/lab/access.conf" -e ds1="$T/ds1" -s "$T/state" || exit 1
c2=$(python3 "$T/fh.py" commit "$FH" 2>&1)
echo "$c2"
check "after kill -9 and a start: a new verifier" \
	eval '[[ "$c2" =~ ^COMMIT\ NFS3_OK\ verf=[0-9a-f]{16}$ && "$c2" != *"$v1" ]]'
srv_stop

echo "== lab 3: thin, lazy-zeroed, eager-zeroed"
mkdir -p "$T/lab3"
(
	cd "$T/lab3" || exit 1
	"$BIN/dsvmdk" create -s 64M -t thin thin.vmdk
	"$BIN/dsvmdk" create -s 64M -t zeroedthick lazy.vmdk
	"$BIN/dsvmdk" create -s 64M -t eagerzeroedthick eager.vmdk
	for d in thin lazy eager; do
		"$BIN/dsvmdk" info $d.vmdk | grep -E '^  (provisioning|nb)'
	done
	du -k thin-flat.vmdk
	qemu-io -f vmdk -c 'write -P 0x42 0 16M' thin.vmdk
	qemu-io -f vmdk -c 'write -P 0x42 0 16M' lazy.vmdk
	for d in thin lazy; do "$BIN/dsvmdk" info $d.vmdk | grep -E '^  nb'; done
	"$BIN/dsvmdk" clone --linked thin.vmdk clone1.vmdk
	printf x | "$BIN/dsvmdk" write thin.vmdk
	"$BIN/dsvmdk" snapshot clone1.vmdk
) >"$T/l3.txt" 2>&1
cat "$T/l3.txt"
l3() { grep -A1 -x "  provisioning: $1" "$T/l3.txt" | tail -1; }
check "thin: nb 0 tbz 0" [ "$(l3 thin)" = "  nb 0 tbz 0" ]
check "zeroedthick: nb 64 tbz 64" [ "$(l3 zeroedthick)" = "  nb 64 tbz 64" ]
check "eagerzeroedthick: nb 64 tbz 0" [ "$(l3 eagerzeroedthick)" = "  nb 64 tbz 0" ]
check "du of the new thin extent is 0" has "$T/l3.txt" '^0	thin-flat\.vmdk$'
check "16 MiB written: thin nb 16 < 64, lazy tbz 48" eval \
	'[ "$(grep -E "^  nb" "$T/l3.txt" | tail -2 | tr "\n" /)" = "  nb 16 tbz 0/  nb 64 tbz 48/" ]'
check "linked clone makes the parent read-only" has "$T/l3.txt" \
	'^linked clone thin\.vmdk -> clone1\.vmdk: [0-9.]+ s; thin\.vmdk is now read-only$'
check "a write to the parent is refused" has "$T/l3.txt" \
	'^dsvmdk: write: thin\.vmdk: read-only \(mode 0444\): the parent of a snapshot or linked clone$'
check "snapshot names the ESXi way" has "$T/l3.txt" \
	'^snapshot of clone1\.vmdk: write to clone1-000001\.vmdk from now on$'
srv_start l3 -c "$PWD/etc/lab/access.conf" -e ds1="$T/lab3" -s "$T/state" || exit 1
qemu-img info -f raw nfs://127.0.0.1/ds1/eager-flat.vmdk >"$T/qi.txt" 2>&1
qemu-img info -f raw nfs://127.0.0.1/ds1/thin-flat.vmdk >>"$T/qi.txt" 2>&1
check "over NFS: fattr3 used gives qemu's disk size" eval \
	'[ "$(grep "disk size" "$T/qi.txt" | tr "\n" /)" = "disk size: 64 MiB/disk size: 16 MiB/" ]'
srv_stop

echo "== lab 5: one flow per host x datastore (anf-avs)"
# The page's model figures are the profile's (its measured ones are rates,
# which this test never checks).
conf=etc/lab/anf-avs.conf
check "the page's flow cap is the profile's (76,000 x 1/32)" eval \
	'grep -qx "flow_iops = 76000" $conf && grep -qx "scale = 0.03125" $conf &&
	 grep -q "caps one flow at$" $DOC && grep -q "^76,000 IOPS x scale 1/32 = 2,375 IOPS" $DOC'
check "the page's host contention is the profile's (0.136)" eval \
	'grep -qx "host_contention = 0.136" $conf && grep -q "^0.136 (busy - 1)), so two flows give 2 / 1.136 = 1.76" $DOC'
mkdir -p "$T"/var/anf/ds{1,2,3,4,5,6,7,8}
srv_start l5 -c "$PWD/etc/lab/anf-avs.conf" -s "$T/state5" || exit 1
five() {
	"$BIN/dsload" "$@" --bs 8k --read-pct 50 --ramp 0 --runtime 1 \
		--iodepth 8 --vmdk-size 16m --quiet 2>&1
}
five -H 1 -D 2 --vmdks 2 >"$T/v2.txt"
five -H 1 -D 1 --vms 4 --vmdks 4 >"$T/h1.txt"
grep -E '^(  fleet|total|datastore)' "$T/v2.txt" "$T/h1.txt"
check "V2: one host, two datastores = 2 flows" has "$T/v2.txt" \
	'fleet: 1 host\(s\) x 1 VM\(s\) x 2 VMDK\(s\), 2 datastore\(s\) placed spread: 2 flow\(s\)'
check "V2: a row per datastore" eval 'has "$T/v2.txt" "^datastore ds1 " && has "$T/v2.txt" "^datastore ds2 "'
check "H1: 16 VMDKs behind 1 flow" has "$T/h1.txt" \
	'fleet: 1 host\(s\) x 4 VM\(s\) x 4 VMDK\(s\), 1 datastore\(s\) placed spread: 1 flow\(s\)'
check "both ran clean" eval 'has "$T/v2.txt" "^dsload: ok" && has "$T/h1.txt" "^dsload: ok"'
srv_stop

echo "== lab 7: observability"
doc_heredoc "cat > /tmp/lab/pools.conf <<'EOF'" indented | sed "s|/tmp/lab/|$T/lab6/|" \
	>"$T/pools.conf"
check "pools.conf is in the page" has "$T/pools.conf" '^throughput_mibps = 8$'
mkdir -p "$T/lab6/ds1" "$T/lab6/ds2" "$T/lab6/state"
srv_start l6 -c "$T/pools.conf" || exit 1
# As the page says: the token of the lab's state dir.
export DSNFS_ADMIN_TOKEN_FILE=$T/lab6/state/admin.token
ctl() { "$BIN/dsnfsctl" "$@" 2>&1; }
ctl volumes >"$T/volumes.txt"
cat "$T/volumes.txt"
check "volumes: the page's header" grep -qx \
	'NAME  POOL  LEVEL     QUOTA  USED   USE%  QOS LIMIT  PROVISIONED  LIMITED' "$T/volumes.txt"
check "volumes: ds1 as the page shows it (USE% 0.0)" has "$T/volumes.txt" \
	'^ds1   lab   Standard  1 TiB  [0-9]+ KiB  0\.0   4 MiB/s    0 B          0$'
"$BIN/dsload" -H 2 -D ds1,ds2 --vmdks 2 --bs 64k --random-pct 0 \
	--read-pct 100 --ramp 0 --runtime 2 --vmdk-size 16m --quiet \
	>"$T/l7run.txt" 2>&1 &
load=$!
nflows=0
for _ in $(seq 1 50); do
	nflows=$(ctl flows | grep -c '127\.0\.1\.[12] ')
	[ "$nflows" -ge 4 ] && break
	sleep 0.1
done
ctl flows
check "/flows: 2 hosts x 2 datastores = 4 flows" [ "$nflows" -ge 4 ]
wait $load
acurl -s localhost:8049/metrics >"$T/metrics.txt"
check "/metrics parses strictly" python3 tests/integ/promparse.py "$T/metrics.txt"
check "/metrics: ds1's limit, 4 MiB/s" has "$T/metrics.txt" \
	'^dsnfs_volume_throughput_limit_bytes_per_second\{volume="ds1"\} 4194304$'
check "/metrics: the pool's 64 MiB/s" has "$T/metrics.txt" \
	'^dsnfs_pool_throughput_limit_bytes_per_second\{pool="lab"\} 67108864$'
check "/metrics: ds1 was read" has "$T/metrics.txt" \
	'^dsnfs_volume_read_bytes_total\{volume="ds1"\} [1-9][0-9]*$'
"$BIN/dsvmdk" create -s 2T -t thin "$T/lab6/ds2/big.vmdk" >/dev/null
for _ in $(seq 1 100); do
	ctl alarms | grep -q '200\.0% ALARM' && break
	sleep 0.1
done
ctl alarms
check "alarms: ds2 200% overallocated" eval 'ctl alarms | grep -Eq "^ds2 .* 2\.0 TiB .* 200\.0% ALARM$"'
check "the alarm is logged" has "$T/l6.log" \
	'warn: admin: datastore ds2: overallocation 200\.0% of its 1024\.0 GiB quota crossed the 150% alarm threshold'

echo "== lab 6: pools, limits, ledger, bill"
ctl pools >"$T/pools.txt"
check "Standard 4 TiB = 64 MiB/s" has "$T/pools.txt" \
	'^lab +Standard +manual +4 TiB +64 MiB/s +2 TiB '
check "ds1 --limit 60 breaks the pool rule" [ "$(ctl volume set ds1 --limit 60)" = \
	"dsnfsctl: 400: pool lab: manual volume limits sum to 68 MiB/s, more than the pool's 64 MiB/s" ]
check "Premium: 256 MiB/s" eval 'ctl pool set lab --level premium | grep -Eq "^lab +Premium +manual +4 TiB +256 MiB/s"'
check "now ds1 --limit 60 fits" eval 'ctl volume set ds1 --limit 60 | grep -Eq "^ds1 +lab +Premium +1 TiB .* 60 MiB/s "'
check "the pool cannot shrink below its quotas" [ "$(ctl pool set lab --size 1)" = \
	"dsnfsctl: 400: pool lab: volume quotas sum to 2 TiB, more than the pool's 1 TiB" ]
srv_stop
ctl ledger --ledger "$T/lab6/state/capacity.ledger" >"$T/ledger.txt"
cat "$T/ledger.txt"
check "ledger: created, level-changed, nothing refused" eval \
	'[ "$(sed "s/^[^ ]* *//" "$T/ledger.txt" | tr -s " " | tr "\n" /)" = "created lab Standard 4 TiB/level-changed lab Premium 4 TiB/" ]'
# 30 whole days that start after the pool was made, whatever today is
# (the page gives the same date commands).
from=$(date -u -d '+2 days' +%F)
to=$(date -u -d '+32 days' +%F)
check "the page bills the same 30 days" grep -qF -- \
	"--from \$(date -u -d '+2 days' +%F) --to \$(date -u -d '+32 days' +%F)" docs/labs.md
ctl bill --ledger "$T/lab6/state/capacity.ledger" --prices etc/prices.conf \
	--from "$from" --to "$to" >"$T/bill.txt"
cat "$T/bill.txt"
check "30 days' bill, line by line" diff - "$T/bill.txt" <<BILL
bill ${from}T00:00:00Z .. ${to}T00:00:00Z, USD, prices: etc/prices.conf
  lab ${from}T00:00:00Z .. ${to}T00:00:00Z Premium 4 TiB: 720.000000 h x 4096 GiB x 0.000403 USD per GiB-hour = 1188.495360 USD
pool lab: 1188.495360 USD
total: 1188.495360 USD
BILL

echo "== lab 8: the kernel client (boot: t4001)"
KCLIENT=$(cd "$(dirname "$0")/../kclient" && pwd)
"$KCLIENT/run-guest.sh" 27049 27050 /ds1 'ls' >"$T/kc.txt" 2>&1
rc=$?
cat "$T/kc.txt"
check "run-guest.sh with no server: exit 100 before booting" eval \
	'[ $rc -eq 100 ] && has "$T/kc.txt" "nothing listens on 127\.0\.0\.1:27049"'

echo "== lab 9: clone a disk in-band (VAAI-NAS)"
L9=$T/lab9
mkdir -p "$L9/ds1"
# The page's config line, run as it is with its folder moved.
line=$(grep -m1 -F "printf '[datastore ds1]\npath = /tmp/lab9/ds1" "$DOC")
check "lab 9's config line is in the page" [ -n "$line" ]
(cd "$T" && eval "${line//\/tmp\/lab9/$L9}")
check "it names the datastore and the lab's clients" has "$L9/lab9.conf" '^clients = 127\.0\.0\.0/8$'
srv_start l9 -c "$L9/lab9.conf" -s "$L9/state" || exit 1
# The page's commands on a smaller disk (64 MiB, 32 MiB written).
"$BIN/dsvmdk" create -s 64M -t thin "$L9/ds1/disk.vmdk" >"$T/l9.txt"
qemu-io -f vmdk -c 'write -P 0x42 0 32M' "$L9/ds1/disk.vmdk" >>"$T/l9.txt"
python3 tests/integ/vaainas.py clone /ds1 disk-flat.vmdk copy1-flat.vmdk >>"$T/l9.txt" 2>&1
nfs-cp nfs://127.0.0.1/ds1/disk-flat.vmdk nfs://127.0.0.1/ds1/copy2-flat.vmdk >>"$T/l9.txt" 2>&1
python3 tests/integ/vaainas.py stat /ds1 copy1-flat.vmdk >>"$T/l9.txt" 2>&1
python3 tests/integ/vaainas.py clone /ds1 disk-flat.vmdk copy1-flat.vmdk >>"$T/l9.txt" 2>&1
# As the page says: the token of the lab's state dir.
export DSNFS_ADMIN_TOKEN_FILE=$L9/state/admin.token
acurl -s localhost:8049/operations >"$T/l9ops.json"
cat "$T/l9.txt"
check "the in-band clone, as the page shows it" has "$T/l9.txt" \
	'^cloned disk-flat\.vmdk -> copy1-flat\.vmdk: 67108864 bytes in [0-9.]+ s$'
check "both copies equal the disk" eval 'cmp "$L9/ds1/disk-flat.vmdk" "$L9/ds1/copy1-flat.vmdk" &&
	cmp "$L9/ds1/disk-flat.vmdk" "$L9/ds1/copy2-flat.vmdk"'
check "the in-band copy is thin, nfs-cp's is not" eval \
	'[ $(du -k "$L9/ds1/copy1-flat.vmdk" | cut -f1) -lt 40000 ] &&
	 [ $(du -k "$L9/ds1/copy2-flat.vmdk" | cut -f1) -ge 65536 ]'
check "FSTAT: total 64 MiB, 32 MiB allocated, all unique" has "$T/l9.txt" \
	'cmd=3, result=0, total_bytes=67108864, allocated_bytes=335[0-9]{5}, unique_bytes=335[0-9]{5}'
check "a second clone onto the copy: CREATE refused, status 17" has "$T/l9.txt" \
	'^CREATE copy1-flat\.vmdk: status 17$'
check "/operations lists it: vaai-nas, done" python3 -c "
import json, sys
ops = json.load(open('$T/l9ops.json'))['operations']
sys.exit(not any(o['mode'] == 'vaai-nas' and o['state'] == 'done' and
                 o['target'] == 'copy1-flat.vmdk' for o in ops))"
srv_stop

echo "== lab 10: replication: a policy, a replica, a disaster, a break"
L10=$T/lab10
DST10_PID=""
lab10_cleanup() {
	[ -n "$DST10_PID" ] && kill "$DST10_PID" 2>/dev/null && wait "$DST10_PID" 2>/dev/null
	xfs_loop_cleanup
}
if [ "$(id -u)" != 0 ] || ! command -v mkfs.xfs >/dev/null; then
	echo "  skip: lab 10 needs root and mkfs.xfs (XFS loops)"
	test_done
fi
for d in src dsr; do
	mkdir -p "$L10/$d"
	truncate -s 512M "$L10/$d.img"
	mkfs.xfs -q -m reflink=1 "$L10/$d.img" && mount -o loop "$L10/$d.img" "$L10/$d" || {
		echo "  skip: lab 10: cannot loop-mount an XFS here"
		test_done
	}
	XFS_LOOP_DIRS="${XFS_LOOP_DIRS:-} $L10/$d"
done
trap lab10_cleanup EXIT
(umask 077 && openssl rand -hex 32 >"$L10/r1.key")
# The page's two configs, run as they are with their folder moved.
for c in dst src; do
	doc_heredoc "cat >/tmp/lab10/$c.conf <<EOF" indented |
		sed "s|/tmp/lab10|$L10|g" >"$L10/$c.conf"
done
check "lab 10's destination config: role destination of dsr" \
	grep -qx 'role = destination' "$L10/dst.conf"
check "lab 10's source config: the policy and the relation" eval \
	'grep -qx "snapshot_hourly = :00 keep 3" "$L10/src.conf" &&
	 grep -qx "destination_url = http://127.0.0.1:28049" "$L10/src.conf"'
check "the page starts the destination as run here" grep -qF -- \
	'build/bin/dsnfsd -f -p 27049 -m 27050 -P off -A 28049 -c /tmp/lab10/dst.conf -s /tmp/lab10/dstate' "$DOC"
: >"$T/l10d.out"
(cd "$T" && exec "$BIN/dsnfsd" -f -p 27049 -m 27050 -P off -A 28049 \
	-c "$L10/dst.conf" -s "$L10/dstate") >"$T/l10d.out" 2>"$T/l10d.log" &
DST10_PID=$!
wait_for 10 grep -q '^dsnfsd: listening' "$T/l10d.out" || cat "$T/l10d.log"
check "the page's policy clock" grep -qF -- \
	"DSNFSD_TEST_POLICY_CLOCK=\$(date -u -d '2026-12-07 22:58' +%s):1200 build/bin/dsnfsd -f -c /tmp/lab10/src.conf -s /tmp/lab10/sstate" "$DOC"
# 12000 times the real clock here (the page: 1200): an hour in 0.3 s.
DSNFSD_TEST_POLICY_CLOCK=$(date -u -d '2026-12-07 22:58' +%s):12000 \
	srv_start l10s -c "$L10/src.conf" -s "$L10/sstate" || exit 1
export DSNFS_ADMIN_TOKEN_FILE=$L10/sstate/admin.token
ctl snapshot policy show src >"$T/l10pol.txt" 2>&1
cat "$T/l10pol.txt"
check "policy show: hourly :00 keep 3, from the config" eval \
	'has "$T/l10pol.txt" "^volume src \(policy from config\)$" &&
	 has "$T/l10pol.txt" "^  hourly   :00 keep 3 "'
check "the policy deletes the oldest hourly past 3" wait_for 15 \
	grep -qE 'snapshot-policy: src: hourly: deleted hourly-2026-12-08_[0-9]{4} \(keep 3\)' "$T/l10s.log"
# (A moment apart: retention deletes right after it makes, so retry.)
check "... and keeps 3 hourly and the daily" wait_for 5 bash -c \
	"[ \"\$('$BIN/dsnfsctl' snapshot list src | grep -c '^hourly-')\" -le 3 ] &&
	 '$BIN/dsnfsctl' snapshot list src | grep -q '^daily-2026-12-'"
"$BIN/dsvmdk" create -t thin -s 256M "$L10/src/vm1.vmdk" >/dev/null
qemu-io -f raw -c 'write -P 0x11 0 8M' nfs://127.0.0.1/src/vm1-flat.vmdk >/dev/null 2>&1
# transfer10 N: the page's transfer, then its show once replica N is in
# (the show is kept either way: its error line says why a transfer failed).
transfer10() {
	local rc=0
	ctl replication transfer src >/dev/null &&
		wait_for 30 bash -c "'$BIN/dsnfsctl' replication show src | grep -q 'last replica  repl-r1-$1,'" ||
		rc=1
	ctl replication show src >"$T/l10show$1.txt"
	[ $rc = 0 ] || { cat "$T/l10show$1.txt"; grep 'replication: r1' "$T/l10s.log" | tail -3; }
	return $rc
}
# sent_of FILE: the bytes the show's last transfer sent.
sent_of() { sed -n 's/^  last transfer .*), \([0-9]*\) bytes sent of .*/\1/p' "$1"; }
carried_of() { sed -n 's/^  snapshots     \([0-9]*\) carried, .*/\1/p' "$1"; }
check "the baseline: repl-r1-1" transfer10 1
cat "$T/l10show1.txt"
# The policy's snapshots go first (each an incremental from the one
# before), then the replica: the 8 MiB and the descriptor at least once,
# the hole never (more only when retention deleted a snapshot while it
# was sent: the clock runs 12000 times the real one here).
s1=$(sent_of "$T/l10show1.txt")
check "... the 8 MiB written and the descriptor sent ($s1 bytes), the hole not" \
	bash -c "[ '$s1' -ge 8388938 ] && [ '$s1' -lt $((3 * 8388938)) ]"
check "... with the policy's snapshots ($(carried_of "$T/l10show1.txt") carried)" \
	bash -c "[ '$(carried_of "$T/l10show1.txt")' -ge 1 ]"
qemu-io -f raw -c 'write -P 0x22 100M 1M' nfs://127.0.0.1/src/vm1-flat.vmdk >/dev/null 2>&1
check "the incremental: repl-r1-2" transfer10 2
cat "$T/l10show2.txt"
s2=$(sent_of "$T/l10show2.txt")
check "... 1 MiB rewritten: $s2 bytes sent (1048576 at least, not the disk), as the page says" eval \
	'[ "$s2" -ge 1048576 ] && [ "$s2" -lt 8388938 ] &&
	 grep -qF "bytes sent of 1048576 candidate" "$DOC" &&
	 grep -qE "^      snapshots     [0-9]+ carried, [0-9]+ deleted by the last transfer; [0-9]+ carried in all$" "$DOC"'
acurl -s localhost:8049/metrics >"$T/l10metrics.txt"
check "/metrics: 2 transfers, the last $s2 bytes, the snapshots carried" eval \
	'has "$T/l10metrics.txt" "^dsnfs_replication_transfers_total\{relation=\"r1\",volume=\"src\"\} 2$" &&
	 has "$T/l10metrics.txt" "^dsnfs_replication_last_sent_bytes\{relation=\"r1\",volume=\"src\"\} $s2$" &&
	 has "$T/l10metrics.txt" "^dsnfs_replication_snapshots_total\{relation=\"r1\",volume=\"src\"\} [1-9]"'
echo hello >"$L10/hello.txt"
dsr_url="nfs://127.0.0.1/dsr/hello.txt?nfsport=27049&mountport=27050"
nfs-cp "$L10/hello.txt" "$dsr_url" >"$T/l10ro.txt" 2>&1
cat "$T/l10ro.txt"
check "the destination refuses an NFS client's write: NFS3ERR_ROFS" \
	has "$T/l10ro.txt" 'NFS3ERR_ROFS'
qemu-io -f raw -c 'write -P 0x33 0 1M' nfs://127.0.0.1/src/vm1-flat.vmdk >/dev/null 2>&1
want=$(md5sum <"$L10/src/.snapshot/repl-r1-2/vm1-flat.vmdk" | cut -c1-32)
srv_stop -KILL
"$BIN/dsnfsctl" -s 127.0.0.1:28049 --state-dir "$L10/dstate" replication break dsr >"$T/l10break.txt" 2>&1
cat "$T/l10break.txt"
check "break on the destination, as the page shows" eval \
	'[ "$(cat "$T/l10break.txt")" = "relation r1: destination of volume dsr, broken
  last replica  repl-r1-2" ] &&
	 grep -qxF "      last replica  repl-r1-2" "$DOC"'
got=$(nfs-cat "nfs://127.0.0.1/dsr/vm1-flat.vmdk?nfsport=27049&mountport=27050" | md5sum | cut -c1-32)
check "the disk read back from dsr is the source's repl-r1-2 ($got)" [ "$got" = "$want" ]
check "... not the write after the last transfer" [ "$got" != "$(md5sum <"$L10/src/vm1-flat.vmdk" | cut -c1-32)" ]
check "the destination takes the write after the break" eval \
	'nfs-cp "$L10/hello.txt" "$dsr_url" >/dev/null 2>&1 && cmp -s "$L10/hello.txt" "$L10/dsr/hello.txt"'
check "dsr/.snapshot: repl-r1-2, the daily and hourly ones, as the page shows" eval \
	'ls "$L10/dsr/.snapshot" | grep -qx repl-r1-2 &&
	 ls "$L10/dsr/.snapshot" | grep -q "^daily-2026-12-" &&
	 ls "$L10/dsr/.snapshot" | grep -q "^hourly-2026-12-" &&
	 grep -qF "snapshot list dsr" "$DOC" &&
	 grep -qE "^    hourly-2026-12-08_0500 +2026-12-" "$DOC"'
# The newest policy snapshot on dsr holding the disk, read back over
# NFS: the disk as the source had it after the first write (8 MiB of
# 0x11) or after the second (and 1 MiB of 0x22 at 100 MiB), nothing
# else (the source's copy may be gone: its retention runs 12000 times
# faster here).
h=$(cd "$L10/dsr/.snapshot" && for n in daily-* hourly-*; do
	[ -f "$n/vm1-flat.vmdk" ] && echo "$n"
done | sort -t- -k2 | tail -1)
states=$(python3 -c '
import hashlib
d = bytearray(256 << 20)
d[0:8 << 20] = b"\x11" * (8 << 20)
a = hashlib.md5(d).hexdigest()
d[100 << 20:101 << 20] = b"\x22" * (1 << 20)
print(a, hashlib.md5(d).hexdigest())')
got=$(nfs-cat "nfs://127.0.0.1/dsr/.snapshot/$h/vm1-flat.vmdk?nfsport=27049&mountport=27050" 2>/dev/null | md5sum | cut -c1-32)
check "dsr/.snapshot/$h over NFS: the disk as the source had it ($got)" \
	eval '[ -n "$h" ] && [[ " $states " == *" $got "* ]]'
kill "$DST10_PID" && wait "$DST10_PID" || FAILS=$((FAILS + 1))
DST10_PID=""
test_done
