#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# perf/bench/stablecost.sh [BUILD_DIR]: what a stable write costs the disk,
# counted, not timed (load-independent: any machine, any load gives the
# same figures).  One client (tests/integ/nfs3wire.py, one connection, one
# write in flight) sends STABLECOST_MIB MiB of STABLECOST_KIB KiB FILE_SYNC
# writes to one new file, sequential (STABLECOST_PATTERN=seq) or at random
# aligned offsets of a region of that size (rand), to dsnfsd under
# `strace -c -f`, in each mode:
#   new   [server] intent_log, the default keys (large writes and
#         sequential streams in place)
#   old   the log with intent_log_inplace_min_bytes = 0 and
#         intent_log_inplace_sequential_min_bytes = 0: every stable
#         write copied into the log (the default before these keys)
#   off   no log: pwrite + fsync (group commit)
# Per MiB acknowledged: fsync + fdatasync calls (strace), log batch writes
# (each an O_DIRECT|O_DSYNC pwrite, or pwrite + fdatasync where O_DIRECT
# is refused: a device flush either way) and bytes written to the log (the
# log's own counters, its closing line), and data + log bytes written.
# With one write in flight nothing groups; with more, the log's batches and
# the file's group commit share flushes (perf/bench/ilog.sh measures that).
#
# Environment: STABLECOST_MIB [64], STABLECOST_KIB [64], STABLECOST_PATTERN
# [seq], STABLECOST_MODES ["new old off"], BENCH_DIR [/var/tmp] (a disk
# file system: tmpfs refuses O_DIRECT).
set -u
cd "$(dirname "$0")/../.." || exit 1

BUILD=${1:-build}
MIB=${STABLECOST_MIB:-64}
KIB=${STABLECOST_KIB:-64}
PATTERN=${STABLECOST_PATTERN:-seq}
MODES=${STABLECOST_MODES:-new old off}
DSNFSD=$BUILD/bin/dsnfsd
die() {
	echo "stablecost: $*" >&2
	exit 1
}
[ -x "$DSNFSD" ] || die "no $DSNFSD: make BUILD=$BUILD"
command -v strace >/dev/null || die "needs strace (apt-get install strace)"
TMP=$(mktemp -d "${BENCH_DIR:-/var/tmp}/dsnfs-stablecost.XXXXXX") ||
	die "cannot make a scratch directory"
SPID=""
cleanup() {
	[ -z "$SPID" ] || kill "$SPID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# run_mode MODE: one server, one stream; prints a row.
run_mode() {
	local mode=$1 d=$TMP/$1 port mport
	mkdir -p "$d/ds1" "$d/state"
	printf '[datastore ds1]\nclients = 127.0.0.0/8\nsquash = none\nsecure = false\n' \
		>"$d/access.conf"
	: >"$d/server.conf"
	case $mode in
	new) printf '[server]\nintent_log = %s/intent.log\n' "$d" >"$d/server.conf" ;;
	old) printf '[server]\nintent_log = %s/intent.log\nintent_log_inplace_min_bytes = 0\nintent_log_inplace_sequential_min_bytes = 0\n' \
		"$d" >"$d/server.conf" ;;
	esac
	strace -c -f -q -e trace=fsync,fdatasync -o "$d/strace.txt" \
		"$DSNFSD" -f -l 127.0.0.1 -p 0 -m 0 -P off -A off -s "$d/state" \
		-e ds1="$d/ds1" -c "$d/access.conf" -c "$d/server.conf" \
		>"$d/out" 2>"$d/log" &
	SPID=$!
	for _ in $(seq 1 100); do
		grep -q '^dsnfsd: listening' "$d/out" && break
		sleep 0.1
	done
	port=$(sed -n 's/^dsnfsd: listening.* nfs=\([0-9]*\).*/\1/p' "$d/out")
	mport=$(sed -n 's/^dsnfsd: listening.* mount=\([0-9]*\).*/\1/p' "$d/out")
	[ -n "$port" ] || die "$mode: dsnfsd did not start: $(tail -3 "$d/log")"
	python3 - tests/integ "$port" "$mport" "$MIB" "$KIB" "$PATTERN" <<'PY' ||
import random, sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[1])
from nfs3wire import FILE_SYNC, NFS3_OK, MountClient, Nfs3Client
m = MountClient(("127.0.0.1", int(sys.argv[3])))
root = m.mnt("/ds1").fhandle
c = Nfs3Client(("127.0.0.1", int(sys.argv[2])))
fh = c.create(root, "f").object
size, n = int(sys.argv[5]) << 10, (int(sys.argv[4]) << 20) // (int(sys.argv[5]) << 10)
rng = random.Random(1)
data = bytes(range(256)) * (size // 256)
for i in range(n):
    at = i if sys.argv[6] == "seq" else rng.randrange(n)
    r = c.write(fh, at * size, data, stable=FILE_SYNC)
    if r.status != NFS3_OK or r.committed != FILE_SYNC:
        sys.exit("WRITE %d: %d" % (i, r.status))
PY
		die "$mode: the client failed"
	# SIGTERM to dsnfsd itself (strace's child): it closes the log and
	# logs its counters; strace then prints its own.
	kill "$(pgrep -P "$SPID" -x dsnfsd)"
	wait "$SPID"
	SPID=""
	python3 - "$mode" "$MIB" "$d/strace.txt" "$d/log" <<'PY'
import re, sys
mode, mib = sys.argv[1], int(sys.argv[2])
calls = {}
for l in open(sys.argv[3]):
    f = l.split()
    if len(f) >= 5 and f[-1] in ("fsync", "fdatasync"):
        calls[f[-1]] = int(f[3])
m = re.search(r"closed: (\d+) records, (\d+) flushes, (\d+) checkpoints.*?"
              r"(\d+) writes synced in place \((\d+) SYNCED records\); "
              r"(\d+) bytes logged", open(sys.argv[4]).read())
rec, fl, ck, inpl, syn, lb = (int(x) for x in m.groups()) if m else (0,) * 6
syncs = calls.get("fsync", 0) + calls.get("fdatasync", 0)
print("%-4s %9.2f %9.2f %9.2f %11.3f %11.3f %8d %8d %6d" % (
    mode, calls.get("fsync", 0) / mib, calls.get("fdatasync", 0) / mib,
    fl / mib, lb / 2**20 / mib, 1 + lb / 2**20 / mib, rec, inpl, ck))
PY
}

echo "== ${MIB} MiB of ${KIB} KiB FILE_SYNC writes, $PATTERN, one in flight;" \
	"data on $(df --output=fstype "$TMP" | tail -1); per MiB acknowledged:"
echo "mode fsync/MiB fdsync/MiB logwr/MiB logMiB/MiB diskMiB/MiB  records  inplace ckpts"
for mode in $MODES; do
	run_mode "$mode"
done
