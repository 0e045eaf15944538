#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Who may drive the admin API (docs/security.md, "1. The admin API"): the
# exploits of issue 23 replayed from outside.  A DNS-rebound page
# (Host: evil.example) is refused even with the token; a cross-site
# <img> GET of stats?path= (no credential, Sec-Fetch-Site: cross-site) is
# refused; a snapshot POST without a credential is refused (it was 202);
# the token of STATE_DIR/admin.token (0600) admits, a wrong one does
# not; /metrics needs it too; Origin must be the endpoint's own for every
# method; the login step sets an HttpOnly, SameSite=Strict session cookie
# that admits the page's polls; refusals are logged once per peer.
. "$(dirname "$0")/lib.sh"
dsnfsd_start || exit 1
A="http://127.0.0.1:$ADMIN_PORT"
TOK=$DSNFS_ADMIN_TOKEN_FILE
code() { curl -s -o "$TEST_TMP/body" -w '%{http_code}' "$@"; }
acode() { acurl -s -o "$TEST_TMP/body" -w '%{http_code}' "$@"; }

echo "the token file"
check "admin.token made at the first start" test -f "$TOK"
check "... mode 0600" [ "$(stat -c %a "$TOK")" = 600 ]
check "... owned by dsnfsd's uid" [ "$(stat -c %u "$TOK")" = "$(id -u)" ]
check "... 64 hex digits" grep -qxE '[0-9a-f]{64}' "$TOK"

echo "the exploit: Host: evil.example (DNS rebinding)"
c=$(code -H 'Host: evil.example' "$A/volumes")
check "GET /volumes with Host: evil.example is refused (421, was 200)" status_is "$c" 421
c=$(acode -H 'Host: evil.example' "$A/volumes")
check "... even with the token" status_is "$c" 421
c=$(acode -H "Host: evil.example:$ADMIN_PORT" -X DELETE "$A/volumes/ds1/snapshots/s1")
check "... and a DELETE of a snapshot" status_is "$c" 421
c=$(acode -H 'Host: 127.0.0.1' "$A/volumes")
check "Host: 127.0.0.1 (no port) is the endpoint's" status_is "$c" 200
c=$(acode -H "Host: localhost:$ADMIN_PORT" "$A/volumes")
check "Host: localhost:PORT is the endpoint's" status_is "$c" 200
c=$(acode -H "Host: 127.0.0.1:1" "$A/volumes")
check "Host: 127.0.0.1:1 (another port) is refused" status_is "$c" 421

echo "no credential, a wrong one, the right one"
curl -s -D "$TEST_TMP/h" -o "$TEST_TMP/body" "$A/volumes" >/dev/null
check "GET /volumes without the token: 401" grep -q '^HTTP/1.1 401' "$TEST_TMP/h"
check "... WWW-Authenticate: Bearer" grep -qi '^WWW-Authenticate: Bearer' "$TEST_TMP/h"
check "... a JSON error naming the token" body_has '"error": *"no credential'
c=$(code -H 'Content-Type: application/json' -d '{"name":"s1"}' "$A/volumes/ds1/snapshots")
check "POST of a snapshot without a credential: 401 (was 202)" status_is "$c" 401
c=$(code -H 'Content-Type: application/json' -X PATCH -d '{"volume_iops": 1}' "$A/caps")
check "PATCH /caps without a credential: 401" status_is "$c" 401
c=$(code -H "Authorization: Bearer $(printf '0%.0s' $(seq 64))" "$A/volumes")
check "a wrong token: 401" status_is "$c" 401
c=$(code -H "Authorization: Bearer $(head -c 63 "$TOK")" "$A/volumes")
check "the token less its last digit: 401" status_is "$c" 401
c=$(acode "$A/volumes")
check "the token: 200" status_is "$c" 200
c=$(code "$A/metrics")
check "/metrics without the token: 401" status_is "$c" 401
c=$(acode "$A/metrics")
check "/metrics with it: 200" status_is "$c" 200
check "dsnfsctl reads DSNFS_ADMIN_TOKEN_FILE" bash -c "'$DSNFS_BIN/dsnfsctl' -s 127.0.0.1:$ADMIN_PORT volumes | grep -q '^ds1 '"
check "dsnfsctl --token-file" bash -c "DSNFS_ADMIN_TOKEN_FILE= '$DSNFS_BIN/dsnfsctl' -s 127.0.0.1:$ADMIN_PORT --token-file '$TOK' volumes | grep -q '^ds1 '"
check "dsnfsctl --state-dir" bash -c "DSNFS_ADMIN_TOKEN_FILE= '$DSNFS_BIN/dsnfsctl' -s 127.0.0.1:$ADMIN_PORT --state-dir '$TEST_TMP/state' volumes | grep -q '^ds1 '"
check "dsnfsctl without a readable token: a clear error, exit 1" bash -c "
	'$DSNFS_BIN/dsnfsctl' -s 127.0.0.1:$ADMIN_PORT --token-file '$TEST_TMP/none' volumes 2>'$TEST_TMP/err'; rc=\$?
	[ \$rc = 1 ] && grep -q 'cannot read the admin token: $TEST_TMP/none: No such file' '$TEST_TMP/err'"

