#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/kclient/build.sh: builds the kernel-client guest into $KCLIENT_OUT
# (default build/kclient of this repository).  Up to date: returns at once.
#
#   vmlinuz            Debian's cloud kernel (its NFS client is a module)
#   initramfs.cpio.gz  static busybox, guest/init, nfsmount + runas
#                      (guest/kcguest.c), the virtio and NFSv3 modules
#   tools.img          ext4, read-only at /tools in the guest: bash, fio,
#                      strace, nfsstat, mount.nfs and their libraries
#   kchost             host/kchost.c: qemu's reaper and per-connection relay
#
# The kernel package (linux-image-*-cloud-amd64, the one
# linux-image-cloud-amd64 depends on) comes from the apt archive with
# `apt-get download` into $KCLIENT_CACHE (default $KCLIENT_OUT/cache) and
# is unpacked there: it is never installed on the host.  Packages needed
# (mk/packages.txt): qemu-system-x86 busybox-static e2fsprogs, a C compiler
# with static glibc (build-essential).
#
#   KCLIENT_KPKG=linux-image-...   another kernel package
#   KCLIENT_TOOLS="bash fio ..."   other host programs for /tools
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${KCLIENT_OUT:-$repo/build/kclient}
cache=${KCLIENT_CACHE:-$out/cache}
tools=${KCLIENT_TOOLS:-bash fio strace nfsstat mount.nfs}
CC=${CC:-cc}

die() {
	echo "kclient build: $*" >&2
	exit 1
}

for c in qemu-system-x86_64 busybox "$CC" mke2fs apt-get dpkg-deb; do
	command -v "$c" >/dev/null ||
		die "missing $c (make deps installs mk/packages.txt)"
done
file -L "$(command -v busybox)" | grep -q 'statically linked' ||
	die "busybox is not static: apt-get install busybox-static"

kpkg=${KCLIENT_KPKG:-$(apt-cache depends linux-image-cloud-amd64 2>/dev/null |
	awk '/Depends: linux-image-/ { print $2; exit }')}
[ -n "$kpkg" ] || die "apt knows no linux-image-cloud-amd64 (apt-get update?)"
kver=${kpkg#linux-image-}

# One build at a time: tests of both lanes use the guest (t2106 in lane
# 2, t5009 in lane 1), and on a fresh clone two of them built it at once,
# one removing the kernel tree the other unpacked into.  The second waits,
# then finds it up to date.
mkdir -p "$(dirname "$out")"
exec 9>"$out.lock"
flock -w 600 9 || die "lock $out.lock busy for 600 s"

# Up to date: same kernel, nothing in tests/kclient newer than the stamp.
if [ -f "$out/stamp" ] && [ "$(cat "$out/kernel-version" 2>/dev/null)" = "$kver" ] &&
	[ -z "$(find "$here" -newer "$out/stamp" -type f | head -1)" ]; then
	exit 0
fi
mkdir -p "$out" "$cache"

# ---- the kernel, unpacked from its .deb --------------------------------
kdir=$cache/$kpkg
if [ ! -f "$kdir/boot/vmlinuz-$kver" ]; then
	deb=$(ls "$cache/${kpkg}"_*.deb /var/cache/apt/archives/"${kpkg}"_*.deb 2>/dev/null | head -1 || true)
	if [ -z "$deb" ]; then
		(cd "$cache" && apt-get download -q "$kpkg") || die "apt-get download $kpkg failed"
		deb=$(ls "$cache/${kpkg}"_*.deb | head -1)
	fi
	rm -rf "$kdir"
	mkdir -p "$kdir"
	dpkg-deb -x "$deb" "$kdir"
fi
cp "$kdir/boot/vmlinuz-$kver" "$out/vmlinuz"

# ---- helpers ---------------------------------------------------------------
cflags="-std=gnu11 -O2 -Wall -Wextra -Werror"
# shellcheck disable=SC2086
$CC $cflags -static -o "$out/kcguest" "$here/guest/kcguest.c"
# shellcheck disable=SC2086
$CC $cflags -o "$out/kchost" "$here/host/kchost.c"

# ---- initramfs -------------------------------------------------------------
root=$out/initramfs
rm -rf "$root"
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,run,mnt,tools,root,kc}
cp "$(command -v busybox)" "$root/bin/busybox"
for app in $(busybox --list-full); do
	[ -e "$root/$app" ] || ln -s /bin/busybox "$root/$app"
done
cp "$out/kcguest" "$root/bin/kcguest"
ln -sf kcguest "$root/bin/nfsmount"
ln -sf kcguest "$root/bin/runas"
install -m 0755 "$here/guest/init" "$root/init"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
: >"$root/etc/fstab"
ln -s /proc/mounts "$root/etc/mtab"

# The modules and everything they depend on, from the package's modules.dep.
msrc=$kdir/lib/modules/$kver
[ -f "$msrc/modules.dep" ] || busybox depmod -b "$kdir" "$kver"
for m in virtio_pci virtio_net virtio_blk nfsv3; do
	line=$(grep -E "/$m\.ko(\.[a-z]+)?:" "$msrc/modules.dep") || die "no module $m in $kpkg"
	for f in ${line%%:*} ${line#*:}; do
		mkdir -p "$root/lib/modules/$kver/$(dirname "$f")"
		cp "$msrc/$f" "$root/lib/modules/$kver/$f"
	done
done
cp "$msrc/modules.builtin" "$msrc/modules.order" "$root/lib/modules/$kver/"
busybox depmod -b "$root" "$kver"
(cd "$root" && find . | LC_ALL=C sort | busybox cpio -o -H newc 2>/dev/null | gzip -6) \
	>"$out/initramfs.cpio.gz"

# ---- tools disk ------------------------------------------------------------
tdir=$out/tools
rm -rf "$tdir"
mkdir -p "$tdir/bin" "$tdir/lib/x86_64-linux-gnu" "$tdir/lib64" "$tdir/etc"
for t in $tools; do
	p=$(command -v "$t" || true)
	if [ -z "$p" ]; then
		echo "kclient build: $t is not on this host; /tools goes without it" >&2
		continue
	fi
	cp -L "$p" "$tdir/bin/"
	ldd "$p" | awk '/=> \// { print $3 } /^[ \t]*\/lib64\// { print $1 }' |
		while read -r lib; do
			case $lib in
			*/ld-linux-x86-64.so.2) cp -L "$lib" "$tdir/lib64/" ;;
			*) cp -Ln "$lib" "$tdir/lib/x86_64-linux-gnu/" ;;
			esac
		done
done
for f in /etc/nsswitch.conf /etc/protocols /etc/services /etc/netconfig; do
	if [ -e "$f" ]; then cp -L "$f" "$tdir/etc/"; fi
done
kib=$(du -sk "$tdir" | cut -f1)
rm -f "$out/tools.img"
mke2fs -q -t ext4 -L kctools -E root_owner=0:0 -d "$tdir" "$out/tools.img" \
	"$((kib * 12 / 10 + 16384))k"

echo "$kver" >"$out/kernel-version"
touch "$out/stamp"
echo "kclient build: kernel $kver, guest in $out"
