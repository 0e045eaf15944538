# SPDX-License-Identifier: Apache-2.0
# Sourced first by the tests that need a fixed port (the portmapper's
# 111, the labs' defaults): re-runs the test in a network namespace of its
# own, with only a loopback, where the port is free whatever the host runs
# (a system rpcbind, another suite at the same time) and nothing outside
# sees it.  Without the privilege for a namespace the test runs as it is,
# on the host's loopback.
if [ -z "${DSNFS_NETNS:-}" ] && unshare -n true 2>/dev/null; then
	DSNFS_NETNS=1 exec unshare -n bash "$0" "$@"
fi
if [ -n "${DSNFS_NETNS:-}" ]; then
	ip link set lo up || exit 1
fi
