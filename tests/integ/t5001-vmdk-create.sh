#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# dsvmdk create: thin, zeroedthick, eagerzeroedthick and sparse disks open in
# qemu-img and vmdkinfo with the right size and type, pass qemu-img check,
# and show VMware's allocation counters: thin nb 0 tbz 0, zeroedthick
# nb = tbz = size / 1 MiB, eagerzeroedthick tbz 0; first writes lower tbz.
. "$(dirname "$0")/lib.sh"
D=$(realpath "$DSNFS_BIN")/dsvmdk
cd "$TEST_TMP" || exit 1

nbtbz() { "$D" info "$1" | sed -n 's/^  nb \([0-9]*\) tbz \([0-9]*\)$/nb \1 tbz \2/p' | head -1; }
has() { "$@" | grep -q -- "$WANT"; }

for t in thin zeroedthick eagerzeroedthick sparse; do
	check "create -t $t 64M" "$D" create -s 64M -t $t $t.vmdk
	WANT="virtual size: 64 MiB (67108864 bytes)"
	check "qemu-img info: $t is a 64 MiB vmdk" has qemu-img info $t.vmdk
	check "qemu-img check: $t is clean" qemu-img check -q $t.vmdk
	WANT="Media size:.*67108864 bytes"
	check "vmdkinfo: $t is 64 MiB" has vmdkinfo $t.vmdk
done
WANT="Disk type:.*VMFS flat"
check "vmdkinfo: thin is VMFS flat" has vmdkinfo thin.vmdk
WANT="Disk type:.*Monolithic sparse"
check "vmdkinfo: sparse is monolithic sparse" has vmdkinfo sparse.vmdk
WANT='createType="vmfs"'
check "descriptor of thin says vmfs" grep -q "$WANT" thin.vmdk
WANT='RW 131072 VMFS "thin-flat.vmdk"'
check "thin extent names thin-flat.vmdk" grep -q "$WANT" thin.vmdk
check "thin is marked ddb.thinProvisioned" grep -q 'ddb.thinProvisioned = "1"' thin.vmdk

check "thin starts at nb 0 tbz 0" [ "$(nbtbz thin.vmdk)" = "nb 0 tbz 0" ]
check "zeroedthick starts at nb 64 tbz 64" [ "$(nbtbz zeroedthick.vmdk)" = "nb 64 tbz 64" ]
check "eagerzeroedthick starts at nb 64 tbz 0" [ "$(nbtbz eagerzeroedthick.vmdk)" = "nb 64 tbz 0" ]
WANT="provisioning: zeroedthick"
check "info names zeroedthick" has "$D" info zeroedthick.vmdk

check "qemu-io writes 3 MiB into zeroedthick" qemu-io -f vmdk -c 'write -P 0x11 1M 3M' zeroedthick.vmdk
check "zeroedthick is now nb 64 tbz 61" [ "$(nbtbz zeroedthick.vmdk)" = "nb 64 tbz 61" ]
check "qemu-io writes 2 MiB into thin" qemu-io -f vmdk -c 'write -P 0x22 10M 2M' thin.vmdk
check "thin grew to nb 2 tbz 0" [ "$(nbtbz thin.vmdk)" = "nb 2 tbz 0" ]
check "dsvmdk reads qemu's pattern" bash -c "'$D' cat -o 10M -l 2M thin.vmdk | cmp - <(head -c 2M /dev/zero | tr '\0' '\042')"

head -c 100000 /dev/urandom >w.bin
check "dsvmdk writes into sparse" "$D" write -o 12345 sparse.vmdk <w.bin
check "qemu-img check: sparse still clean" qemu-img check -q sparse.vmdk
check "qemu reads dsvmdk's bytes" bash -c "qemu-img convert -O raw sparse.vmdk s.raw && cmp <(dd if=s.raw bs=1 skip=12345 count=100000 status=none) w.bin"

check "create -t thin 10G is instant and sparse" "$D" create -s 10G -t thin big.vmdk
check "10 GiB thin allocates nothing" [ "$(stat -c %b big-flat.vmdk)" = 0 ]
WANT="virtual size: 10 GiB"
check "qemu-img info: 10 GiB" has qemu-img info big.vmdk
check "create -t sparse 10G" "$D" create -s 10G -t sparse bigs.vmdk
check "qemu-img check: 10 GiB sparse clean" qemu-img check -q bigs.vmdk
check "an existing disk is not overwritten" bash -c "! '$D' create -s 1M -t thin thin.vmdk 2>/dev/null"
WANT="exists"
check "...and says so" has bash -c "'$D' create -s 1M -t thin thin.vmdk 2>&1"
check "a bad type is a usage error (exit 2)" bash -c "'$D' create -s 1M -t thick x.vmdk 2>/dev/null; [ \$? = 2 ]"
test_done
