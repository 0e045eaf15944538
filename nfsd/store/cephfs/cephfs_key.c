// SPDX-License-Identifier: Apache-2.0
/*
 * cephfs_key: the key that signs the handles of CephFS datastores
 * (handle.c), kept out of the file system: <state_dir>/cephfs.key, 0600,
 * owned by dsnfsd's uid, one for all the CephFS datastores of a gateway
 * (the MAC covers the export id).  Every gateway of a datastore must hold
 * the same key (a handle from gateway A must resolve on B after a
 * failover), so the operator copies the file made by the first gateway to
 * the others (docs/ceph.md says why not the cluster's config-key store).
 *
 * What the file system holds is only the key's id: the first 16 bytes of
 * HMAC-SHA-256(key, "dsnfs handle key id") in the xattr
 * user.dsnfs.handle_key_id of the directory served.  It tells nothing of
 * the key; it lets a gateway with a missing or different key refuse to
 * start (rather than serve handles the others call stale).
 *
 * Handles issued before (version 1, keyed xxh3) were keyed by the xattr
 * user.dsnfs.handle_secret, readable by every client of the tree.  The
 * first start adopts it into <state_dir>/cephfs.NAME.v1-secret (so those
 * handles stay valid: ESXi would see every open file go stale) and removes
 * the xattr.  Removing that file ends the acceptance of version-1 handles.
 */
#include "nfsd/store/cephfs/cephfs_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <nettle/hmac.h>

#include "nfsd/base/log.h"

#define STORE_CEPHFS_KEYID_BYTES 16

static void store_cephfs_key_id(const uint8_t *key,
				uint8_t id[STORE_CEPHFS_KEYID_BYTES])
{
	static const char what[] = "dsnfs handle key id";
	struct hmac_sha256_ctx ctx;

	hmac_sha256_set_key(&ctx, STORE_KEY_BYTES, key);
	hmac_sha256_update(&ctx, sizeof(what) - 1, (const uint8_t *)what);
	hmac_sha256_digest(&ctx, STORE_CEPHFS_KEYID_BYTES, id);
	explicit_bzero(&ctx, sizeof(ctx));
}

static void store_cephfs_key_file(const struct store_cephfs *sc,
				  const char *what, char *out, size_t len)
{
	snprintf(out, len, "cephfs.%s.%s", sc->base.name, what);
}

/* The version-1 secret: the state directory's copy, else the xattr's
 * adopted (and the xattr removed once the copy is stable). */
static int store_cephfs_key_legacy(struct store_cephfs *sc, Inode *root,
				   const char *state_dir, char *errbuf,
				   size_t errlen)
{
	uint8_t old[STORE_SECRET_BYTES];
	char file[96];
	int rc;

	store_cephfs_key_file(sc, "v1-secret", file, sizeof(file));
	rc = ceph_ll_getxattr(sc->cm, root, STORE_CEPHFS_SECRET_XATTR, old,
			      sizeof(old), sc->root_perms);
	if (rc == -ENODATA) {
		rc = store__key_load(state_dir, file, sc->secret.legacy,
				     sizeof(sc->secret.legacy), false, NULL,
				     errbuf, errlen);
		sc->secret.legacy_ok = rc == 0;
		return rc == -ENOENT ? 0 : rc;
	}
	if (rc < 0) {
		snprintf(errbuf, errlen, "xattr %s: %s",
			 STORE_CEPHFS_SECRET_XATTR, strerror(-rc));
		return rc;
	}
	if (rc != (int)sizeof(old)) {
		/* Not one we made: nothing to adopt, and not ours to keep. */
		log_error("cephfs: %s: xattr %s of %d bytes is not a handle "
			  "secret of dsnfsd: ignored",
			  sc->base.name, STORE_CEPHFS_SECRET_XATTR, rc);
		return 0;
	}
	rc = store__key_load(state_dir, file, sc->secret.legacy,
			     sizeof(sc->secret.legacy), true, old, errbuf,
			     errlen);
	if (rc) {
		explicit_bzero(old, sizeof(old));
		return rc;
	}
	sc->secret.legacy_ok = true;
	if (memcmp(old, sc->secret.legacy, sizeof(old)) == 0) {
		rc = ceph_ll_removexattr(sc->cm, root,
					 STORE_CEPHFS_SECRET_XATTR,
					 sc->root_perms);
		log_info("cephfs: %s: the version-1 handle secret moved from "
			 "xattr %s into %s/%s%s%s",
			 sc->base.name, STORE_CEPHFS_SECRET_XATTR, state_dir,
			 file, rc ? "; removing the xattr failed: " : "",
			 rc ? strerror(-rc) : "");
	} else {
		log_error("cephfs: %s: xattr %s differs from %s/%s: kept "
			  "both; version-1 handles are checked with the file",
			  sc->base.name, STORE_CEPHFS_SECRET_XATTR, state_dir,
			  file);
	}
	explicit_bzero(old, sizeof(old));
	return 0;
}

