#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ESXi seSparse snapshot deltas, read-only: a bare seSparse file and a
# seSparse delta in the ESXi snapshot layout (disk-000001.vmdk +
# disk-000001-sesparse.vmdk over a flat disk) read identically in dsvmdk and
# QEMU (whose block/vmdk.c is the only public reader of the format), zero
# and unmapped grains read as zeros rather than the parent's data, writes
# are refused, the delta consolidates into its parent, and every malformed
# field is named.  The files are built by mksesparse.py, since no tool here
# writes one.
. "$(dirname "$0")/lib.sh"
D=$(realpath "$DSNFS_BIN")/dsvmdk
MK="python3 $(realpath "$(dirname "$0")")/mksesparse.py"
cd "$TEST_TMP" || exit 1

# 64 MiB = 16384 grains of 4 KiB in 4 tables.  Guest grain 3 sits in slot
# 4097 (both halves of the split index are nonzero), grain 5000 in the
# second table, the last grain in the last table.
CAP=131072
ENTRIES="3:alloc:X:4097 5000:alloc:Y:0 16383:alloc:Z:1 7:zero 8:unmapped"

$MK bare.vmdk $CAP $ENTRIES
# QEMU reads seSparse only through a descriptor's SESPARSE extent (a bare
# file probes as raw), so the bare file is checked against the bytes it was
# built with.
truncate -s 64M bare.raw
for g in 3:X 5000:Y 16383:Z; do
	head -c 4096 /dev/zero | tr '\0' "${g#*:}" |
		dd of=bare.raw bs=4096 seek="${g%:*}" conv=notrunc status=none
done
check "dsvmdk cat of the bare seSparse file = its grains" bash -c "'$D' cat bare.vmdk | cmp - bare.raw"
check "grain 3 is X, from slot 4097" bash -c "'$D' cat -o 12288 -l 4096 bare.vmdk | cmp - <(head -c 4096 /dev/zero | tr '\\0' X)"
check "dsvmdk info: seSparse" bash -c "'$D' info bare.vmdk | grep -q 'provisioning: seSparse'"
check "dsvmdk info: 4 KiB grains" bash -c "'$D' info bare.vmdk | grep -q 'SESPARSE'"
check "dsvmdk check counts 3 grains" bash -c "'$D' check bare.vmdk | grep -q '3 grains allocated'"

check "a 64 MiB flat parent" "$D" create -s 64M -t zeroedthick disk.vmdk
check "qemu-io fills the parent" qemu-io -f vmdk -c 'write -P 0x50 0 64M' disk.vmdk
$MK disk-000001-sesparse.vmdk $CAP $ENTRIES
cid=$(sed -n 's/^CID=//p' disk.vmdk)
cat >disk-000001.vmdk <<EOD
# Disk DescriptorFile
version=1
encoding="UTF-8"
CID=0000abcd
parentCID=$cid
createType="seSparse"
parentFileNameHint="disk.vmdk"
# Extent description
RW $CAP SESPARSE "disk-000001-sesparse.vmdk"

# The Disk Data Base
#DDB

ddb.longContentID = "0123456789abcdef0123456789abcdef"
EOD
P4K="head -c 4096 /dev/zero | tr '\\0' P"
Z4K="head -c 4096 /dev/zero"
check "QEMU opens the ESXi snapshot" bash -c "qemu-img info disk-000001.vmdk >/dev/null"
check "dsvmdk cat = qemu-img convert (seSparse over flat)" bash -c "'$D' cat disk-000001.vmdk | cmp - <(qemu-img convert -O raw disk-000001.vmdk snap.raw && cat snap.raw)"
check "grain 2 from the parent, 3 from the delta" bash -c "'$D' cat -o 8192 -l 8192 disk-000001.vmdk | cmp - <($P4K; head -c 4096 /dev/zero | tr '\\0' X)"
check "zero and unmapped grains hide the parent" bash -c "'$D' cat -o 28672 -l 8192 disk-000001.vmdk | cmp - <($Z4K; $Z4K)"
check "dsvmdk info: chain of 2" bash -c "'$D' info disk-000001.vmdk | grep -q '^chain: 2 disks'"
check "writes to a seSparse delta are refused" bash -c "printf a | '$D' write disk-000001.vmdk 2>&1 | grep -q 'Read-only file system'"
check "consolidate the seSparse delta into the flat parent" "$D" consolidate disk-000001.vmdk
check "the delta's files are gone" bash -c "! ls disk-000001.vmdk disk-000001-sesparse.vmdk 2>/dev/null"
check "qemu-img compare: parent = old snapshot" qemu-img compare -q -F raw disk.vmdk snap.raw
check "qemu-img check: parent clean" qemu-img check -q disk.vmdk

# Malformed files: each error names the file and the field.
$MK badver.vmdk $CAP 3:alloc:X --version 0x0000000300000001
check "another version is refused by name" bash -c "'$D' info badver.vmdk 2>&1 | grep -q 'badver.vmdk: version 0x0000000300000001 is not 2.1'"
$MK replay.vmdk $CAP 3:alloc:X --replay
check "a journal to replay is refused" bash -c "'$D' info replay.vmdk 2>&1 | grep -q 'replay.vmdk: its journal must be replayed first'"
$MK badgde.vmdk $CAP 3:alloc:X --gde-high 0x20000000
check "a bad directory entry is named" bash -c "'$D' info badgde.vmdk 2>&1 | grep -q 'badgde.vmdk: grain directory entry 0 names no grain table'"
$MK badgte.vmdk $CAP 3:alloc:X 4:bad
check "dsvmdk check names a bad grain entry" bash -c "'$D' check badgte.vmdk 2>&1 | grep -q 'grain table 0 entry 4: not a valid grain entry'"
check "dsvmdk check exits nonzero on it" bash -c "! '$D' check badgte.vmdk >/dev/null 2>&1"
check "reading the bad grain fails, not zeros" bash -c "! '$D' cat -o 16384 -l 4096 badgte.vmdk >/dev/null 2>&1"
$MK small.vmdk $CAP 3:alloc:X
printf '\x00\x00\x00\x00\x00\x00\x00\x00' | dd of=small.vmdk bs=1 seek=$((17 * 8)) conv=notrunc status=none
check "a grain directory of 0 sectors is named" bash -c "'$D' info small.vmdk 2>&1 | grep -q 'small.vmdk: grain directory of 0 sectors holds 0 entries'"
test_done
