#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Storage-side VMDK operations through a running dsnfsd (the
# VAAI-NAS primitives), driven by dsnfsctl and curl: a full clone checked
# with qemu-img compare over nfs:// (the portmapper on 111, in a network
# namespace of its own), a linked clone checked with qemu-img on the
# server's files, Reserve Space and Extended Statistics (nb / tbz), and
# every refusal: a target that exists (409), paths outside the export
# (400: "..", absolute, a symlink), a source that is not a VMDK (409) or
# is in use by a running clone (409), native clones where the file system
# has no reflink (422, nothing made), a quota (507, nothing made) and
# ENOSPC in the middle of a copy on a small tmpfs (the partial target
# removed, the source unchanged).
. "$(dirname "$0")/netns.sh"
. "$(dirname "$0")/lib.sh"

mkdir -p "$TEST_TMP/ds2"
tmpfs=0
if mount -t tmpfs -o size=48m tmpfs "$TEST_TMP/ds2" 2>/dev/null; then
	tmpfs=1
	trap 'umount "$TEST_TMP/ds2" 2>/dev/null; test_cleanup' EXIT
fi
dsnfsd_start -P 111 || exit 1
A="http://127.0.0.1:$ADMIN_PORT"
# A thin 256 MiB disk with 12 MiB of data in three places.
ds1=$TEST_TMP/ds1
"$DSNFS_BIN/dsvmdk" create -t thin -s 256M "$ds1/src.vmdk" >/dev/null
python3 - "$ds1/src-flat.vmdk" <<'PY'
import os, random, sys
r = random.Random(14)
fd = os.open(sys.argv[1], os.O_WRONLY)
for off in (0, 100 << 20, 250 << 20):
    os.pwrite(fd, r.randbytes(4 << 20), off)
os.close(fd)
PY

echo "full clone"
mkdir -p "$ds1/vm2"
check "dsnfsctl vmdk clone --full into a folder" ctl vmdk clone ds1 src.vmdk vm2/full.vmdk --full
check "qemu-img compare over nfs:// (the data files)" qemu-img compare -q -f raw -F raw \
	nfs://127.0.0.1/ds1/src-flat.vmdk nfs://127.0.0.1/ds1/vm2/full-flat.vmdk
check "qemu-img compare of the disks (vmdk driver)" qemu-img compare -q "$ds1/src.vmdk" "$ds1/vm2/full.vmdk"
check "the clone is thin: holes kept (12 MiB allocated)" bash -c \
	"[ \$(du -k '$ds1/vm2/full-flat.vmdk' | cut -f1) -le 13312 ]"
check "the clone's blocks are its own (nothing shared on ext4)" bash -c \
	"ctl() { '$DSNFS_BIN/dsnfsctl' -s 127.0.0.1:$ADMIN_PORT \"\$@\"; }; ctl --json vmdk stats ds1 vm2/full.vmdk | grep -q '\"shared_bytes\": 0'"
check "GET /operations lists it as done" bash -c \
	"acurl -s $A/operations | python3 -c 'import json,sys; o=json.load(sys.stdin)[\"operations\"]; sys.exit(not any(x[\"target\"]==\"vm2/full.vmdk\" and x[\"state\"]==\"done\" and x[\"percent\"]==100 for x in o))'"
check "the API answers 202 with Location for a full clone" bash -c \
	"acurl -s -i -H 'Content-Type: application/json' -d '{\"source\":\"src.vmdk\",\"target\":\"f3.vmdk\",\"mode\":\"full\"}' $A/volumes/ds1/clones | grep -q '^Location: /operations/[1-9]'"

echo "linked clone"
check "dsnfsctl vmdk clone --linked" ctl vmdk clone ds1 vm2/full.vmdk vm2/linked.vmdk --linked
check "qemu-img compare linked vs its parent" qemu-img compare -q "$ds1/vm2/full.vmdk" "$ds1/vm2/linked.vmdk"
check "the parent became read-only (a snapshot of the source)" bash -c "[ ! -w '$ds1/vm2/full.vmdk' ] || [ \$(stat -c %a '$ds1/vm2/full.vmdk') = 444 ]"

