#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# IPv6 end to end: dsnfsd on ::1, then on :: (dual stack), driven by
# rpcinfo, libnfs and the raw-wire client (t0003-net-ipv6.py, which asks
# the admin API over http://[::1]:PORT/ with its token): MOUNT,
# NFS, the portmapper over TCP and UDP, the admin API, export rules with
# IPv6 prefixes, root squash, `secure`, the per-address connection limit,
# and the spelling of IPv6 peers in --trace lines, /hosts and /flows.
. "$(dirname "$0")/netns.sh"
. "$(dirname "$0")/lib.sh"

here=$(dirname "$0")
mkdir -p "$TEST_TMP/ds3"
chmod 1777 "$TEST_TMP/ds3" # root is squashed there
cat >"$TEST_TMP/v6.conf" <<CONF
[server]
max_conns_per_host = 3
admin_listen = ::1
[datastore ds1]
clients = ::1/128
[datastore ds2]
clients = fd00::/8, 127.0.0.1
[datastore ds3]
path = $TEST_TMP/ds3
secure = true
squash = root
CONF

# libnfs 4.0 takes the bare address ("nfs://::1/..."): it keeps the
# brackets of "nfs://[::1]/..." and fails to resolve them.
url6() {
	echo "nfs://::1/$1/$2?nfsport=$NFS_PORT&mountport=$MOUNT_PORT"
}
# A universal address (RFC 5665 5.2.3.4): rpcinfo -a reaches a service at
# a known port without asking a portmapper first.
uaddr() {
	echo "$1.$(($2 / 256)).$(($2 % 256))"
}

echo "== listen = ::1"
# Port 111 on ::1 only: no clash with an IPv4 portmapper on 127.0.0.1:111.
if ss -ltnuH 'sport = :111' | grep -Eq '\[::1?\]:111|\*:111'; then
	echo "port 111 on ::1 is taken (an rpcbind?); this test needs it free" >&2
	exit 1
fi
dsnfsd_start -c "$TEST_TMP/v6.conf" -l ::1 -P 111 --trace || exit 1
check "listening line names ::1" grep -q '^dsnfsd: listening on ::1 ' "$TEST_TMP/dsnfsd.out"
# Every socket of this dsnfsd is bound to ::1 (ss names its owner).
socks=$(ss -ltunpH | grep "pid=$DSNFSD_PID," | awk '{print $5}')
echo "$socks"
check "dsnfsd's sockets are all on [::1]" \
	bash -c "[ -n '$socks' ] && ! echo '$socks' | grep -qv '^\[::1\]:'"
check "rpcinfo -T tcp6 -a nfs 3 (NULL)" rpcinfo -T tcp6 -a "$(uaddr ::1 "$NFS_PORT")" 100003 3
check "rpcinfo -T udp6 -a mountd 3 (NULL)" rpcinfo -T udp6 -a "$(uaddr ::1 "$MOUNT_PORT")" 100005 3
check "rpcinfo -T tcp6 -a portmapper 2 (NULL)" rpcinfo -T tcp6 -a "$(uaddr ::1 111)" 100000 2
check "rpcinfo -T udp6 -a portmapper 2 (NULL)" rpcinfo -T udp6 -a "$(uaddr ::1 111)" 100000 2
out=$(rpcinfo -s ::1 2>&1)
echo "$out"
check "rpcinfo -s ::1 (rpcbind 4 DUMP over tcp6) lists nfs on udp6 and tcp6" bash -c "echo '$out' | grep -Eq '^ +100003 +3 +udp6,tcp6 +nfs'"
check "rpcinfo -s ::1 lists mountd" bash -c "echo '$out' | grep -Eq '^ +100005 +3 +udp6,tcp6 +mountd'"
check "rpcinfo -s ::1 lists portmapper 4,3,2" bash -c "echo '$out' | grep -Eq '^ +100000 +4,3,2 +udp6,tcp6 +portmapper'"
# libtirpc asks rpcbind 4 / 3 GETADDR for an IPv6 netid (PMAP 2 is IPv4
# only), and so does libnfs when the URL has no ports.
out=$(rpcinfo -p ::1 2>&1)
echo "$out"
check "rpcinfo -p ::1 lists nfs at $NFS_PORT" bash -c "echo '$out' | grep -Eq '^ +100003 +3 +tcp +$NFS_PORT +nfs'"
check "rpcinfo -T tcp6 ::1 nfs 3 (rpcbind GETADDR, then NULL)" rpcinfo -T tcp6 ::1 100003 3
check "rpcinfo -T udp6 ::1 mountd 3" rpcinfo -T udp6 ::1 100005 3
out=$(rpcinfo ::1 2>&1)
echo "$out"
check "rpcinfo ::1 (rpcbind 4 DUMP) lists nfs on tcp6 at ::1" \
	bash -c "echo '$out' | grep -Eq '^ +100003 +3 +tcp6 +$(uaddr ::1 "$NFS_PORT") '"