/* The id in the xattr: 0 (in @id), -ENODATA, or -errno. */
static int store_cephfs_key_id_get(struct store_cephfs *sc, Inode *root,
				   uint8_t id[STORE_CEPHFS_KEYID_BYTES])
{
	int rc = ceph_ll_getxattr(sc->cm, root, STORE_CEPHFS_KEYID_XATTR, id,
				  STORE_CEPHFS_KEYID_BYTES, sc->root_perms);

	if (rc == -ERANGE || (rc >= 0 && rc != STORE_CEPHFS_KEYID_BYTES)) {
		return -EINVAL;
	}
	return rc < 0 ? rc : 0;
}

int store__cephfs_key_load(struct store_cephfs *sc, Inode *root,
			   const char *state_dir, char *errbuf, size_t errlen)
{
	uint8_t want[STORE_CEPHFS_KEYID_BYTES], have[STORE_CEPHFS_KEYID_BYTES];
	char file[96];
	bool made = false;
	int rc;

	rc = store_cephfs_key_legacy(sc, root, state_dir, errbuf, errlen);
	if (rc) {
		return rc;
	}
	snprintf(file, sizeof(file), "%s", STORE_CEPHFS_KEY_FILE);
	rc = store__key_load(state_dir, file, sc->secret.key,
			     sizeof(sc->secret.key), false, NULL, errbuf,
			     errlen);
	if (rc && rc != -ENOENT) {
		return rc;
	}
	made = rc == -ENOENT;
	rc = store_cephfs_key_id_get(sc, root, want);
	if (made && rc == 0) {
		snprintf(errbuf, errlen,
			 "the handles of this directory are signed with a key "
			 "this gateway does not have: copy %s from the state "
			 "directory of the gateway that made it into %s "
			 "(mode 0600)",
			 file, state_dir);
		return -ENOKEY;
	}
	if (rc && rc != -ENODATA) {
		snprintf(errbuf, errlen, "xattr %s: %s",
			 STORE_CEPHFS_KEYID_XATTR,
			 rc == -EINVAL ? "not a key id of dsnfsd"
				       : strerror(-rc));
		return rc;
	}
	if (made) {
		rc = store__key_load(state_dir, file, sc->secret.key,
				     sizeof(sc->secret.key), true, NULL, errbuf,
				     errlen);
		if (rc) {
			return rc;
		}
	}
	store_cephfs_key_id(sc->secret.key, have);
	store__secret_keyed(&sc->secret);
	if (rc == -ENODATA || made) {
		/* The first key of this directory: say so in it.  Two
		 * first starts at once: one id wins, the other gateway
		 * finds it is not its own below. */
		rc = ceph_ll_setxattr(sc->cm, root, STORE_CEPHFS_KEYID_XATTR,
				      have, sizeof(have), XATTR_CREATE,
				      sc->root_perms);
		if (rc && rc != -EEXIST) {
			snprintf(errbuf, errlen, "xattr %s: %s",
				 STORE_CEPHFS_KEYID_XATTR, strerror(-rc));
			return rc;
		}
		rc = store_cephfs_key_id_get(sc, root, want);
		if (rc) {
			snprintf(errbuf, errlen, "xattr %s: %s",
				 STORE_CEPHFS_KEYID_XATTR, strerror(-rc));
			return rc;
		}
		if (made) {
			log_info("cephfs: %s: made the handle key %s/%s; copy "
				 "it to every other gateway of this datastore",
				 sc->base.name, state_dir, file);
		}
	}
	if (memcmp(want, have, sizeof(have)) != 0) {
		snprintf(errbuf, errlen,
			 "%s/%s is not the key the handles of this directory "
			 "are signed with (xattr %s): copy it from the gateway "
			 "that made it",
			 state_dir, file, STORE_CEPHFS_KEYID_XATTR);
		if (made) {
			/* Ours lost the race: leave no key that would
			 * be refused again at the next start. */
			char path[4200];

			snprintf(path, sizeof(path), "%s/%s", state_dir, file);
			unlink(path);
		}
		return -ENOKEY;
	}
	return 0;
}
