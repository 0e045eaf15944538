#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A server that is not there is a clear error within seconds, never a
# hang: nothing listening (refused at once), a listener that accepts but
# never answers (the setup timeout), a server address that is not
# loopback, and a datastore the server does not export.
. "$(dirname "$0")/lib.sh"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

start=$SECONDS
"$DSNFS_BIN/dsload" --portmap-port "$port" --quiet 2>"$TEST_TMP/refused.err"
rc=$?
cat "$TEST_TMP/refused.err"
check "nothing listening: exit 2" [ $rc -eq 2 ]
check "nothing listening: says refused" grep -q \
	"127.0.0.1:$port: portmapper GETPORT: Connection refused" "$TEST_TMP/refused.err"
check "nothing listening: within 2 s" [ $((SECONDS - start)) -le 2 ]

# A listener whose accept queue takes the connection and never replies.
python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
print(s.getsockname()[1], flush=True); time.sleep(30)' >"$TEST_TMP/mute.port" &
mute=$!
for _ in $(seq 1 50); do [ -s "$TEST_TMP/mute.port" ] && break; sleep 0.1; done
start=$SECONDS
"$DSNFS_BIN/dsload" --nfs-port "$(cat "$TEST_TMP/mute.port")" \
	--mount-port "$(cat "$TEST_TMP/mute.port")" --timeout 2000 --quiet \
	2>"$TEST_TMP/mute.err"
rc=$?
kill $mute 2>/dev/null
wait $mute 2>/dev/null
cat "$TEST_TMP/mute.err"
check "mute server: exit 2" [ $rc -eq 2 ]
check "mute server: says timed out" grep -q "MNT /ds1: Connection timed out" "$TEST_TMP/mute.err"
check "mute server: within 5 s" [ $((SECONDS - start)) -le 5 ]

"$DSNFS_BIN/dsload" -s 192.0.2.1 --quiet 2>"$TEST_TMP/far.err"
check "non-loopback server: exit 2" [ $? -eq 2 ]
check "non-loopback server: explained" grep -q "must listen on 127.0.0.0/8" "$TEST_TMP/far.err"

dsnfsd_start || exit 1
"$DSNFS_BIN/dsload" --nfs-port "$NFS_PORT" --mount-port "$MOUNT_PORT" \
	-D ds1,nope --quiet 2>"$TEST_TMP/nope.err"
rc=$?
cat "$TEST_TMP/nope.err"
check "unknown datastore: exit 2" [ $rc -eq 2 ]
check "unknown datastore: MNT refused" grep -q "MNT /nope: refused: no such export" "$TEST_TMP/nope.err"
check "server exits cleanly" dsnfsd_stop
test_done
