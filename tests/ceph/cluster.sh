#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A one-node Ceph cluster for the tests: CEPH_MONS mons (1 or 3: a quorum
# that outlives one), one mgr, CEPH_OSDS OSDs
# (default 1; bluestore each on a sparse file of its own, never memstore:
# memstore keeps the whole size of a truncated object in RAM) and one MDS
# on 127.0.0.1, with a CephFS named "cephfs".  With 3 OSDs the pools keep
# 3 copies and serve with 2 (size 3, min_size 2), so a test can stop one
# OSD and see replication carry on; with 1, a copy each.  The file
# system's max_file_size is 64 TiB (ESXi makes VMDKs up to 62 TB; CephFS's
# default is 1 TiB).  Everything lives in DIR (ceph.conf, data, logs, the
# PIDs it started and their daemons' names).
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
#   tests/ceph/cluster.sh signal DIR DAEMON SIG
#                                     send SIG (STOP, CONT, ...) to one
#                                     daemon of the cluster, e.g. osd.1
#   tests/ceph/cluster.sh respawn DIR DAEMON
#                                     SIGKILL one daemon (mds.a, osd.0)
#                                     if it runs, and start it again from
#                                     its data (an MDS is failed first:
#                                     its rank goes to the new process at
#                                     once, not after the beacon grace)
#   tests/ceph/cluster.sh power-cut DIR OSD...
#                                     cut the power of these OSDs (osd.1,
#                                     or osd.0 osd.1 osd.2 at once): each
#                                     drops the writes it has not flushed
#                                     and ends; respawn starts it again
#   tests/ceph/cluster.sh wait-clean DIR
#                                     wait until the file system is active
#                                     and every PG active+clean again
#
# Authentication is off (auth_*_required = none): the cluster listens on
# loopback only.  CEPH_AUTH=cephx turns it on, for a test of the caps a
# gateway's key needs: every daemon's key is made before the mons, in the
# one keyring DIR/keyring (the mons take them in at mkfs), client.admin's
# with every cap.  The mons are a, b, c.  CEPH_MON_PORT picks the first
# mon's port (default: a free one; the others always take free ones);
# CEPH_ADDR the address every daemon binds (default 127.0.0.1: another one
# only inside a network namespace of a test's own, t2111).  CEPH_OSD_GIB:
# each OSD's sparse block file (default 8; a benchmark's writes need more).
set -u
cmd=${1:-}
dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then
	echo "usage: $0 start|stop|kill|revive|signal|respawn|power-cut|wait-clean DIR" >&2
	exit 2
fi

free_port() {
	python3 -c 'import socket,sys; s=socket.socket(); s.bind((sys.argv[1],0)); print(s.getsockname()[1])' "${CEPH_ADDR:-127.0.0.1}"
}

# Stops the PIDs in DIR/pids with @sig, all at once, waits up to 5 s for
# them together (the mgr's python modules can take 10 s and more; nothing
# of a test cluster needs a clean stop), then SIGKILLs what is left.  One
# after the other, each with its own wait, a cluster took up to 5 s per
# daemon.  Only those PIDs: never a daemon of anybody else.
stop_pids() {
	local sig=$1 left
	[ -f "$dir/pids" ] || return 0
	# SIGKILL is a lost cluster: every daemon at the same moment; so is
	# the stop.
	# shellcheck disable=SC2046
	kill -"$sig" $(cat "$dir/pids") 2>/dev/null
	# shellcheck disable=SC2046
	left=$(pids_left 50 $(cat "$dir/pids"))
	# shellcheck disable=SC2086
	[ -z "$left" ] || kill -KILL $left 2>/dev/null
	rm -f "$dir/pids" "$dir/daemons"
}

# Waits up to @1 tenths of a second for the PIDs @2... to end; prints
# those still running then.
pids_left() {
	local tenths=$1 i pid left=""
	shift
	for i in $(seq 1 "$tenths"); do
		left=""
		for pid in "$@"; do
			kill -0 "$pid" 2>/dev/null && left="$left $pid"
		done
		[ -n "$left" ] || break
		sleep 0.1
	done
	echo "${left# }"
}

