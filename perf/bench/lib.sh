# SPDX-License-Identifier: Apache-2.0
# Shared helpers of perf/bench/*.sh and perf/scale/scale.sh (sourced,
# bash).  Everything started here is recorded in BENCH_PIDS and stopped by
# PID in bench_cleanup (TERM, then KILL after 10 s), newest first.
#
#   bench_enter_mount_ns SCRIPT ARGS...  re-execs SCRIPT in a private mount
#                          namespace (once): /run there is a private tmpfs,
#                          so rpcbind's socket, lock and state and Ganesha's
#                          run files never meet the host's; under
#                          nice -n $BENCH_NICE when that is set
#   bench_ns_new VAR       a new network namespace with only loopback up,
#                          held by a sleeping process; VAR gets its PID
#   bench_in_ns NS CMD...  runs CMD in the network namespace held by NS
#   bench_bg NAME NS CMD.. starts CMD in the background in NS, output in
#                          $BENCH_TMP/NAME.out and NAME.log; sets BENCH_BG_PID
#   bench_wait_line FILE PATTERN PID   waits (30 s) for PATTERN in FILE
#   bench_cpu_ticks PID    utime+stime of a process (all threads), in ticks
#   bench_stop_pid PID     TERM, wait (KILL after 10 s), forget PID
#   bench_cleanup          stops what was started, removes $BENCH_TMP

# lab_access, lab_access_exports: the labs' access for the servers started
# here (dsnfsd's defaults would refuse the clients, see bench_access).
. "$(dirname "${BASH_SOURCE[0]}")/../lablib.sh"

BENCH_PIDS=()
BENCH_TMP=${BENCH_TMP:-}
BENCH_KEEP_TMP=${BENCH_KEEP_TMP:-0}

bench_die() {
	echo "bench: $*" >&2
	exit 1
}

bench_enter_mount_ns() {
	local script=$1
	shift
	if [ "${BENCH_IN_MOUNT_NS:-0}" = 1 ]; then
		return 0
	fi
	export BENCH_IN_MOUNT_NS=1
	if [ -n "${BENCH_NICE:-}" ]; then
		exec nice -n "$BENCH_NICE" unshare --mount \
			--propagation private -- bash "$script" "$@"
	fi
	exec unshare --mount --propagation private -- bash "$script" "$@"
}

bench_private_run() {
	mount -t tmpfs -o mode=0755 bench-run /run ||
		bench_die "cannot mount a private /run"
	mkdir -p /run/rpcbind /run/ganesha
}

bench_ns_new() {
	local var=$1
	local pid
	local self
	self=$(readlink /proc/self/ns/net)
	unshare --net -- sleep infinity &
	pid=$!
	BENCH_PIDS+=("$pid")
	for _ in $(seq 1 100); do
		if [ "$(readlink "/proc/$pid/ns/net" 2>/dev/null)" != "$self" ]; then
			break
		fi
		sleep 0.02
	done
	[ "$(readlink "/proc/$pid/ns/net")" != "$self" ] ||
		bench_die "network namespace did not come up"
	nsenter --net="/proc/$pid/ns/net" -- ip link set lo up ||
		bench_die "cannot bring up loopback in the namespace"
	printf -v "$var" '%s' "$pid"
}

bench_in_ns() {
	local ns=$1
	shift
	nsenter --net="/proc/$ns/ns/net" -- "$@"
}

bench_bg() {
	local name=$1
	local ns=$2
	shift 2
	: >"$BENCH_TMP/$name.out"
	nsenter --net="/proc/$ns/ns/net" -- "$@" \
		>"$BENCH_TMP/$name.out" 2>"$BENCH_TMP/$name.log" &
	BENCH_BG_PID=$!
	BENCH_PIDS+=("$BENCH_BG_PID")
}

