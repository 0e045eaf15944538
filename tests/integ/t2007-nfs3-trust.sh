#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 23, the NFS, MOUNT and portmapper walls, with dsnfsd's own
# defaults (-e NAME=DIR and nothing else; not the lab's access of
# lib.sh): secure, root_squash and loopback-only clients, each refusal
# logged with its rule; device MKNOD only for root; MNT and LOOKUP honour
# snapshot_dir = false; nothing under .snapshot changes; portmapper SET
# and UNSET only from a privileged port; nested datastores refused at
# start and at SIGHUP.  Runs in a network namespace of its own (netns.sh),
# where lo also holds 192.0.2.1: a client that is not loopback.
. "$(dirname "$0")/netns.sh"
. "$(dirname "$0")/lib.sh"
wire() { python3 "$(dirname "$0")/t2007-nfs3-trust.py" "$@"; }
logs() { grep -q -- "$1" "$TEST_TMP/dsnfsd.log" || {
	echo "    not in the log: $1"
	return 1
}; }
export DSNFSD_DEFAULTS=1

mkdir -p "$TEST_TMP/ds1/pub"
chown root:root "$TEST_TMP/ds1"
chmod 0755 "$TEST_TMP/ds1"
chmod 1777 "$TEST_TMP/ds1/pub"
listen=()
if [ -n "${DSNFS_NETNS:-}" ]; then
	ip addr add 192.0.2.1/32 dev lo || exit 1
	# Every address of this namespace: loopback ones and 192.0.2.1.
	listen=(-l 0.0.0.0)
fi
dsnfsd_start -P 0 "${listen[@]}" || exit 1
echo "defaults: secure, root_squash, loopback only:"
check "secure, root_squash and device MKNOD on the wire" \
	wire defaults 127.0.0.1 "$NFS_PORT" "$MOUNT_PORT" "$TEST_TMP/ds1"
check "the MNT refusal says the rule and how to allow it" \
	logs "MNT /ds1 refused: source port [0-9]* is not privileged (secure = true); to allow it, use a port below 1024 (a client run as root) or set secure = false in \[datastore ds1\]"
check "the exports say who may use them" \
	logs "export: exporting /ds1 -> .* (fsid [0-9]*; loopback only, squash root, secure)"
if [ -n "${DSNFS_NETNS:-}" ]; then
	check "a client that is not loopback is refused" \
		wire nonlocal 192.0.2.1 "$NFS_PORT" "$MOUNT_PORT" 192.0.2.1
	check "... and the log says why and how to allow it" \
		logs "192.0.2.1 is not loopback (no clients given: loopback only); to allow it, list it in clients in \[datastore ds1\]"
else
	echo "  skip non-loopback client: no network namespace here"
fi
echo "portmapper SET and UNSET:"
check "only from a privileged port" \
	wire portmap 127.0.0.1 "$PORTMAP_PORT" "$NFS_PORT"
check "... the refusal is logged" \
	logs "portmap: 127.0.0.1:[0-9]*: UNSET of program 100003 version 3 refused: source port not privileged"
check "server stops cleanly" dsnfsd_stop

echo "snapshot_dir:"
mkdir -p "$TEST_TMP/ds1/.snapshot/s1"
echo "snapshot data" >"$TEST_TMP/ds1/.snapshot/s1/disk.vmdk"
chmod -R a+rwX "$TEST_TMP/ds1/.snapshot"
printf '[datastore ds1]\nsnapshot_dir = false\n' >"$TEST_TMP/snapoff.conf"
dsnfsd_start -c "$TEST_TMP/snapoff.conf" || exit 1
check "off: MNT and LOOKUP of .snapshot answer NOENT" \
	wire snapdir 127.0.0.1 "$NFS_PORT" "$MOUNT_PORT" off
check "server stops cleanly" dsnfsd_stop
dsnfsd_start || exit 1
check "on: it answers, and every change under it is ROFS" \
	wire snapdir 127.0.0.1 "$NFS_PORT" "$MOUNT_PORT" on
check "... the snapshot's file is untouched" \
	grep -qx "snapshot data" "$TEST_TMP/ds1/.snapshot/s1/disk.vmdk"
check "server stops cleanly" dsnfsd_stop

echo "nested datastores:"
out=$(timeout 10 "$DSNFS_BIN/dsnfsd" -f -l 127.0.0.1 -p 0 -m 0 -P off \
	-A off -s "$TEST_TMP/state" -e ds1="$TEST_TMP/ds1" \
	-e inner="$TEST_TMP/ds1/pub/." 2>&1)
rc=$?
check "dsnfsd refuses to start (rc=$rc)" test "$rc" -eq 1
check "... naming both: $out" grep -q \
	"datastores inner ($TEST_TMP/ds1/pub) and ds1 ($TEST_TMP/ds1): one lies inside the other" <<<"$out"
printf '[datastore ds1]\nsnapshot_dir = true\n' >"$TEST_TMP/nest.conf"
dsnfsd_start -c "$TEST_TMP/nest.conf" || exit 1
printf '[datastore inner]\npath = %s\n' "$TEST_TMP/ds1/pub" >>"$TEST_TMP/nest.conf"
kill -HUP "$DSNFSD_PID"
for _ in $(seq 1 50); do
	grep -q "SIGHUP: .*running config stays" "$TEST_TMP/dsnfsd.log" && break
	sleep 0.1
done
check "a SIGHUP that nests one refuses the reload, naming both" \
	logs "SIGHUP: datastores inner ($TEST_TMP/ds1/pub) and ds1 ($TEST_TMP/ds1): one lies inside the other; give each datastore a directory of its own; the running config stays"
check "... and /ds1 still mounts" \
	wire snapdir 127.0.0.1 "$NFS_PORT" "$MOUNT_PORT" on
check "server stops cleanly" dsnfsd_stop
test_done
