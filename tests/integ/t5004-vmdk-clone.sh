#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Full clones, conversions and inflation.  A full clone of a 10 GiB thin disk
# with 8 MiB written copies 8 MiB (sparse-aware: skipped bytes are reported)
# and qemu-img compare finds it identical; each provisioning type survives a
# clone; convert -t thin drops zeroed blocks (vmkfstools -i ... -d thin);
# inflate turns thin into eagerzeroedthick (nb = size / 1 MiB, tbz 0).
. "$(dirname "$0")/lib.sh"
D=$(realpath "$DSNFS_BIN")/dsvmdk
cd "$TEST_TMP" || exit 1

nbtbz() { "$D" info "$1" | sed -n 's/^  nb \([0-9]*\) tbz \([0-9]*\)$/nb \1 tbz \2/p' | head -1; }
prov() { "$D" info "$1" | sed -n 's/^  provisioning: //p' | head -1; }

check "create a 10 GiB thin disk" "$D" create -s 10G -t thin big.vmdk
check "qemu-io writes 8 MiB in four places" qemu-io -f vmdk -c 'write -P 1 0 2M' -c 'write -P 2 3G 2M' -c 'write -P 3 7G 2M' -c 'write -P 4 10238M 2M' big.vmdk
check "clone --full copies 8 MiB, skips the rest" bash -c "'$D' clone --full big.vmdk bigc.vmdk | grep -q 'copied 8388608 bytes.*skipped 10729029632 bytes'"
check "qemu-img compare: 10 GiB clone identical" qemu-img compare -q big.vmdk bigc.vmdk
check "the clone is thin with nb 8" [ "$(nbtbz bigc.vmdk)" = "nb 8 tbz 0" ]
check "qemu-img check: clone clean" qemu-img check -q bigc.vmdk
check "vmdkinfo agrees on the clone's size" bash -c "vmdkinfo bigc.vmdk | grep -q 'Media size:.*10737418240 bytes'"

check "create a 32 MiB zeroedthick disk" "$D" create -s 32M -t zeroedthick zt.vmdk
check "qemu-io writes 1 MiB" qemu-io -f vmdk -c 'write -P 5 4M 1M' zt.vmdk
check "clone --full keeps zeroedthick" "$D" clone --full zt.vmdk ztc.vmdk
check "zeroedthick clone: nb 32 tbz 31" [ "$(nbtbz ztc.vmdk)" = "nb 32 tbz 31" ]
check "qemu-img compare: zeroedthick clone identical" qemu-img compare -q zt.vmdk ztc.vmdk
check "clone --full -t sparse" "$D" clone --full -t sparse zt.vmdk zts.vmdk
check "qemu-img check: sparse clone clean" qemu-img check -q zts.vmdk
check "qemu-img compare: sparse clone identical" qemu-img compare -q zt.vmdk zts.vmdk
check "clone --full -t eagerzeroedthick" "$D" clone --full -t eagerzeroedthick zts.vmdk zte.vmdk
check "eagerzeroedthick clone: nb 32 tbz 0" [ "$(nbtbz zte.vmdk)" = "nb 32 tbz 0" ]
check "qemu-img compare: eagerzeroedthick clone identical" qemu-img compare -q zt.vmdk zte.vmdk

check "convert -t thin drops the zeroed blocks" bash -c "'$D' convert -t thin zte.vmdk ztt.vmdk | grep -q 'copied 1048576 bytes'"
check "converted disk is thin" [ "$(prov ztt.vmdk)" = thin ]
check "converted disk: nb 1 tbz 0" [ "$(nbtbz ztt.vmdk)" = "nb 1 tbz 0" ]
check "qemu-img compare: converted identical" qemu-img compare -q zte.vmdk ztt.vmdk
check "convert -t sparse" "$D" convert -t sparse zte.vmdk ztsp.vmdk
check "qemu-img check: converted sparse clean" qemu-img check -q ztsp.vmdk
check "converted sparse holds 16 grains" bash -c "'$D' check ztsp.vmdk | grep -q '16 grains allocated'"

check "inflate the thin disk" "$D" inflate ztt.vmdk
check "inflated: eagerzeroedthick" [ "$(prov ztt.vmdk)" = eagerzeroedthick ]
check "inflated: nb 32 tbz 0" [ "$(nbtbz ztt.vmdk)" = "nb 32 tbz 0" ]
check "inflated: no longer marked thin" bash -c "! grep -q thinProvisioned ztt.vmdk"
check "qemu-img compare: inflated identical" qemu-img compare -q zte.vmdk ztt.vmdk
check "inflating a sparse disk is refused" bash -c "'$D' inflate zts.vmdk 2>&1 | grep -q 'only flat disks inflate'"
check "cloning onto an existing disk is refused" bash -c "! '$D' clone --full zt.vmdk ztc.vmdk 2>/dev/null"
test_done
