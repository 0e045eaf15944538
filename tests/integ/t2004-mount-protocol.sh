#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# MOUNT v3 over TCP and UDP: MNT (root handle, AUTH_SYS), MNT3ERR_NOENT,
# EXPORT, DUMP, UMNT, UMNTALL.  Then a restart with ds2 limited to
# 10.9.9.0/24: MNT /ds2 is MNT3ERR_ACCES, and ds2 handles taken before the
# restart get NFS3ERR_ACCES on NFS calls (clients are checked on every
# call, not only at MNT), while ds1 still works.
. "$(dirname "$0")/lib.sh"
wire() {
	python3 "$(dirname "$0")/t2004-mount-protocol.py" "$1" \
		"$NFS_PORT" "$MOUNT_PORT" "$TEST_TMP/handles.json"
}

dsnfsd_start || exit 1
echo "in ds2" >"$TEST_TMP/ds2/file2.txt"
echo "every datastore open to 127.0.0.1:"
check "MOUNT v3 over TCP and UDP" wire open
check "server stops cleanly" dsnfsd_stop

cat >"$TEST_TMP/restricted.conf" <<EOF
[datastore ds2]
clients = 10.9.9.0/24
EOF
dsnfsd_start -c "$TEST_TMP/restricted.conf" || exit 1
echo "ds2 limited to 10.9.9.0/24:"
check "127.0.0.1 refused on ds2, at MNT and on NFS calls" wire restricted
check "ds2's file untouched" grep -qx "in ds2" "$TEST_TMP/ds2/file2.txt"
check "server exits cleanly" dsnfsd_stop
test_done
