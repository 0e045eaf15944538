# SPDX-License-Identifier: Apache-2.0
# Shared helpers of the replication tests (t5016-t5020), sourced after
# lib.sh.  A server has a name (src, dst, ...): its state directory is
# $TEST_TMP/NAME.state, its output NAME.out, its log NAME.log; after
# srv_start its ports are in NAME_NFS NAME_MOUNT NAME_ADMIN, its process
# in NAME_PID and its admin endpoint in NAME_URL.
#
# repl_key                        the relation's key: $TEST_TMP/r.key (0600)
# srv_start NAME CONF [ADDR [CMD...]]
#                                 starts dsnfsd NAME with config CONF on
#                                 ADDR (127.0.0.1), under CMD when given
#                                 (ip netns exec NS: another namespace);
#                                 SRV_CACERT=PEM: its admin endpoint is
#                                 HTTPS (CONF's [admin] tls_cert, signed
#                                 by PEM), NAME_URL https://
# srv_restart NAME               starts NAME again as srv_start last did, on
#                                 the same admin port (the other end's URL)
# srv_stop NAME                   SIGTERM, wait; fails if it did not exit 0
# srv_kill9 NAME                  kill -9, wait
# scurl NAME ARGS...              curl with NAME's admin token
# rel NAME VOLUME RELATION EXPR   prints python EXPR of the relation's JSON
#                                 (r) in GET /volumes/VOLUME/replication
# rel_act NAME VOLUME ACTION [RELATION]
#                                 POST .../replication/ACTION: prints the
#                                 status; the body goes to $TEST_TMP/body
# srv_nfs_url NAME DS PATH        nfs:// URL of PATH in NAME's DS
# nfs_write NAME DS PATH OFF FILE FILE's bytes written at OFF of PATH in
#                                 NAME's DS over NFS (WRITE calls)
# same_on NAME DS PATH FILE       PATH read over NFS from NAME's DS has
#                                 FILE's sha256
# repl_section ROLE NAME DS KEY... prints [replication NAME] (ROLE, DS, the
#                                 key file) and the KEY=VALUE lines given
# srv_cleanup                     kills the servers still running (EXIT)
# has TEXT PART                   TEXT holds PART (says TEXT when not)

REPL_SERVERS=""

repl_key() {
	openssl rand -hex 32 >"$TEST_TMP/r.key"
	chmod 600 "$TEST_TMP/r.key"
}

srv_start() {
	local name=$1 conf=$2 addr=${3:-127.0.0.1}
	shift 3 2>/dev/null || shift $#
	mkdir -p "$TEST_TMP/$name.state"
	: >"$TEST_TMP/$name.out"
	declare -g "${name}_CONF=$conf"
	"$@" "$DSNFS_BIN/dsnfsd" -f -l "$addr" -p 0 -m 0 -P off \
		-A "${SRV_ADMIN_PORT:-0}" \
		-s "$TEST_TMP/$name.state" -c "$conf" \
		>"$TEST_TMP/$name.out" 2>>"$TEST_TMP/$name.log" &
	local pid=$!
	declare -g "${name}_PID=$pid"
	REPL_SERVERS="$REPL_SERVERS $name"
	if ! wait_for 20 grep -q '^dsnfsd: listening' "$TEST_TMP/$name.out"; then
		echo "dsnfsd $name did not start:" >&2
		tail -20 "$TEST_TMP/$name.log" >&2
		return 1
	fi
	local line
	line=$(grep '^dsnfsd: listening' "$TEST_TMP/$name.out")
	declare -g "${name}_NFS=$(echo "$line" | sed 's/.* nfs=\([0-9]*\).*/\1/')"
	declare -g "${name}_MOUNT=$(echo "$line" | sed 's/.* mount=\([0-9]*\).*/\1/')"
	declare -g "${name}_ADMIN=$(echo "$line" | sed 's/.* admin=\([0-9]*\).*/\1/')"
	local port="${name}_ADMIN" scheme=http
	declare -g "${name}_CACERT=${SRV_CACERT:-}"
	[ -z "${SRV_CACERT:-}" ] || scheme=https
	declare -g "${name}_URL=$scheme://$addr:${!port}"
	declare -g "${name}_ADDR=$addr"
	# The namespace's command, for the tools that talk to this server.
	declare -g "${name}_CMD=$*"
}

