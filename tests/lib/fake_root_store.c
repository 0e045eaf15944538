// SPDX-License-Identifier: Apache-2.0
/*
 * fake_root_store: a store with a root directory and nothing else (see
 * fake_root_store.h).
 */
#include "tests/lib/fake_root_store.h"

#include "nfsd/store/store_obj.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fake_root_store {
	struct store base; /* first: ops receive &base */
	struct store_fh fh;
	int refs;
	int root_err;
};

/* The one object of the store, its root: the common head, then ours. */
struct fake_root_obj {
	struct store_obj base;
	struct fake_root_store *owner;
};

static struct fake_root_obj *fake_root_obj_of(const struct store_obj *obj)
{
	return container_of((struct store_obj *)obj, struct fake_root_obj,
			    base);
}

static struct fake_root_store *fake_root_of(const struct store *st)
{
	return (struct fake_root_store *)st;
}

static int fake_root_root(struct store *st, struct store_obj **out)
{
	struct fake_root_store *f = fake_root_of(st);
	struct fake_root_obj *obj;

	if (f->root_err) {
		return f->root_err;
	}
	obj = calloc(1, sizeof(*obj));
	if (!obj) {
		return -ENOMEM;
	}
	obj->owner = f;
	f->refs++;
	*out = &obj->base;
	return 0;
}

static void fake_root_obj_unref(struct store_obj *obj)
{
	struct fake_root_obj *o = fake_root_obj_of(obj);

	o->owner->refs--;
	free(o);
}

static void fake_root_obj_fh(const struct store_obj *obj, struct store_fh *fh)
{
	*fh = fake_root_obj_of(obj)->owner->fh;
}

/* The fake root is empty: every name is missing. */
static int fake_root_lookup(struct store *st, struct store_obj *dir,
			    const char *name, struct store_obj **out)
{
	(void)st;
	(void)dir;
	(void)name;
	(void)out;
	return -ENOENT;
}

static void fake_root_close(struct store *st)
{
	free(fake_root_of(st));
}

static const struct store_ops fake_root_ops = {
	.root = fake_root_root,
	.obj_unref = fake_root_obj_unref,
	.obj_fh = fake_root_obj_fh,
	.lookup = fake_root_lookup,
	.close = fake_root_close,
};

int fake_root_store_new(const char *name, uint32_t export_id,
			struct store **out)
{
	struct fake_root_store *f = calloc(1, sizeof(*f));
	size_t name_len = strlen(name);

	if (!f) {
		return -ENOMEM;
	}
	f->base.ops = &fake_root_ops;
	snprintf(f->base.name, sizeof(f->base.name), "%s", name);
	f->base.export_id = export_id;
	memcpy(f->fh.data, "ROOT", 4);
	f->fh.data[4] = (uint8_t)(export_id >> 24);
	f->fh.data[5] = (uint8_t)(export_id >> 16);
	f->fh.data[6] = (uint8_t)(export_id >> 8);
	f->fh.data[7] = (uint8_t)export_id;
	if (name_len > STORE_FH_MAX - 8) {
		name_len = STORE_FH_MAX - 8;
	}
	memcpy(f->fh.data + 8, name, name_len);
	f->fh.len = (uint32_t)(8 + name_len);
	*out = &f->base;
	return 0;
}

int fake_root_store_refs(const struct store *st)
{
	return fake_root_of(st)->refs;
}

void fake_root_store_fail_root(struct store *st, int err)
{
	fake_root_of(st)->root_err = err;
}

void fake_root_store_fh(const struct store *st, struct store_fh *fh)
{
	*fh = fake_root_of(st)->fh;
}
