/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vaai_nas: the wire of VAAI-NAS in-band, NFSv3 procedure 22 of program
 * 100003 (docs/vaai-nas.md), as the public Apache-2.0 ESXi plug-in
 * Huawei/soda_vmware_plugin speaks it; written from its layout, not its
 * code.  The call carries XDR: the handle the command is about, a
 * discriminated union that carries the clone source's handle or nothing,
 * and an opaque command of at most 1024 bytes.  The command and the reply
 * data are the plug-in's C structures as an x86-64 host lays them out in
 * memory, so they are read and written here byte by byte, little endian,
 * at fixed offsets, never cast.  This file knows nothing of stores or
 * exports: vaai.c runs the commands.
 */
#ifndef DSNFS_NFS3_VAAI_NAS_H
#define DSNFS_NFS3_VAAI_NAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nfs3_prot.h"

#define VAAI_NAS_PROC 22
/* The plug-in's bounds: opaque<1024> both ways. */
#define VAAI_NAS_CMDARG_MAX 1024
#define VAAI_NAS_CMDRES_MAX 1024
/* Its command structure (296 bytes) and reply data (80), exactly. */
#define VAAI_NAS_CMD_BYTES 296
#define VAAI_NAS_OUT_BYTES 80
#define VAAI_NAS_VERSION 1
/* The clone's destination name field: 256 bytes, its NUL included. */
#define VAAI_NAS_NAME_BYTES 256

/* The union's discriminant: the source handle follows or not. */
enum vaai_nas_src {
	VAAI_NAS_SRC_FH = 0,
	VAAI_NAS_SRC_NONE = 1,
};

enum vaai_nas_cmd {
	VAAI_NAS_FCLONE = 1, /* full file clone */
	VAAI_NAS_FRESERVE = 2, /* reserve space */
	VAAI_NAS_FSTAT = 3, /* extended statistics */
	VAAI_NAS_FCLNPROC = 4, /* a clone's progress */
	VAAI_NAS_FCLNABORT = 5, /* a clone's abort */
	VAAI_NAS_CLN_SUPPORT = 6, /* is FCLONE offered? */
	VAAI_NAS_RSV_SUPPORT = 7, /* is FRESERVE offered? */
	VAAI_NAS_STAT_SUPPORT = 8, /* is FSTAT offered? */
};

/* The reply's "result": a support query's answer ... */
#define VAAI_NAS_SUPPORTED 0
#define VAAI_NAS_NOT_SUPPORTED 1
/* ... or, with a failure status, a file-system reason the plug-in maps
 * to its own error (0: it maps the NFS status instead). */
#define VAAI_NAS_FS_BUSY 1003
#define VAAI_NAS_FS_FULL 1004

/* A clone's progress flag. */
enum vaai_nas_progress {
	VAAI_NAS_CLONE_START = 0,
	VAAI_NAS_CLONE_DOING = 1,
	VAAI_NAS_CLONE_COMPLETE = 2,
};

/* The decoded arguments.  @dst comes first: the charge hook (charge.c)
 * reads every call's first member as its handle.  The handles point into
 * the rooms after them: nothing is allocated. */
struct vaai_nas_args {
	nfs_fh3 dst;
	uint32_t src_kind; /* enum vaai_nas_src */
	nfs_fh3 src; /* empty unless VAAI_NAS_SRC_FH */
	uint32_t cmd_len;
	uint8_t cmd[VAAI_NAS_CMDARG_MAX];
	char dst_room[NFS3_FHSIZE];
	char src_room[NFS3_FHSIZE];
};

/* The reply: an nfsstat3, then the reply data (in success and failure
 * alike; 0 bytes only when the server could not make it). */
struct vaai_nas_res {
	int32_t status;
	uint32_t len;
	uint8_t data[VAAI_NAS_OUT_BYTES];
};

/* The command, parsed. */
struct vaai_nas_cmd_in {
	uint64_t version;
	uint32_t cmd; /* enum vaai_nas_cmd, or not one */
	uint32_t clone_flags; /* passed through, not interpreted */
	char name[VAAI_NAS_NAME_BYTES]; /* FCLONE: the destination's name */
};

/* The reply data, before formatting. */
struct vaai_nas_out {
	uint64_t version;
	uint32_t cmd;
	int32_t result;
	uint64_t total_bytes, allocated_bytes, unique_bytes;
	uint64_t clone_flag, clone_offset;
};

/* XDR of the arguments (decode, encode, free) and of the reply; bounded:
 * a handle past 64 bytes, a command past 1024 or a discriminant other
 * than 0 and 1 fails the decode (GARBAGE_ARGS). */
bool_t vaai_nas_xdr_args(XDR *xdrs, struct vaai_nas_args *objp);
bool_t vaai_nas_xdr_res(XDR *xdrs, struct vaai_nas_res *objp);

/*
 * Parses the command of @len bytes at @buf into @out.  Returns 0;
 * -EINVAL (a size other than 296, a version other than 1, an FCLONE
 * name whose length field and NUL disagree or that is empty), or
 * -EOPNOTSUPP (a command number this server does not know), each with
 * the reason in @errbuf.
 */
int vaai_nas_cmd_parse(const uint8_t *buf, size_t len,
		       struct vaai_nas_cmd_in *out, char *errbuf,
		       size_t errlen);

/* The command as the plug-in lays it out (a client's side; the tests). */
void vaai_nas_cmd_format(const struct vaai_nas_cmd_in *in,
			 uint8_t out[VAAI_NAS_CMD_BYTES]);

/* The reply data as the plug-in reads it. */
void vaai_nas_out_format(const struct vaai_nas_out *in,
			 uint8_t out[VAAI_NAS_OUT_BYTES]);

/* The reverse (a client's side; the tests): 0, or -EINVAL unless @len
 * is exactly 80. */
int vaai_nas_out_parse(const uint8_t *buf, size_t len,
		       struct vaai_nas_out *out);

#endif
