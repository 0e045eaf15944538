# SPDX-License-Identifier: Apache-2.0
# perf/bench/ceph-lib.sh: what perf/bench/ceph.sh and ceph-meta.sh share
# (sourced, bash, from the repository's root): a network namespace of the
# script's own, a one-node cluster (tests/ceph/cluster.sh) with its CephFS
# mounted by ceph-fuse, and the NFS servers on it, one at a time, each on
# 127.0.0.1 ports 2049 (NFS) and 20048 (MOUNT), exporting ds1.
#
# bench_ceph_netns ARGS...   the first time, runs the calling script again
#                            (with ARGS) as root in a network and mount
#                            namespace of its own and exits; inside it,
#                            brings loopback up and mounts a private /run
# bench_ceph_start           TMP (removed at exit), the cluster (CONF; its
#                            dir $TMP/ceph, CEPH_OSDS as cluster.sh),
#                            ceph-fuse on $TMP/mnt, the servers' dirs
#                            /bench-dsnfsd, /bench-base, /bench-ganesha,
#                            /bench-libcephfs
# bench_dsnfsd_up NAME BIN   dsnfsd BIN with ds1 on /bench-NAME: SRV_PID,
#                            its log $TMP/NAME.log (BENCH_DSNFSD_CONF,
#                            BENCH_DSNFSD_DS, BENCH_DSNFSD_CEPH: lines
#                            added to its [server], [datastore ds1] and
#                            its copy of ceph.conf; BENCH_BASE_CEPH for
#                            NAME base)
# bench_ganesha_up           nfs-ganesha FSAL_CEPH with ds1 on
#                            /bench-ganesha (and rpcbind): SRV_PID
# bench_server_down          stops SRV_PID
# cpu_ticks PID[,PID...]...  user + system clock ticks of each argument
# cpu_pids                   the server's, the OSDs' (one group), the
#                            MDS's and the MON's PIDs, for cpu_ticks
SRV_PID=""
FUSE_PID=""
RPCBIND_PID=""

bench_ceph_netns() {
	if [ -z "${BENCH_CEPH_NETNS:-}" ]; then
		[ "$(id -u)" = 0 ] || {
			echo "bench-ceph: needs root" >&2
			exit 1
		}
		for p in nfs-ganesha nfs-ganesha-ceph; do
			dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
				grep -q 'ok installed' && continue
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
				--no-install-recommends "$p" >/dev/null || exit 1
		done
		# Ganesha registers with rpcbind or dies: a private /run
		# (mount namespace) keeps that rpcbind's socket and state
		# from the host's.
		BENCH_CEPH_NETNS=1 exec unshare -n -m --propagation private \
			bash "$0" "$@"
	fi
	ip link set lo up || exit 1
	mount -t tmpfs -o mode=0755 bench-ceph-run /run || exit 1
	mkdir -p /run/rpcbind /run/ganesha
}

