#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The soak: dsnfsd under 64 flows of mixed, verified traffic for
# SOAK_SECONDS (default 1800), its resident memory sampled every 10 s.
# Prints the RSS series and a verdict: no dsload errors or mismatches, and
# RSS after warm-up (the first sixth) grows by less than 10 %.
#
#   perf/soak/soak.sh [BIN_DIR]        (make soak)
#
# Everything runs on 127.0.0.1; the datastores live in a scratch directory
# that is removed at the end.  Not part of `make test`.
set -u
bin=${1:-build/bin}
seconds=${SOAK_SECONDS:-1800}
hosts=${SOAK_HOSTS:-8}
datastores=${SOAK_DATASTORES:-8}
tmp=$(mktemp -d /var/tmp/dsnfs-soak.XXXXXX)
pid=""
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

args=()
for i in $(seq 1 "$datastores"); do
	mkdir -p "$tmp/ds$i"
	args+=(-e "ds$i=$tmp/ds$i")
done
# dsload binds unprivileged ports and writes as uid 0: dsnfsd's defaults
# (secure, squash = root) would refuse it; the labs' access
# (perf/lablib.sh), loopback clients only.
. "$(dirname "$0")/../lablib.sh"
lab_access_exports "${args[@]}" >"$tmp/access.conf"
"$bin/dsnfsd" -f -l 127.0.0.1 -p 0 -m 0 -P 0 -A 0 -s "$tmp/state" "${args[@]}" \
	-c "$tmp/access.conf" >"$tmp/out" 2>"$tmp/log" &
pid=$!
for _ in $(seq 1 100); do
	grep -q '^dsnfsd: listening' "$tmp/out" && break
	sleep 0.1
done
line=$(grep '^dsnfsd: listening' "$tmp/out") || {
	echo "soak: dsnfsd did not start"
	cat "$tmp/log"
	exit 1
}
pmap_port=$(sed 's/.* portmap=\([0-9]*\).*/\1/' <<<"$line")
admin_port=$(sed 's/.* admin=\([0-9]*\).*/\1/' <<<"$line")
echo "soak: $hosts hosts x $datastores datastores = $((hosts * datastores)) flows, ${seconds} s, dsnfsd pid $pid"

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$pid/status"; }
(
	while kill -0 "$pid" 2>/dev/null; do
		echo "$(date +%s) $(rss_kib)"
		sleep 10
	done
) >"$tmp/rss" &
sampler=$!

# Mixed traffic: 70 % reads, half random, 8 KiB blocks, every block
# tagged and checked; FILE_SYNC and UNSTABLE+COMMIT alternate by phase.
"$bin/dsload" run --portmap-port "$pmap_port" --admin-port "$admin_port" \
	--token-file "$tmp/state/admin.token" \
	-H "$hosts" -D "$datastores" --vmdks "$datastores" --placement spread \
	--threads 2 --bs 8k --read-pct 70 --random-pct 50 --iodepth 4 \
	--verify --ramp 5 --runtime "$seconds" --quiet \
	--json "$tmp/soak.json" >"$tmp/dsload.out" 2>&1
rc=$?
kill "$sampler" 2>/dev/null
wait "$sampler" 2>/dev/null

tail -25 "$tmp/dsload.out"
echo
echo "soak: dsnfsd resident memory (KiB), every 10 s:"
awk '{printf "%s%s", (NR > 1 ? " " : ""), $2} END {print ""}' "$tmp/rss"
verdict=$(awk -v n="$(wc -l <"$tmp/rss")" '
	NR == (int(n / 6) + 2 < n ? int(n / 6) + 2 : n) { base = $2 }
	{ last = $2; if ($2 > peak) peak = $2 }
	END {
		growth = base ? (last - base) * 100.0 / base : 0
		printf "after warm-up %d KiB, at the end %d KiB, peak %d KiB, growth %.1f %%", base, last, peak, growth
		exit (growth < 10.0 ? 0 : 1)
	}' "$tmp/rss")
flat=$?
echo "soak: $verdict"
errors=$(grep -c -E 'MISMATCH|STOPPED' "$tmp/dsload.out")
echo "soak: dsload exit $rc, $errors mismatch/stop lines; server log warnings: $(grep -c ' warn: \| error: ' "$tmp/log")"
if [ $rc -eq 0 ] && [ $flat -eq 0 ]; then
	echo "soak: PASS"
	exit 0
fi
echo "soak: FAIL"
exit 1
