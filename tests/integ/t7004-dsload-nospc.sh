#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A full datastore: ds1 is a 4 MiB tmpfs and each VMDK is 16 MiB, thin.
# Writing them fills it; every VMDK whose write gets NFS3ERR_NOSPC is
# named with it, its generator stops (ESXi would pause the VM), the other
# datastore's VMDK runs on, and dsload exits 1.  Needs root for mount.
. "$(dirname "$0")/lib.sh"

mkdir -p "$TEST_TMP/ds1"
if ! mount -t tmpfs -o size=4m tmpfs "$TEST_TMP/ds1" 2>/dev/null; then
	echo "  skip: cannot mount a tmpfs (not root?)"
	exit 0
fi
trap 'umount "$TEST_TMP/ds1" 2>/dev/null; test_cleanup' EXIT
dsnfsd_start || exit 1
"$DSNFS_BIN/dsload" --nfs-port "$NFS_PORT" --mount-port "$MOUNT_PORT" \
	-D ds1,ds2 --vms 2 --placement per-vm --vmdk-size 16m --bs 64k \
	--read-pct 0 --random-pct 0 --one-pass --iodepth 4 --quiet --jobs \
	--json "$TEST_TMP/nospc.json" >"$TEST_TMP/nospc.out" 2>"$TEST_TMP/nospc.err"
rc=$?
grep -E 'STOPPED|NOSPC|^job|dsload:' "$TEST_TMP/nospc.out"
cat "$TEST_TMP/nospc.err"
check "dsload exits 1" [ $rc -eq 1 ]
check "the VMDK on ds1 is stopped with NOSPC" grep -qE \
	'STOPPED vm0-disk0@ds1: WRITE at [0-9]+: NFS3ERR_NOSPC' "$TEST_TMP/nospc.out"
check "the VMDK on ds2 is not stopped" bash -c \
	"! grep -q 'STOPPED vm1-disk0@ds2' '$TEST_TMP/nospc.out'"
check "ds2's VMDK wrote all of its 16 MiB" python3 -c "
import json, sys
p = json.load(open('$TEST_TMP/nospc.json'))['phases'][0]
j = {r['name']: r for r in p['rows'] if r['level'] == 'job'}
ok = j['vm1-disk0@ds2']['write']['bytes'] == 16 << 20 and j['vm1-disk0@ds2']['stopped'] is None
ok = ok and j['vm0-disk0@ds1']['nospc'] >= 1 and 'NOSPC' in j['vm0-disk0@ds1']['stopped']
sys.exit(not ok)"
check "server exits cleanly" dsnfsd_stop
test_done
