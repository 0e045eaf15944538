#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The dashboard at GET / of the admin port, in headless Chromium (cdp.py):
# the page, its script and Chart.js (from libjs-chart.js) are served by
# dsnfsd; without a session / is the login form, which Chromium fills with
# the token of admin.token and submits (the token in no URL), and the page
# then polls the API with its session cookie; while dsload runs against a
# datastore in a pool, the page logs no
# console error or exception and its charts get points with traffic in
# them.  The screenshot stays in BUILD/dashboard.png.  The example Grafana
# dashboard in etc/ names only metrics /metrics has.
. "$(dirname "$0")/lib.sh"
SHOT=$(dirname "$DSNFS_BIN")/dashboard.png
# cdp.py needs Debian's python3-websocket: Debian's python3, whatever PATH
# says.
for c in chromium /usr/bin/python3 curl; do
	command -v $c >/dev/null || {
		echo "$c missing: make deps installs mk/packages.txt" >&2
		exit 1
	}
done
dsnfsd_start || exit 1
ADMIN=127.0.0.1:$ADMIN_PORT
ctl() { "$DSNFS_BIN/dsnfsctl" -s "$ADMIN" "$@"; }
ctl pool create gold --level premium --size 1 >/dev/null
ctl volume create ds1 --pool gold --quota 100GiB >/dev/null
check "ds1 is in pool gold (limit 6.25 MiB/s)" eval 'ctl volumes | grep -q "^ds1 *gold"'

type_of() { curl -s -o /dev/null -w '%{http_code} %{content_type}' "http://$ADMIN$1"; }
check "GET / is a page (the login form without a session)" [ "$(type_of /)" = "200 text/html; charset=utf-8" ]
check "... the login form, not the dashboard" bash -c "curl -s 'http://$ADMIN/' | grep -q 'action=\"/login\"'"
check "GET /dashboard.js" [ "$(type_of /dashboard.js)" = "200 text/javascript; charset=utf-8" ]
check "GET /chart.js is Debian's Chart.js" eval \
	'curl -s "http://$ADMIN/chart.js" | cmp -s - /usr/share/javascript/chart.js/chart.min.js'
check "the API still answers beside it" eval 'acurl -sf "http://$ADMIN/volumes" | grep -q "\"ds1\""'
check "... and not without the token" [ "$(curl -s -o /dev/null -w '%{http_code}' "http://$ADMIN/volumes")" = 401 ]

"$DSNFS_BIN/dsload" --nfs-port "$NFS_PORT" --mount-port "$MOUNT_PORT" -D ds1 \
	-H 2 --bs 64k --ramp 0 --runtime 60 --quiet >"$TEST_TMP/dsload.out" 2>&1 &
lpid=$!
sleep 1
expr='JSON.stringify({chart: typeof Chart, ' \
expr+='charts: ["iops", "mibps", "latency"].map(k => { const c = document.getElementById("chart-" + k); '
expr+='return {kind: k, points: +c.dataset.points, max: +c.dataset.max, drawn: !!Chart.getChart(c), '
expr+='datasets: Chart.getChart(c) ? Chart.getChart(c).data.datasets.map(d => d.label) : []}; }), '
expr+='volumes: document.querySelectorAll("#t-volumes tr").length - 1, '
expr+='flows: document.querySelectorAll("#t-flows tr").length - 1, '
expr+='status: document.getElementById("status").textContent})'
/usr/bin/python3 tests/integ/cdp.py --login "$DSNFS_ADMIN_TOKEN_FILE" "http://$ADMIN/" 9 "$SHOT" "$expr" >"$TEST_TMP/cdp.json" 2>"$TEST_TMP/cdp.err"
rc=$?
# /metrics while the hosts are connected (for the Grafana check below).
acurl -s "http://$ADMIN/metrics" >"$TEST_TMP/metrics"
# Enough traffic seen: end dsload (by its pid).
kill $lpid 2>/dev/null
wait $lpid 2>/dev/null
cat "$TEST_TMP/cdp.err"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps(d, indent=1))' "$TEST_TMP/cdp.json"
check "Chromium loaded the page (rc=$rc)" [ $rc -eq 0 ]
[ $rc -eq 0 ] || test_done
j() { python3 -c "import json,sys; d=json.load(open('$TEST_TMP/cdp.json')); v=json.loads(d['value']); print($1)"; }
check "no console error, no exception" [ "$(python3 -c "import json; print(len(json.load(open('$TEST_TMP/cdp.json'))['errors']))")" = 0 ]
check "Chart.js is loaded" [ "$(j 'v["chart"]')" = function ]
check "three charts are drawn" [ "$(j 'sum(c["drawn"] for c in v["charts"])')" = 3 ]
check "the charts have points (>= 3 each)" [ "$(j 'min(c["points"] for c in v["charts"])')" -ge 3 ]
check "IOPS and MiB/s show dsload's traffic" [ "$(j 'int(v["charts"][0]["max"] > 0 and v["charts"][1]["max"] > 0)')" = 1 ]
check "the latency chart has values" [ "$(j 'int(v["charts"][2]["max"] > 0)')" = 1 ]
check "ds1's QoS limit is drawn as a line" [ "$(j 'int("ds1 limit" in v["charts"][1]["datasets"])')" = 1 ]
check "the tables list ds1, ds2 and dsload's flows" [ "$(j 'int(v["volumes"] == 2 and v["flows"] >= 2)')" = 1 ]
check "screenshot $SHOT" [ -s "$SHOT" ]
# The example Grafana dashboard (etc/) charts names /metrics has.
missing=""
for m in $(grep -oE 'dsnfs_[a-z_]+' etc/grafana-dashboard.json | sort -u); do
	grep -q "^$m[{ ]" "$TEST_TMP/metrics" || missing="$missing $m"
done
[ -z "$missing" ] || echo "    not in /metrics:$missing"
check "etc/grafana-dashboard.json uses only names of /metrics" [ -z "$missing" ]
check "etc/grafana-dashboard.json is JSON" /usr/bin/python3 -m json.tool etc/grafana-dashboard.json /dev/null
check "server exits cleanly" dsnfsd_stop
test_done
