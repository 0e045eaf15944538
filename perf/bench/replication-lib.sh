# SPDX-License-Identifier: Apache-2.0
# perf/bench/replication-lib.sh: what perf/bench/replication.sh,
# replication-lag.sh and the replication lab (make lab-replication) share
# (sourced, bash, after perf/bench/lib.sh).  Two dsnfsd, a source (its
# datastore src) and a destination (dsr), each on an XFS loop file with
# reflink, joined by one relation r1 (docs/replication.md), in a private
# network and mount namespace: nothing else on the machine sees their
# ports or their mounts.
#
#   repl_enter_ns SCRIPT ARGS...  re-execs SCRIPT (once) in new network and
#                          mount namespaces with loopback up
#   repl_xfs NAME SIZE     a new XFS (reflink=1) of SIZE on $BENCH_TMP/NAME
#                          from a sparse loop file; unmounted by repl_cleanup
#   repl_pair_start BIN SRC_CONF_EXTRA
#                          starts the destination then the source dsnfsd
#                          (BIN/dsnfsd) on free ports; SRC_CONF_EXTRA: lines
#                          of the source's [replication r1] (schedule ...)
#                          and anything after; sets SRC_PID SRC_NFS
#                          SRC_MOUNT SRC_ADMIN and DST_* alike
#   repl_src_start BIN / repl_dst_start BIN   one of them (again; the
#                          destination on REPL_DST_ADMIN_PORT when set:
#                          the port the source's config names)
#   repl_api SIDE ARGS...  curl to SIDE's (src, dst) admin endpoint with
#                          its token; ARGS: curl's, the path last
#   repl_rel EXPR          a Python expression of relation r1 (r) as the
#                          source's GET /volumes/src/replication shows it
#   repl_transfer          POSTs a transfer of r1 and waits for it (1 h at
#                          most); REPL_SECONDS its time (POST to done, 0.05 s
#                          polls); fails with the relation's error
#   repl_nfs_rewrite FILE PCT KIB SEED   rewrites PCT% of src's FILE over
#                          NFS (WRITE FILE_SYNC, random bytes) in KIB-sized
#                          writes at seeded random 4 KiB-aligned offsets,
#                          none overlapping; prints "N writes, BYTES bytes"
#   repl_metric NAME       r1's sample of NAME in the source's /metrics
#   repl_cleanup           stops what was started, unmounts, removes
#                          $BENCH_TMP (BENCH_KEEP_TMP=1: only its images)
REPL_MOUNTS=()
REPL_KEY=""
REPL_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

repl_enter_ns() {
	local script=$1
	shift
	if [ "${REPL_IN_NS:-0}" != 1 ]; then
		export REPL_IN_NS=1
		exec unshare --net --mount --propagation private -- \
			bash "$script" "$@"
	fi
	ip link set lo up || bench_die "cannot bring up loopback"
}

repl_xfs() {
	local dir=$BENCH_TMP/$1
	mkdir -p "$dir"
	truncate -s "$2" "$dir.img" || bench_die "truncate $dir.img"
	mkfs.xfs -q -m reflink=1 "$dir.img" || bench_die "mkfs.xfs $dir.img"
	mount -o loop "$dir.img" "$dir" || bench_die "mount $dir.img"
	REPL_MOUNTS+=("$dir")
}