check "rpcinfo ::1 lists rpcbind 4 on udp6" \
	bash -c "echo '$out' | grep -Eq '^ +100000 +4 +udp6 +::1\.0\.111 '"
check "nfs-ls nfs://::1/ds1 without ports (libnfs asks rpcbind 3)" \
	bash -c "timeout 60 nfs-ls 'nfs://::1/ds1' >/dev/null"

head -c 200000 /dev/urandom >"$TEST_TMP/disk.bin"
check "nfs-cp to nfs://::1/ds1" nfs-cp "$TEST_TMP/disk.bin" "$(url6 ds1 disk-flat.vmdk)"
check "nfs-cat from nfs://::1/ds1 returns the bytes" \
	bash -c "nfs-cat '$(url6 ds1 disk-flat.vmdk)' | cmp - '$TEST_TMP/disk.bin'"
check "nfs-ls nfs://::1/ds1 lists the file" \
	bash -c "nfs-ls '$(url6 ds1 '')' | grep -q disk-flat.vmdk"
check "nfs-ls nfs://::1/ds2 is refused (fd00::/8, 127.0.0.1)" \
	bash -c "! nfs-ls '$(url6 ds2 '')' >/dev/null 2>&1"

check "wire: portmap, MOUNT, NFS, rules, squash, secure, limit over ::1" \
	python3 "$here/t0003-net-ipv6.py" v6 "$NFS_PORT" "$MOUNT_PORT" "$PORTMAP_PORT" "$ADMIN_PORT"

check "server exits cleanly" dsnfsd_stop

log="$TEST_TMP/dsnfsd.log"
grep 'trace:' "$log" | grep -v NULL | head -5
re6='trace: \[::1\]:[0-9]+ xid=0x[0-9a-f]+'
check "trace names the client [::1]:PORT (MNT)" grep -Eq "$re6 mount MNT ds1 path=/ds1 -> status=OK" "$log"
check "trace names the client [::1]:PORT (WRITE)" grep -Eq "$re6 nfs WRITE ds1:/disk-flat.vmdk " "$log"
check "trace names the client [::1]:PORT (portmap GETPORT)" grep -Eq "$re6 portmap GETPORT " "$log"
check "no unbracketed IPv6 peer in the log" bash -c "! grep -Eq '(^| )::1:[0-9]+ ' '$log'"

echo "== listen = :: (dual stack)"
dsnfsd_start -c "$TEST_TMP/v6.conf" -l :: -P 0 --trace || exit 1
check "rpcinfo -T tcp -a 127.0.0.1 nfs 3 (IPv4 client)" rpcinfo -T tcp -a "$(uaddr 127.0.0.1 "$NFS_PORT")" 100003 3
check "rpcinfo -T udp -a 127.0.0.1 mountd 3 (IPv4 client)" rpcinfo -T udp -a "$(uaddr 127.0.0.1 "$MOUNT_PORT")" 100005 3
check "rpcinfo -T tcp6 -a ::1 nfs 3 (IPv6 client)" rpcinfo -T tcp6 -a "$(uaddr ::1 "$NFS_PORT")" 100003 3
check "nfs-cp over IPv4 to ds2 (rule 127.0.0.1 matches ::ffff:127.0.0.1)" \
	nfs-cp "$TEST_TMP/disk.bin" "$(nfs_url ds2 v4.bin)"
check "nfs-ls over IPv4 of ds1 (::1/128 only) is refused" \
	bash -c "! nfs-ls '$(nfs_url ds1 '')' >/dev/null 2>&1"
check "nfs-cat over IPv6 of ds1" \
	bash -c "nfs-cat '$(url6 ds1 disk-flat.vmdk)' | cmp - '$TEST_TMP/disk.bin'"
check "wire: both families on one server" \
	python3 "$here/t0003-net-ipv6.py" dual "$NFS_PORT" "$MOUNT_PORT" "$PORTMAP_PORT" "$ADMIN_PORT"
check "server exits cleanly" dsnfsd_stop
re4='trace: 127\.0\.0\.1:[0-9]+ xid=0x[0-9a-f]+'
check "an IPv4 client on :: is traced as 127.0.0.1:PORT" grep -Eq "$re4 mount MNT ds2 " "$log"
check "and never as ::ffff:127.0.0.1" bash -c "! grep -q 'ffff:127' '$log'"
check "an IPv6 client on :: is traced as [::1]:PORT" grep -Eq "$re6 mount MNT ds1 " "$log"
test_done
