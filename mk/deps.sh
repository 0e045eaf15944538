#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages in mk/packages.txt that are missing.
# --quiet: say nothing when all are present (used by every `make`).
set -eu
here=$(dirname "$0")
quiet=0
[ "${1:-}" = "--quiet" ] && quiet=1

missing=""
for p in $(grep -v '^#' "$here/packages.txt"); do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
		missing="$missing $p"
	fi
done
if [ -z "$missing" ]; then
	[ $quiet = 1 ] || echo "deps: all packages present"
	exit 0
fi
echo "deps: installing:$missing"
if [ "$(id -u)" != 0 ]; then
	echo "deps: not root; run as root: apt-get install$missing" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "deps: done"
