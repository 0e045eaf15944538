#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Delta chains: a linked clone and snapshots of a flat (ESXi layout) disk.
# qemu-img finds each delta clean with the right backing chain, qemu-img
# compare finds a clone identical to its source read through its chain,
# writes copy-on-write (the parent keeps its bytes), consolidate merges a
# delta back, and a changed parent or a missing one gives a clear error.
. "$(dirname "$0")/lib.sh"
D=$(realpath "$DSNFS_BIN")/dsvmdk
cd "$TEST_TMP" || exit 1

check "create a 256 MiB thin base" "$D" create -s 256M -t thin base.vmdk
check "qemu-io fills 4 MiB of it" qemu-io -f vmdk -c 'write -P 0x42 8M 4M' base.vmdk
cp --sparse=always base-flat.vmdk base-orig.raw

check "clone --linked base -> lc" "$D" clone --linked base.vmdk lc.vmdk
check "the parent is now read-only (mode a-w)" bash -c "[ \"\$(stat -c %A base.vmdk)\" = '-r--r--r--' ]"
check "the delta is small (tables are holes)" [ "$(stat -c %b lc.vmdk)" -lt 256 ]
check "qemu-img check: linked clone clean" qemu-img check -q lc.vmdk
check "qemu-img info: backing file is base.vmdk" bash -c "qemu-img info lc.vmdk | grep -q '^backing file: base.vmdk'"
check "qemu-img compare: clone = source" qemu-img compare -q base.vmdk lc.vmdk
# qemu-io rewrote base.vmdk's CID unpadded ("%x"); vmdkinfo prints "%08x".
check "vmdkinfo reads the delta's parent CID" bash -c "vmdkinfo lc.vmdk | grep -q 'Parent content identifier:.*$(printf '0x%08x' "0x$(sed -n 's/^CID=//p' base.vmdk)")'"

check "dsvmdk writes 5 bytes into the clone" bash -c "printf hello | '$D' write -o 9M lc.vmdk"
check "qemu-img check after copy-on-write" qemu-img check -q lc.vmdk
check "the clone reads hello + the rest of the grain from the parent" bash -c "qemu-io -r -f vmdk -c 'read -v 9M 8' lc.vmdk | grep -q '68 65 6c 6c 6f 42 42 42'"
check "the parent's file is unchanged" cmp base-flat.vmdk base-orig.raw
check "qemu-img compare now sees a difference" bash -c "! qemu-img compare -q base.vmdk lc.vmdk"
check "qemu-io writes through the chain" qemu-io -f vmdk -c 'write -P 0x77 100M 100k' lc.vmdk
check "dsvmdk reads QEMU's write in the delta" bash -c "'$D' cat -o 100M -l 100k lc.vmdk | cmp - <(head -c 100k /dev/zero | tr '\0' '\167')"
check "dsvmdk cat = qemu-img convert for the chain" bash -c "'$D' cat lc.vmdk | cmp - <(qemu-img convert -O raw lc.vmdk lc.raw && cat lc.raw)"

check "snapshot lc" "$D" snapshot lc.vmdk
check "the snapshot is lc-000001.vmdk" [ -f lc-000001.vmdk ]
check "snapshot of the snapshot is lc-000002.vmdk" bash -c "'$D' snapshot lc-000001.vmdk | grep -q 'lc-000002.vmdk'"
check "qemu-img info --backing-chain: 4 disks" bash -c "[ \$(qemu-img info --backing-chain lc-000002.vmdk | grep -c '^image:') = 4 ]"
check "dsvmdk info: chain of 4" bash -c "'$D' info lc-000002.vmdk | grep -q '^chain: 4 disks'"
check "write into the top snapshot" qemu-io -f vmdk -c 'write -P 0x99 200M 64k' lc-000002.vmdk
check "qemu-img check: top clean" qemu-img check -q lc-000002.vmdk
check "dsvmdk check: chain clean" "$D" check lc-000002.vmdk
qemu-img convert -O raw lc-000002.vmdk top.raw
check "consolidate lc-000002 into lc-000001" "$D" consolidate lc-000002.vmdk
check "the delta is gone" [ ! -e lc-000002.vmdk ]
check "its parent is writable again" [ -w lc-000001.vmdk ] 
check "qemu-img compare: merged disk = old top" qemu-img compare -q -F raw lc-000001.vmdk top.raw
check "qemu-img check: merged disk clean" qemu-img check -q lc-000001.vmdk

check "a full clone of the chain" "$D" clone --full lc-000001.vmdk full.vmdk
check "qemu-img compare: full clone = chain" qemu-img compare -q lc-000001.vmdk full.vmdk
check "the full clone stands alone" bash -c "! grep -q parentFileNameHint full.vmdk"

chmod u+w base.vmdk
check "a forced write to the parent" bash -c "printf x | '$D' write base.vmdk >/dev/null"
check "...breaks its child with a CID error" bash -c "'$D' info lc.vmdk 2>&1 | grep -q 'lc.vmdk: parentCID .* does not match CID .* of parent base.vmdk'"
mv full.vmdk moved.vmdk
check "clone linked of a moved disk" "$D" clone --linked moved.vmdk orphan.vmdk
mv moved.vmdk gone.vmdk
check "a missing parent is named" bash -c "'$D' cat orphan.vmdk 2>&1 >/dev/null | grep -q 'orphan.vmdk: moved.vmdk: No such file'"
test_done