# Starts @@ in the foreground (-f) as a background job and records its PID.
spawn() {
	local name=$1
	shift
	"$@" -f >"$dir/log/$name.out" 2>&1 &
	echo $! >>"$dir/pids"
	echo "$name $!" >>"$dir/daemons"
}

# Makes one more OSD's data (bluestore on a sparse file of its own) and
# starts it.
osd_create() {
	local osd_uuid osd_id
	osd_uuid=$(cat /proc/sys/kernel/random/uuid)
	osd_id=$(c osd new "$osd_uuid") || {
		echo "ceph: $dir: the mon does not answer" >&2
		return 1
	}
	mkdir -p "$dir/osd/ceph-$osd_id"
	ceph-osd -c "$dir/ceph.conf" -i "$osd_id" --mkfs --osd-uuid "$osd_uuid" \
		>"$dir/log/osd-mkfs.$osd_id.out" 2>&1 || {
		cat "$dir/log/osd-mkfs.$osd_id.out" >&2
		return 1
	}
	spawn "osd.$osd_id" ceph-osd -c "$dir/ceph.conf" -i "$osd_id"
}

c() {
	timeout 60 ceph -c "$dir/ceph.conf" "$@"
}

# With cephx: the keys of mgr.x, mds.a and of @1 OSDs (ids 0 up: the mon
# gives the first free id), with the caps of Ceph's profiles.
daemon_keys() {
	local i
	ceph-authtool "$dir/keyring" --gen-key -n mgr.x --cap mon 'allow profile mgr' \
		--cap osd 'allow *' --cap mds 'allow *' >/dev/null || return 1
	ceph-authtool "$dir/keyring" --gen-key -n mds.a --cap mon 'allow profile mds' \
		--cap osd 'allow rw tag cephfs *=*' --cap mds 'allow' \
		--cap mgr 'allow profile mds' >/dev/null || return 1
	for i in $(seq 0 $(($1 - 1))); do
		ceph-authtool "$dir/keyring" --gen-key -n "osd.$i" \
			--cap mon 'allow profile osd' --cap mgr 'allow profile osd' \
			--cap osd 'allow *' >/dev/null || return 1
	done
}

# The ids of @1 mons.
mon_ids() {
	case "$1" in
	3) echo a b c ;;
	*) echo a ;;
	esac
}

# Starts the mons start made (DIR/mons: how many) and waits for their
# quorum: three elect a leader first, which on a loaded machine took longer
# than one command's client_mount_timeout (10 s), and start's next command
# is not retried.
spawn_mons() {
	local id i
	for id in $(mon_ids "$(cat "$dir/mons" 2>/dev/null || echo 1)"); do
		spawn "mon.$id" ceph-mon -c "$dir/ceph.conf" -i "$id"
	done
	for i in $(seq 1 12); do
		c quorum_status >/dev/null 2>&1 && return 0
		sleep 0.5
	done
	echo "ceph: $dir: the mons formed no quorum" >&2
	return 1
}

start() {
	local t0=$SECONDS port fsid i osds=${CEPH_OSDS:-1} size min_size
	local addr=${CEPH_ADDR:-127.0.0.1} mons=${CEPH_MONS:-1} id hosts=""
	local auth=${CEPH_AUTH:-none} monmap_args=()
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	if [ -f "$dir/pids" ]; then
		echo "ceph: $dir: a cluster is running there (pids)" >&2
		return 1
	fi
	rm -rf "$dir/mon" "$dir/osd" "$dir/mds" "$dir/mgr" "$dir/run" "$dir/log"
	case "$osds" in
	1) size=1 min_size=1 ;;
	3) size=3 min_size=2 ;;
	*)
		echo "ceph: CEPH_OSDS must be 1 or 3, not $osds" >&2
		return 1
		;;
	esac
	case "$mons" in
	1 | 3) ;;
	*)
		echo "ceph: CEPH_MONS must be 1 or 3, not $mons" >&2
		return 1
		;;
	esac
	case "$auth" in
	none | cephx) ;;
	*)
		echo "ceph: CEPH_AUTH must be none or cephx, not $auth" >&2
		return 1
		;;
	esac
	mkdir -p "$dir/mon" "$dir/osd" "$dir/mds/ceph-a" "$dir/mgr/ceph-x" \
		"$dir/run" "$dir/log"
	port=${CEPH_MON_PORT:-$(free_port)}
	for id in $(mon_ids "$mons"); do
		monmap_args+=(--addv "$id" "[v2:$addr:$port]")
		hosts="$hosts${hosts:+,}[v2:$addr:$port]"
		port=$(free_port)
	done
	echo "$mons" >"$dir/mons"
	fsid=$(cat /proc/sys/kernel/random/uuid)
	cat >"$dir/ceph.conf" <<CONF
