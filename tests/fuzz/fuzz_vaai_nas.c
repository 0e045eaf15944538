// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_vaai_nas: the bytes of a VAAI-NAS procedure-22 call
 * (nfsd/nfs3/vaai_codec.c) as a client sends them after the RPC header:
 * the XDR arguments, then the command inside them.  What decodes must
 * stay within its bounds (handles of at most 64 bytes, a command of at
 * most 1024) and encode back to the bytes it came from, modulo XDR's
 * padding; a command that parses must hold a known command number, and
 * an FCLONE a NUL-terminated name of the length its field says; the
 * reply data formats to 80 bytes that parse back to the same values.
 */
#include <rpc/rpc.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/nfs3/vaai_nas.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_cmd(const uint8_t *cmd, size_t len)
{
	struct vaai_nas_cmd_in in;
	struct vaai_nas_out out = { 0 }, back;
	uint8_t re[VAAI_NAS_CMD_BYTES], od[VAAI_NAS_OUT_BYTES];
	char why[256];

	if (vaai_nas_cmd_parse(cmd, len, &in, why, sizeof(why))) {
		if (!why[0]) {
			abort(); /* every refusal says why */
		}
		return;
	}
	if (len != VAAI_NAS_CMD_BYTES || in.version != VAAI_NAS_VERSION ||
	    in.cmd < VAAI_NAS_FCLONE || in.cmd > VAAI_NAS_STAT_SUPPORT) {
		abort();
	}
	if (in.cmd == VAAI_NAS_FCLONE) {
		size_t n = strlen(in.name);

		if (n == 0 || n >= VAAI_NAS_NAME_BYTES ||
		    memcmp(in.name, cmd + 24, n + 1)) {
			abort();
		}
		/* Formatting it again gives the same command bytes where
		 * they mean something: the first 24 and the name. */
		vaai_nas_cmd_format(&in, re);
		if (memcmp(re, cmd, 12) || memcmp(re + 16, cmd + 16, 8)) {
			abort();
		}
	}
	out.version = in.version;
	out.cmd = in.cmd;
	out.total_bytes = in.clone_flags;
	vaai_nas_out_format(&out, od);
	if (vaai_nas_out_parse(od, sizeof(od), &back) ||
	    memcmp(&out, &back, sizeof(out))) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vaai_nas_args a;
	char *copy, re[2048];
	XDR x;
	u_int used, again;

	copy = malloc(size ? size : 1);
	if (!copy) {
		return 0;
	}
	memcpy(copy, data, size);
	memset(&a, 0, sizeof(a));
	xdrmem_create(&x, copy, (u_int)size, XDR_DECODE);
	if (!vaai_nas_xdr_args(&x, &a)) {
		xdr_destroy(&x);
		free(copy);
		return 0;
	}
	used = xdr_getpos(&x);
	xdr_destroy(&x);
	if (a.dst.data.data_len > NFS3_FHSIZE ||
	    a.src.data.data_len > NFS3_FHSIZE ||
	    a.cmd_len > VAAI_NAS_CMDARG_MAX ||
	    a.dst.data.data_val != a.dst_room ||
	    (a.src_kind != VAAI_NAS_SRC_FH &&
	     a.src_kind != VAAI_NAS_SRC_NONE)) {
		abort();
	}
	xdrmem_create(&x, re, sizeof(re), XDR_ENCODE);
	if (!vaai_nas_xdr_args(&x, &a)) {
		abort();
	}
	again = xdr_getpos(&x);
	xdr_destroy(&x);
	if (again != used) {
		abort();
	}
	fuzz_cmd(a.cmd, a.cmd_len);
	xdrmem_create(&x, re, sizeof(re), XDR_FREE);
	(void)vaai_nas_xdr_args(&x, &a);
	xdr_destroy(&x);
	free(copy);
	return 0;
}