bench_wait_line() {
	local file=$1
	local pattern=$2
	local pid=$3
	for _ in $(seq 1 300); do
		if grep -q -- "$pattern" "$file" 2>/dev/null; then
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# Waits until the portmapper in NS maps PROG version 3 over TCP.
bench_wait_rpc() {
	local ns=$1
	local prog=$2
	local pid=$3
	for _ in $(seq 1 300); do
		if bench_in_ns "$ns" rpcinfo -p 127.0.0.1 2>/dev/null |
			awk -v p="$prog" '$1 == p && $2 == 3 && $3 == "tcp"' |
			grep -q .; then
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

bench_cpu_ticks() {
	local stat
	stat=$(cat "/proc/$1/stat") || return 1
	# Fields after the ")" that ends comm: state is 1, utime 12, stime 13.
	stat=${stat##*) }
	echo "$stat" | awk '{ print $12 + $13 }'
}

bench_stop_pid() {
	local pid=$1
	kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM "$pid" 2>/dev/null
	for _ in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "bench: PID $pid ignored SIGTERM for 10 s; killing" >&2
		kill -KILL "$pid" 2>/dev/null
	fi
	wait "$pid" 2>/dev/null
	bench_forget "$pid"
	return 0
}

# Drops PID from BENCH_PIDS once it is gone, so that cleanup never signals
# a process that later reuses the number.
bench_forget() {
	local keep=()
	local p
	for p in "${BENCH_PIDS[@]}"; do
		[ "$p" = "$1" ] || keep+=("$p")
	done
	BENCH_PIDS=("${keep[@]}")
}

bench_cleanup() {
	local i
	for ((i = ${#BENCH_PIDS[@]} - 1; i >= 0; i--)); do
		bench_stop_pid "${BENCH_PIDS[$i]}"
	done
	BENCH_PIDS=()
	if [ -n "$BENCH_TMP" ] && [ "$BENCH_KEEP_TMP" != 1 ]; then
		rm -rf "$BENCH_TMP"
	fi
}

# Installs the bench-only Debian packages that are missing (not in
# mk/packages.txt: nothing but the benchmark needs them).
bench_install_packages() {
	local missing=()
	local p
	for p in "$@"; do
		dpkg-query -W -f '${Status}' "$p" 2>/dev/null |
			grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	echo "bench: installing ${missing[*]}" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" \
		>&2 || bench_die "apt-get install ${missing[*]} failed"
}

# Builds perf/bench/rpcping into $1/bench/rpcping when missing or stale.
bench_build_rpcping() {
	local out=$1/bench/rpcping
	local src=(perf/bench/rpcping.c perf/dsload/hist.c nfsd/rpc/record.c
		nfsd/rpc/msg.c nfsd/rpc/pool.c)
	local s
	local stale=0
	[ -x "$out" ] || stale=1
	for s in "${src[@]}"; do
		[ "$s" -nt "$out" ] && stale=1
	done
	[ $stale = 1 ] || return 0
	mkdir -p "$1/bench"
	cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -I. \
		-o "$out" "${src[@]}" ||
		bench_die "cannot build rpcping"
}

# Starts dsnfsd in NS exporting DIR as /bench, with its own portmapper on
# 111 (the namespace has no rpcbind).  Sets DSNFSD_PID.
bench_start_dsnfsd() {
	local ns=$1
	local dir=$2
	shift 2
	bench_start_dsnfsd_as dsnfsd "$ns" "$dir" "" "$@"
	DSNFSD_PID=$BENCH_BG_PID
}

# bench_access FILE NAME...: writes the labs' access for datastores NAME to
# FILE, a config to read with -c.  dsnfsd's defaults (knfsd's: secure,
# squash = root) would refuse the clients measured here: dsload and the
# Python listers bind unprivileged ports, qemu-img and dsload create files
# as uid 0.  nfs-ganesha, the server compared, runs with No_Root_Squash
# and its default PrivilegedPort = false (ganesha.conf.in): the same
# access, so the comparison is unchanged.  Loopback clients only; the
# servers listen on 127.0.0.1 (most in a namespace of their own).
bench_access() {
	local file=$1
	shift
	lab_access "$@" >"$file"
}

# bench_start_dsnfsd_as NAME NS DIR CONF CMD...: as bench_start_dsnfsd, with
# its files named NAME (NAME.out, NAME.log, NAME-state) and, unless CONF is
# empty, the config file CONF; /bench has the labs' access (bench_access,
# in NAME-access.conf, read before CONF).  Sets BENCH_BG_PID.
bench_start_dsnfsd_as() {
	local name=$1
	local ns=$2
	local dir=$3
	local conf=$4
	local extra=()
	shift 4
	[ -n "$conf" ] && extra=(-c "$conf")
	mkdir -p "$BENCH_TMP/$name-state"
	bench_access "$BENCH_TMP/$name-access.conf" bench
	bench_bg "$name" "$ns" "$@" -f -l 127.0.0.1 -p 2049 -m 20048 -P 111 \
		-s "$BENCH_TMP/$name-state" -e bench="$dir" \
		-c "$BENCH_TMP/$name-access.conf" "${extra[@]}"
	bench_wait_line "$BENCH_TMP/$name.out" '^dsnfsd: listening' \
		"$BENCH_BG_PID" || {
		cat "$BENCH_TMP/$name.log" >&2
		bench_die "$name did not start"
	}
}

# Starts rpcbind and nfs-ganesha in NS exporting DIR as /bench.  Sets
# RPCBIND_PID and GANESHA_PID.
bench_start_ganesha() {
	local ns=$1
	local dir=$2
	local conf=$BENCH_TMP/ganesha.conf
	mkdir -p "$BENCH_TMP/ganesha-state"
	sed -e "s|@EXPORT_DIR@|$dir|" \
		-e "s|@STATE_DIR@|$BENCH_TMP/ganesha-state|" \
		perf/bench/ganesha.conf.in >"$conf"
	bench_bg rpcbind "$ns" rpcbind -f
	RPCBIND_PID=$BENCH_BG_PID
	bench_wait_rpc "$ns" 100000 "$RPCBIND_PID" ||
		bench_die "rpcbind did not start"
	bench_bg ganesha "$ns" ganesha.nfsd -F -f "$conf" \
		-L "$BENCH_TMP/ganesha.log" -p "$BENCH_TMP/ganesha.pid"
	GANESHA_PID=$BENCH_BG_PID
	bench_wait_rpc "$ns" 100003 "$GANESHA_PID" || {
		grep -E 'CRIT|FATAL' "$BENCH_TMP/ganesha.log" >&2
		bench_die "nfs-ganesha did not register NFS v3 with rpcbind"
	}
}