srv_restart() {
	local c="${1}_CONF" p="${1}_ADMIN" a="${1}_ADDR" cmd="${1}_CMD" \
		ca="${1}_CACERT"
	# shellcheck disable=SC2086
	SRV_ADMIN_PORT=${!p} SRV_CACERT=${!ca} srv_start "$1" "${!c}" "${!a}" ${!cmd}
}

has() {
	[[ "$1" == *"$2"* ]] || {
		echo "    not in: $1"
		return 1
	}
}

srv_stop() {
	local v="${1}_PID" rc=0
	[ -n "${!v:-}" ] || return 0
	kill "${!v}"
	wait "${!v}" || rc=$?
	declare -g "$v="
	[ $rc -eq 0 ] || { echo "dsnfsd $1 exited with $rc" >&2; tail -20 "$TEST_TMP/$1.log" >&2; }
	return $rc
}

srv_kill9() {
	local v="${1}_PID"
	[ -n "${!v:-}" ] || return 0
	kill -9 "${!v}"
	wait "${!v}" 2>/dev/null
	declare -g "$v="
}

srv_cleanup() {
	local s v
	for s in $REPL_SERVERS; do
		v="${s}_PID"
		if [ -n "${!v:-}" ]; then
			kill "${!v}" 2>/dev/null && wait "${!v}" 2>/dev/null
			declare -g "$v="
		fi
	done
}

# The server's namespace command (empty on the host).
srv_in() {
	local c="${1}_CMD"
	echo "${!c:-}"
}

scurl() {
	local name=$1 ca="${1}_CACERT"
	shift
	# shellcheck disable=SC2046
	$(srv_in "$name") curl ${!ca:+--cacert "${!ca}"} \
		-H @<(printf 'Authorization: Bearer %s\n' \
			"$(cat "$TEST_TMP/$name.state/admin.token")") "$@"
}

rel() {
	local u="${1}_URL"
	scurl "$1" -s "${!u}/volumes/$2/replication" |
		python3 -c "import json,sys; d=json.load(sys.stdin); r=[r for r in d['relations'] if r['name']=='$3'][0]; print($4)"
}

rel_act() {
	local u="${1}_URL"
	scurl "$1" -s -o "$TEST_TMP/body" -w '%{http_code}' -X POST \
		-H 'Content-Type: application/json' -d '{}' \
		"${!u}/volumes/$2/replication/$3${4:+?relation=$4}"
}

srv_nfs_url() {
	local a="${1}_ADDR" n="${1}_NFS" m="${1}_MOUNT"
	echo "nfs://${!a}/$2/$3?nfsport=${!n}&mountport=${!m}"
}

nfs_write() {
	local a="${1}_ADDR" n="${1}_NFS" m="${1}_MOUNT"
	# shellcheck disable=SC2046
	WIRE_DIR=$(dirname "${BASH_SOURCE[0]}") $(srv_in "$1") python3 - \
		"${!a}" "${!n}" "${!m}" "$2" "$3" "$4" "$5" <<'PY'
import os, sys
sys.path.insert(0, os.environ["WIRE_DIR"])
from nfs3wire import Nfs3Client, mount_root
addr, nfsport, mountport, ds, name, off, path = sys.argv[1:8]
root = mount_root((addr, int(mountport)), "/" + ds)
data = open(path, "rb").read()
with Nfs3Client((addr, int(nfsport))) as c:
    fh = c.lookup(root, name).object
    for i in range(0, len(data), 32768):
        r = c.write(fh, int(off) + i, data[i:i + 32768])
        if r.status != 0:
            raise SystemExit("WRITE: %d" % r.status)
PY
}

same_on() {
	# shellcheck disable=SC2046
	$(srv_in "$1") nfs-cat "$(srv_nfs_url "$1" "$2" "$3")" >"$TEST_TMP/got" 2>/dev/null &&
		[ "$(sha256sum <"$TEST_TMP/got")" = "$(sha256sum <"$4")" ]
}

repl_section() {
	local role=$1 name=$2 ds=$3 kv
	shift 3
	printf '[replication %s]\nrole = %s\ndatastore = %s\nkey_file = %s\n' \
		"$name" "$role" "$ds" "$TEST_TMP/r.key"
	for kv in "$@"; do
		printf '%s = %s\n' "${kv%%=*}" "${kv#*=}"
	done
}
