#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# dsload sweep against dsnfsd: 1-2 hosts x 1-2 datastores, the four
# corners, one second each, every block verified.  Exit status 0, zero
# mismatches, every read checked something, one flow per host and
# datastore as the server saw it, the server's own counters (admin
# endpoint) agreeing with the client's, ESXi-shaped VMDKs left on the
# datastores.
. "$(dirname "$0")/lib.sh"

dsnfsd_start || exit 1
out="$TEST_TMP/sweep"
"$DSNFS_BIN/dsload" sweep --nfs-port "$NFS_PORT" --mount-port "$MOUNT_PORT" \
	-H 1,2 -D 1,2 --runtime 1 --ramp 0.2 --iodepth 8 --vmdk-size 32m \
	--admin-port "$ADMIN_PORT" --verify --quiet --out "$out" >"$TEST_TMP/sweep.out" 2>"$TEST_TMP/sweep.err"
rc=$?
sed -n '/^== sweep/,$p' "$TEST_TMP/sweep.out"
check "dsload sweep exits 0" [ $rc -eq 0 ]
check "stderr has no MISMATCH" bash -c "! grep -q MISMATCH '$TEST_TMP/sweep.err'"
check "16 table rows (4 points x 4 corners)" \
	[ "$(grep -cE '^ +[12] +[12] +1 +[12] +[1-4]  (seq|rand)' "$TEST_TMP/sweep.out")" -eq 16 ]
check "flows = hosts x datastores" \
	grep -qE '^ +2 +2 +1 +2 +4  randread' "$TEST_TMP/sweep.out"
# CSV: the total rows have zero mismatches and zero errors, and IOPS.
check "CSV totals: no errors, no mismatches, IOPS > 0" awk -F, '
	NR > 1 && $3 == "total" { n++; if ($28 != 0 || $30 != 0 || $18 <= 0) bad++ }
	END { exit !(n == 16 && bad == 0) }' "$out/sweep.csv"
check "every read phase checked units" python3 -c "
import json, sys
d = json.load(open('$out/sweep.json'))
reads = [p for p in d['phases'] if p['workload']['read_pct'] == 100]
tot = [[r for r in p['rows'] if r['level'] == 'total'][0] for p in reads]
sys.exit(not (len(tot) == 8 and all(t['verified_units'] > 0 and t['mismatches'] == 0 for t in tot)))"
check "server view: its IOPS within 5% of the client's, every phase" python3 -c "
import json, sys
d = json.load(open('$out/sweep.json'))
bad = 0
for p in d['phases']:
    srv = p['server']
    if not srv or 'total' not in srv:
        bad += 1
        continue
    client = srv['client_same_interval']['iops']
    if abs(srv['total']['iops'] / client - 1) > 0.05:
        print(p['phase'], client, srv['total']['iops'])
        bad += 1
    if len(srv['hosts']) != p['fleet']['hosts']:
        bad += 1
sys.exit(bad != 0)"
check "plot written" grep -q '<svg' "$out/sweep.svg"
check "the PNG beside it" bash -c "head -c 8 '$out/sweep.png' | od -An -tx1 | grep -q '89 50 4e 47 0d 0a 1a 0a'"
check "one panel per block size, both drawn" [ "$(grep -c '^plot' "$out/sweep.gp")" = 4 ]
check "server saw host 127.0.1.2 mount ds2" \
	grep -q '127.0.1.2: mounted /ds2' "$TEST_TMP/dsnfsd.log"
check "descriptor names its flat extent" \
	grep -q 'RW 65536 VMFS "vm1-disk1-flat.vmdk"' "$TEST_TMP/ds1/vm1/vm1-disk1.vmdk"
check "qemu-img reads the descriptor as a 32 MiB vmdk" bash -c \
	"qemu-img info '$TEST_TMP/ds2/vm0/vm0-disk1.vmdk' | grep -q 'virtual size: 32 MiB'"
check ".lck files removed at the end" \
	bash -c "[ -z \"\$(find '$TEST_TMP/ds1' '$TEST_TMP/ds2' -name '.lck-*')\" ]"
check "server exits cleanly" dsnfsd_stop
test_done