echo "cross-origin requests"
touch "$TEST_TMP/ds1/d.vmdk"
# What a browser sends for <img src=http://127.0.0.1:PORT/volumes/ds1/stats?path=d.vmdk>
# on another site: no credential of ours, Sec-Fetch-Site: cross-site.
c=$(code -H 'Sec-Fetch-Site: cross-site' -H 'Sec-Fetch-Dest: image' "$A/volumes/ds1/stats?path=d.vmdk")
check "a cross-site <img> GET of stats?path=: 403" status_is "$c" 403
c=$(acode -H 'Sec-Fetch-Site: cross-site' "$A/volumes/ds1/stats?path=d.vmdk")
check "... refused even with the token" status_is "$c" 403
c=$(acode -H 'Sec-Fetch-Site: same-site' "$A/volumes")
check "Sec-Fetch-Site: same-site (another port of localhost): 403" status_is "$c" 403
c=$(acode -H 'Origin: http://evil.example' "$A/volumes")
check "GET with Origin: http://evil.example: 403" status_is "$c" 403
c=$(acode -H 'Origin: http://evil.example' -H 'Content-Type: application/json' -d '{"name":"s1"}' "$A/volumes/ds1/snapshots")
check "POST with Origin: http://evil.example: 403" status_is "$c" 403
c=$(acode -H "Origin: http://localhost:$ADMIN_PORT" "$A/volumes")
check "an Origin of another name of the endpoint: 403" status_is "$c" 403
c=$(acode -H 'Origin: null' "$A/volumes")
check "Origin: null: 403" status_is "$c" 403
c=$(acode -H "Origin: http://127.0.0.1:$ADMIN_PORT" -H 'Sec-Fetch-Site: same-origin' "$A/volumes")
check "same-origin (Origin = http://HOST): 200" status_is "$c" 200

echo "the login step"
c=$(code "$A/")
check "GET / without a session is the login form" status_is "$c" 200
check "... a form that POSTs to /login" body_has 'action="/login"'
check "... not the dashboard" bash -c "! grep -q 'dashboard.js' '$TEST_TMP/body'"
c=$(code -H "Origin: http://127.0.0.1:$ADMIN_PORT" --data-urlencode "token=$(printf 'f%.0s' $(seq 64))" "$A/login")
check "POST /login with a wrong token: 401" status_is "$c" 401
c=$(code -H 'Origin: http://evil.example' --data-urlencode "token=$(cat "$TOK")" "$A/login")
check "POST /login from another origin: 403, even with the token" status_is "$c" 403
curl -s -D "$TEST_TMP/h" -o /dev/null -H "Origin: http://127.0.0.1:$ADMIN_PORT" \
	--data-urlencode "token@$TOK" "$A/login"
check "POST /login (form): 303 to /" grep -q '^HTTP/1.1 303' "$TEST_TMP/h"
check "... a Set-Cookie HttpOnly, SameSite=Strict, Path=/, expiring" \
	grep -qiE '^Set-Cookie: dsnfs_session=[0-9a-f]{64}; HttpOnly; SameSite=Strict; Path=/; Max-Age=[0-9]+' "$TEST_TMP/h"
sid=$(sed -n 's/^Set-Cookie: dsnfs_session=\([0-9a-f]*\);.*/\1/ip' "$TEST_TMP/h" | tr -d '\r')
check "... the session id is not the token" [ -n "$sid" ] && [ "$sid" != "$(cat "$TOK")" ]
c=$(code -b "dsnfs_session=$sid" "$A/volumes")
check "the session cookie admits GET /volumes" status_is "$c" 200
c=$(code -b "dsnfs_session=$sid" "$A/")
check "... and / is now the dashboard" status_is "$c" 200
check "... (it loads dashboard.js)" body_has 'dashboard.js'
# The same id but its last digit (made different whatever it was: a
# fixed "0" was the real id one time in 16).
last=${sid: -1}
[ "$last" = 0 ] && other=1 || other=0
c=$(code -b "dsnfs_session=${sid%?}$other" "$A/volumes")
check "another session id: 401" status_is "$c" 401
c=$(code -b "dsnfs_session=$sid" -H 'Sec-Fetch-Site: cross-site' "$A/volumes")
check "the cookie from another site: 403" status_is "$c" 403
c=$(code -H 'Content-Type: application/json' -d "{\"token\": \"$(cat "$TOK")\"}" "$A/login")
check "POST /login (JSON): 204" status_is "$c" 204
c=$(code -b "dsnfs_session=$sid" -X POST "$A/logout")
check "POST /logout: 204" status_is "$c" 204
c=$(code -b "dsnfs_session=$sid" "$A/volumes")
check "... the session is over: 401" status_is "$c" 401

echo "the log"
for _ in 1 2 3 4 5; do code -H 'Host: evil.example' "$A/volumes" >/dev/null; done
n=$(grep -c 'admin: 127.0.0.1: .* refused' "$TEST_TMP/dsnfsd.log")
check "refusals logged once per peer, not per request (got $n lines)" [ "$n" = 1 ]
check "... the line says why" grep -q "refused 421: Host 'evil.example' is not this endpoint's" "$TEST_TMP/dsnfsd.log"
check "no token in the log" bash -c "! grep -qF '$(cat "$TOK")' '$TEST_TMP/dsnfsd.log' '$TEST_TMP/dsnfsd.out'"

check "server exits cleanly" dsnfsd_stop
test_done
