// SPDX-License-Identifier: Apache-2.0
/*
 * nfs3_fixture: the export table, service and request of the NFSv3 unit
 * tests (see nfs3_fixture.h).
 */
#include "tests/lib/nfs3_fixture.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/lib/fake_store.h"
#include "tests/lib/log_capture.h"

static void nfs3_fixture_export(struct nfs3_fixture *fx, int i,
				const char *name, uint32_t id)
{
	struct export *e = &fx->exports[i];

	snprintf(e->name, sizeof(e->name), "%s", name);
	snprintf(e->path, sizeof(e->path), "/%s", name);
	e->id = id;
	e->squash = EXPORT_SQUASH_ROOT;
	e->anon_uid = EXPORT_ANON_ID;
	e->anon_gid = EXPORT_ANON_ID;
	assert_int_equal(fake_store_new(name, id, NFS3_FIXTURE_UID,
					NFS3_FIXTURE_GID, &e->store),
			 0);
}

int nfs3_fixture_setup(void **state)
{
	struct nfs3_fixture *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	nfs3_fixture_export(fx, NFS3_FIXTURE_DS1, "ds1", 101);
	nfs3_fixture_export(fx, NFS3_FIXTURE_DS2, "ds2", 102);
	nfs3_fixture_export(fx, NFS3_FIXTURE_RO, "ro", 103);
	fx->exports[NFS3_FIXTURE_RO].read_only = true;
	nfs3_fixture_export(fx, NFS3_FIXTURE_LIMITED, "limited", 104);
	assert_int_equal(export_client_parse(
				 "10.0.0.0/8",
				 &fx->exports[NFS3_FIXTURE_LIMITED].clients[0]),
			 0);
	fx->exports[NFS3_FIXTURE_LIMITED].nclients = 1;
	fx->table.exports = fx->exports;
	fx->table.count = NFS3_FIXTURE_EXPORTS;
	assert_int_equal(nfs3_service_init(&fx->svc, &fx->table), 0);
	nfs3_program_init(&fx->prog, &fx->svc);
	fx->dispatcher.trace = true;
	fx->call.dispatcher = &fx->dispatcher;
	fx->call.req.svc = &fx->svc;
	fx->call.req.program = &fx->prog;
	fx->call.req.prog = fx->prog.prog;
	fx->call.req.vers = fx->prog.vers;
	nfs3_fixture_peer(fx, "127.0.0.1");
	nfs3_fixture_cred(fx, AUTH_SYS, NFS3_FIXTURE_UID, NFS3_FIXTURE_GID);
	log_capture_reset();
	*state = fx;
	return 0;
}

int nfs3_fixture_teardown(void **state)
{
	struct nfs3_fixture *fx = *state;

	for (int i = 0; i < NFS3_FIXTURE_EXPORTS; i++) {
		struct store *st = fx->exports[i].store;

		assert_int_equal(fake_store_refs(st), 0);
		st->ops->close(st);
	}
	free(fx);
	return 0;
}

void nfs3_fixture_peer(struct nfs3_fixture *fx, const char *addr)
{
	struct sockaddr_in *in = (struct sockaddr_in *)&fx->call.req.peer;

	memset(&fx->call.req.peer, 0, sizeof(fx->call.req.peer));
	in->sin_family = AF_INET;
	in->sin_port = htons(811);
	assert_int_equal(inet_pton(AF_INET, addr, &in->sin_addr), 1);
	fx->call.req.peer_len = sizeof(*in);
	snprintf(fx->call.peer_str, sizeof(fx->call.peer_str), "%s:811", addr);
}

void nfs3_fixture_cred(struct nfs3_fixture *fx, uint32_t flavor, uint32_t uid,
		       uint32_t gid)
{
	struct rpc_cred *c = &fx->call.req.cred;

	memset(c, 0, sizeof(*c));
	c->flavor = flavor;
	c->uid = uid;
	c->gid = gid;
	c->ngroups = 1;
	c->groups[0] = gid;
	snprintf(c->machine, sizeof(c->machine), "testhost");
}

struct store *nfs3_fixture_store(struct nfs3_fixture *fx, int exp)
{
	return fx->exports[exp].store;
}

nfs_fh3 nfs3_fixture_fh(struct nfs3_fixture *fx, int exp,
			const struct store_obj *obj)
{
	struct store *st = nfs3_fixture_store(fx, exp);
	struct store_fh sfh;
	nfs_fh3 fh;

	assert_true(fx->fh_used < NFS3_FIXTURE_FH_SLOTS);
	st->ops->obj_fh(obj, &sfh);
	memcpy(fx->fh_bytes[fx->fh_used], sfh.data, sfh.len);
	fh.data.data_val = fx->fh_bytes[fx->fh_used++];
	fh.data.data_len = sfh.len;
	return fh;
}

nfs_fh3 nfs3_fixture_root(struct nfs3_fixture *fx, int exp)
{
	struct store *st = nfs3_fixture_store(fx, exp);
	struct store_obj *root;
	nfs_fh3 fh;

	assert_int_equal(st->ops->root(st, &root), 0);
	fh = nfs3_fixture_fh(fx, exp, root);
	st->ops->obj_unref(root);
	return fh;
}

int nfs3_fixture_resolve(struct nfs3_fixture *fx, int exp, const nfs_fh3 *fh,
			 struct store_obj **out)
{
	struct store *st = nfs3_fixture_store(fx, exp);
	struct store_fh sfh;

	if (fh->data.data_len > STORE_FH_MAX) {
		return -STORE_EBADHANDLE;
	}
	sfh.len = fh->data.data_len;
	memcpy(sfh.data, fh->data.data_val, sfh.len);
	return st->ops->resolve(st, &sfh, out);
}

