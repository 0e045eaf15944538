#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# --trace: one readable line per call with client, XID, procedure, the
# path behind the handle, offset / count, status and latency.
. "$(dirname "$0")/lib.sh"

dsnfsd_start --trace || exit 1
mkdir -p "$TEST_TMP/ds1/vm1"
head -c 100000 /dev/urandom >"$TEST_TMP/disk.bin"
nfs-cp "$TEST_TMP/disk.bin" "$(nfs_url ds1 vm1/disk-flat.vmdk)" >/dev/null
nfs-cat "$(nfs_url ds1 vm1/disk-flat.vmdk)" >/dev/null
python3 "$(dirname "$0")/rawrpc.py" "$NFS_PORT" wrong-proc >/dev/null
dsnfsd_stop
log="$TEST_TMP/dsnfsd.log"
grep 'trace:' "$log" | head -20
has() { grep -Eq "$1" "$log"; }
re_client='trace: 127\.0\.0\.1:[0-9]+ xid=0x[0-9a-f]+'
check "MNT traced with its path" has "$re_client mount MNT ds1 path=/ds1/vm1 -> status=OK"
check "CREATE names the new file" has "$re_client nfs CREATE ds1:/vm1/disk-flat.vmdk .*-> status=NFS3_OK"
check "WRITE shows path, offset, count, stability, status, latency" \
	has "$re_client nfs WRITE ds1:/vm1/disk-flat.vmdk off=0 count=[0-9]+ stable=[A-Z_]+ -> status=NFS3_OK count=[0-9]+ committed=[A-Z_]+ \([0-9]+\.[0-9]{3} ms\)"
check "READ shows eof" has "$re_client nfs READ ds1:/vm1/disk-flat.vmdk off=[0-9]+ count=[0-9]+ -> status=NFS3_OK count=[0-9]+ eof=1"
check "RPC-level errors are traced too" has "$re_client prog=100003 vers=3 proc=23 -> PROC_UNAVAIL"
test_done
