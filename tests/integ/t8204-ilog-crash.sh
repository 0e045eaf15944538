#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The intent log across SIGKILL: replay writes back acknowledged
# FILE_SYNC data (past EOF too) and undoes no later COMMIT, truncate,
# REMOVE, RENAME or CREATE, nor a large write synced in place over logged
# bytes (see the .py); then t8201's verified FILE_SYNC +
# UNSTABLE/COMMIT load under kill -9, with the log on.
. "$(dirname "$0")/lib.sh"

check "replay restores, and undoes nothing later" python3 \
	"$(dirname "$0")/t8204-ilog-crash.py" "$DSNFS_BIN/dsnfsd" "$TEST_TMP/a"
mkdir -p "$TEST_TMP/b"
printf '[server]\nintent_log = %s\n' "$TEST_TMP/b/intent.log" \
	>"$TEST_TMP/b/ilog.conf"
check "acknowledged writes survive 8 kills with the intent log on" \
	env CRASH_DSNFSD_ARGS="-c $TEST_TMP/b/ilog.conf" python3 \
	"$(dirname "$0")/t8201-crash-kill9.py" "$DSNFS_BIN/dsnfsd" \
	"$TEST_TMP/b" "${CRASH_ROUNDS:-8}"

# The log's counters on /metrics, labelled with its path.
mkdir -p "$TEST_TMP/c"
printf '[server]\nintent_log = %s\nintent_log_immediate_max_bytes = 32768\n' \
	"$TEST_TMP/c/intent.log" >"$TEST_TMP/c/ilog.conf"
dsnfsd_start -c "$TEST_TMP/c/ilog.conf" || exit 1
: >"$TEST_TMP/ds1/f"
check "FILE_SYNC writes through NFS, 8 and 64 KiB" python3 -c '
import sys; sys.dont_write_bytecode = True; sys.path.insert(0, sys.argv[1])
from nfs3wire import *
m = MountClient(("127.0.0.1", int(sys.argv[3]))); root = m.mnt("/ds1").fhandle
c = Nfs3Client(("127.0.0.1", int(sys.argv[2])))
fh = c.lookup(root, "f").object
sys.exit(c.write(fh, 0, b"x" * 8192, stable=FILE_SYNC).status != NFS3_OK or
         c.write(fh, 0, b"y" * 65536, stable=FILE_SYNC).status != NFS3_OK)
' "$(dirname "$0")" "$NFS_PORT" "$MOUNT_PORT"
# Over written blocks now: O_DIRECT through the log's io_uring, answered
# off the loop; its post-op attributes are the file's after the write.
check "a FILE_SYNC write through the ring: post-op attributes after it" python3 -c '
import sys; sys.dont_write_bytecode = True; sys.path.insert(0, sys.argv[1])
from nfs3wire import *
m = MountClient(("127.0.0.1", int(sys.argv[3]))); root = m.mnt("/ds1").fhandle
c = Nfs3Client(("127.0.0.1", int(sys.argv[2])))
fh = c.lookup(root, "f").object
r = c.write(fh, 0, b"z" * 65536, stable=FILE_SYNC)
a = c.getattr(fh).attributes
after = r.file_wcc.after
print(r.status, r.committed, after and (after.size, after.mtime), a.size, a.mtime)
sys.exit(r.status != NFS3_OK or r.committed != FILE_SYNC or after is None or
         after.size != 65536 or after.mtime != a.mtime or
         c.read(fh, 0, 65536).data != b"z" * 65536)
' "$(dirname "$0")" "$NFS_PORT" "$MOUNT_PORT"
metric() { acurl -s "http://127.0.0.1:$ADMIN_PORT/metrics" | awk -v m="$1{log=\"$TEST_TMP/c/intent.log\"}" '$1 == m { print $2 }'; }
check "records on /metrics" [ "$(metric dsnfs_intent_log_records_total)" -ge 1 ]
check "flushes on /metrics" [ "$(metric dsnfs_intent_log_flushes_total)" -ge 1 ]
check "checkpoints on /metrics" [ -n "$(metric dsnfs_intent_log_checkpoints_total)" ]
check "in-place writes on /metrics" [ "$(metric dsnfs_intent_log_inplace_writes_total)" -ge 1 ]
# 16 WRITEs of 64 KiB in flight over written blocks, one after the other
# in the file: the ring takes them together and merges those that meet.
before_w=$(metric dsnfs_intent_log_ring_writes_total)
before_v=$(metric dsnfs_intent_log_ring_writevs_total)
check "16 FILE_SYNC writes in flight, all stable and read back" python3 -c '
import struct, sys; sys.dont_write_bytecode = True; sys.path.insert(0, sys.argv[1])
from nfs3wire import *
m = MountClient(("127.0.0.1", int(sys.argv[3]))); root = m.mnt("/ds1").fhandle
c = Nfs3Client(("127.0.0.1", int(sys.argv[2])))
fh = c.lookup(root, "f").object
K = 65536
bad = c.write(fh, 0, bytes(16 * K), stable=FILE_SYNC).status != NFS3_OK
msgs, xids = b"", []
for n in range(16):
    c.xid += 1; xids.append(c.xid)
    msgs += record_frame(call_header(c.xid, NFS_PROGRAM, NFS_V3, 7, c.cred) +
                         encode_args(7, fh, n * K, bytes([n + 1]) * K, FILE_SYNC))
c.sock.sendall(msgs)
for _ in range(16):
    data = c.recv_message()
    xid = struct.unpack(">I", data[:4])[0]
    u = parse_reply(data, xid); st = u.u32(); r = decode_write(u, st)
    bad |= st != NFS3_OK or r["committed"] != FILE_SYNC or r["count"] != K
for n in range(16):
    bad |= c.read(fh, n * K, K).data != bytes([n + 1]) * K
sys.exit(bad)
' "$(dirname "$0")" "$NFS_PORT" "$MOUNT_PORT"
after_w=$(metric dsnfs_intent_log_ring_writes_total)
after_v=$(metric dsnfs_intent_log_ring_writevs_total)
echo "  ring: $((after_w - before_w)) writes in $((after_v - before_v)) writevs"
check "the ring took the 16 writes" [ $((after_w - before_w)) -ge 16 ]
check "and merged some: fewer writevs than writes" \
	[ $((after_v - before_v)) -lt $((after_w - before_w)) ]
check "ring writes on /metrics" [ "$(metric dsnfs_intent_log_ring_writes_total)" -ge 1 ]
check "their writevs on /metrics" [ "$(metric dsnfs_intent_log_ring_writevs_total)" -ge 1 ]
check "full waits on /metrics" [ "$(metric dsnfs_intent_log_full_waits_total)" = 0 ]
check "server exits cleanly" dsnfsd_stop
test_done