echo "native clone without reflink"
code=$(post /volumes/ds1/clones '{"source":"src.vmdk","target":"nat.vmdk","mode":"native"}')
check "native on ext4: 422" status_is "$code" 422
check "  the reason names reflink" body_has "reflink"
check "  nothing is left behind" bash -c "[ ! -e '$ds1/nat.vmdk' ] && [ ! -e '$ds1/nat-flat.vmdk' ]"
check "dsnfsctl --native exits 1" bash -c "! '$DSNFS_BIN/dsnfsctl' -s 127.0.0.1:$ADMIN_PORT vmdk clone ds1 src.vmdk nat.vmdk --native 2>/dev/null"

echo "refusals"
code=$(post /volumes/ds1/clones '{"source":"src.vmdk","target":"vm2/full.vmdk","mode":"full"}')
check "target exists: 409" status_is "$code" 409
touch "$ds1/taken-flat.vmdk"
code=$(post /volumes/ds1/clones '{"source":"src.vmdk","target":"taken.vmdk","mode":"full"}')
check "target's data file exists: 409" status_is "$code" 409
code=$(post /volumes/ds1/clones '{"source":"../ds2/x.vmdk","target":"y.vmdk","mode":"full"}')
check "source with ..: 400" status_is "$code" 400
code=$(post /volumes/ds1/clones '{"source":"src.vmdk","target":"/tmp/y.vmdk","mode":"full"}')
check "absolute target: 400" status_is "$code" 400
mkdir -p "$TEST_TMP/outside"
"$DSNFS_BIN/dsvmdk" create -t thin -s 1M "$TEST_TMP/outside/o.vmdk" >/dev/null
ln -s "$TEST_TMP/outside" "$ds1/escape"
ln -s "$TEST_TMP/outside/o.vmdk" "$ds1/o.vmdk"
code=$(post /volumes/ds1/clones '{"source":"escape/o.vmdk","target":"y.vmdk","mode":"full"}')
check "source through a symlinked folder: 400" status_is "$code" 400
code=$(post /volumes/ds1/clones '{"source":"o.vmdk","target":"y.vmdk","mode":"full"}')
check "source that is a symlink: 400" status_is "$code" 400
code=$(post /volumes/ds1/clones '{"source":"src.vmdk","target":"escape/y.vmdk","mode":"full"}')
check "target through a symlinked folder: 400" status_is "$code" 400
check "  nothing made outside" bash -c "[ ! -e '$TEST_TMP/outside/y.vmdk' ]"
echo "not a disk" >"$ds1/notes.vmdk"
code=$(post /volumes/ds1/clones '{"source":"notes.vmdk","target":"y.vmdk","mode":"full"}')
check "source not a VMDK: 409" status_is "$code" 409
check "  the reason says so" body_has "not a VMDK"
code=$(post /volumes/ds1/clones '{"source":"none.vmdk","target":"y.vmdk","mode":"full"}')
check "missing source: 404" status_is "$code" 404
code=$(post /volumes/ds1/clones '{"source":"src.vmdk","target":"y.vmdk","mode":"deep"}')
check "unknown mode: 400" status_is "$code" 400
code=$(post /volumes/ds1/clones '{"source":"src.vmdk","target":"y.vmdk","mode":"full","x":1}')
check "unknown field: 400" status_is "$code" 400
code=$(post /volumes/nope/clones '{"source":"src.vmdk","target":"y.vmdk","mode":"full"}')
check "unknown datastore: 404" status_is "$code" 404
code=$(post /volumes/ds1/clones '{"source":"src.vmdk","target":"y.raw","mode":"full"}')
check "target not named .vmdk: 400" status_is "$code" 400