bench_ceph_cleanup() {
	[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null && wait "$SRV_PID"
	[ -n "$RPCBIND_PID" ] && kill "$RPCBIND_PID" 2>/dev/null &&
		wait "$RPCBIND_PID"
	if [ -n "$FUSE_PID" ]; then
		umount "$TMP/mnt" 2>/dev/null
		wait "$FUSE_PID" 2>/dev/null
	fi
	tests/ceph/cluster.sh stop "$TMP/ceph"
	rm -rf "$TMP"
}

bench_ceph_start() {
	TMP=$(mktemp -d /tmp/dsnfs-bench-ceph.XXXXXX)
	trap bench_ceph_cleanup EXIT
	trap 'exit 130' INT TERM
	# Room for the VMDKs of both servers and rados bench's objects:
	# a full OSD blocks writes for good.
	CEPH_OSD_GIB=${CEPH_OSD_GIB:-32} tests/ceph/cluster.sh start \
		"$TMP/ceph" >&2 || return 1
	CONF=$TMP/ceph/ceph.conf
	mkdir -p "$TMP/mnt"
	ceph-fuse -f -c "$CONF" "$TMP/mnt" >"$TMP/fuse.log" 2>&1 &
	FUSE_PID=$!
	for _ in $(seq 1 100); do
		grep -q "$TMP/mnt fuse" /proc/mounts && break
		sleep 0.1
	done
	mkdir -p "$TMP/mnt/bench-dsnfsd" "$TMP/mnt/bench-base" \
		"$TMP/mnt/bench-ganesha" "$TMP/mnt/bench-libcephfs"
}

bench_dsnfsd_up() {
	local name=$1 bin=$2 ceph_extra=${BENCH_DSNFSD_CEPH:-}
	local server_extra=${BENCH_DSNFSD_CONF:-}
	if [ "$name" = base ]; then
		ceph_extra=${BENCH_BASE_CEPH-$ceph_extra}
		server_extra=${BENCH_BASE_CONF-$server_extra}
	fi
	cat >"$TMP/$name.conf" <<-CONF
	[server]
	listen = 127.0.0.1
	nfs_port = 2049
	mount_port = 20048
	portmap_port = off
	admin_port = off
	state_dir = $TMP/state-$name
	$server_extra
	[datastore ds1]
	backend = cephfs
	ceph_conf = $TMP/$name-ceph.conf
	ceph_path = /bench-$name
	${BENCH_DSNFSD_DS:-}
	CONF
	{
		cat "$CONF"
		printf '[client.admin]\n%s\n' "$ceph_extra"
	} >"$TMP/$name-ceph.conf"
	# dsload binds unprivileged ports and writes as uid 0: the labs' access
	# (perf/bench/lib.sh, bench_access), as Ganesha's No_Root_Squash below.
	. perf/lablib.sh
	lab_access ds1 >>"$TMP/$name.conf"
	mkdir -p "$TMP/state-$name"
	"$bin" -f -c "$TMP/$name.conf" >"$TMP/$name.out" 2>"$TMP/$name.log" &
	SRV_PID=$!
	for _ in $(seq 1 100); do
		grep -q listening "$TMP/$name.out" && return 0
		sleep 0.1
	done
	echo "bench-ceph: $bin did not start: $(tail -3 "$TMP/$name.log")" >&2
	return 1
}

bench_ganesha_up() {
	cat >"$TMP/ganesha.conf" <<-CONF
	NFS_CORE_PARAM {
		Protocols = 3;
		NFS_Port = 2049;
		MNT_Port = 20048;
		Enable_NLM = false;
		Enable_RQUOTA = false;
		Enable_UDP = false;
		mount_path_pseudo = true;
		Plugins_Dir = /usr/lib/x86_64-linux-gnu/ganesha;
	}
	NFS_KRB5 { Active_krb5 = false; }
	NFSV4 { Graceless = true; RecoveryBackend = fs; RecoveryRoot = $TMP/ganesha-state; }
	CEPH { Ceph_Conf = $CONF; }
	EXPORT {
		Export_Id = 1;
		Path = /bench-ganesha;
		Pseudo = /ds1;
		Access_Type = RW;
		Squash = No_Root_Squash;
		SecType = sys;
		Protocols = 3;
		Transports = TCP;
		FSAL { Name = CEPH; User_Id = "admin"; }
	}
	LOG { Default_Log_Level = WARN; }
	CONF
	mkdir -p "$TMP/ganesha-state"
	if [ -z "$RPCBIND_PID" ]; then
		rpcbind -f &
		RPCBIND_PID=$!
		sleep 0.5
	fi
	ganesha.nfsd -F -f "$TMP/ganesha.conf" -L "$TMP/ganesha.log" \
		-p "$TMP/ganesha.pid" &
	SRV_PID=$!
	for _ in $(seq 1 200); do
		(exec 3<>/dev/tcp/127.0.0.1/2049) 2>/dev/null && break
		kill -0 "$SRV_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$SRV_PID" 2>/dev/null || {
		grep -E 'CRIT|MAJ|FATAL' "$TMP/ganesha.log" | grep -v DBUS >&2
		echo "bench-ceph: nfs-ganesha did not start" >&2
		return 1
	}
	sleep 1
}

bench_server_down() {
	kill "$SRV_PID"
	wait "$SRV_PID"
	SRV_PID=""
}

# cpu_ticks PID[,PID...]...: user + system clock ticks of each argument
# (every thread; a comma-joined group summed, as the OSDs of a cluster of
# three), space-separated; 0 for one that is gone.
cpu_ticks() {
	local group pid line t sum out=()
	for group in "$@"; do
		sum=0
		for pid in ${group//,/ }; do
			line=$(cat /proc/"$pid"/stat 2>/dev/null) || continue
			# Fields after the command name (which may hold spaces).
			line=${line##*) }
			# A zombie's times are gone: "-" (the caller keeps its last).
			t=$(echo "$line" | awk '{ print $1 == "Z" ? "-" : $12 + $13 }')
			[ "$t" = - ] && { sum=-; break; }
			sum=$((sum + t))
		done
		out+=("$sum")
	done
	echo "${out[*]}"
}

# The PIDs whose CPU counts: the server, the OSDs (one group), the MDS,
# the MON.
cpu_pids() {
	echo "$SRV_PID $(awk '$1 ~ /^osd/ { printf "%s%s", n++ ? "," : "", $2 }' "$TMP/ceph/daemons")" \
		"$(awk '$1 ~ /^mds/ { print $2; exit }' "$TMP/ceph/daemons")" \
		"$(awk '$1 ~ /^mon/ { print $2; exit }' "$TMP/ceph/daemons")"
}

# osd_counters: the OSDs' own counts, summed over every OSD of the
# cluster, from their admin sockets: "writes write-bytes reads read-bytes
# deferred-writes" (a deferred write goes through RocksDB's log first:
# bluestore's path for small writes, written twice).
osd_counters() {
	local sock
	for sock in "$TMP"/ceph/run/osd.*.asok; do
		ceph --admin-daemon "$sock" perf dump 2>/dev/null
	done | python3 -c '
import json, sys
dec = json.JSONDecoder()
text, at, tot = sys.stdin.read(), 0, [0] * 5
while True:
    while at < len(text) and text[at].isspace():
        at += 1
    if at >= len(text):
        break
    d, at = dec.raw_decode(text, at)
    o, b = d.get("osd", {}), d.get("bluestore", {})
    for i, v in enumerate((o.get("op_w", 0), o.get("op_w_in_bytes", 0),
                           o.get("op_r", 0), o.get("op_r_out_bytes", 0),
                           b.get("deferred_write_ops", 0))):
        tot[i] += v
print(" ".join(str(x) for x in tot))'
}