[global]
fsid = $fsid
mon host = $hosts
public addr = $addr
auth cluster required = $auth
auth service required = $auth
auth client required = $auth
osd pool default size = $size
osd pool default min size = $min_size
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
bluestore block size = $((${CEPH_OSD_GIB:-8} << 30))
bluestore fsck on mkfs = false
bluestore fsck on mount = false
osd memory target = 536870912
bluestore cache autotune = false
bluestore cache size = 134217728
osd op num shards = 1
osd op num threads per shard = 2
mds cache memory limit = 134217728
osd heartbeat grace = 5
osd heartbeat interval = 1
# Every OSD is on this one host: count each OSD's failure report on its
# own, or a stopped OSD of three is never marked down.
mon osd reporter subtree level = osd
mon osd report timeout = 30
client mount timeout = 10
rados mon op timeout = 10
# A socket for each client process: CLI calls at once (power-cut tells
# every OSD in parallel) would otherwise fight over one path, and say so.
[client]
admin socket = $dir/run/\$name.\$pid.asok
CONF
	ceph-authtool --create-keyring "$dir/keyring" --gen-key -n mon. \
		--cap mon 'allow *' >/dev/null || return 1
	ceph-authtool "$dir/keyring" --gen-key -n client.admin \
		--cap mon 'allow *' --cap osd 'allow *' --cap mds 'allow *' \
		--cap mgr 'allow *' >/dev/null || return 1
	if [ "$auth" = cephx ]; then
		daemon_keys "$osds" || return 1
	fi
	monmaptool --create --clobber "${monmap_args[@]}" --fsid "$fsid" \
		"$dir/monmap" >/dev/null || return 1
	for id in $(mon_ids "$mons"); do
		ceph-mon -c "$dir/ceph.conf" --mkfs -i "$id" \
			--monmap "$dir/monmap" --keyring "$dir/keyring" \
			>"$dir/log/mon-mkfs.out" 2>&1 || {
			cat "$dir/log/mon-mkfs.out" >&2
			return 1
		}
	done
	spawn_mons || return 1
	spawn mgr.x ceph-mgr -c "$dir/ceph.conf" -i x
	for i in $(seq 1 "$osds"); do
		osd_create || return 1
	done
	spawn mds.a ceph-mds -c "$dir/ceph.conf" -i a
	c osd pool create cephfs_metadata 8 >/dev/null 2>&1 || return 1
	c osd pool create cephfs_data 8 >/dev/null 2>&1 || return 1
	c fs new cephfs cephfs_metadata cephfs_data >/dev/null 2>&1 || return 1
	c fs set cephfs max_file_size 70368744177664 >/dev/null 2>&1 || return 1
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
	local t0=$SECONDS osd osds i
	dir=$(cd "$dir" && pwd) || return 1
	if [ -f "$dir/pids" ]; then
		echo "ceph: $dir: a cluster is running there (pids)" >&2
		return 1
	fi
	osds=$(ls "$dir/osd" | sed -n 's/^ceph-\([0-9]*\)$/\1/p')
	[ -n "$osds" ] && [ -f "$dir/ceph.conf" ] || {
		echo "ceph: $dir: no cluster made there" >&2
		return 1
	}
	spawn_mons || return 1
	spawn mgr.x ceph-mgr -c "$dir/ceph.conf" -i x
	for osd in $osds; do
		spawn "osd.$osd" ceph-osd -c "$dir/ceph.conf" -i "$osd"
	done
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

