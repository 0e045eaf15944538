#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A one-node Ceph cluster for the tests: one mon, one mgr, one OSD
# (bluestore on a sparse file, never memstore: memstore keeps the whole
# size of a truncated object in RAM) and one MDS on 127.0.0.1, with a
# CephFS named "cephfs".  Everything lives in DIR (ceph.conf, data, logs,
# the PIDs it started).
#
#   tests/ceph/cluster.sh start DIR   start, wait for HEALTH_OK, print
#                                     "ceph: up in Ns: DIR/ceph.conf"
#   tests/ceph/cluster.sh stop DIR    stop exactly the PIDs start wrote
#   tests/ceph/cluster.sh kill DIR    SIGKILL them all at once (a lost
#                                     cluster)
#   tests/ceph/cluster.sh revive DIR  start the daemons of a cluster that
#                                     start made and kill stopped again,
#                                     from their data; wait until the file
#                                     system is active and its PGs clean
#
# Authentication is off (auth_*_required = none): the cluster listens on
# loopback only.  CEPH_MON_PORT picks the mon's port (default: a free one).
set -u
cmd=${1:-}
dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then
	echo "usage: $0 start|stop|kill|revive DIR" >&2
	exit 2
fi

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Stops the PIDs in DIR/pids with @sig, waiting up to 5 s for each (the
# mgr's python modules can take 10 s and more; nothing of a test cluster
# needs a clean stop), then SIGKILL.  Only those PIDs: never a daemon of
# anybody else.
stop_pids() {
	local sig=$1 pid i
	[ -f "$dir/pids" ] || return 0
	# SIGKILL is a lost cluster: every daemon at the same moment.
	if [ "$sig" = KILL ]; then
		kill -KILL $(cat "$dir/pids") 2>/dev/null
	fi
	# Reverse order: MDS and OSD before the mon they report to.
	for pid in $(tac "$dir/pids"); do
		kill -"$sig" "$pid" 2>/dev/null || continue
		for i in $(seq 1 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null
	done
	rm -f "$dir/pids"
}

# Starts @@ in the foreground (-f) as a background job and records its PID.
spawn() {
	local name=$1
	shift
	"$@" -f >"$dir/log/$name.out" 2>&1 &
	echo $! >>"$dir/pids"
}

c() {
	timeout 60 ceph -c "$dir/ceph.conf" "$@"
}

start() {
	local t0=$SECONDS port fsid osd_uuid osd_id i
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	if [ -f "$dir/pids" ]; then
		echo "ceph: $dir: a cluster is running there (pids)" >&2
		return 1
	fi
	rm -rf "$dir/mon" "$dir/osd" "$dir/mds" "$dir/mgr" "$dir/run" "$dir/log"
	mkdir -p "$dir/mon" "$dir/osd/ceph-0" "$dir/mds/ceph-a" "$dir/mgr/ceph-x" \
		"$dir/run" "$dir/log"
	port=${CEPH_MON_PORT:-$(free_port)}
	fsid=$(cat /proc/sys/kernel/random/uuid)
	cat >"$dir/ceph.conf" <<CONF
[global]
fsid = $fsid
mon host = [v2:127.0.0.1:$port]
public addr = 127.0.0.1
auth cluster required = none
auth service required = none
auth client required = none
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
osd crush chooseleaf type = 0
mon warn on pool no redundancy = false
auth allow insecure global id reclaim = false
mon warn on insecure global id reclaim allowed = false
osd pool default pg autoscale mode = off
mon allow pool delete = true
mgr stats period = 1
mon mgr digest period = 1
run dir = $dir/run
admin socket = $dir/run/\$name.asok
log file = $dir/log/\$name.log
keyring = $dir/keyring
mon data = $dir/mon/\$cluster-\$id
osd data = $dir/osd/\$cluster-\$id
mds data = $dir/mds/\$cluster-\$id
mgr data = $dir/mgr/\$cluster-\$id
crash dir = $dir/run
mon data avail warn = 1
mon data avail crit = 0
osd objectstore = bluestore
bluestore block create = true
bluestore block size = 8589934592
bluestore fsck on mkfs = false
bluestore fsck on mount = false
osd memory target = 536870912
bluestore cache autotune = false
bluestore cache size = 134217728
osd op num shards = 1
osd op num threads per shard = 2
mds cache memory limit = 134217728
osd heartbeat grace = 5
mon osd report timeout = 30
client mount timeout = 10
rados mon op timeout = 10
CONF
	ceph-authtool --create-keyring "$dir/keyring" --gen-key -n mon. \
		--cap mon 'allow *' >/dev/null || return 1
	ceph-authtool "$dir/keyring" --gen-key -n client.admin \
		--cap mon 'allow *' --cap osd 'allow *' --cap mds 'allow *' \
		--cap mgr 'allow *' >/dev/null || return 1
	monmaptool --create --clobber --addv a "[v2:127.0.0.1:$port]" --fsid "$fsid" \
		"$dir/monmap" >/dev/null || return 1
	ceph-mon -c "$dir/ceph.conf" --mkfs -i a --monmap "$dir/monmap" \
		--keyring "$dir/keyring" >"$dir/log/mon-mkfs.out" 2>&1 || {
		cat "$dir/log/mon-mkfs.out" >&2
		return 1
	}
	spawn mon.a ceph-mon -c "$dir/ceph.conf" -i a
	spawn mgr.x ceph-mgr -c "$dir/ceph.conf" -i x
	osd_uuid=$(cat /proc/sys/kernel/random/uuid)
	osd_id=$(c osd new "$osd_uuid") || {
		echo "ceph: $dir: the mon does not answer" >&2
		return 1
	}
	ceph-osd -c "$dir/ceph.conf" -i "$osd_id" --mkfs --osd-uuid "$osd_uuid" \
		>"$dir/log/osd-mkfs.out" 2>&1 || {
		cat "$dir/log/osd-mkfs.out" >&2
		return 1
	}
	spawn "osd.$osd_id" ceph-osd -c "$dir/ceph.conf" -i "$osd_id"
	spawn mds.a ceph-mds -c "$dir/ceph.conf" -i a
	c osd pool create cephfs_metadata 8 >/dev/null 2>&1 || return 1
	c osd pool create cephfs_data 8 >/dev/null 2>&1 || return 1
	c fs new cephfs cephfs_metadata cephfs_data >/dev/null 2>&1 || return 1
	for i in $(seq 1 240); do
		if c health 2>/dev/null | grep -q '^HEALTH_OK' &&
			c fs status cephfs 2>/dev/null | grep -q active &&
			c pg stat 2>/dev/null |
			grep -Eq '^([0-9]+) pgs: \1 active\+clean;'; then
			echo "ceph: up in $((SECONDS - t0))s: $dir/ceph.conf"
			return 0
		fi
		sleep 0.5
	done
	echo "ceph: $dir: no HEALTH_OK after 120 s:" >&2
	c health detail >&2
	return 1
}

# True once the file system has an active MDS and every PG is clean: what a
# client needs (HEALTH_OK may lag: a restarted cluster reports recent
# crashes of the daemons it was SIGKILLed with).
serving() {
	c fs status cephfs 2>/dev/null | grep -q active &&
		c pg stat 2>/dev/null |
		grep -Eq '^([0-9]+) pgs: \1 active\+clean;'
}

revive() {
	local t0=$SECONDS osd i
	dir=$(cd "$dir" && pwd) || return 1
	if [ -f "$dir/pids" ]; then
		echo "ceph: $dir: a cluster is running there (pids)" >&2
		return 1
	fi
	osd=$(ls "$dir/osd" | sed -n 's/^ceph-\([0-9]*\)$/\1/p' | head -1)
	[ -n "$osd" ] && [ -f "$dir/ceph.conf" ] || {
		echo "ceph: $dir: no cluster made there" >&2
		return 1
	}
	spawn mon.a ceph-mon -c "$dir/ceph.conf" -i a
	spawn mgr.x ceph-mgr -c "$dir/ceph.conf" -i x
	spawn "osd.$osd" ceph-osd -c "$dir/ceph.conf" -i "$osd"
	spawn mds.a ceph-mds -c "$dir/ceph.conf" -i a
	for i in $(seq 1 240); do
		if serving; then
			echo "ceph: back in $((SECONDS - t0))s: $dir/ceph.conf"
			return 0
		fi
		sleep 0.5
	done
	echo "ceph: $dir: not serving 120 s after revive:" >&2
	c health detail >&2
	return 1
}

case "$cmd" in
start)
	start || {
		stop_pids TERM
		exit 1
	}
	;;
stop) stop_pids TERM ;;
kill) stop_pids KILL ;;
revive)
	revive || {
		stop_pids TERM
		exit 1
	}
	;;
*)
	echo "usage: $0 start|stop|kill|revive DIR" >&2
	exit 2
	;;
esac
