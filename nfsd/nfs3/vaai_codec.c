// SPDX-License-Identifier: Apache-2.0
/*
 * vaai_codec: the bytes of VAAI-NAS procedure 22 (vaai_nas.h,
 * docs/vaai-nas.md): its XDR, and the fixed-offset little-endian command
 * and reply data inside the opaques.  Pure: no store, no export.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nfsd/nfs3/vaai_nas.h"

/* Offsets in the command (the plug-in's request structure). */
#define CMD_OFF_VERSION 0
#define CMD_OFF_TYPE 8
#define CMD_OFF_CLONE_FLAGS 16
#define CMD_OFF_NAME_LEN 20
#define CMD_OFF_NAME 24
/* 24 + 256 = 280: two reserved 64-bit words end it at 296. */

/* Offsets in the reply data. */
#define OUT_OFF_VERSION 0
#define OUT_OFF_TYPE 8
#define OUT_OFF_RESULT 12
#define OUT_OFF_TOTAL 16
#define OUT_OFF_ALLOCATED 24
#define OUT_OFF_UNIQUE 32
/* 40: reserved. */
#define OUT_OFF_CLONE_FLAG 48
#define OUT_OFF_CLONE_OFFSET 56
/* 64..80: reserved. */

_Static_assert(CMD_OFF_NAME + VAAI_NAS_NAME_BYTES + 16 == VAAI_NAS_CMD_BYTES,
	       "the command ends with two reserved words");
_Static_assert(OUT_OFF_CLONE_OFFSET + 8 + 16 == VAAI_NAS_OUT_BYTES,
	       "the reply data ends with two reserved words");

static uint64_t le_get(const uint8_t *p, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = bytes; i > 0; i--) {
		v = (v << 8) | p[i - 1];
	}
	return v;
}

static void le_put(uint8_t *p, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++) {
		p[i] = (uint8_t)(v >> (8 * i));
	}
}

/* A handle into @room (NFS3_FHSIZE bytes): xdr_bytes() then checks the
 * bound and fills what is there.  XDR_FREE frees nothing. */
static bool_t vaai_xdr_fh(XDR *xdrs, nfs_fh3 *fh, char *room)
{
	if (xdrs->x_op == XDR_FREE) {
		fh->data.data_val = NULL;
		fh->data.data_len = 0;
		return TRUE;
	}
	if (xdrs->x_op == XDR_DECODE) {
		fh->data.data_val = room;
	}
	return xdr_nfs_fh3(xdrs, fh);
}

bool_t vaai_nas_xdr_args(XDR *xdrs, struct vaai_nas_args *objp)
{
	char *cmd = (char *)objp->cmd;
	u_int len = objp->cmd_len;

	if (!vaai_xdr_fh(xdrs, &objp->dst, objp->dst_room) ||
	    !xdr_uint32_t(xdrs, &objp->src_kind)) {
		return FALSE;
	}
	switch (objp->src_kind) {
	case VAAI_NAS_SRC_FH:
		if (!vaai_xdr_fh(xdrs, &objp->src, objp->src_room)) {
			return FALSE;
		}
		break;
	case VAAI_NAS_SRC_NONE:
		objp->src.data.data_len = 0;
		objp->src.data.data_val = objp->src_room;
		break;
	default:
		/* The plug-in's union has these two arms only. */
		return xdrs->x_op == XDR_FREE;
	}
	if (xdrs->x_op == XDR_FREE) {
		return TRUE;
	}
	/* Into the fixed room: xdr_bytes() checks the bound first. */
	if (!xdr_bytes(xdrs, &cmd, &len, VAAI_NAS_CMDARG_MAX)) {
		return FALSE;
	}
	objp->cmd_len = len;
	return TRUE;
}

bool_t vaai_nas_xdr_res(XDR *xdrs, struct vaai_nas_res *objp)
{
	char *data = (char *)objp->data;
	u_int len = objp->len;

	if (xdrs->x_op == XDR_FREE) {
		return TRUE;
	}
	if (!xdr_int32_t(xdrs, &objp->status) ||
	    !xdr_bytes(xdrs, &data, &len, VAAI_NAS_OUT_BYTES)) {
		return FALSE;
	}
	objp->len = len;
	return TRUE;
}

int vaai_nas_cmd_parse(const uint8_t *buf, size_t len,
		       struct vaai_nas_cmd_in *out, char *errbuf, size_t errlen)
{
	uint32_t name_len;
	size_t n;

