// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_config: libFuzzer target for the config parser (nfsd/config/config.c on
 * top of libinih): any text either parses into a config or is refused with
 * a message; it never crashes, and a refusal always says why.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct config cfg;
	char err[1024] = "";
	char *text;
	int rc;

	if (size > 65536) {
		return 0;
	}
	text = malloc(size + 1);
	if (!text) {
		return 0;
	}
	memcpy(text, data, size);
	text[size] = '\0';
	config_defaults(&cfg);
	rc = config_load_string(&cfg, "fuzz.conf", text, err, sizeof(err));
	if (rc != 0 && err[0] == '\0') {
		abort(); /* an error without words */
	}
	if (rc == 0) {
		(void)config_validate(&cfg, err, sizeof(err));
	}
	free(text);
	return 0;
}
