#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What ESXi would have done when dsnfsd stops answering, from dsload's
# heartbeats (perf/dsload/esxi.c), its timers scaled by 0.2 (a lab knob:
# HeartbeatFrequency 2.4 s, HeartbeatTimeout 1 s, so ApdStartCount's 3
# failures need about 5-7 s without the server):
#  - a restart (kill -9, started again on the same ports at once) is
#    shorter than that window: no APD on either datastore, every host
#    back in service;
#  - an outage of 9 s is longer: APD starts on both datastores, the
#    volumes are not marked down (10 failures), and they come back in
#    service, the report saying after how long;
#  - with SunRPC.MaxConnPerIP at 1, ds1 and ds2 share one connection, and
#    dsnfsd's /flows shows it carrying both.
. "$(dirname "$0")/lib.sh"

# run_through SECONDS_DOWN RUNTIME OUT: dsload for RUNTIME s while
# dsnfsd is killed 2 s in and started again SECONDS_DOWN s later.
run_through() {
	local down=$1 runtime=$2 out=$3 nfs=$NFS_PORT mnt=$MOUNT_PORT pid
	"$DSNFS_BIN/dsload" --nfs-port "$nfs" --mount-port "$mnt" -D ds1,ds2 \
		--vmdks 2 --vmdk-size 16m --bs 8k --iodepth 4 --ramp 0 \
		--runtime "$runtime" --verify --esxi 8 --nconnect 2 \
		--esxi-timer-scale 0.2 --json "$out.json" \
		>"$out" 2>"$out.err" &
	pid=$!
	sleep 2
	kill -9 "$DSNFSD_PID"
	wait "$DSNFSD_PID" 2>/dev/null
	DSNFSD_PID=""
	sleep "$down"
	dsnfsd_start -p "$nfs" -m "$mnt" || return 1
	wait $pid
	local rc=$?
	grep -E '^  (esxi|connections)' "$out"
	tail -3 "$out.err"
	return $rc
}

dsnfsd_start || exit 1
check "dsload rides out a restart" run_through 0 8 "$TEST_TMP/restart"
check "restart: ESXi 8, nconnect 2, 4 connections per host" grep -q \
	'esxi 8: nconnect 2, 4 connection(s) per host, 0 datastore(s) sharing' \
	"$TEST_TMP/restart"
for ds in ds1 ds2; do
	check "restart: $ds heartbeats answered, no APD, no volume down" \
		grep -qE "esxi $ds: heartbeats [1-9][0-9]* \([01] failed\), APD start 0, marked down 0, APD timeout 0" \
		"$TEST_TMP/restart"
	check "restart: $ds in service at the end" grep -qE \
		"esxi $ds: .*; 0 host\(s\) without it at the end" "$TEST_TMP/restart"
done

check "dsload rides out a 9 s outage" run_through 9 16 "$TEST_TMP/outage"
for ds in ds1 ds2; do
	check "outage: $ds APD started, not marked down" grep -qE \
		"esxi $ds: heartbeats [0-9]+ \([3-9] failed\), APD start 1, marked down 0, APD timeout 0, back in service 1 time\(s\) after [0-9.]+ s" \
		"$TEST_TMP/outage"
	check "outage: $ds back in service at the end" grep -qE \
		"esxi $ds: .*; 0 host\(s\) without it at the end" "$TEST_TMP/outage"
done
check "outage: the JSON says how long (6 to 14 s, first failed heartbeat to service)" \
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
e = d["phases"][-1]["esxi"]
assert e["version"] == 8 and e["connections_per_host"] == 4, e
for ds in e["datastores"]:
    assert ds["apd_starts"] == 1 and 6 <= ds["outage_max_s"] <= 14, ds
' "$TEST_TMP/outage.json"
# Past SunRPC.MaxConnPerIP (here 1) ds1 and ds2 share one connection;
# the server keeps a flow for each on it (t6006 checks the same by hand).
"$DSNFS_BIN/dsload" --nfs-port "$NFS_PORT" --mount-port "$MOUNT_PORT" \
	-D ds1,ds2 --vmdks 2 --vmdk-size 16m --iodepth 4 --ramp 0 \
	--runtime 4 --max-conn-per-ip 1 \
	>"$TEST_TMP/shared" 2>"$TEST_TMP/shared.err" &
pid=$!
sleep 2.5
acurl -s "http://127.0.0.1:$ADMIN_PORT/flows" >"$TEST_TMP/flows.json"
check "shared: dsload exits 0" wait $pid
check "shared: one connection per host, both datastores on it" grep -q \
	'esxi 8: nconnect 1, 1 connection(s) per host, 2 datastore(s) sharing' \
	"$TEST_TMP/shared"
check "shared: /flows shows 127.0.1.1's one connection carrying ds1 and ds2" \
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
c = [g for g in d["connections"] if g["host"] == "127.0.1.1"]
assert len(c) == 1 and sorted(c[0]["volumes"]) == ["ds1", "ds2"], d
' "$TEST_TMP/flows.json"
check "server exits cleanly" dsnfsd_stop
test_done
