#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# VMFS's zeroing on first write (zero_on_first_write): a WRITE through NFS
# into a thin disk's hole or a lazy-zeroed disk's unwritten block leaves the
# whole 1 MiB block written on the server (no hole left in it), reads back
# as data and zeros, and counts in dsnfs_volume_zeroed_blocks_total; a
# block already zeroed is not counted twice; a reload that turns the option
# off leaves the next first write to the file system alone.
. "$(dirname "$0")/lib.sh"
PY=$(dirname "$0")/t5011-vmfs-zeroing.py
conf=$TEST_TMP/zero.conf
mkdir -p "$TEST_TMP/ds3"
write_conf() {
	printf '[datastore ds3]\npath = %s\nzero_on_first_write = %s\n' "$TEST_TMP/ds3" "$1" >"$conf"
	lab_access >>"$conf"
}
MIB=1048576
# first_hole FILE OFF: SEEK_HOLE on the server's file.
first_hole() { python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); print(os.lseek(fd, int(sys.argv[2]), os.SEEK_HOLE))' "$TEST_TMP/ds3/$1" "$2"; }
zeroed() { acurl -s "http://127.0.0.1:$ADMIN_PORT/metrics" | awk '/^dsnfs_volume_zeroed_blocks_total\{volume="ds3"\}/ { print $2 }'; }

write_conf true
dsnfsd_start -c "$conf" || exit 1
truncate -s $((4 * MIB)) "$TEST_TMP/ds3/thin-flat.vmdk"
fallocate -l $((4 * MIB)) "$TEST_TMP/ds3/lazy-flat.vmdk"
check "the thin disk's block 1 is a hole" [ "$(first_hole thin-flat.vmdk $MIB)" = $MIB ]
check "a first write into the thin disk" python3 "$PY" "$NFS_PORT" "$MOUNT_PORT" thin-flat.vmdk $((MIB + 8192))
check "its whole block is written on the server" [ "$(first_hole thin-flat.vmdk $MIB)" = $((2 * MIB)) ]
check "block 2 is still a hole" [ "$(first_hole thin-flat.vmdk $((2 * MIB)))" = $((2 * MIB)) ]
check "a first write into the lazy-zeroed disk" python3 "$PY" "$NFS_PORT" "$MOUNT_PORT" lazy-flat.vmdk $((3 * MIB))
check "its unwritten block is written through" [ "$(first_hole lazy-flat.vmdk $((3 * MIB)))" = $((4 * MIB)) ]
check "two blocks zeroed (metrics)" [ "$(zeroed)" = 2 ]
check "a second write into a zeroed block" python3 "$PY" "$NFS_PORT" "$MOUNT_PORT" thin-flat.vmdk $((MIB + 65536)) $((MIB + 8192))
check "zeroes nothing more" [ "$(zeroed)" = 2 ]

write_conf false
kill -HUP "$DSNFSD_PID"
for _ in $(seq 1 50); do grep -q 'options changed' "$TEST_TMP/dsnfsd.log" && break; sleep 0.1; done
check "the reload changes the option" grep -q 'export: options changed: /ds3' "$TEST_TMP/dsnfsd.log"
check "a first write with the option off" python3 "$PY" "$NFS_PORT" "$MOUNT_PORT" thin-flat.vmdk $((2 * MIB))
check "leaves the rest of its block a hole" [ "$(first_hole thin-flat.vmdk $((2 * MIB)))" = $((2 * MIB + 4096)) ]
check "and counts nothing" [ "$(zeroed)" = 2 ]
check "server exits cleanly" dsnfsd_stop
test_done