	memset(out, 0, sizeof(*out));
	if (len != VAAI_NAS_CMD_BYTES) {
		snprintf(errbuf, errlen,
			 "VAAI-NAS command of %zu bytes: the plug-in's is %u",
			 len, VAAI_NAS_CMD_BYTES);
		return -EINVAL;
	}
	out->version = le_get(buf + CMD_OFF_VERSION, 8);
	out->cmd = (uint32_t)le_get(buf + CMD_OFF_TYPE, 4);
	out->clone_flags = (uint32_t)le_get(buf + CMD_OFF_CLONE_FLAGS, 4);
	if (out->version != VAAI_NAS_VERSION) {
		snprintf(errbuf, errlen,
			 "VAAI-NAS command version %llu: only %u is known",
			 (unsigned long long)out->version, VAAI_NAS_VERSION);
		return -EINVAL;
	}
	if (out->cmd < VAAI_NAS_FCLONE || out->cmd > VAAI_NAS_STAT_SUPPORT) {
		snprintf(errbuf, errlen, "VAAI-NAS command %u is not known",
			 out->cmd);
		return -EOPNOTSUPP;
	}
	if (out->cmd != VAAI_NAS_FCLONE) {
		return 0;
	}
	/* The name's length counts its NUL, which must end it there. */
	name_len = (uint32_t)le_get(buf + CMD_OFF_NAME_LEN, 4);
	n = strnlen((const char *)buf + CMD_OFF_NAME, VAAI_NAS_NAME_BYTES);
	if (name_len < 2 || name_len > VAAI_NAS_NAME_BYTES ||
	    n != name_len - 1) {
		snprintf(errbuf, errlen,
			 "VAAI-NAS clone: the destination name's length "
			 "field (%u) does not match its bytes (%zu before "
			 "the NUL%s)",
			 name_len, n,
			 n == VAAI_NAS_NAME_BYTES ? ", none found" : "");
		return -EINVAL;
	}
	memcpy(out->name, buf + CMD_OFF_NAME, n);
	out->name[n] = '\0';
	return 0;
}

void vaai_nas_cmd_format(const struct vaai_nas_cmd_in *in,
			 uint8_t out[VAAI_NAS_CMD_BYTES])
{
	size_t n = strnlen(in->name, VAAI_NAS_NAME_BYTES - 1);

	memset(out, 0, VAAI_NAS_CMD_BYTES);
	le_put(out + CMD_OFF_VERSION, in->version, 8);
	le_put(out + CMD_OFF_TYPE, in->cmd, 4);
	le_put(out + CMD_OFF_CLONE_FLAGS, in->clone_flags, 4);
	if (n) {
		le_put(out + CMD_OFF_NAME_LEN, n + 1, 4);
		memcpy(out + CMD_OFF_NAME, in->name, n);
	}
}

void vaai_nas_out_format(const struct vaai_nas_out *in,
			 uint8_t out[VAAI_NAS_OUT_BYTES])
{
	memset(out, 0, VAAI_NAS_OUT_BYTES);
	le_put(out + OUT_OFF_VERSION, in->version, 8);
	le_put(out + OUT_OFF_TYPE, in->cmd, 4);
	le_put(out + OUT_OFF_RESULT, (uint32_t)in->result, 4);
	le_put(out + OUT_OFF_TOTAL, in->total_bytes, 8);
	le_put(out + OUT_OFF_ALLOCATED, in->allocated_bytes, 8);
	le_put(out + OUT_OFF_UNIQUE, in->unique_bytes, 8);
	le_put(out + OUT_OFF_CLONE_FLAG, in->clone_flag, 8);
	le_put(out + OUT_OFF_CLONE_OFFSET, in->clone_offset, 8);
}

int vaai_nas_out_parse(const uint8_t *buf, size_t len, struct vaai_nas_out *out)
{
	if (len != VAAI_NAS_OUT_BYTES) {
		return -EINVAL;
	}
	out->version = le_get(buf + OUT_OFF_VERSION, 8);
	out->cmd = (uint32_t)le_get(buf + OUT_OFF_TYPE, 4);
	out->result = (int32_t)(uint32_t)le_get(buf + OUT_OFF_RESULT, 4);
	out->total_bytes = le_get(buf + OUT_OFF_TOTAL, 8);
	out->allocated_bytes = le_get(buf + OUT_OFF_ALLOCATED, 8);
	out->unique_bytes = le_get(buf + OUT_OFF_UNIQUE, 8);
	out->clone_flag = le_get(buf + OUT_OFF_CLONE_FLAG, 8);
	out->clone_offset = le_get(buf + OUT_OFF_CLONE_OFFSET, 8);
	return 0;
}
