/*
 * fuzz_handle: feeds bytes to the file-handle decoder (nfsd/store/handle.c)
 * as a client would send them in an nfs_fh3.  The first byte picks a mode:
 * even = the bytes as they are (the MAC almost never matches); odd = the
 * rest with a valid MAC written over its last 8 bytes, to reach the checks
 * after the MAC.  Whatever decodes must encode back to the same bytes, and
 * store_fh_export_id() must agree with the decoder.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "nfsd/store/store_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_secret(struct store_secret *sec)
{
	for (size_t i = 0; i < sizeof(sec->bytes); i++) {
		sec->bytes[i] = (uint8_t)(i * 131 + 17);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct store_secret sec;
	struct store_kfh kfh;
	struct store_fh fh, again;
	uint32_t id = 0, id2 = 0;
	uint64_t mac;
	bool sign;
	int err;

	if (size == 0) {
		return 0;
	}
	sign = data[0] & 1;
	data++;
	size--;
	fuzz_secret(&sec);
	memset(&fh, 0, sizeof(fh));
	memcpy(fh.data, data, size < STORE_FH_MAX ? size : STORE_FH_MAX);
	fh.len = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
	if (sign && size >= 8 && size <= STORE_FH_MAX) {
		mac = XXH3_64bits_withSecret(fh.data, size - 8, sec.bytes,
					     sizeof(sec.bytes));
		for (int i = 0; i < 8; i++) {
			fh.data[size - 8 + i] = (uint8_t)(mac >> (56 - 8 * i));
		}
	}
	err = store__fh_decode(&sec, &fh, &id, &kfh);
	if (err != 0 && err != -STORE_EBADHANDLE) {
		abort();
	}
	if (err == 0) {
		store__fh_encode(&sec, id, &kfh, &again);
		if (again.len != fh.len ||
		    memcmp(again.data, fh.data, fh.len) != 0) {
			abort();
		}
		if (store_fh_export_id(&fh, &id2) != 0 || id2 != id) {
			abort();
		}
	}
	return 0;
}
