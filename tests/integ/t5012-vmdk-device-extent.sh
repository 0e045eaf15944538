#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The first exploit of issue 23 ("The trust boundary"), end to end: an NFS
# caller makes a block device node d-flat.vmdk (MKNOD as uid 0; the
# datastore has squash = none, so that this test does not depend on who
# may MKNOD a device), writes a monolithicFlat descriptor d.vmdk naming
# it, and asks the admin API for a full clone of d.vmdk.  Before the fix
# the server copied its own block device (a loop device holding a marker)
# into x-flat.vmdk, which the client then READ over NFS.  Now the clone is
# refused with "not a regular file" and nothing is made; a FIFO and a
# character device as the extent are refused the same way, and the API
# stays responsive.  Without loop devices the block device is /dev/zero's
# numbers as a character device (nothing to read back: the check is that
# nothing is made).
. "$(dirname "$0")/lib.sh"

marker="DSNFS-ISSUE23-MARKER-$$-$RANDOM"
loopdev=""
cleanup_loop() {
	[ -z "$loopdev" ] || losetup -d "$loopdev" 2>/dev/null
	test_cleanup
}
trap cleanup_loop EXIT

python3 -c '
import sys
b = bytearray(1 << 20)
m = sys.argv[2].encode()
for off in range(0, len(b), 4096):
    b[off:off + len(m)] = m
open(sys.argv[1], "wb").write(b)' "$TEST_TMP/secret.img" "$marker"
if loopdev=$(losetup -f --show "$TEST_TMP/secret.img" 2>/dev/null); then
	kind=blk
	major=$((0x$(stat -c %t "$loopdev")))
	minor=$((0x$(stat -c %T "$loopdev")))
	echo "device: $loopdev ($major:$minor) holding the marker"
else
	loopdev=""
	kind=chr
	major=1
	minor=5
	echo "device: no loop device here; /dev/zero's numbers (1:5)"
fi

cat >"$TEST_TMP/dev.conf" <<CONF
[datastore ds1]
squash = none
secure = false
clients = 127.0.0.1
CONF
dsnfsd_start -c "$TEST_TMP/dev.conf" || exit 1
ds1=$TEST_TMP/ds1

# MKNOD of the device and CREATE + WRITE of the descriptor, over NFS as
# uid 0.  Where MKNOD of a device is refused (a server that keeps it from
# every caller), the node is made on the server side instead: the check
# below is the clone's, not MKNOD's.
TESTDIR=$(dirname "$0") python3 - "$NFS_PORT" "$MOUNT_PORT" "$kind" "$major" "$minor" \
	"$TEST_TMP/mknod-refused" <<'PY' || exit 1
import os, sys
sys.dont_write_bytecode = True
sys.path.insert(0, os.environ["TESTDIR"])
from nfs3wire import *

nfs_port, mount_port, kind = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
major, minor = int(sys.argv[4]), int(sys.argv[5])
with MountClient(("127.0.0.1", mount_port)) as m:
    root = m.mnt("/ds1").fhandle
c = Nfs3Client(("127.0.0.1", nfs_port), cred=auth_sys(uid=0, gid=0))
r = c.mknod(root, "d-flat.vmdk", NF3BLK if kind == "blk" else NF3CHR,
            spec=(major, minor), mode=0o644)
print("  MKNOD d-flat.vmdk (%s %d:%d) as uid 0: %s"
      % (kind, major, minor, status_name(r.status)))
if r.status != NFS3_OK:
    open(sys.argv[6], "w").close()
desc = (b'# Disk DescriptorFile\nversion=1\nCID=fffffffe\n'
        b'parentCID=ffffffff\ncreateType="monolithicFlat"\n'
        b'RW 2048 FLAT "d-flat.vmdk" 0\n'
        b'ddb.adapterType = "lsilogic"\n')
r = c.create(root, "d.vmdk", mode=0o644)
assert r.status == NFS3_OK, status_name(r.status)
w = c.write(r.object, 0, desc, FILE_SYNC)
assert w.status == NFS3_OK, status_name(w.status)
c.close()
PY
if [ -e "$TEST_TMP/mknod-refused" ]; then
	mknod "$ds1/d-flat.vmdk" "${kind:0:1}" "$major" "$minor"
fi
check "the device node is in the datastore" test -"${kind:0:1}" "$ds1/d-flat.vmdk"

echo "full clone of a disk whose extent is a device"
code=$(post /volumes/ds1/clones '{"source":"d.vmdk","target":"x.vmdk","mode":"full"}')
check "refused at once (409: not a VMDK), not started" status_is "$code" 409
check "  the reason: not a regular file, naming the extent" body_has "not a regular file: d-flat.vmdk"
check "  the server's path is not in the reason" bash -c "! grep -q '$TEST_TMP' '$TEST_TMP/body'"
sleep 1
check "  nothing is made: no x.vmdk, no x-flat.vmdk" bash -c "[ ! -e '$ds1/x.vmdk' ] && [ ! -e '$ds1/x-flat.vmdk' ]"
check "  the marker is nowhere in the datastore" bash -c "! grep -rqs '$marker' '$ds1'"
for mode in linked native; do
	code=$(post /volumes/ds1/clones "{\"source\":\"d.vmdk\",\"target\":\"$mode.vmdk\",\"mode\":\"$mode\"}")
	check "a $mode clone of it is refused (409) too" status_is "$code" 409
	check "  nothing is made" bash -c "[ ! -e '$ds1/$mode.vmdk' ] && [ ! -e '$ds1/$mode-flat.vmdk' ]"
done

echo "a FIFO as the extent"
rm -f "$ds1/d-flat.vmdk"
mkfifo "$ds1/d-flat.vmdk"
code=$(post /volumes/ds1/clones '{"source":"d.vmdk","target":"y.vmdk","mode":"full"}')
check "refused (409) without blocking the API" status_is "$code" 409
check "  the reason names a FIFO" body_has "FIFO"
check "  the API still answers" bash -c "acurl -s -m 5 -o /dev/null -w '%{http_code}' http://127.0.0.1:$ADMIN_PORT/volumes | grep -q 200"
check "  nothing is made" bash -c "[ ! -e '$ds1/y.vmdk' ] && [ ! -e '$ds1/y-flat.vmdk' ]"

echo "a directory as the descriptor"
mkdir "$ds1/dir.vmdk"
code=$(post /volumes/ds1/clones '{"source":"dir.vmdk","target":"z.vmdk","mode":"full"}')
check "refused (409)" status_is "$code" 409
check "  the reason: not a regular file" body_has "not a regular file"

check "server exits cleanly" dsnfsd_stop
test_done
