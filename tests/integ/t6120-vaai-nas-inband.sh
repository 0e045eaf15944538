#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# VAAI-NAS in-band on a local datastore: NFSv3 procedure 22 as the public
# ESXi plug-in sends it (tests/integ/vaainas.py), checked by
# t6120-vaai-nas-inband.py: support queries, a full clone followed to the
# end and read back, Extended Statistics, Reserve Space, an abort, and
# every refusal of the trust boundary (docs/security.md) with nothing
# written.  Then: the in-band clones are the admin API's operations
# (GET /operations lists them), the log has one line per refused call,
# and libnfs clients that never send procedure 22 see no change.
. "$(dirname "$0")/lib.sh"

py=$(dirname "$0")/t6120-vaai-nas-inband.py
conf=$TEST_TMP/vaai.conf
mkdir -p "$TEST_TMP/ds3" "$TEST_TMP/ds4" "$TEST_TMP/ds5" "$TEST_TMP/ds6"
: >"$TEST_TMP/ds3/empty.img"
echo data >"$TEST_TMP/ds3/data.img"
echo secret >"$TEST_TMP/ds4/secret.img"
chmod 0600 "$TEST_TMP/ds4/secret.img"
: >"$TEST_TMP/ds4/empty.img"
chmod 0666 "$TEST_TMP/ds4/empty.img"
{
	echo "[datastore ds3]"
	echo "path = $TEST_TMP/ds3"
	lab_access
	echo "read_only = true"
	echo "[datastore ds4]"
	echo "path = $TEST_TMP/ds4"
	echo "clients = 127.0.0.0/8"
	echo "secure = false"
	echo "squash = root"
	echo "[datastore ds5]"
	echo "path = $TEST_TMP/ds5"
	echo "clients = 127.0.0.0/8"
	echo "squash = none"
	printf '[pool lab]\nlevel = premium\nsize_tib = 4\nqos = manual\n'
	echo "[datastore ds6]"
	echo "path = $TEST_TMP/ds6"
	lab_access
	printf 'pool = lab\nquota = 8MiB\nthroughput_mibps = 200\n'
} >"$conf"
backend=${DSNFS_DS1_BACKEND:-local}
dsnfsd_start -c "$conf" || exit 1
check "procedure 22 on $backend ds1 (python raw RPC, vaainas.py)" \
	python3 "$py" "$NFS_PORT" "$MOUNT_PORT" "$backend"
# Charged to the flow like any other call: ds1's other ops count each.
other_ops() {
	acurl -s "http://127.0.0.1:$ADMIN_PORT/metrics" |
		sed -n 's/^dsnfs_volume_other_ops_total{volume="ds1"[^}]*} \([0-9]*\).*/\1/p'
}
before=$(other_ops)
python3 -c '
import sys
sys.path.insert(0, sys.argv[1])
import vaainas as v
from nfs3wire import MountClient, auth_sys
with MountClient(("127.0.0.1", int(sys.argv[3]))) as m:
    root = m.mnt("/ds1").fhandle
c = v.VaaiClient(("127.0.0.1", int(sys.argv[2])), cred=auth_sys(0, 0))
for _ in range(50):
    assert c.stat(root).status == 0
' "$(dirname "$0")" "$NFS_PORT" "$MOUNT_PORT"
after=$(other_ops)
check "50 procedure-22 calls are 50 more of ds1's ops ($before -> $after)" \
	test "$((after - before))" -ge 50 -a "$((after - before))" -le 55
ops=$TEST_TMP/operations.json
acurl -s "http://127.0.0.1:$ADMIN_PORT/operations" >"$ops"
check "GET /operations lists the in-band clones (one engine)" \
	grep -q '"vaai-nas"' "$ops"
check "... the full clone done, the aborted one failed" \
	python3 -c '
import json, sys
ops = [o for o in json.load(open(sys.argv[1]))["operations"]
       if o["mode"] == "vaai-nas"]
states = sorted(o["state"] for o in ops)
targets = {o["target"]: o["state"] for o in ops}
ok = targets.get("clone-flat.vmdk") == "done" and \
    targets.get("big-clone-flat.vmdk") == "failed"
print(states, targets) if not ok else None
sys.exit(0 if ok else 1)' "$ops"
check "a refused call's log line names the reason" \
	grep -q 'VAAI-NAS command 1 refused (NFS3ERR_EXIST): the target holds 8 bytes' \
	"$TEST_TMP/dsnfsd.log"
check "... an unknown command's names it" \
	grep -q 'VAAI-NAS command .* refused (NFS3ERR_NOTSUPP): VAAI-NAS command 9 is not known' \
	"$TEST_TMP/dsnfsd.log"
check "... at most one a second, the rest counted" \
	test "$(grep -c 'VAAI-NAS command' "$TEST_TMP/dsnfsd.log")" -le 12
# A client that never sends procedure 22 sees no change.
head -c 3000000 /dev/urandom >"$TEST_TMP/plain.bin"
check "libnfs: nfs-cp in and out of ds1 still works" \
	sh -c "nfs-cp '$TEST_TMP/plain.bin' '$(nfs_url ds1 plain.bin)' &&
		nfs-cp '$(nfs_url ds1 plain.bin)' '$TEST_TMP/back.bin' &&
		cmp '$TEST_TMP/plain.bin' '$TEST_TMP/back.bin'"
check "server exits cleanly" dsnfsd_stop
test_done