struct store_attr nfs3_fixture_attr(struct nfs3_fixture *fx, int exp,
				    const nfs_fh3 *fh)
{
	struct store *st = nfs3_fixture_store(fx, exp);
	struct store_obj *obj;
	struct store_attr a;

	assert_int_equal(nfs3_fixture_resolve(fx, exp, fh, &obj), 0);
	assert_int_equal(st->ops->getattr(st, obj, &a), 0);
	st->ops->obj_unref(obj);
	return a;
}

static const struct store_cred *nfs3_fixture_owner(void)
{
	static const uint32_t groups[1] = { NFS3_FIXTURE_GID };
	static const struct store_cred owner = {
		.uid = NFS3_FIXTURE_UID,
		.gid = NFS3_FIXTURE_GID,
		.ngroups = 1,
		.groups = groups,
	};

	return &owner;
}

/* Hands @obj's handle out and drops the reference. */
static nfs_fh3 nfs3_fixture_take(struct nfs3_fixture *fx, int exp,
				 struct store_obj *obj)
{
	nfs_fh3 fh = nfs3_fixture_fh(fx, exp, obj);

	nfs3_fixture_store(fx, exp)->ops->obj_unref(obj);
	return fh;
}

nfs_fh3 nfs3_fixture_mkfile(struct nfs3_fixture *fx, int exp,
			    const nfs_fh3 *dir, const char *name,
			    const void *data, size_t len, uint32_t mode)
{
	static const uint8_t verf[8];
	struct store *st = nfs3_fixture_store(fx, exp);
	struct store_sattr sa = { .set_mode = true, .mode = mode };
	struct store_obj *d, *obj;
	bool sync_failed;

	assert_int_equal(nfs3_fixture_resolve(fx, exp, dir, &d), 0);
	assert_int_equal(st->ops->create(st, d, name, STORE_CREATE_GUARDED, &sa,
					 verf, nfs3_fixture_owner(), &obj),
			 0);
	st->ops->obj_unref(d);
	if (len) {
		assert_int_equal(st->ops->write(st, obj, 0, data, (uint32_t)len,
						STORE_UNSTABLE, &sync_failed),
				 0);
	}
	return nfs3_fixture_take(fx, exp, obj);
}

nfs_fh3 nfs3_fixture_mkdir(struct nfs3_fixture *fx, int exp, const nfs_fh3 *dir,
			   const char *name, uint32_t mode)
{
	struct store *st = nfs3_fixture_store(fx, exp);
	struct store_sattr sa = { .set_mode = true, .mode = mode };
	struct store_obj *d, *obj;

	assert_int_equal(nfs3_fixture_resolve(fx, exp, dir, &d), 0);
	assert_int_equal(
		st->ops->mkdir(st, d, name, &sa, nfs3_fixture_owner(), &obj),
		0);
	st->ops->obj_unref(d);
	return nfs3_fixture_take(fx, exp, obj);
}

nfs_fh3 nfs3_fixture_symlink(struct nfs3_fixture *fx, int exp,
			     const nfs_fh3 *dir, const char *name,
			     const char *target)
{
	struct store *st = nfs3_fixture_store(fx, exp);
	struct store_sattr sa = { 0 };
	struct store_obj *d, *obj;

	assert_int_equal(nfs3_fixture_resolve(fx, exp, dir, &d), 0);
	assert_int_equal(st->ops->symlink(st, d, name, target, &sa,
					  nfs3_fixture_owner(), &obj),
			 0);
	st->ops->obj_unref(d);
	return nfs3_fixture_take(fx, exp, obj);
}

/* Encodes @res as dispatch would: every reply a test sees must encode. */
static void nfs3_fixture_encode(const struct rpc_proc *desc, void *res)
{
	unsigned long len = xdr_sizeof(desc->encode, res);
	char *buf = malloc(len ? len : 1);
	XDR xdrs;

	assert_non_null(buf);
	xdrmem_create(&xdrs, buf, (u_int)len, XDR_ENCODE);
	assert_true(desc->encode(&xdrs, res));
	assert_int_equal(xdr_getpos(&xdrs), len);
	xdr_destroy(&xdrs);
	free(buf);
}

enum rpc_disposition nfs3_fixture_call(struct nfs3_fixture *fx, uint32_t proc,
				       const void *args, void *res)
{
	enum rpc_disposition disp;

	struct request *req = &fx->call.req;
	const struct rpc_proc *desc;

	assert_true(proc < fx->prog.nprocs);
	desc = &fx->prog.procs[proc];
	req->proc = proc;
	req->desc = desc;
	req->xid++;
	req->args = (void *)args;
	req->res = res;
	req->export_name = NULL;
	/* A new call: dispatch zeroes each request, so nothing of the
	 * previous call's export or access carries over. */
	memset(&req->export, 0, sizeof(req->export));
	req->path_hint[0] = '\0';
	req->payload_bytes = 0;
	fx->call.work = NULL;
	req->disposition = RPC_REPLY;
	memset(res, 0, desc->res_size);
	disp = desc->handler(req, args, res);
	if (disp == RPC_REPLY ||
	    (disp == RPC_PENDING && req->disposition == RPC_REPLY)) {
		nfs3_fixture_encode(desc, res);
	}
	return disp;
}

void nfs3_fixture_release(struct nfs3_fixture *fx, uint32_t proc, void *res)
{
	const struct rpc_proc *desc = &fx->prog.procs[proc];

	if (desc->release) {
		desc->release(&fx->call.req, res);
	}
}
