#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The admin endpoint's walls besides who may call (docs/security.md, "1.
# The admin API"): a FIFO named v.vmdk does not hang stats?path= (a clear
# 409), /metrics or the stop (SIGTERM ends dsnfsd within seconds); one
# request held open does not hold the others; a path with a '"' or a
# newline (it would break a VMDK descriptor) is 400; dsnfsd refuses to
# start on an unsafe admin.token (mode, owner, symlink, not a token), on
# a taken admin port (it ran without its endpoint before) and on an
# admin_listen beyond loopback without TLS; with [admin] tls_cert and
# tls_key it speaks HTTPS only, and curl and dsnfsctl --cacert talk to it.
. "$(dirname "$0")/lib.sh"
A() { echo "http://127.0.0.1:$ADMIN_PORT$1"; }
acode() { acurl -s -o "$TEST_TMP/body" -w '%{http_code}' "$@"; }

# Runs dsnfsd in the foreground (it must exit at once): its status in
# $rc, its stderr in $TEST_TMP/start.err.
start_fails() {
	timeout 20 "$DSNFS_BIN/dsnfsd" -f -l 127.0.0.1 -p 0 -m 0 -P off \
		-e ds1="$TEST_TMP/ds1" "$@" >/dev/null 2>"$TEST_TMP/start.err"
	rc=$?
}

dsnfsd_start || exit 1
ds1=$TEST_TMP/ds1

echo "a FIFO named like a disk"
mkfifo "$ds1/v.vmdk"
t0=$(date +%s)
c=$(timeout 20 bash -c "acurl -s -o '$TEST_TMP/body' -w '%{http_code}' '$(A /volumes/ds1/stats?path=v.vmdk)'")
check "stats?path=v.vmdk (a FIFO): 409 at once (it hung the API before)" status_is "$c" 409
check "... saying it is not a regular file" body_has 'not a regular file (a FIFO)'
check "... within 5 s" [ $(($(date +%s) - t0)) -le 5 ]
c=$(timeout 20 bash -c "acurl -s -o '$TEST_TMP/body' -w '%{http_code}' -H 'Content-Type: application/json' -d '{\"source\":\"v.vmdk\",\"target\":\"w.vmdk\",\"mode\":\"full\"}' '$(A /volumes/ds1/clones)'")
check "a clone of the FIFO: 409" status_is "$c" 409
c=$(timeout 10 bash -c "acurl -s -o /dev/null -w '%{http_code}' '$(A /metrics)'")
check "/metrics answers" [ "$c" = 200 ]

echo "one request held open does not hold the others"
# Half a request on one connection, kept open while the others run.
python3 - "$ADMIN_PORT" "$TEST_TMP/held" <<'PY' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n")
open(sys.argv[2], "w").close()
time.sleep(8)
s.close()
PY
held=$!
for _ in $(seq 50); do [ -e "$TEST_TMP/held" ] && break; sleep 0.1; done
c=$(timeout 5 bash -c "acurl -s -o /dev/null -w '%{http_code}' '$(A /volumes)'")
check "GET /volumes answers while another request is half sent" [ "$c" = 200 ]
wait $held

echo "paths that would break a descriptor"
"$DSNFS_BIN/dsvmdk" create -t thin -s 16M "$ds1/src.vmdk" >/dev/null
clone() { acode -H 'Content-Type: application/json' -d "$1" "$(A /volumes/ds1/clones)"; }
c=$(clone '{"source":"src.vmdk","target":"a\"b.vmdk","mode":"full"}')
check "a target with a '\"': 400" status_is "$c" 400
check "... naming the reason" body_has 'would break a VMDK descriptor'
c=$(clone '{"source":"src.vmdk","target":"a\nb.vmdk","mode":"full"}')
check "a target with a newline: 400" status_is "$c" 400
c=$(clone '{"source":"src.vmdk","target":"a\tb.vmdk","mode":"linked"}')
check "a target with a tab: 400" status_is "$c" 400
check "... and nothing was made" bash -c "! ls '$ds1' | grep -q '^a'"
c=$(acode "$(A '/volumes/ds1/stats?path=x%22.vmdk')")
check "stats?path= with a '\"': 400" status_is "$c" 400
c=$(clone '{"source":"src.vmdk","target":"ok.vmdk","mode":"full"}')
check "a plain target still clones" bash -c "[ '$c' = 201 ] || [ '$c' = 202 ]"

echo "SIGTERM with a FIFO request behind"
kill "$DSNFSD_PID"
t0=$(date +%s)
for _ in $(seq 100); do kill -0 "$DSNFSD_PID" 2>/dev/null || break; sleep 0.1; done
check "SIGTERM stops dsnfsd within 10 s" bash -c "! kill -0 $DSNFSD_PID 2>/dev/null"
wait "$DSNFSD_PID"
check "... cleanly" [ $? = 0 ]
DSNFSD_PID=""

