# SPDX-License-Identifier: Apache-2.0
# perf/lablib.sh: what the `make lab-*` scripts share (sourced, bash).
#
# lab_dsnfsd_start BIN DIR [ARGS...]  starts BIN/dsnfsd on 127.0.0.1 with
#     free NFS, MOUNT and admin ports, its state in DIR/state and its
#     output in DIR/out and DIR/log, plus ARGS (-P 111 or -P off, -e, -c);
#     waits for it to listen and sets LAB_PID, LAB_NFS_PORT,
#     LAB_MOUNT_PORT, LAB_ADMIN_PORT and exports DSNFS_ADMIN_TOKEN_FILE
#     (DIR/state/admin.token: dsnfsctl and dsload read it); exits with
#     its log if it does not start.  Each -e NAME=DIR datastore gets the
#     labs' access (etc/lab/access.conf: loopback clients, uid 0, any
#     port) in DIR/state/lab-access.conf, read before the ARGS' own -c
# lab_curl ARGS...                    curl with the admin token
# lab_dsnfsd_stop                     SIGTERM and wait, if it runs
# lab_access NAME...                  prints a [datastore NAME] section
#     with the labs' access for each NAME, for a config read with -c (or
#     appended to a script's own config)
# lab_access_exports ARGS...          the same for every -e NAME=DIR of
#     ARGS (a dsnfsd command line)
# lab_now / lab_since T0              a clock, and seconds since T0
LAB_PID=""

lab_dsnfsd_start() {
	local bin=$1 dir=$2 line
	shift 2
	mkdir -p "$dir/state"
	# dsnfsd's defaults (secure, squash = root, loopback) would refuse the
	# labs' root tools and unprivileged raw clients.
	lab_access_exports "$@" >"$dir/state/lab-access.conf"
	"$bin/dsnfsd" -f -l 127.0.0.1 -p 0 -m 0 -A 0 -s "$dir/state" \
		-c "$dir/state/lab-access.conf" "$@" \
		>"$dir/out" 2>"$dir/log" &
	LAB_PID=$!
	for _ in $(seq 1 100); do
		grep -qs '^dsnfsd: listening' "$dir/out" && break
		sleep 0.1
	done
	line=$(grep -s '^dsnfsd: listening' "$dir/out") || {
		echo "dsnfsd did not start" >&2
		cat "$dir/log" >&2
		exit 1
	}
	LAB_NFS_PORT=$(echo "$line" | sed 's/.* nfs=\([0-9]*\).*/\1/')
	LAB_MOUNT_PORT=$(echo "$line" | sed 's/.* mount=\([0-9]*\).*/\1/')
	LAB_ADMIN_PORT=$(echo "$line" | sed 's/.* admin=\([0-9]*\).*/\1/')
	export DSNFS_ADMIN_TOKEN_FILE="$dir/state/admin.token"
}

# The token's header from a pipe: no token on a command line.
lab_curl() {
	curl -H @<(printf 'Authorization: Bearer %s\n' \
		"$(cat "$DSNFS_ADMIN_TOKEN_FILE")") "$@"
}

lab_dsnfsd_stop() {
	if [ -n "$LAB_PID" ]; then
		kill "$LAB_PID" 2>/dev/null
		wait "$LAB_PID" 2>/dev/null
		LAB_PID=""
	fi
}

# The keys of etc/lab/access.conf (why they are what they are is there):
# every process of this machine is root in these datastores, nothing else
# reaches them.  For servers on 127.0.0.1 only, never another address.
lab_access() {
	local name
	for name in "$@"; do
		printf '[datastore %s]\nclients = 127.0.0.0/8, ::1\n' "$name"
		printf 'squash = none\nsecure = false\n'
	done
}

lab_access_exports() {
	local arg prev=""
	for arg in "$@"; do
		[ "$prev" = -e ] && lab_access "${arg%%=*}"
		prev=$arg
	done
	return 0
}

lab_now() { date +%s.%N; }
lab_since() { awk -v a="$(lab_now)" -v b="$1" 'BEGIN { printf "%.3f", a - b }'; }
