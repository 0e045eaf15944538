#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Disks written by QEMU open and read identically in dsvmdk: qemu-img create
# -f vmdk, and qemu-img convert -O vmdk with each subformat (monolithicSparse,
# monolithicFlat, twoGbMaxExtentSparse, twoGbMaxExtentFlat, zeroed grains),
# and a QEMU delta over a parent.  dsvmdk then writes into them, and QEMU
# finds them clean and reads dsvmdk's bytes.  streamOptimized (compressed
# grains) reads identically too, and refuses writes.
. "$(dirname "$0")/lib.sh"
D=$(realpath "$DSNFS_BIN")/dsvmdk
cd "$TEST_TMP" || exit 1

# A 64 MiB raw disk: random data at 0, 20 MiB and 63 MiB, zeros elsewhere.
truncate -s 64M src.raw
for at in 0 20 63; do
	dd if=/dev/urandom of=src.raw bs=1M seek=$at count=1 conv=notrunc status=none
done
head -c 200000 /dev/urandom >w.bin

# dsvmdk writes w.bin at an unaligned offset; expect.raw mirrors it.
write_both() {
	cp --sparse=always src.raw expect.raw
	dd if=w.bin of=expect.raw bs=1 seek=$2 conv=notrunc status=none
	"$D" write -o "$2" "$1" <w.bin >/dev/null
}

# On a failed read, the descriptor as dsvmdk found it: CI saw "binary data
# where a descriptor should be" twice for a file QEMU had just written,
# and no rerun here repeats it.
desc_dump() {
	echo "  $1: $(stat -c '%s bytes, modified %y' "$1")"
	od -A d -c "$1" | grep -vE '^[0-9]+( +\\0){16}$' | head -40
}
same_or_dump() {
	local vmdk=$1
	shift
	"$@" && return 0
	desc_dump "$vmdk"
	return 1
}

check "qemu-img create -f vmdk 64M" qemu-img create -q -f vmdk created.vmdk 64M
check "qemu-io writes three patterns" qemu-io -f vmdk -c 'write -P 0x61 0 1M' -c 'write -P 0x62 20M 1M' -c 'write -P 0x63 63M 1M' created.vmdk
check "dsvmdk cat = qemu-img convert (qemu-img create)" bash -c "'$D' cat created.vmdk | cmp - <(qemu-img convert -O raw created.vmdk c.raw && cat c.raw)"

for sub in monolithicSparse monolithicFlat twoGbMaxExtentSparse twoGbMaxExtentFlat; do
	check "qemu-img convert -o subformat=$sub" qemu-img convert -f raw -O vmdk -o subformat=$sub src.raw $sub.vmdk
	check "dsvmdk reads $sub identically" same_or_dump $sub.vmdk bash -c "'$D' cat $sub.vmdk | cmp - src.raw"
	check "dsvmdk check: $sub clean" "$D" check $sub.vmdk
	write_both $sub.vmdk 12345678
	check "qemu-img check after dsvmdk writes: $sub" qemu-img check -q $sub.vmdk
	check "QEMU reads dsvmdk's writes: $sub" qemu-img compare -q -f vmdk -F raw $sub.vmdk expect.raw
done

check "qemu-img convert -o zeroed_grain=on" qemu-img convert -f raw -O vmdk -o zeroed_grain=on src.raw zg.vmdk
check "dsvmdk reads zeroed grains identically" bash -c "'$D' cat zg.vmdk | cmp - src.raw"
write_both zg.vmdk 40000000
check "QEMU reads dsvmdk's writes: zeroed grains" qemu-img compare -q -f vmdk -F raw zg.vmdk expect.raw

# Two extents: a 2.5 GiB disk in 2 GiB pieces, read across the boundary.
truncate -s 2560M big.raw
dd if=/dev/urandom of=big.raw bs=1M seek=2047 count=2 conv=notrunc status=none
for sub in twoGbMaxExtentSparse twoGbMaxExtentFlat; do
	check "qemu-img convert 2.5 GiB to $sub" qemu-img convert -f raw -O vmdk -o subformat=$sub big.raw big-$sub.vmdk
	check "$sub has two extents" [ "$(grep -c '^RW ' big-$sub.vmdk)" = 2 ]
	check "dsvmdk reads across the extent boundary: $sub" same_or_dump big-$sub.vmdk bash -c "'$D' cat -o 2046M -l 4M big-$sub.vmdk | cmp - <(dd if=big.raw bs=1M skip=2046 count=4 status=none)"
done

check "qemu-img create a delta (-b)" qemu-img create -q -f vmdk -b monolithicSparse.vmdk -F vmdk qdelta.vmdk
check "qemu-io writes into the delta" qemu-io -f vmdk -c 'write -P 0x5a 1000 70000' qdelta.vmdk
check "dsvmdk reads QEMU's delta through its parent" bash -c "'$D' cat qdelta.vmdk | cmp - <(qemu-img convert -O raw qdelta.vmdk d.raw && cat d.raw)"
check "dsvmdk check: QEMU's chain clean" "$D" check qdelta.vmdk

check "qemu-img convert -o subformat=streamOptimized" qemu-img convert -f raw -O vmdk -o subformat=streamOptimized src.raw so.vmdk
check "dsvmdk reads streamOptimized (compressed grains) identically" bash -c "'$D' cat so.vmdk | cmp - src.raw"
check "dsvmdk check: streamOptimized clean" "$D" check so.vmdk
check "streamOptimized is read-only, and says so" bash -c "printf x | '$D' write so.vmdk 2>&1 | grep -q 'Read-only file system'"
check "a full clone of it is an ordinary disk" "$D" clone --full -t thin so.vmdk so-thin.vmdk
check "qemu-img compare: clone of streamOptimized identical" qemu-img compare -q so.vmdk so-thin.vmdk
test_done