echo "an unsafe admin.token"
st=$TEST_TMP/state
tok=$st/admin.token
cp "$tok" "$TEST_TMP/token.good"
chmod 640 "$tok"
start_fails -s "$st" -A 0
check "mode 0640: dsnfsd refuses to start (exit $rc)" [ "$rc" = 1 ]
check "... saying so" grep -q "admin.token: mode 0640 lets others read or write it" "$TEST_TMP/start.err"
chmod 600 "$tok"
if [ "$(id -u)" = 0 ]; then
	chown 65534 "$tok"
	start_fails -s "$st" -A 0
	check "owned by another uid: refused (exit $rc)" [ "$rc" = 1 ]
	check "... saying so" grep -q "admin.token: owned by uid 65534, not by dsnfsd's uid 0" "$TEST_TMP/start.err"
	chown 0 "$tok"
else
	echo "  (not root: the owner check is left to the unit test)"
fi
rm "$tok"
ln -s "$TEST_TMP/token.good" "$tok"
start_fails -s "$st" -A 0
check "a symlink: refused (exit $rc)" [ "$rc" = 1 ]
check "... saying so" grep -q "admin.token: a symlink, not a regular file" "$TEST_TMP/start.err"
rm "$tok"
mkfifo "$tok"
start_fails -s "$st" -A 0
check "a FIFO: refused without hanging (exit $rc)" [ "$rc" = 1 ]
rm "$tok"
printf 'not a token\n' >"$tok"
chmod 600 "$tok"
start_fails -s "$st" -A 0
check "malformed: refused (exit $rc)" [ "$rc" = 1 ]
check "... saying so" grep -q "admin.token: malformed" "$TEST_TMP/start.err"
cp -p "$TEST_TMP/token.good" "$tok"
chmod 600 "$tok"

echo "the admin port taken"
python3 - "$TEST_TMP/port" <<'PY' &
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
time.sleep(15)
PY
squatter=$!
for _ in $(seq 50); do [ -s "$TEST_TMP/port" ] && break; sleep 0.1; done
port=$(cat "$TEST_TMP/port")
start_fails -s "$st" -A "$port"
check "dsnfsd does not start without its endpoint (exit $rc)" [ "$rc" = 1 ]
check "... saying the port is in use" grep -q "admin port 127.0.0.1:$port: Address already in use" "$TEST_TMP/start.err"
kill $squatter
wait $squatter 2>/dev/null

echo "admin_listen beyond loopback"
printf '[server]\nadmin_listen = 0.0.0.0\n' >"$TEST_TMP/wide.conf"
start_fails -c "$TEST_TMP/wide.conf" -s "$st" -A 0
check "0.0.0.0 without TLS: refused at start (exit $rc)" [ "$rc" = 1 ]
check "... saying why" grep -q "admin_listen 0.0.0.0: beyond loopback the admin endpoint needs HTTPS" "$TEST_TMP/start.err"

echo "HTTPS"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$TEST_TMP/key.pem" \
	-out "$TEST_TMP/cert.pem" 2>/dev/null
chmod 600 "$TEST_TMP/key.pem"
printf '[admin]\ntls_cert = %s\ntls_key = %s\n' "$TEST_TMP/cert.pem" "$TEST_TMP/key.pem" >"$TEST_TMP/tls.conf"
dsnfsd_start -c "$TEST_TMP/tls.conf" || exit 1
H="https://127.0.0.1:$ADMIN_PORT"
c=$(acurl -s --cacert "$TEST_TMP/cert.pem" -o "$TEST_TMP/body" -w '%{http_code}' "$H/volumes")
check "curl --cacert over https with the token: 200" status_is "$c" 200
c=$(curl -s --cacert "$TEST_TMP/cert.pem" -o "$TEST_TMP/body" -w '%{http_code}' "$H/volumes")
check "... without it: 401" status_is "$c" 401
check "curl without the CA: the certificate is not trusted" bash -c "! curl -s -o /dev/null '$H/volumes'"
check "plain http to the TLS port gets no answer" bash -c "! curl -s -m 5 -o /dev/null -w '%{http_code}' 'http://127.0.0.1:$ADMIN_PORT/volumes' | grep -q '^[1-5]'"
check "dsnfsctl -s https://... --cacert" bash -c "'$DSNFS_BIN/dsnfsctl' -s 'https://127.0.0.1:$ADMIN_PORT' --cacert '$TEST_TMP/cert.pem' volumes | grep -q '^ds1 '"
check "dsnfsctl --cacert (https implied)" bash -c "'$DSNFS_BIN/dsnfsctl' -s '127.0.0.1:$ADMIN_PORT' --cacert '$TEST_TMP/cert.pem' volumes | grep -q '^ds1 '"
check "dsnfsctl without the CA: refused" bash -c "! '$DSNFS_BIN/dsnfsctl' -s 'https://127.0.0.1:$ADMIN_PORT' volumes 2>/dev/null"
c=$(curl -s --cacert "$TEST_TMP/cert.pem" -D "$TEST_TMP/h" -o /dev/null -H "Origin: $H" --data-urlencode "token@$DSNFS_ADMIN_TOKEN_FILE" "$H/login")
check "the login cookie over https is Secure" grep -qi '^Set-Cookie: dsnfs_session=.*; Secure' "$TEST_TMP/h"
check "the log names https" grep -q "admin: https://127.0.0.1:$ADMIN_PORT/" "$TEST_TMP/dsnfsd.log"
check "server exits cleanly" dsnfsd_stop
test_done
