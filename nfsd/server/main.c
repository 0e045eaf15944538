// SPDX-License-Identifier: Apache-2.0
/*
 * dsnfsd: argv, config, signals, the main loop; nothing else.  SIGTERM and
 * SIGINT stop the server; SIGHUP reads the config again and swaps in its
 * datastores and their options, pools, quotas, [traffic] caps and trace
 * flag (server_reconfigure()); --trace on the command line stays on.
 *
 *   dsnfsd [-c FILE]... [-e NAME=DIR]... [-l ADDR] [-p NFS_PORT]
 *          [-m MOUNT_PORT] [-P PORTMAP_PORT|off] [-A ADMIN_PORT|off]
 *          [-w WORKERS] [-f] [--trace] [-v] [--version]
 */
#include <errno.h>
#include <ev.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "nfsd/base/base.h"
#include "nfsd/base/log.h"
#include "nfsd/config/config.h"
#include "nfsd/server/server.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: dsnfsd [options]\n"
		"  -c, --config FILE        read FILE (INI; see "
		"etc/dsnfsd.conf); repeatable:\n"
		"                           files are read in order, later "
		"keys win\n"
		"  -e, --export NAME=DIR    export DIR as /NAME (repeatable)\n"
		"  -l, --listen ADDR        address to listen on (127.0.0.1)\n"
		"  -p, --nfs-port PORT      NFS port (2049; 0 = any)\n"
		"  -m, --mount-port PORT    MOUNT port (20048; 0 = any)\n"
		"  -P, --portmap-port PORT  portmapper port (111; 0 = any; "
		"off)\n"
		"  -A, --admin-port PORT    admin and metrics HTTP port "
		"(8049; 0 = any; off)\n"
		"  -w, --workers N          event loops (default: one per "
		"core)\n"
		"  -s, --state-dir DIR      server state (handle secret, "
		"ledger)\n"
		"  -f, --foreground         stay in the foreground\n"
		"      --trace              log every call and reply\n"
		"  -v, --verbose            debug logging\n"
		"  -V, --version            print the version\n"
		"  -h, --help               this text\n");
}

static int parse_port(const char *arg, bool off_allowed, int *out)
{
	char *end;
	long v;

	if (off_allowed && !strcmp(arg, "off")) {
		*out = CONFIG_PORT_OFF;
		return 0;
	}
	v = strtol(arg, &end, 10);
	if (*arg == '\0' || *end != '\0' || v < 0 || v > 65535) {
		return -EINVAL;
	}
	*out = (int)v;
	return 0;
}

/* Config files read, at most (-c). */
#define MAIN_MAX_CONFIGS 8

/* Command-line values win over the file, whatever their order. */
struct cli_overrides {
	const char *configs[MAIN_MAX_CONFIGS]; /* -c FILE, in argv's order */
	size_t nconfigs;
	const char *exports[CONFIG_MAX_DATASTORES]; /* -e NAME=DIR, argv's */
	size_t nexports;
	const char *listen;
	const char *state_dir;
	int nfs_port, mount_port, portmap_port, admin_port;
	bool nfs_port_set, mount_port_set, portmap_port_set, admin_port_set;
	long workers;
	bool trace;
};

static void apply_overrides(struct config *cfg, const struct cli_overrides *o)
{
	if (o->listen) {
		snprintf(cfg->listen, sizeof(cfg->listen), "%s", o->listen);
	}
	if (o->state_dir) {
		snprintf(cfg->state_dir, sizeof(cfg->state_dir), "%s",
			 o->state_dir);
	}
	if (o->nfs_port_set) {
		cfg->nfs_port = o->nfs_port;
	}
	if (o->mount_port_set) {
		cfg->mount_port = o->mount_port;
	}
	if (o->portmap_port_set) {
		cfg->portmap_port = o->portmap_port;
	}
	if (o->admin_port_set) {
		cfg->admin_port = o->admin_port;
	}
	if (o->workers > 0) {
		cfg->workers = (unsigned)o->workers;
	}
	if (o->trace) {
		cfg->trace = true;
	}
}

