#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# qemu-img makes a VMDK over NFS, writes into it, and finds it consistent.
. "$(dirname "$0")/netns.sh"
. "$(dirname "$0")/lib.sh"

dsnfsd_start -P 111 || exit 1
url="nfs://127.0.0.1/ds1/vm1.vmdk"
check "qemu-img create -f vmdk 2G" qemu-img create -q -f vmdk "$url" 2G
check "qemu-io writes into the VMDK" bash -c "qemu-io -f vmdk -c 'write -P 0x5a 1M 1M' '$url' | grep -q 'wrote 1048576'"
check "qemu-io reads it back" bash -c "qemu-io -f vmdk -c 'read -P 0x5a 1M 1M' '$url' | grep -q 'read 1048576'"
check "qemu-img check is clean" qemu-img check -f vmdk "$url"
check "qemu-img info sees a 2 GiB vmdk" bash -c "qemu-img info '$url' | grep -q 'virtual size: 2 GiB'"
check "server exits cleanly" dsnfsd_stop
test_done
