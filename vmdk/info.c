// SPDX-License-Identifier: Apache-2.0
/*
 * vmdk/info.c: what `dsvmdk info` shows of one disk of a chain: its
 * descriptor (createType, CIDs, parent, geometry), its extents, and the
 * allocation of their files (nb / tbz, provision.c), from which the
 * provisioning is named: thin (ddb.thinProvisioned, or a sparse flat file),
 * zeroedthick (blocks still to be zeroed), eagerzeroedthick (none).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmdk/vmdk_int.h"

static uint32_t ddb_u32(const struct vmdk *v, const char *key)
{
	const char *s = vmdk__descriptor_get(&v->desc, key);

	return s ? (uint32_t)strtoul(s, NULL, 10) : 0;
}

static const char *provisioning(const struct vmdk *v,
				const struct vmdk_alloc *a, bool flat)
{
	const char *thin =
		vmdk__descriptor_get(&v->desc, "ddb.thinProvisioned");
	uint64_t blocks = (vmdk_size_bytes(v) + VMDK_ALLOC_BLOCK_BYTES - 1) /
			  VMDK_ALLOC_BLOCK_BYTES;

	if (!flat) {
		for (size_t i = 0; i < v->n_extents; i++) {
			if (v->extents[i].type == VMDK_EXTENT_VMFSSPARSE) {
				return "vmfsSparse";
			}
			if (v->extents[i].type == VMDK_EXTENT_SESPARSE) {
				return "seSparse";
			}
		}
		return v->parent ? "delta" : "sparse";
	}
	if (thin && !strcmp(thin, "1")) {
		return "thin";
	}
	if (a->tbz) {
		return "zeroedthick";
	}
	return a->nb < blocks ? "thin" : "eagerzeroedthick";
}

static void alloc_add(struct vmdk_alloc *sum, const struct vmdk_alloc *a)
{
	sum->nb += a->nb;
	sum->tbz += a->tbz;
	sum->shared_bytes += a->shared_bytes;
	sum->allocated_bytes += a->allocated_bytes;
	sum->file_bytes += a->file_bytes;
}

int vmdk_info_get(const struct vmdk *v, struct vmdk_info *info)
{
	const char *adapter = vmdk__descriptor_get(&v->desc, "ddb.adapterType");
	bool flat = true;
	int err = 0;

	memset(info, 0, sizeof(*info));
	info->path = v->path;
	info->create_type = vmdk__descriptor_get(&v->desc, "createType");
	info->adapter = adapter ? adapter : "";
	info->parent_hint =
		vmdk__descriptor_get(&v->desc, "parentFileNameHint");
	info->cid = v->desc.cid;
	info->parent_cid = v->desc.parent_cid;
	info->size_bytes = vmdk_size_bytes(v);
	info->cylinders = ddb_u32(v, "ddb.geometry.cylinders");
	info->heads = ddb_u32(v, "ddb.geometry.heads");
	info->sectors = ddb_u32(v, "ddb.geometry.sectors");
	info->n_extents = (unsigned)v->n_extents;
	info->depth = v->depth;
	for (size_t i = 0; i < v->n_extents; i++) {
		const struct vmdk_extent *e = &v->extents[i];
		struct vmdk_alloc a;

		if (e->type == VMDK_EXTENT_SPARSE ||
		    vmdk__extent_type_read_only(e->type)) {
			flat = false;
		}
		if (e->fd < 0) {
			continue;
		}
		err = vmdk_alloc_get(v->io, e->fd, &a);
		if (err && err != -EOPNOTSUPP) {
			return err;
		}
		alloc_add(&info->alloc, &a);
	}
	info->provisioning = provisioning(v, &info->alloc, flat);
	return err;
}

int vmdk_extent_info_get(const struct vmdk *v, unsigned i,
			 struct vmdk_extent_info *info)
{
	const struct vmdk_extent *e;
	int err = 0;

	if (i >= v->n_extents) {
		return -ERANGE;
	}
	e = &v->extents[i];
	memset(info, 0, sizeof(*info));
	info->access = vmdk__access_name(e->access);
	info->type = vmdk__extent_type_name(e->type);
	info->file = e->path;
	info->size_bytes = vmdk_sectors_to_bytes(e->len_sectors);
	if (e->gmap) {
		info->grain_bytes =
			vmdk_sectors_to_bytes(e->gmap->p.grain_sectors);
	}
	if (e->fd >= 0) {
		err = vmdk_alloc_get(v->io, e->fd, &info->alloc);
	}
	return err;
}