/* Every cached file holds descriptors, and so does every connection: use
 * all the descriptors the hard limit allows. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
			log_warn(
				"dsnfsd: cannot raise the descriptor limit: %s",
				strerror(errno));
		}
	}
}

/*
 * The whole config, as at start and at every SIGHUP: defaults, -e, the
 * file, the other options; checked.  @sections must be finished with
 * server_sections_fini() even on failure.  Returns 0 or -errno with the
 * reason in errbuf.
 */
static int load_config(struct config *cfg, struct server_sections *sections,
		       const struct cli_overrides *o, char *errbuf,
		       size_t errlen)
{
	int err;

	config_defaults(cfg);
	err = server_sections_init(sections, cfg);
	if (err) {
		snprintf(errbuf, errlen, "%s", strerror(-err));
		return err;
	}
	for (size_t i = 0; i < o->nexports; i++) {
		err = config_add_export_arg(cfg, o->exports[i], errbuf, errlen);
		if (err) {
			return err;
		}
	}
	/* Later files add to and override earlier ones (a [datastore]
	 * section may appear in several). */
	for (size_t i = 0; i < o->nconfigs; i++) {
		err = config_load_file(cfg, o->configs[i], errbuf, errlen);
		if (err) {
			return err;
		}
	}
	apply_overrides(cfg, o);
	err = server_clones_merge(cfg, errbuf, errlen);
	if (err) {
		return err;
	}
	return config_validate(cfg, errbuf, errlen);
}

/* What SIGHUP needs to read the config again. */
struct reload {
	ev_signal watcher;
	struct server *srv;
	const struct cli_overrides *o;
};

static void reload_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
	struct reload *r = container_of(w, struct reload, watcher);
	struct server_sections sections;
	struct config *cfg = malloc(sizeof(*cfg));
	char err[1024];
	int rc;

	(void)loop;
	(void)revents;
	if (!cfg) {
		log_error("dsnfsd: SIGHUP: out of memory; config not reloaded");
		return;
	}
	log_info("dsnfsd: SIGHUP: reading %s%s again",
		 r->o->nconfigs ? r->o->configs[0] : "the command line",
		 r->o->nconfigs > 1 ? " and the other -c files" : "");
	sd_notify(0, "RELOADING=1");
	rc = load_config(cfg, &sections, r->o, err, sizeof(err));
	if (!rc) {
		rc = server_reconfigure(r->srv, cfg, &sections, err,
					sizeof(err));
	}
	if (rc) {
		log_error("dsnfsd: SIGHUP: %s; the running config stays", err);
	}
	sd_notify(0, "READY=1");
	server_sections_fini(&sections);
	free(cfg);
}

