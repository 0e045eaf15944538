// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_handle: feeds bytes to the file-handle decoder (nfsd/store/handle.c)
 * as a client would send them in an nfs_fh3.  The first byte picks a mode
 * (its low two bits): 0 = the bytes as they are (the MAC almost never
 * matches); 1 = the rest with a valid HMAC written over its last 8 bytes,
 * 2 = with a valid version-1 (keyed xxh3) tag, to reach the checks after
 * the MAC; bit 2 set: the store holds no version-1 secret.  A version-2
 * handle that decodes must encode back to the same bytes; a version-1 one
 * to the version-2 handle of the same kernel handle; only with the
 * version-1 secret does a version-1 handle decode; store_fh_export_id()
 * must agree with the decoder.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <nettle/hmac.h>
#include <xxhash.h>

#include "nfsd/store/store_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_secret(struct store_secret *sec, bool legacy)
{
	memset(sec, 0, sizeof(*sec));
	for (size_t i = 0; i < sizeof(sec->key); i++) {
		sec->key[i] = (uint8_t)(i * 29 + 3);
	}
	for (size_t i = 0; i < sizeof(sec->legacy); i++) {
		sec->legacy[i] = (uint8_t)(i * 131 + 17);
	}
	sec->legacy_ok = legacy;
	store__secret_keyed(sec);
}

static void fuzz_sign(const struct store_secret *sec, struct store_fh *fh,
		      size_t size, bool v1)
{
	struct hmac_sha256_ctx ctx;
	uint64_t mac;

	if (!v1) {
		hmac_sha256_set_key(&ctx, sizeof(sec->key), sec->key);
		hmac_sha256_update(&ctx, size - 8, fh->data);
		hmac_sha256_digest(&ctx, 8, fh->data + size - 8);
		return;
	}
	mac = XXH3_64bits_withSecret(fh->data, size - 8, sec->legacy,
				     sizeof(sec->legacy));
	for (int i = 0; i < 8; i++) {
		fh->data[size - 8 + i] = (uint8_t)(mac >> (56 - 8 * i));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct store_secret sec;
	struct store_kfh kfh;
	struct store_fh fh, again;
	struct store_kfh kfh2;
	uint32_t id = 0, id2 = 0;
	unsigned mode;
	int err;

	if (size == 0) {
		return 0;
	}
	mode = data[0] & 3;
	fuzz_secret(&sec, !(data[0] & 4));
	data++;
	size--;
	memset(&fh, 0, sizeof(fh));
	memcpy(fh.data, data, size < STORE_FH_MAX ? size : STORE_FH_MAX);
	fh.len = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
	if (mode && size >= 8 && size <= STORE_FH_MAX) {
		fuzz_sign(&sec, &fh, size, mode == 2);
	}
	err = store__fh_decode(&sec, &fh, &id, &kfh);
	if (err != 0 && err != -STORE_EBADHANDLE) {
		abort();
	}
	if (err == 0 && store__fh_is_legacy(&fh) && !sec.legacy_ok) {
		abort();
	}
	if (err == 0) {
		store__fh_encode(&sec, id, &kfh, &again);
		if (again.len != fh.len || again.data[0] != STORE_FH_VERSION) {
			abort();
		}
		if (!store__fh_is_legacy(&fh) &&
		    memcmp(again.data, fh.data, fh.len) != 0) {
			abort();
		}
		if (store__fh_decode(&sec, &again, &id2, &kfh2) != 0 ||
		    id2 != id || memcmp(&kfh, &kfh2, sizeof(kfh)) != 0) {
			abort();
		}
		if (store_fh_export_id(&fh, &id2) != 0 || id2 != id) {
			abort();
		}
	}
	return 0;
}
