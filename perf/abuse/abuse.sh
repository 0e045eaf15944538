#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Abuse resistance, measured: a well-behaved client (dsload,
# 8 KiB random reads, 1 host x 1 datastore) alone, then the same client
# while perf/abuse/abusers.py holds 1,000 idle connections, runs 8 clients
# that never read their replies and opens and closes 10,000 connections.
# Prints both throughputs, their ratio, and dsnfsd's peak resident memory.
#
#   perf/abuse/abuse.sh [BIN_DIR]      (make abuse; not part of make test)
set -u
bin=${1:-build/bin}
seconds=${ABUSE_SECONDS:-20}
tmp=$(mktemp -d /var/tmp/dsnfs-abuse.XXXXXX)
pid=""
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/ds1"
head -c $((256 * 1024 * 1024)) /dev/urandom >"$tmp/ds1/big"
# dsload and abusers.py bind unprivileged ports and dsload writes as uid
# 0: dsnfsd's defaults (secure, squash = root) would refuse both; the
# labs' access (perf/lablib.sh), loopback clients only.
. "$(dirname "$0")/../lablib.sh"
lab_access ds1 >"$tmp/access.conf"
"$bin/dsnfsd" -f -l 127.0.0.1 -p 0 -m 0 -P 0 -A 0 -s "$tmp/state" \
	-e ds1="$tmp/ds1" -c "$tmp/access.conf" >"$tmp/out" 2>"$tmp/log" &
pid=$!
for _ in $(seq 1 100); do
	grep -q '^dsnfsd: listening' "$tmp/out" && break
	sleep 0.1
done
line=$(grep '^dsnfsd: listening' "$tmp/out") || exit 1
nfs=$(sed 's/.* nfs=\([0-9]*\).*/\1/' <<<"$line")
mnt=$(sed 's/.* mount=\([0-9]*\).*/\1/' <<<"$line")

well_behaved() {
	"$bin/dsload" run --nfs-port "$nfs" --mount-port "$mnt" -H 1 -D ds1 \
		--bs 8k --read-pct 100 --random-pct 100 --iodepth 8 --ramp 1 \
		--runtime "$1" --quiet --json "$tmp/$2.json" >/dev/null 2>&1
	python3 -c "import json,sys; rows=json.load(open(sys.argv[1]))['phases'][0]['rows']; print(round(next(r['iops'] for r in rows if r['level'] == 'total')))" "$tmp/$2.json"
}
peak_rss() { awk '/^VmHWM:/ {print $2}' "/proc/$pid/status"; }

alone=$(well_behaved "$seconds" alone)
echo "abuse: well-behaved client alone: $alone IOPS; dsnfsd peak RSS $(peak_rss) KiB"
python3 "$(dirname "$0")/abusers.py" "$nfs" "$mnt" $((seconds + 4)) >"$tmp/abusers.out" 2>&1 &
abusers=$!
sleep 2
beside=$(well_behaved "$seconds" beside)
wait $abusers
cat "$tmp/abusers.out"
echo "abuse: well-behaved client beside the abusers: $beside IOPS"
echo "abuse: ratio beside/alone: $(python3 -c "print(round($beside / $alone, 3))" 2>/dev/null)"
echo "abuse: dsnfsd peak RSS $(peak_rss) KiB; still running: $(kill -0 $pid 2>/dev/null && echo yes || echo NO)"
echo "abuse: server log: $(grep -c 'warn' "$tmp/log") warnings; last: $(grep warn "$tmp/log" | tail -1)"