static void stop_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
	(void)revents;
	log_info("dsnfsd: %s: stopping", strsignal(w->signum));
	ev_break(loop, EVBREAK_ALL);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "export", required_argument, NULL, 'e' },
		{ "listen", required_argument, NULL, 'l' },
		{ "nfs-port", required_argument, NULL, 'p' },
		{ "mount-port", required_argument, NULL, 'm' },
		{ "portmap-port", required_argument, NULL, 'P' },
		{ "admin-port", required_argument, NULL, 'A' },
		{ "workers", required_argument, NULL, 'w' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "trace", no_argument, NULL, 'T' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct config cfg;
	static struct cli_overrides o;
	struct server_sections sections;
	struct reload reload;
	char err[1024];
	bool foreground = false;
	struct ev_loop *loop;
	struct server *srv;
	ev_signal sigterm, sigint;
	int c, rc;

	while ((c = getopt_long(argc, argv, "c:e:l:p:m:P:A:w:s:fvVh", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'c':
			if (o.nconfigs == MAIN_MAX_CONFIGS) {
				fatal("dsnfsd: more than %d config files",
				      MAIN_MAX_CONFIGS);
			}
			o.configs[o.nconfigs++] = optarg;
			break;
		case 'e':
			if (o.nexports == CONFIG_MAX_DATASTORES) {
				fatal("dsnfsd: more than %d datastores",
				      CONFIG_MAX_DATASTORES);
			}
			o.exports[o.nexports++] = optarg;
			break;
		case 'l':
			o.listen = optarg;
			break;
		case 'p':
			if (parse_port(optarg, false, &o.nfs_port)) {
				fatal("dsnfsd: -p %s: not a port", optarg);
			}
			o.nfs_port_set = true;
			break;
		case 'm':
			if (parse_port(optarg, false, &o.mount_port)) {
				fatal("dsnfsd: -m %s: not a port", optarg);
			}
			o.mount_port_set = true;
			break;
		case 'P':
			if (parse_port(optarg, true, &o.portmap_port)) {
				fatal("dsnfsd: -P %s: not a port or 'off'",
				      optarg);
			}
			o.portmap_port_set = true;
			break;
		case 'A':
			if (parse_port(optarg, true, &o.admin_port)) {
				fatal("dsnfsd: -A %s: not a port or 'off'",
				      optarg);
			}
			o.admin_port_set = true;
			break;
		case 'w':
			o.workers = strtol(optarg, NULL, 10);
			if (o.workers < 1 || o.workers > 256) {
				fatal("dsnfsd: -w %s: 1 to 256", optarg);
			}
			break;
		case 's':
			o.state_dir = optarg;
			break;
		case 'f':
			foreground = true;
			break;
		case 'T':
			o.trace = true;
			break;
		case 'v':
			log_set_level(LOG_LEVEL_DEBUG);
			break;
		case 'V':
			printf("dsnfsd %s\n", DSNFS_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	if (load_config(&cfg, &sections, &o, err, sizeof(err))) {
		fatal("dsnfsd: %s", err);
	}

	/* A peer that vanishes mid-write must cost one conn, not the process.
	 */
	signal(SIGPIPE, SIG_IGN);
	raise_fd_limit();
	if (!foreground && daemon(1, 1) < 0) {
		fatal("dsnfsd: cannot detach: %s", strerror(errno));
	}
	loop = ev_default_loop(EVFLAG_AUTO);
	rc = server_open(&cfg, &sections, loop, &srv, err, sizeof(err));
	server_sections_fini(&sections);
	if (rc) {
		fatal("dsnfsd: %s", err);
	}

	struct server_ports ports = server_ports(srv);
	/* One machine-readable line: tests and scripts read the ports here. */
	printf("dsnfsd: listening on %s nfs=%d mount=%d portmap=%d "
	       "admin=%d%s\n",
	       cfg.listen, ports.nfs, ports.mount, ports.portmap, ports.admin,
	       ports.rpcbind ? " (rpcbind)" : "");
	fflush(stdout);
	/* systemd's Type=notify: the sockets are up.  Without NOTIFY_SOCKET
	 * (not started by systemd) this does nothing. */
	sd_notifyf(0, "READY=1\nSTATUS=listening on %s nfs=%d mount=%d",
		   cfg.listen, ports.nfs, ports.mount);

	ev_signal_init(&sigterm, stop_cb, SIGTERM);
	ev_signal_start(loop, &sigterm);
	ev_signal_init(&sigint, stop_cb, SIGINT);
	ev_signal_start(loop, &sigint);
	reload.srv = srv;
	reload.o = &o;
	ev_signal_init(&reload.watcher, reload_cb, SIGHUP);
	ev_signal_start(loop, &reload.watcher);
	ev_run(loop, 0);

	sd_notify(0, "STOPPING=1");
	server_stop_guard_start(SERVER_STOP_GRACE_S);
	server_close(srv);
	log_info("dsnfsd: stopped");
	return 0;
}
