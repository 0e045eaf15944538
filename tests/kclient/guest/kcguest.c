// SPDX-License-Identifier: Apache-2.0
/*
 * kcguest: the guest's two helpers in one static binary, chosen by the
 * name it is run as (the initramfs links both names to it).
 *
 *   nfsmount SOURCE TARGET OPTIONS [FSTYPE]
 *	mount(2) with the text options as they are, e.g.
 *	"vers=3,proto=tcp,mountproto=tcp,nolock,port=2049,mountport=20048,
 *	addr=10.0.2.100,mountaddr=10.0.2.100": with mountport= the kernel
 *	makes the MOUNT call itself, so the guest needs neither rpcbind nor
 *	nfs-utils.  Exit 32 (mount(8)'s "mount failure") with the reason.
 *
 *   runas UID GID[,GID...] CMD [ARGS...]
 *	Drops root to UID, primary group GID, the other GIDs as
 *	supplementary groups (none by default), and runs CMD: AUTH_SYS
 *	credentials of a non-root user for permission tests.
 */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#define RUNAS_MAX_GIDS 64

static int nfsmount_main(int argc, char **argv)
{
	const char *fstype;

	if (argc < 4) {
		fprintf(stderr,
			"usage: nfsmount SOURCE TARGET OPTIONS [FSTYPE]\n");
		return 2;
	}
	fstype = argc > 4 ? argv[4] : "nfs";
	if (mount(argv[1], argv[2], fstype, 0, argv[3]) < 0) {
		int err = errno;

		fprintf(stderr, "nfsmount: %s on %s (-t %s -o %s): %s\n",
			argv[1], argv[2], fstype, argv[3], strerror(err));
		return 32;
	}
	return 0;
}

static int runas_main(int argc, char **argv)
{
	gid_t gids[RUNAS_MAX_GIDS];
	size_t ngids = 0;
	char *save = NULL, *tok;
	uid_t uid;

	if (argc < 4) {
		fprintf(stderr,
			"usage: runas UID GID[,GID...] CMD [ARGS...]\n");
		return 2;
	}
	uid = (uid_t)strtoul(argv[1], NULL, 10);
	for (tok = strtok_r(argv[2], ",", &save); tok && ngids < RUNAS_MAX_GIDS;
	     tok = strtok_r(NULL, ",", &save)) {
		gids[ngids++] = (gid_t)strtoul(tok, NULL, 10);
	}
	if (ngids == 0) {
		fprintf(stderr, "runas: no GID\n");
		return 2;
	}
	/* Groups first: after setuid() we may no longer change them. */
	if (setgroups(ngids - 1, gids + 1) < 0 || setgid(gids[0]) < 0 ||
	    setuid(uid) < 0) {
		fprintf(stderr, "runas: %s\n", strerror(errno));
		return 126;
	}
	execvp(argv[3], argv + 3);
	fprintf(stderr, "runas: %s: %s\n", argv[3], strerror(errno));
	return 127;
}

int main(int argc, char **argv)
{
	const char *name = strrchr(argv[0], '/');

	name = name ? name + 1 : argv[0];
	if (strcmp(name, "runas") == 0) {
		return runas_main(argc, argv);
	}
	if (strcmp(name, "nfsmount") == 0) {
		return nfsmount_main(argc, argv);
	}
	fprintf(stderr, "kcguest: run me as nfsmount or runas\n");
	return 2;
}