# The PID of the daemon named @1 (osd.1, mds.a, ...) of this cluster, if
# it runs.
daemon_pid() {
	awk -v n="$1" '$1 == n { print $2 }' "$dir/daemons" 2>/dev/null
}

# Forgets the daemon named @1 of PID @2 (it has ended).
forget_daemon() {
	awk -v n="$1" '$1 != n' "$dir/daemons" >"$dir/daemons.new" &&
		mv "$dir/daemons.new" "$dir/daemons"
	awk -v p="$2" '$1 != p' "$dir/pids" >"$dir/pids.new" &&
		mv "$dir/pids.new" "$dir/pids"
}

# Sends @2 to the daemon named @1 of this cluster.
signal_daemon() {
	local pid
	pid=$(daemon_pid "$1")
	[ -n "$pid" ] || {
		echo "ceph: $dir: no daemon $1 started here" >&2
		return 1
	}
	kill -"$2" "$pid"
}

# Cuts the power of the OSDs named @@, all at once.  BlueStore's own crash
# injection (bdev_inject_crash = 1, set at run time): from then on each
# OSD drops every write to its block file, and at its next flush it ends
# (_exit, 2 s later).  That is what a disk with a volatile write cache
# loses when the power goes: what was written since the last flush, never
# acknowledged.  Waits until each has ended (30 s at most) and forgets it.
power_cut() {
	local name pid pids="" tells="" left
	for name in "$@"; do
		pid=$(daemon_pid "$name")
		case $name in
		osd.*) [ -n "$pid" ] ;;
		*) false ;;
		esac || {
			echo "ceph: power-cut: $name: not a running osd" >&2
			return 1
		}
		pids="$pids $pid"
	done
	for name in "$@"; do
		c tell "$name" config set bdev_inject_crash 1 >/dev/null &
		tells="$tells $!"
	done
	# shellcheck disable=SC2086
	wait $tells
	# shellcheck disable=SC2086
	left=$(pids_left 300 $pids)
	if [ -n "$left" ]; then
		echo "ceph: power-cut: PIDs $left still run after 30 s" >&2
		return 1
	fi
	for name in "$@"; do
		forget_daemon "$name" "$(daemon_pid "$name")"
	done
}

# Restarts the daemon named @1 (this file's head); one that has ended by
# itself (power-cut) is only started.
respawn_daemon() {
	local name=$1 pid
	pid=$(daemon_pid "$name")
	if [ -n "$pid" ]; then
		kill -KILL "$pid" 2>/dev/null
		pids_left 50 "$pid" >/dev/null
		forget_daemon "$name" "$pid"
	elif ! [ -d "$dir/${name%%.*}/ceph-${name#*.}" ]; then
		echo "ceph: $dir: no daemon $name made here" >&2
		return 1
	fi
	case $name in
	mds.*)
		c mds fail "${name#mds.}" >/dev/null 2>&1
		spawn "$name" ceph-mds -c "$dir/ceph.conf" -i "${name#mds.}"
		;;
	osd.*) spawn "$name" ceph-osd -c "$dir/ceph.conf" -i "${name#osd.}" ;;
	*)
		echo "ceph: respawn: $name: only an mds or an osd" >&2
		return 1
		;;
	esac
}

wait_clean() {
	local t0=$SECONDS i
	for i in $(seq 1 240); do
		if serving; then
			echo "ceph: clean in $((SECONDS - t0))s"
			return 0
		fi
		sleep 0.5
	done
	echo "ceph: $dir: not clean after 120 s:" >&2
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
signal) signal_daemon "${3:-}" "${4:-}" ;;
respawn) respawn_daemon "${3:-}" ;;
power-cut)
	shift 2
	power_cut "$@"
	;;
wait-clean) wait_clean ;;
*)
	echo "usage: $0 start|stop|kill|revive|signal|respawn|power-cut|wait-clean DIR" >&2
	exit 2
	;;
esac
