#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/kclient/run-guest.sh NFSPORT MOUNTPORT EXPORT 'COMMANDS'
#
# Boots a throw-away QEMU guest with Debian's kernel (the Linux NFS client),
# mounts the NFSv3 server on the host's 127.0.0.1:NFSPORT (MOUNT on
# MOUNTPORT) at /mnt, runs COMMANDS there (busybox sh, cwd /mnt; '-' reads
# them from stdin, '@FILE' from FILE), unmounts and powers off.  Build the
# guest first: tests/kclient/build.sh.
#
# Exit status: the commands'; 100 the mount failed (or nothing listens on
# a port: checked before booting, as a guest's mount would hang); 101 the
# guest's setup failed; 124 timeout; 125 the guest died without a report;
# 2 usage.  The last line is "=== kclient: PASS|FAIL (rc=N ...) ... ===".
#
# Network: QEMU user networking with restrict=on.  The guest reaches
# nothing but 10.0.2.100:NFSPORT and :MOUNTPORT, two guestfwd rules; each
# connection starts `kchost relay`, which connects to 127.0.0.1 on the host.
#
# In the guest: kc_remount (unmount and mount: reads come from the server),
# kc_mount, kc_umount, kc_dropcaches, `runas UID GID[,GID...] CMD` (a
# non-root AUTH_SYS caller); KC_MNT KC_SERVER KC_EXPORT KC_OPTS KC_NFSPORT
# KC_MOUNTPORT; /tools/bin: bash fio strace nfsstat mount.nfs.
#
# Environment:
#   KCLIENT_OUT         the built guest (build/kclient)
#   KCLIENT_MOUNT_OPTS  more mount options (rsize=65536,actimeo=0)
#   KCLIENT_RESVPORT=1  relay from a reserved port (< 1024), as the kernel
#   KCLIENT_SHELL       sh (busybox ash; default) or bash
#   KCLIENT_TIMEOUT     seconds for the whole run (900)
#   KCLIENT_MEM, KCLIENT_CPUS   guest size (1024 MiB, 2)
#   KCLIENT_MOUNTSTATS=1  the client's per-operation counters at the end
#   KCLIENT_VERBOSE=1   the guest kernel's whole console at the end
#   KCLIENT_KEEP=1      keep the run directory (console.log, out.log)
# KVM is not used: software emulation (TCG) boots in 10-25 s here.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${KCLIENT_OUT:-$(cd "$here/../.." && pwd)/build/kclient}

usage() {
	sed -n '2,14p' "$0" >&2
	exit 2
}
[ $# -eq 4 ] || usage
nfsport=$1 mountport=$2 export_path=$3 cmds=$4
[[ $nfsport =~ ^[0-9]+$ && $mountport =~ ^[0-9]+$ ]] || usage
case $cmds in
-) cmds=$(cat) ;;
@*) cmds=$(cat "${cmds#@}") || exit 2 ;;
esac
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for p in "$nfsport" "$mountport"; do
	if ! port_open "$p"; then
		echo "kclient: nothing listens on 127.0.0.1:$p (the guest's mount would hang, not fail)"
		echo "=== kclient: FAIL (rc=100 mount failed: no server on 127.0.0.1:$p) ==="
		exit 100
	fi
done
for f in vmlinuz initramfs.cpio.gz kchost; do
	if [ ! -e "$out/$f" ]; then
		echo "kclient: no $out/$f; run $here/build.sh" >&2
		exit 2
	fi
done

timeout_s=${KCLIENT_TIMEOUT:-900}
server=10.0.2.100
run=$(mktemp -d /tmp/kclient.XXXXXX)
mkdir -p "$run/relays" "$run/kc"
qpid=""

