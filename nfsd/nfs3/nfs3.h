/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nfs3: the NFS version 3 service (RFC 1813 section 3, all 22 procedures).
 * The service is a procedure table for rpc/dispatch plus the state the
 * handlers share: the export table and the write verifier.  Handlers reach
 * files only through the store interface (store/store.h), check the client
 * list of the export on every call and squash the caller's credentials per
 * export.  Blocking work (stable writes, COMMIT, directory scans) leaves the
 * loop through request_defer() (rpc/dispatch.h).
 */
#ifndef DSNFS_NFS3_H
#define DSNFS_NFS3_H

#include <stdatomic.h>
#include <stdint.h>

#include "nfsd/export/export.h"
#include "nfsd/rpc/request.h"

#define NFS3_SERVICE_PROG 100003
#define NFS3_SERVICE_VERS 3
/* READ and WRITE payload ceiling: the data<> decode bound of nfs3_prot.x. */
#define NFS3_SERVICE_IO_MAX_BYTES (1024 * 1024)
/* READ/WRITE data in one UDP datagram, as knfsd (RPCSVC_MAXPAYLOAD_UDP):
 * a 32 KiB READ reply with its headers fits in 65,507 bytes. */
#define NFS3_UDP_MAX_PAYLOAD_BYTES (32 * 1024)
/* The largest rpc_proc.args_size of the NFSv3 table: LOOKUP's arguments
 * with room for their handle and name (nfs3_int.h). */
#define NFS3_ARGS_MAX_BYTES 1280
/* Preferred READDIR size reported by FSINFO (dtpref). */
#define NFS3_SERVICE_DIR_PREF_BYTES (64 * 1024)
/* READs from this size on go by sendfile (read_zero_copy_min_bytes). */
#define NFS3_SERVICE_ZERO_COPY_MIN_BYTES (32 * 1024)

struct admin_ops;

struct nfs3_service {
	const struct export_table *exports; /* borrowed; outlives the service */
	/* WRITE/COMMIT verifier (nfs3_write_verf()): start time + random, new
	 * at every start, so clients resend their unstable writes after a
	 * restart; and new again for one datastore (its write_verf_gen, in
	 * struct export) after every sync of it that failed, which may have
	 * lost unstable data (RFC 1813 3.3.7). */
	uint8_t write_verf[8];
	uint32_t max_read_bytes; /* READ count cap, FSINFO rtmax */
	uint32_t max_write_bytes; /* WRITE count cap, FSINFO wtmax */
	uint32_t dir_pref_bytes; /* FSINFO dtpref */
	/* READDIR / READDIRPLUS reply cap; larger client counts are cut. */
	uint32_t max_dir_bytes;
	/* READ data goes from the file to the socket (sendfile) where the
	 * transport can send it ([server] read_zero_copy); false: it is
	 * read into a buffer first. */
	bool read_zero_copy;
	/* Smaller READs are copied all the same: a file payload costs a
	 * sendfile of its own and ends the batch of replies that one
	 * sendmsg sends, which costs more than copying 8 KiB
	 * (docs/bench.md). */
	uint32_t read_zero_copy_min_bytes;
	/* The server's registry of long operations (admin/ops_engine.h),
	 * borrowed, shared with the admin API: where VAAI-NAS procedure 22
	 * runs its clones.  NULL: none, and an in-band clone is
	 * NFS3ERR_NOTSUPP. */
	struct admin_ops *ops;
};

/*
 * Fills @svc with defaults (1 MiB reads and writes, 64 KiB dtpref, 1 MiB
 * directory pages, zero-copy READ) and a fresh write verifier (start time +
 * getrandom()).
 * @exports is borrowed and must outlive the service.  Returns 0, or a
 * negative errno when no random bytes could be had.
 */
int nfs3_service_init(struct nfs3_service *svc,
		      const struct export_table *exports);

/* The write verifier WRITE and COMMIT replies of datastore @exp carry now:
 * write_verf with the datastore's id and write_verf_gen folded into its
 * random half, so each datastore has its own.  Any thread. */
void nfs3_write_verf(const struct nfs3_service *svc, const struct export *exp,
		     char out[8]);

/*
 * Fills @prog with the NFS program (100003, version 3): its name, numbers,
 * the procedure table (static, const), ctx = @svc and the charge hook that
 * names each call's datastore for admission (rpc_charge_fn).  @svc is borrowed
 * and must outlive every request of the program.
 */
void nfs3_program_init(struct rpc_program *prog, struct nfs3_service *svc);

#endif
