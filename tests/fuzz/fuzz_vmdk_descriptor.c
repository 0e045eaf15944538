// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_vmdk_descriptor: feeds bytes to the descriptor parser
 * (vmdk/descriptor.c) as they would come from a `disk.vmdk` file or the
 * embedded descriptor of a sparse extent.  Whatever parses must format back
 * to text that parses to the same CIDs, extents and keys.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmdk/vmdk_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same_descriptor(const struct vmdk_descriptor *a,
			    const struct vmdk_descriptor *b)
{
	if (a->cid != b->cid || a->parent_cid != b->parent_cid ||
	    a->version != b->version || a->n_extents != b->n_extents ||
	    a->n_keys != b->n_keys || a->n_ddb != b->n_ddb ||
	    a->size_sectors != b->size_sectors) {
		abort();
	}
	for (size_t i = 0; i < a->n_extents; i++) {
		const struct vmdk_desc_extent *x = &a->extents[i];
		const struct vmdk_desc_extent *y = &b->extents[i];

		if (x->type != y->type || x->access != y->access ||
		    x->len_sectors != y->len_sectors ||
		    x->offset_sectors != y->offset_sectors ||
		    !x->file != !y->file ||
		    (x->file && strcmp(x->file, y->file))) {
			abort();
		}
	}
	for (size_t i = 0; i < a->n_ddb; i++) {
		if (strcmp(a->ddb[i].key, b->ddb[i].key) ||
		    strcmp(a->ddb[i].value, b->ddb[i].value)) {
			abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vmdk_descriptor d, again;
	char err[256];
	size_t len;
	char *text;

	if (vmdk__descriptor_parse((const char *)data, size, &d, err,
				   sizeof(err))) {
		return 0;
	}
	if (vmdk__descriptor_format(&d, &text, &len)) {
		abort();
	}
	if (vmdk__descriptor_parse(text, len, &again, err, sizeof(err))) {
		abort();
	}
	same_descriptor(&d, &again);
	vmdk__descriptor_fini(&again);
	vmdk__descriptor_fini(&d);
	free(text);
	return 0;
}
