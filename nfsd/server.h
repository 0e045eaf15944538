/*
 * server: puts dsnfsd together from a struct config: the datastores and
 * their export table, the NFS, MOUNT and portmapper programs, the
 * dispatcher, the blocking-work threads and the event loops.  main.c only
 * parses argv and runs the main loop.
 */
#ifndef DSNFS_SERVER_H
#define DSNFS_SERVER_H

#include "nfsd/config.h"

struct server;
struct ev_loop;

/* The ports actually bound (after "0 = any"); -1 where nothing listens. */
struct server_ports {
	int nfs;
	int mount;
	int portmap;
	bool rpcbind; /* registered with a running rpcbind instead */
};

/*
 * Opens every datastore, starts the worker loops and listens, attached to
 * @main_loop (borrowed).  *out returns owned: server_close().  On failure
 * returns -errno with the reason in errbuf and nothing left running.
 */
int server_open(const struct config *cfg, struct ev_loop *main_loop,
		struct server **out, char *errbuf, size_t errlen);

/* The ports bound by server_open. */
struct server_ports server_ports(const struct server *srv);

/* Stops listening, drains and stops the loops and threads, unregisters
 * from rpcbind and frees everything.  Call after the main loop returned. */
void server_close(struct server *srv);

#endif
