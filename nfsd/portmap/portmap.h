/* SPDX-License-Identifier: Apache-2.0 */
/*
 * portmap: the portmapper, PMAP version 2 (RFC 1833 section 3).  When no
 * rpcbind runs on the host, dsnfsd answers program 100000 itself from a
 * registry of (program, version, protocol, port) mappings; when one runs,
 * dsnfsd registers its programs there instead (portmap_rpcbind_*).
 *
 * The built-in responder answers NULL, SET, UNSET, GETPORT and DUMP, and
 * of rpcbind versions 3 and 4 (RFC 1833 2, rpcb.c; what IPv6 clients ask)
 * NULL, GETADDR, DUMP and GETVERSADDR, from the same registry.  SET
 * and UNSET are accepted only from loopback callers on a privileged
 * source port (procs.c).  CALLIT (procedure 5)
 * is not implemented: it is absent from the table, so dispatch answers
 * PROC_UNAVAIL (it is the classic amplification vector, and NFS clients
 * never use it).
 */
#ifndef DSNFS_PORTMAP_H
#define DSNFS_PORTMAP_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nfsd/rpc/request.h"

/* Mappings the registry holds; SET past this answers FALSE. */
#define PORTMAP_REGISTRY_MAX 128

/* The portmapper program (RFC 1833 3) and its well-known port. */
#define PORTMAP_PROG 100000
#define PORTMAP_VERS 2
#define PORTMAP_PORT 111

/* How long portmap_rpcbind_present() waits, for connect and for reply. */
#define PORTMAP_PROBE_TIMEOUT_MS 500

struct portmap_registry;

/* Creates an empty registry.  *out returns owned: free it with
 * portmap_registry_free().  Returns 0 or -ENOMEM. */
int portmap_registry_new(struct portmap_registry **out);

/* Frees @reg.  Takes @reg; NULL is a no-op. */
void portmap_registry_free(struct portmap_registry *reg);

/*
 * Maps (@prog, @vers, @prot) to @port (RFC 1833 PMAPPROC_SET).  @prot is
 * IPPROTO_TCP or IPPROTO_UDP.  Returns 0, -EEXIST when the triple is
 * already mapped (to any port), -EINVAL for another protocol or a port of
 * 0 or above 65535, -ENOSPC when PORTMAP_REGISTRY_MAX are held.
 * Thread-safe.
 */
int portmap_registry_set(struct portmap_registry *reg, uint32_t prog,
			 uint32_t vers, uint32_t prot, uint32_t port);

/* Removes every mapping of (@prog, @vers), all protocols (PMAPPROC_UNSET).
 * Returns 0, or -ENOENT when there was none.  Thread-safe. */
int portmap_registry_unset(struct portmap_registry *reg, uint32_t prog,
			   uint32_t vers);

/* The port of (@prog, @vers, @prot), or 0 when unmapped (PMAPPROC_GETPORT).
 * Thread-safe. */
uint32_t portmap_registry_getport(struct portmap_registry *reg, uint32_t prog,
				  uint32_t vers, uint32_t prot);

/* Number of mappings held now. */
size_t portmap_registry_count(struct portmap_registry *reg);

/*
 * Tells the registry the address the RPC listeners are bound to (@addr as
 * the config's listen: "::1", "0.0.0.0", "::", borrowed), from which
 * rpcbind 3 and 4 build universal addresses.  Call before the
 * listeners open.  Returns 0, or -EINVAL when @addr is not an address.
 */
int portmap_registry_set_listen(struct portmap_registry *reg, const char *addr);

/*
 * Fills @prog with rpcbind version @vers (3 or 4; RFC 1833 2): NULL,
 * GETADDR, DUMP, and for version 4 GETVERSADDR, answered from @reg
 * (borrowed, req->svc; it must outlive every request).  The netids are
 * tcp, udp (IPv4) and tcp6, udp6 (IPv6), as the listen address serves
 * them ("::" serves all four); the universal address is the listen
 * address, or for a wildcard one, the local address the caller is routed
 * to.  SET, UNSET and the rest are absent from the table: dispatch
 * answers PROC_UNAVAIL.
 */
void portmap_rpcb_program_init(struct rpc_program *prog,
			       struct portmap_registry *reg, uint32_t vers);

/*
 * Fills @prog with the PMAP v2 program (100000, version 2).  @reg is
 * borrowed and becomes the handlers' req->svc; it must outlive every
 * request.
 */
void portmap_program_init(struct rpc_program *prog,
			  struct portmap_registry *reg);

/*
 * Asks the portmapper at @addr (borrowed; NULL = 127.0.0.1:111) for its
 * NULL procedure over TCP, waiting at most @timeout_ms for the connection
 * and again for the reply.  Blocks: call it before the loops start.
 * Returns 0 when a portmapper answered, -ECONNREFUSED when nothing
 * listens, -ETIMEDOUT, or another negative errno.
 */
int portmap_rpcbind_probe(const struct sockaddr_in *addr, int timeout_ms);

/* True when portmap_rpcbind_probe(NULL, PORTMAP_PROBE_TIMEOUT_MS)
 * succeeds: a portmapper answers on 127.0.0.1:111.  Blocks. */
bool portmap_rpcbind_present(void);

/*
 * Registers (@prog, @vers, @proto, @port) with the host's rpcbind through
 * libtirpc's rpcb_set(), as pmap_set() would (@proto is IPPROTO_TCP or
 * IPPROTO_UDP; the mapping is for IPv4, any address).  rpcbind refuses a
 * triple that is already registered, so clear stale mappings of an earlier
 * run first with portmap_rpcbind_unregister().  Blocks.  Returns 0,
 * -EINVAL for another protocol, -ENOENT when /etc/netconfig lacks it, or
 * -EIO when rpcbind did not accept the mapping.
 */
int portmap_rpcbind_register(uint32_t prog, uint32_t vers, int proto,
			     uint16_t port);

/* Removes every rpcbind mapping of (@prog, @vers), all protocols, through
 * pmap_unset().  Blocks.  Returns 0, or -EIO when rpcbind refused or none
 * existed. */
int portmap_rpcbind_unregister(uint32_t prog, uint32_t vers);

#endif
