// SPDX-License-Identifier: Apache-2.0
/*
 * cephfs_asok: the admin socket of each mount, and its client.  libcephfs
 * answers Ceph's admin-socket commands about itself (`mds_sessions`,
 * `config show`, ...) on a Unix socket; the gateway puts each mount's in
 * its state directory (mode 0700: root's alone), where an operator can
 * ask it too (`ceph --admin-daemon STATE_DIR/ceph-DS-N.asok mds_sessions`),
 * and asks it its session's state (cephfs_evict.c).
 */
#include "nfsd/store/cephfs/cephfs_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "nfsd/base/log.h"

/* Sends (@out) or receives all @len bytes of @buf: 0, or -errno (-EPROTO
 * when the peer closed first). */
static int cephfs_asok_xfer(int fd, void *buf, size_t len, bool out)
{
	char *p = buf;

	while (len) {
		ssize_t n = out ? send(fd, p, len, MSG_NOSIGNAL)
				: recv(fd, p, len, 0);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			return n < 0 ? -errno : -EPROTO;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int store__cephfs_asok_set(struct store_cephfs *sc, struct ceph_mount_info *cm,
			   const char *state_dir)
{
	static _Atomic unsigned mounts;
	int n = -1;

	sc->asok[0] = '\0';
	if (state_dir && state_dir[0]) {
		n = snprintf(sc->asok, sizeof(sc->asok), "%s/ceph-%s-%u.asok",
			     state_dir, sc->base.name,
			     atomic_fetch_add(&mounts, 1));
	}
	if (n < 0 || (size_t)n >= sizeof(sc->asok)) {
		if (n >= 0) {
			log_warn("cephfs: %s: %s/ceph-%s-N.asok is too long a "
				 "path for a socket: no admin socket, so an "
				 "eviction without a blocklist is not found",
				 sc->base.name, state_dir, sc->base.name);
		}
		sc->asok[0] = '\0';
	}
	/* "" turns off one that ceph.conf names: two clients of one name
	 * (this process's datastores, the ceph CLI) would take turns at it. */
	return ceph_conf_set(cm, "admin_socket", sc->asok);
}

int store__cephfs_asok_command(const char *path, const char *cmd, char **out,
			       size_t *out_len)
{
	struct timeval wait = { .tv_sec = STORE_CEPHFS_ASOK_WAIT_S };
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char req[128];
	uint32_t be_len;
	char *buf = NULL;
	size_t len;
	int fd, rc;

	*out = NULL;
	len = (size_t)snprintf(req, sizeof(req), "%s", cmd);
	if (len >= sizeof(req)) {
		return -E2BIG;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		return -errno;
	}
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof(wait)) ||
	    connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		rc = -errno;
		goto out;
	}
	rc = cephfs_asok_xfer(fd, req, len + 1, true); /* with its NUL */
	if (!rc) {
		rc = cephfs_asok_xfer(fd, &be_len, sizeof(be_len), false);
	}
	if (rc) {
		goto out;
	}
	len = ntohl(be_len);
	if (len > STORE_CEPHFS_ASOK_MAX_BYTES) {
		rc = -EMSGSIZE;
		goto out;
	}
	buf = malloc(len + 1);
	if (!buf) {
		rc = -ENOMEM;
		goto out;
	}
	rc = cephfs_asok_xfer(fd, buf, len, false);
	if (rc) {
		free(buf);
		goto out;
	}
	buf[len] = '\0';
	*out = buf;
	*out_len = len;
out:
	close(fd);
	return rc;
}
