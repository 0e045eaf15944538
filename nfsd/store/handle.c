// SPDX-License-Identifier: Apache-2.0
/*
 * handle: our NFSv3 file handle (RFC 1813 2.3.3, nfs_fh3, at most
 * STORE_FH_MAX = 56 bytes because ESXi refuses longer ones), built around
 * the kernel's own handle so that it survives server restarts and renames.
 *
 *   offset  bytes  field
 *        0      1  version, STORE_FH_VERSION (2)
 *        1      4  export id, big endian (store_fh_export_id() reads it
 *                  without the key, to find the store)
 *        5      1  kernel handle_type (FILEID_*; ext4 gives 1)
 *        6      1  n = kernel f_handle length, 1..STORE_KFH_MAX (41)
 *        7      n  kernel f_handle bytes from name_to_handle_at() (ext4: 8)
 *      7+n      8  MAC: the first 8 bytes of HMAC-SHA-256 (nettle) of
 *                  bytes 0 .. 7+n-1, keyed with the store's 32-byte key
 *                  (<state_dir>/handle.key, see secret.c)
 *
 * An ext4 handle is 23 bytes.  A handle is valid only with exactly 15+n
 * bytes.  Neither a boot epoch nor a device number is carried: the handle
 * names the inode (number and generation) on the export's filesystem, and
 * the store checks st_dev and the export subtree when it resolves one.
 *
 * The MAC covers the export id, so a handle of one export is refused by
 * every other.  64 bits of a real MAC: forging one handle takes 2^64
 * guesses on average, each one an NFS request, and studying valid handles
 * tells nothing of the key.
 *
 * Version 1 (issued before issue 23) had the same layout with a keyed
 * xxh3 tag, which is not a MAC (its key can be recovered from handles).
 * Such a handle is still accepted when the store holds the version-1
 * secret (<state_dir>/handle.secret, or a CephFS datastore's adopted one),
 * so that clients (ESXi) keep their open files across the upgrade; the
 * store's subtree checks hold for it as for any handle, so a forged one
 * reaches nothing outside the export.  Removing that file ends it.
 */
#include "nfsd/store/store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <nettle/hmac.h>
#include <xxhash.h>

#define STORE_FH_OFF_VERSION 0
#define STORE_FH_OFF_EXPORT 1
#define STORE_FH_OFF_TYPE 5
#define STORE_FH_OFF_LEN 6

_Static_assert(STORE_SECRET_BYTES >= XXH3_SECRET_SIZE_MIN,
	       "xxh3 needs a longer secret");
_Static_assert(STORE_KFH_MAX >= 8, "an ext4 handle must fit");