# A relay lists itself in $run/relays while it runs; end stragglers by pid.
relay_alive() {
	local st
	st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ] &&
		tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF "$out/kchost relay"
}
relays_stop() {
	local f pid i sig="" left
	for i in $(seq 20); do
		left=0
		[ "$i" = 10 ] && sig=TERM
		[ "$i" = 20 ] && sig=KILL
		for f in "$run"/relays/relay.*; do
			[ -e "$f" ] || continue
			pid=${f##*.}
			if relay_alive "$pid"; then
				left=1
				[ -n "$sig" ] && kill -s "$sig" "$pid" 2>/dev/null
			else
				rm -f "$f"
			fi
		done
		[ $left = 0 ] && return 0
		sleep 0.2
	done
}
# qpid is kchost reap: it passes SIGTERM on to qemu and reaps the relays.
qemu_stop() {
	local i
	kill -0 "$qpid" 2>/dev/null || return 0
	kill -TERM "$qpid" 2>/dev/null
	for i in $(seq 50); do
		kill -0 "$qpid" 2>/dev/null || return 0
		sleep 0.2
	done
	for i in $(cat "/proc/$qpid/task/$qpid/children" 2>/dev/null); do
		grep -q qemu "/proc/$i/comm" 2>/dev/null && kill -KILL "$i"
	done
}
cleanup() {
	[ -n "$qpid" ] && qemu_stop
	relays_stop
	if [ "${KCLIENT_KEEP:-0}" = 1 ]; then
		echo "kclient: run directory kept: $run" >&2
	else
		rm -rf "$run"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM


# guestfwd's cmd: takes the rest of the option: no ',' allowed in paths.
case "$out$run" in
*[,\ ]*)
	echo "kclient: '$out' and '$run' must hold no ',' or space" >&2
	exit 2
	;;
esac
resv=""
[ "${KCLIENT_RESVPORT:-0}" = 1 ] && resv=" resv"
netdev="user,id=n0,ipv6=off,restrict=on"
for p in $(printf '%s\n' "$nfsport" "$mountport" | sort -u); do
	netdev+=",guestfwd=tcp:$server:$p-cmd:$out/kchost relay $p $run/relays$resv"
done

{
	printf 'KC_NFSPORT=%q\n' "$nfsport"
	printf 'KC_MOUNTPORT=%q\n' "$mountport"
	printf 'KC_EXPORT=%q\n' "$export_path"
	printf 'KC_SERVER=%q\n' "$server"
	printf 'KC_EXTRA_OPTS=%q\n' "${KCLIENT_MOUNT_OPTS:-}"
	printf 'KC_SHELL=%q\n' "${KCLIENT_SHELL:-sh}"
	printf 'KC_MOUNTSTATS=%q\n' "${KCLIENT_MOUNTSTATS:-0}"
} >"$run/kc/env"
printf '%s\n' "$cmds" >"$run/kc/commands"
# A second cpio archive after the first adds its files to the initramfs.
(cd "$run" && printf 'kc\nkc/env\nkc/commands\n' |
	busybox cpio -o -H newc 2>/dev/null | gzip -1) >"$run/kc.cpio.gz"
cat "$out/initramfs.cpio.gz" "$run/kc.cpio.gz" >"$run/initrd"

qargs=(-nodefaults -no-user-config -display none -no-reboot
	-machine pc -accel tcg,thread=multi -cpu max
	-m "${KCLIENT_MEM:-1024}" -smp "${KCLIENT_CPUS:-2}"
	-kernel "$out/vmlinuz" -initrd "$run/initrd"
	-append "console=ttyS0 panic=-1 mitigations=off nokaslr tsc=reliable"
	-serial "file:$run/console.log" -serial "file:$run/out.log"
	-netdev "$netdev" -device virtio-net-pci,netdev=n0)
[ -f "$out/tools.img" ] &&
	qargs+=(-drive "file=$out/tools.img,if=virtio,format=raw,readonly=on")

echo "kclient: kernel $(cat "$out/kernel-version" 2>/dev/null), tcg, net=restrict, server 127.0.0.1:$nfsport (mount :$mountport) export $export_path"
t0=$(date +%s.%N)
"$out/kchost" reap qemu-system-x86_64 "${qargs[@]}" </dev/null >"$run/qemu.log" 2>&1 &
qpid=$!

elapsed() { awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.1f", a - b }'; }

# Stream the guest's output while it runs.
shown=0 t_mount="" timed_out=0
deadline=$(($(date +%s) + timeout_s))
stream() {
	local sz
	[ -f "$run/out.log" ] || return 0
	sz=$(stat -c %s "$run/out.log")
	[ "$sz" -gt "$shown" ] || return 0
	tail -c +$((shown + 1)) "$run/out.log" | head -c $((sz - shown))
	shown=$sz
	if [ -z "$t_mount" ] && grep -aq '^KCLIENT_MOUNTED' "$run/out.log"; then
		t_mount=$(elapsed)s
	fi
}
while kill -0 "$qpid" 2>/dev/null; do
	stream
	if [ "$(date +%s)" -ge "$deadline" ]; then
		timed_out=1
		echo
		echo "kclient: TIMEOUT after ${timeout_s}s; stopping qemu"
		qemu_stop
		break
	fi
	sleep 0.2
done
wait "$qpid" 2>/dev/null
qrc=$?
qpid=""
stream
total=$(elapsed)

rcline=$(grep -a '^KCLIENT_RC=' "$run/out.log" 2>/dev/null | tail -1)
if [ $timed_out = 1 ]; then
	rc=124
elif [ -n "$rcline" ]; then
	rc=${rcline#KCLIENT_RC=}
	rc=${rc%% *}
else
	rc=125
fi
if [ "${KCLIENT_VERBOSE:-0}" = 1 ]; then
	echo "----- guest kernel console -----"
	cat "$run/console.log"
elif [ -z "$rcline" ]; then
	echo "----- guest kernel console (last 40 lines) -----"
	tail -40 "$run/console.log" 2>/dev/null
	echo "----- qemu (exit $qrc) -----"
	cat "$run/qemu.log"
fi
case $rc in
0) verdict="PASS (rc=0)" ;;
100) verdict="FAIL (rc=100 mount failed)" ;;
101) verdict="FAIL (rc=101 guest setup failed)" ;;
124) verdict="FAIL (rc=124 timeout)" ;;
125) verdict="FAIL (rc=125 guest died without a report)" ;;
*) verdict="FAIL (rc=$rc)" ;;
esac
echo "=== kclient: $verdict boot+mount ${t_mount:-n/a}, total ${total}s ==="
exit "$rc"