repl_cleanup() {
	local i d
	for ((i = ${#BENCH_PIDS[@]} - 1; i >= 0; i--)); do
		bench_stop_pid "${BENCH_PIDS[$i]}"
	done
	BENCH_PIDS=()
	for d in "${REPL_MOUNTS[@]}"; do
		umount "$d" 2>/dev/null
	done
	REPL_MOUNTS=()
	# A kept $BENCH_TMP (reports) keeps no file system images (GiBs).
	[ "${BENCH_KEEP_TMP:-0}" = 1 ] && [ -n "${BENCH_TMP:-}" ] &&
		rm -f "$BENCH_TMP"/*.img
	bench_cleanup
}

# Starts BIN/dsnfsd as SIDE (src, dst) with config CONF and admin port
# ADMIN (0: a free one); sets SIDE_PID, SIDE_NFS, SIDE_MOUNT, SIDE_ADMIN
# (SIDE in capitals).
repl_start_side() {
	local bin=$1 side=$2 conf=$3 admin=${4:-0} up line pid
	up=${side^^}
	mkdir -p "$BENCH_TMP/$side-state"
	: >"$BENCH_TMP/$side.out"
	"$bin/dsnfsd" -f -l 127.0.0.1 -p 0 -m 0 -P off -A "$admin" \
		-s "$BENCH_TMP/$side-state" -c "$conf" \
		>"$BENCH_TMP/$side.out" 2>>"$BENCH_TMP/$side.log" &
	pid=$!
	BENCH_PIDS+=("$pid")
	bench_wait_line "$BENCH_TMP/$side.out" '^dsnfsd: listening' "$pid" || {
		tail -20 "$BENCH_TMP/$side.log" >&2
		bench_die "the $side dsnfsd did not start"
	}
	line=$(grep '^dsnfsd: listening' "$BENCH_TMP/$side.out")
	printf -v "${up}_PID" '%s' "$pid"
	printf -v "${up}_NFS" '%s' "$(echo "$line" | sed 's/.* nfs=\([0-9]*\).*/\1/')"
	printf -v "${up}_MOUNT" '%s' "$(echo "$line" | sed 's/.* mount=\([0-9]*\).*/\1/')"
	printf -v "${up}_ADMIN" '%s' "$(echo "$line" | sed 's/.* admin=\([0-9]*\).*/\1/')"
}

repl_key_make() {
	[ -n "$REPL_KEY" ] && return 0
	REPL_KEY=$BENCH_TMP/r1.key
	(umask 077 && openssl rand -hex 32 >"$REPL_KEY") ||
		bench_die "cannot make the relation's key"
}

repl_dst_start() {
	repl_key_make
	{
		printf '[datastore dsr]\npath = %s\n' "$BENCH_TMP/dsr"
		lab_access dsr | sed 1d
		printf '[replication r1]\nrole = destination\ndatastore = dsr\nkey_file = %s\n' "$REPL_KEY"
	} >"$BENCH_TMP/dst.conf"
	repl_start_side "$1" dst "$BENCH_TMP/dst.conf" "${REPL_DST_ADMIN_PORT:-0}"
}

repl_src_start() {
	repl_key_make
	if [ ! -f "$BENCH_TMP/src.conf" ]; then
		{
			printf '[datastore src]\npath = %s\n' "$BENCH_TMP/src"
			lab_access src | sed 1d
			printf '[replication r1]\nrole = source\ndatastore = src\nkey_file = %s\n' "$REPL_KEY"
			printf 'destination_url = http://127.0.0.1:%s\ndestination_datastore = dsr\n' "$DST_ADMIN"
			printf '%s\n' "${REPL_SRC_EXTRA:-schedule = none}"
		} >"$BENCH_TMP/src.conf"
	fi
	repl_start_side "$1" src "$BENCH_TMP/src.conf"
}

repl_pair_start() {
	REPL_SRC_EXTRA=$2
	repl_dst_start "$1"
	repl_src_start "$1"
}

repl_api() {
	local side=$1 port
	shift
	[ "$side" = src ] && port=$SRC_ADMIN || port=$DST_ADMIN
	local url="http://127.0.0.1:$port${*: -1}"
	curl -sS --max-time 30 -H @<(printf 'Authorization: Bearer %s\n' \
		"$(cat "$BENCH_TMP/$side-state/admin.token")") \
		"${@:1:$#-1}" "$url"
}

repl_rel() {
	repl_api src /volumes/src/replication | python3 -c "
import json, sys
r = [x for x in json.load(sys.stdin)['relations'] if x['name'] == 'r1'][0]
print($1)"
}

repl_now() { date +%s.%N; }

repl_transfer() {
	local ok failed t0 code
	ok=$(repl_rel "r['transfers_ok']") || return 1
	failed=$(repl_rel "r['transfers_failed']")
	t0=$(repl_now)
	code=$(repl_api src -o /dev/null -w '%{http_code}' -X POST \
		-H 'Content-Type: application/json' -d '{}' \
		/volumes/src/replication/transfer?relation=r1)
	[ "$code" = 202 ] || {
		echo "bench: POST transfer: HTTP $code" >&2
		return 1
	}
	for _ in $(seq 1 72000); do
		if repl_rel "r['transfers_ok'] > $ok and not r['running']" |
			grep -q True; then
			REPL_SECONDS=$(echo "$(repl_now) - $t0" | bc)
			return 0
		fi
		if [ "$(repl_rel "r['transfers_failed']")" != "$failed" ]; then
			echo "bench: the transfer failed: $(repl_rel "r['error']")" >&2
			return 1
		fi
		sleep 0.05
	done
	echo "bench: the transfer did not end in an hour" >&2
	return 1
}

repl_nfs_rewrite() {
	WIRE_DIR=$REPL_DIR/../../tests/integ python3 - "$SRC_NFS" "$SRC_MOUNT" "$@" <<'PY'
import os, random, sys
sys.path.insert(0, os.environ["WIRE_DIR"])
from nfs3wire import Nfs3Client, mount_root
nfsport, mountport, name, pct, kib, seed = sys.argv[1:7]
root = mount_root(("127.0.0.1", int(mountport)), "/src")
wlen = int(kib) * 1024
with Nfs3Client(("127.0.0.1", int(nfsport))) as c:
    fh = c.lookup(root, name).object
    size = c.getattr(fh).attributes.size
    # One write in each chosen slot of twice the write's length, shifted
    # by a random multiple of 4 KiB inside it: no two writes overlap.
    slots = size // (2 * wlen)
    n = max(1, int(size * float(pct) / 100 / wlen))
    rng = random.Random(int(seed))
    done = 0
    for s in sorted(rng.sample(range(slots), min(n, slots))):
        off = s * 2 * wlen + rng.randrange(0, wlen // 4096 + 1) * 4096
        data = os.urandom(wlen)
        for i in range(0, wlen, 65536):
            r = c.write(fh, off + i, data[i:i + 65536])
            if r.status != 0:
                raise SystemExit("WRITE at %d: status %d" % (off + i, r.status))
        done += 1
print("%d writes, %d bytes" % (done, done * wlen))
PY
}

repl_metric() {
	repl_api src /metrics |
		awk -v m="$1" '$1 ~ "^" m "\\{.*relation=\"r1\"" { print $2 }'
}