static void store_be32_put(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t store_be32_get(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static uint64_t store_be64_get(const uint8_t *p)
{
	return (uint64_t)store_be32_get(p) << 32 | store_be32_get(p + 4);
}

void store__secret_keyed(struct store_secret *sec)
{
	hmac_sha256_set_key(&sec->keyed, sizeof(sec->key), sec->key);
}

static void store_fh_mac(const struct store_secret *sec, const uint8_t *p,
			 size_t len, uint8_t out[STORE_FH_MAC_BYTES])
{
	struct hmac_sha256_ctx ctx = sec->keyed;

	hmac_sha256_update(&ctx, len, p);
	hmac_sha256_digest(&ctx, STORE_FH_MAC_BYTES, out);
	explicit_bzero(&ctx, sizeof(ctx));
}

/* Version 1's tag: only ever checked, never issued. */
static uint64_t store_fh_mac_xxh3(const struct store_secret *sec,
				  const uint8_t *p, size_t len)
{
	return XXH3_64bits_withSecret(p, len, sec->legacy, sizeof(sec->legacy));
}

/* Compares in time independent of where the bytes differ. */
static bool store_fh_mac_eq(const uint8_t *a, const uint8_t *b)
{
	uint8_t d = 0;

	for (int i = 0; i < STORE_FH_MAC_BYTES; i++) {
		d |= (uint8_t)(a[i] ^ b[i]);
	}
	return d == 0;
}

void store__fh_encode(const struct store_secret *sec, uint32_t export_id,
		      const struct store_kfh *kfh, struct store_fh *out)
{
	size_t body = STORE_FH_HEAD_BYTES + kfh->len;

	memset(out, 0, sizeof(*out));
	out->data[STORE_FH_OFF_VERSION] = STORE_FH_VERSION;
	store_be32_put(out->data + STORE_FH_OFF_EXPORT, export_id);
	out->data[STORE_FH_OFF_TYPE] = kfh->type;
	out->data[STORE_FH_OFF_LEN] = kfh->len;
	memcpy(out->data + STORE_FH_HEAD_BYTES, kfh->f_handle, kfh->len);
	store_fh_mac(sec, out->data, body, out->data + body);
	out->len = (uint32_t)(body + STORE_FH_MAC_BYTES);
}

/* Checks everything but the MAC; sets *body to the signed length. */
static int store_fh_check_layout(const struct store_fh *fh, size_t *body)
{
	size_t n;

	if (fh->len < STORE_FH_HEAD_BYTES + 1 + STORE_FH_MAC_BYTES ||
	    fh->len > STORE_FH_MAX) {
		return -STORE_EBADHANDLE;
	}
	if (fh->data[STORE_FH_OFF_VERSION] != STORE_FH_VERSION &&
	    fh->data[STORE_FH_OFF_VERSION] != STORE_FH_VERSION_XXH3) {
		return -STORE_EBADHANDLE;
	}
	n = fh->data[STORE_FH_OFF_LEN];
	if (n == 0 || n > STORE_KFH_MAX ||
	    fh->len != STORE_FH_HEAD_BYTES + n + STORE_FH_MAC_BYTES) {
		return -STORE_EBADHANDLE;
	}
	*body = STORE_FH_HEAD_BYTES + n;
	return 0;
}

int store__fh_decode(const struct store_secret *sec, const struct store_fh *fh,
		     uint32_t *export_id, struct store_kfh *kfh)
{
	size_t body;
	int err;

	err = store_fh_check_layout(fh, &body);
	if (err) {
		return err;
	}
	if (fh->data[STORE_FH_OFF_VERSION] == STORE_FH_VERSION_XXH3) {
		if (!sec->legacy_ok ||
		    store_be64_get(fh->data + body) !=
			    store_fh_mac_xxh3(sec, fh->data, body)) {
			return -STORE_EBADHANDLE;
		}
	} else {
		uint8_t mac[STORE_FH_MAC_BYTES];

		store_fh_mac(sec, fh->data, body, mac);
		if (!store_fh_mac_eq(mac, fh->data + body)) {
			return -STORE_EBADHANDLE;
		}
	}
	*export_id = store_be32_get(fh->data + STORE_FH_OFF_EXPORT);
	memset(kfh, 0, sizeof(*kfh));
	kfh->type = fh->data[STORE_FH_OFF_TYPE];
	kfh->len = fh->data[STORE_FH_OFF_LEN];
	memcpy(kfh->f_handle, fh->data + STORE_FH_HEAD_BYTES, kfh->len);
	return 0;
}

bool store__fh_is_legacy(const struct store_fh *fh)
{
	return fh->len > 0 &&
	       fh->data[STORE_FH_OFF_VERSION] == STORE_FH_VERSION_XXH3;
}

int store_fh_export_id(const struct store_fh *fh, uint32_t *export_id)
{
	size_t body;
	int err;

	err = store_fh_check_layout(fh, &body);
	if (err) {
		return err;
	}
	*export_id = store_be32_get(fh->data + STORE_FH_OFF_EXPORT);
	return 0;
}

/* struct file_handle with room for MAX_HANDLE_SZ (128) bytes. */
union store_kfh_buf {
	struct file_handle fh;
	uint8_t bytes[sizeof(struct file_handle) + 128];
};

int store__kfh_get(int dirfd, const char *name, int flags,
		   struct store_kfh *out)
{
	union store_kfh_buf buf;
	int mount_id;

	memset(&buf, 0, sizeof(buf));
	buf.fh.handle_bytes = sizeof(buf) - sizeof(struct file_handle);
	/* name_to_handle_at() follows nothing without AT_SYMLINK_FOLLOW. */
	if (name_to_handle_at(dirfd, name, &buf.fh, &mount_id,
			      flags & AT_EMPTY_PATH) != 0) {
		return -errno;
	}
	if (buf.fh.handle_bytes == 0 || buf.fh.handle_bytes > STORE_KFH_MAX ||
	    buf.fh.handle_type < 0 || buf.fh.handle_type > UINT8_MAX) {
		return -EOVERFLOW;
	}
	memset(out, 0, sizeof(*out));
	out->type = (uint8_t)buf.fh.handle_type;
	out->len = (uint8_t)buf.fh.handle_bytes;
	memcpy(out->f_handle, buf.fh.f_handle, out->len);
	return 0;
}

int store__kfh_open(int mount_fd, const struct store_kfh *kfh, int flags)
{
	union store_kfh_buf buf;
	int fd;

	memset(&buf, 0, sizeof(buf));
	buf.fh.handle_bytes = kfh->len;
	buf.fh.handle_type = kfh->type;
	memcpy(buf.fh.f_handle, kfh->f_handle, kfh->len);
	fd = open_by_handle_at(mount_fd, &buf.fh, flags | O_CLOEXEC);
	return fd >= 0 ? fd : -errno;
}