echo "in use by a running clone"
# 1.5 GiB of written data: a copy that takes long enough to be seen.
"$DSNFS_BIN/dsvmdk" create -t thin -s 2G "$ds1/big.vmdk" >/dev/null
dd if=/dev/zero of="$ds1/big-flat.vmdk" bs=4M count=384 conv=notrunc status=none
code=$(post /volumes/ds1/clones '{"source":"big.vmdk","target":"big2.vmdk","mode":"full"}')
check "a long full clone starts: 202" status_is "$code" 202
id=$(python3 -c "import json; print(json.load(open('$TEST_TMP/body'))['id'])")
c1=$(post /volumes/ds1/clones '{"source":"big.vmdk","target":"big3.vmdk","mode":"native"}')
cp "$TEST_TMP/body" "$TEST_TMP/body1"
c2=$(post /volumes/ds1/clones '{"source":"big2.vmdk","target":"big4.vmdk","mode":"full"}')
state=$(acurl -s "$A/operations/$id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')
if [ "$state" = running ]; then
	check "its source, while it runs: 409" status_is "$c1" 409
	cp "$TEST_TMP/body1" "$TEST_TMP/body"
	check "  the reason names the operation" body_has "in use by running operation $id"
	check "its target, while it runs: 409" status_is "$c2" 409
else
	echo "  skip: the clone ended before the second request (state $state)"
fi
check "GET /operations/ID shows progress" bash -c \
	"acurl -s $A/operations/$id | grep -q '\"done_bytes\"'"
check "dsnfsctl operations lists it" bash -c "'$DSNFS_BIN/dsnfsctl' -s 127.0.0.1:$ADMIN_PORT operations | grep -q 'big2.vmdk'"
for _ in $(seq 1 300); do
	state=$(acurl -s "$A/operations/$id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')
	[ "$state" = running ] || break
	sleep 0.1
done
check "the long clone ends done" [ "$state" = done ]
check "qemu-img compare of the long clone over nfs://" qemu-img compare -q -f raw -F raw \
	nfs://127.0.0.1/ds1/big-flat.vmdk nfs://127.0.0.1/ds1/big2-flat.vmdk
rm -f "$ds1"/big*

echo "reserve space and extended statistics"
"$DSNFS_BIN/dsvmdk" create -t thin -s 64M "$ds1/r.vmdk" >/dev/null
printf 'x%.0s' $(seq 1 4096) | dd of="$ds1/r-flat.vmdk" bs=4096 seek=768 conv=notrunc status=none
stat_of() { acurl -s "$A/volumes/ds1/stats?path=$1" | python3 -c "import json,sys; d=json.load(sys.stdin); print(d['provisioning'], d['size_bytes'], d['nb'], d['tbz'])"; }
check "stats of a thin disk: thin, 64 MiB, nb 1 tbz 0" [ "$(stat_of r.vmdk)" = "thin 67108864 1 0" ]
check "dsnfsctl vmdk reserve --zeroedthick" ctl vmdk reserve ds1 r.vmdk --zeroedthick
check "stats: zeroedthick, nb 64 tbz 63 (the written block stays)" [ "$(stat_of r.vmdk)" = "zeroedthick 67108864 64 63" ]
check "dsnfsctl vmdk reserve --eagerzeroedthick" ctl vmdk reserve ds1 r.vmdk --eagerzeroedthick
check "stats: eagerzeroedthick, nb 64 tbz 0" [ "$(stat_of r.vmdk)" = "eagerzeroedthick 67108864 64 0" ]
check "the data written before stays" bash -c "[ \$(dd if='$ds1/r-flat.vmdk' bs=4096 skip=768 count=1 status=none | tr -d x | wc -c) = 0 ]"
check "dsnfsctl vmdk stats prints nb and tbz" bash -c "'$DSNFS_BIN/dsnfsctl' -s 127.0.0.1:$ADMIN_PORT vmdk stats ds1 r.vmdk | grep -q 'nb 64 tbz 0'"
code=$(acurl -s -o "$TEST_TMP/body" -w '%{http_code}' "$A/volumes/ds1/stats?path=notes.vmdk")
check "stats of a file that is not a disk: 200, kind file" bash -c "[ $code = 200 ] && grep -q '\"kind\":\"file\"' '$TEST_TMP/body'"
code=$(acurl -s -o "$TEST_TMP/body" -w '%{http_code}' "$A/volumes/ds1/stats?path=o.vmdk")
check "stats of a symlink: 400" status_is "$code" 400
code=$(acurl -s -o "$TEST_TMP/body" -w '%{http_code}' "$A/volumes/ds1/stats?path=..%2Fds2")
check "stats with ..: 400" status_is "$code" 400
code=$(acurl -s -o "$TEST_TMP/body" -w '%{http_code}' "$A/volumes/ds1/stats")
check "stats without path: 400" status_is "$code" 400
code=$(post /volumes/ds1/reserve '{"path":"r.vmdk","type":"thin"}')
check "reserve of type thin: 400" status_is "$code" 400
code=$(post /volumes/ds1/reserve '{"path":"vm2/linked.vmdk","type":"zeroedthick"}')
check "reserve of a sparse delta: 400" status_is "$code" 400

echo "a quota"
ctl pool create p1 --level premium --size 1 >/dev/null
ctl volume create ds1 --pool p1 --quota 20MiB >/dev/null
code=$(post /volumes/ds1/clones '{"source":"src.vmdk","target":"q.vmdk","mode":"full"}')
check "a full clone past the quota: 507" status_is "$code" 507
check "  the reason names the quota" body_has "quota"
check "  nothing made" bash -c "[ ! -e '$ds1/q.vmdk' ] && [ ! -e '$ds1/q-flat.vmdk' ]"
code=$(post /volumes/ds1/clones '{"source":"src.vmdk","target":"q.vmdk","mode":"linked"}')
check "a linked clone fits: 201" status_is "$code" 201
ctl volume delete ds1 >/dev/null

echo "ENOSPC in the middle of a copy"
if [ $tmpfs = 1 ]; then
	ds2=$TEST_TMP/ds2
	"$DSNFS_BIN/dsvmdk" create -t thin -s 64M "$ds2/s.vmdk" >/dev/null
	dd if=/dev/urandom of="$ds2/s-flat.vmdk" bs=1M count=30 conv=notrunc status=none
	sum=$(md5sum <"$ds2/s-flat.vmdk")
	before=$(ls "$ds2" | sort | tr '\n' ' ')
	used=$(df --output=used "$ds2" | tail -1)
	out=$(ctl vmdk clone ds2 s.vmdk t.vmdk --full 2>&1)
	rc=$?
	echo "    $out"
	check "dsnfsctl exits 1" [ $rc = 1 ]
	check "  the reason is no space" bash -c "echo '$out' | grep -q 'No space left'"
	check "  the partial target is removed" bash -c "[ ! -e '$ds2/t.vmdk' ] && [ ! -e '$ds2/t-flat.vmdk' ]"
	check "  nothing else changed (files, source, usage)" bash -c \
		"[ \"\$(ls '$ds2' | sort | tr '\n' ' ')\" = '$before' ] && [ \"\$(md5sum <'$ds2/s-flat.vmdk')\" = '$sum' ] && [ \$(df --output=used '$ds2' | tail -1) = $used ]"
	code=$(acurl -s -o "$TEST_TMP/body" -w '%{http_code}' "$A/operations")
	check "  the operation is failed with status 507" bash -c \
		"grep -q '\"target\":\"t.vmdk\",\"state\":\"failed\"' '$TEST_TMP/body' && grep -q '\"status\":507' '$TEST_TMP/body'"
else
	echo "  skip: cannot mount a tmpfs (not root?)"
fi
check "server exits cleanly" dsnfsd_stop
test_done
