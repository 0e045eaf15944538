// SPDX-License-Identifier: Apache-2.0
/*
 * opts: the command line (see opts.h and `dsload --help`).
 */
#include "perf/dsload/opts.h"
#include "perf/dsload/admin.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	OPT_PORTMAP = 256,
	OPT_NFS_PORT,
	OPT_MOUNT_PORT,
	OPT_VMS,
	OPT_VMDKS,
	OPT_PLACEMENT,
	OPT_NCONNECT,
	OPT_THREADS,
	OPT_VMDK_SIZE,
	OPT_TIMEOUT,
	OPT_CALL_TIMEOUT,
	OPT_RECONNECT,
	OPT_HEARTBEAT,
	OPT_LCK,
	OPT_VM_IOPS,
	OPT_RESVPORT,
	OPT_ADMIN_PORT,
	OPT_TOKEN_FILE,
	OPT_BS,
	OPT_READ_PCT,
	OPT_RANDOM_PCT,
	OPT_IODEPTH,
	OPT_RAMP,
	OPT_RUNTIME,
	OPT_STABLE,
	OPT_COMMIT_EVERY,
	OPT_VERIFY,
	OPT_ONE_PASS,
	OPT_PREFILL,
	OPT_SEED,
	OPT_PAUSE,
	OPT_JSON,
	OPT_CSV,
	OPT_OUT,
	OPT_QUIET,
	OPT_JOBS,
	OPT_CORNERS,
	OPT_PROFILE,
	OPT_PROFILE_DIR,
	OPT_SERVER_CONFIG,
	OPT_DSNFSD,
	OPT_SCALE,
	OPT_NO_CEILING,
	OPT_NO_VERIFY,
	OPT_MODEL,
	OPT_VERSION,
	OPT_ESXI,
	OPT_MAX_CONNS_DS,
	OPT_MAX_CONN_IP,
	OPT_TIMER_SCALE,
};

static const struct option opts_long[] = {
	{ "server", required_argument, NULL, 's' },
	{ "portmap-port", required_argument, NULL, OPT_PORTMAP },
	{ "nfs-port", required_argument, NULL, OPT_NFS_PORT },
	{ "mount-port", required_argument, NULL, OPT_MOUNT_PORT },
	{ "hosts", required_argument, NULL, 'H' },
	{ "datastores", required_argument, NULL, 'D' },
	{ "vms", required_argument, NULL, OPT_VMS },
	{ "vmdks", required_argument, NULL, OPT_VMDKS },
	{ "placement", required_argument, NULL, OPT_PLACEMENT },
	{ "nconnect", required_argument, NULL, OPT_NCONNECT },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "vmdk-size", required_argument, NULL, OPT_VMDK_SIZE },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "call-timeout", required_argument, NULL, OPT_CALL_TIMEOUT },
	{ "reconnect-timeout", required_argument, NULL, OPT_RECONNECT },
	{ "heartbeat", required_argument, NULL, OPT_HEARTBEAT },
	{ "lck-refresh", required_argument, NULL, OPT_LCK },
	{ "vm-iops", required_argument, NULL, OPT_VM_IOPS },
	{ "resvport", no_argument, NULL, OPT_RESVPORT },
	{ "admin-port", required_argument, NULL, OPT_ADMIN_PORT },
	{ "token-file", required_argument, NULL, OPT_TOKEN_FILE },
	{ "bs", required_argument, NULL, OPT_BS },
	{ "read-pct", required_argument, NULL, OPT_READ_PCT },
	{ "random-pct", required_argument, NULL, OPT_RANDOM_PCT },
	{ "iodepth", required_argument, NULL, OPT_IODEPTH },
	{ "ramp", required_argument, NULL, OPT_RAMP },
	{ "runtime", required_argument, NULL, OPT_RUNTIME },
	{ "stable", required_argument, NULL, OPT_STABLE },
	{ "commit-every", required_argument, NULL, OPT_COMMIT_EVERY },
	{ "verify", no_argument, NULL, OPT_VERIFY },
	{ "one-pass", no_argument, NULL, OPT_ONE_PASS },
	{ "prefill", no_argument, NULL, OPT_PREFILL },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "pause-between-phases", no_argument, NULL, OPT_PAUSE },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "csv", required_argument, NULL, OPT_CSV },
	{ "out", required_argument, NULL, OPT_OUT },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "jobs", no_argument, NULL, OPT_JOBS },
	{ "corners", required_argument, NULL, OPT_CORNERS },
	{ "profile", required_argument, NULL, OPT_PROFILE },
	{ "profile-dir", required_argument, NULL, OPT_PROFILE_DIR },
	{ "server-config", required_argument, NULL, OPT_SERVER_CONFIG },
	{ "dsnfsd", required_argument, NULL, OPT_DSNFSD },
	{ "scale", required_argument, NULL, OPT_SCALE },
	{ "no-ceiling", no_argument, NULL, OPT_NO_CEILING },
	{ "no-verify", no_argument, NULL, OPT_NO_VERIFY },
	{ "model", required_argument, NULL, OPT_MODEL },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "esxi", required_argument, NULL, OPT_ESXI },
	{ "max-connections-per-datastore", required_argument, NULL,
	  OPT_MAX_CONNS_DS },
	{ "max-conn-per-ip", required_argument, NULL, OPT_MAX_CONN_IP },
	{ "esxi-timer-scale", required_argument, NULL, OPT_TIMER_SCALE },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

void opts_usage(FILE *out)
{
	fputs("usage: dsload [run] [options]         one fleet, one phase per "
	      "--read-pct\n"
	      "       dsload sweep [options]         hosts x datastores x four "
	      "corners\n"
	      "       dsload profile NAME [options]  a published profile (also "
	      "--profile NAME)\n"
	      "server:\n"
	      "  -s, --server ADDR          dsnfsd's IPv4 address (127.0.0.1)\n"
	      "      --portmap-port PORT    where to ask for the ports (111)\n"
	      "      --nfs-port PORT        skip the portmapper for NFS\n"
	      "      --mount-port PORT      skip the portmapper for MOUNT\n"
	      "      --admin-port PORT      dsnfsd's admin endpoint: the "
	      "server's "
	      "view\n"
	      "      --token-file FILE      its token (DSNFS_ADMIN_TOKEN_FILE; "
	      "/var/lib/dsnfs/admin.token)\n"
	      "fleet:\n"
	      "  -H, --hosts N[,N..]        emulated hosts, 127.0.1.1 ... (1)\n"
	      "  -D, --datastores LIST      names (ds1,ds2) or a count N = "
	      "ds1..dsN (ds1)\n"
	      "      --vms N[,N..]          VMs per host (1)\n"
	      "      --vmdks N[,N..]        VMDKs per VM (1; sweep: one per "
	      "datastore)\n"
	      "      --placement P          one | spread | per-vm (spread)\n"
	      "      --nconnect N           connections per host and datastore "
	      "(1; ESXi 8: at most 4, 8)\n"
	      "      --threads N            event loops, hosts dealt "
	      "round-robin (1)\n"
	      "      --vmdk-size SIZE       thin flat file size (256m)\n"
	      "      --timeout MS           connect and setup calls (5000)\n"
	      "      --call-timeout MS      unanswered I/O: reconnect (30000)\n"
	      "      --reconnect-timeout MS give up after this long down "
	      "(60000)\n"
	      "      --heartbeat S          NFS.HeartbeatFrequency (12)\n"
	      "      --lck-refresh S        NFS.DiskFileLockUpdateFreq (10)\n"
	      "      --vm-iops N            ceiling of one VM, ops/s (0: "
	      "none)\n"
	      "      --resvport             source ports below 1024, as ESXi\n"
	      "ESXi (docs/dsload.md: each option's esxcli setting):\n"
	      "      --esxi 7|8             the NFSv3 client's rules (8)\n"
	      "      --max-connections-per-datastore N\n"
	      "                             /NFS/MaxConnectionsPerDatastore "
	      "(4; up to 8)\n"
	      "      --max-conn-per-ip N    SunRPC.MaxConnPerIP: past it "
	      "datastores share (32)\n"
	      "      --esxi-timer-scale F   lab knob: heartbeat, APD and .lck "
	      "timers x F (1)\n"
	      "workload (per VMDK):\n"
	      "      --bs SIZE              block size (8k)\n"
	      "      --read-pct P[,P..]     reads in percent; one phase per "
	      "value (50)\n"
	      "      --random-pct P         random offsets in percent (100)\n"
	      "      --iodepth N            I/Os in flight (16)\n"
	      "      --ramp S               seconds not measured (1)\n"
	      "      --runtime S            seconds measured (5)\n"
	      "      --stable HOW           file_sync | unstable (file_sync)\n"
	      "      --commit-every N       unstable: COMMIT after N writes "
	      "(64)\n"
	      "      --verify               tag every written 4 KiB, check "
	      "every read\n"
	      "      --one-pass             each phase covers every block "
	      "once, then stops\n"
	      "      --prefill              write every block once before the "
	      "phases\n"
	      "      --seed N               offset sequence seed (1)\n"
	      "      --pause-between-phases wait for SIGUSR1 before each later "
	      "phase\n"
	      "output:\n"
	      "      --json FILE            results as JSON\n"
	      "      --csv FILE             results as CSV\n"
	      "      --out DIR              sweep/profile: tables, CSV, JSON, "
	      "plot\n"
	      "      --jobs                 a row per VMDK in the summary\n"
	      "      --quiet                no progress line\n"
	      "sweep:\n"
	      "      --corners LIST         "
	      "seqread,seqwrite,randread,randwrite (all)\n"
	      "      --model NAME           draw the model of profile NAME "
	      "(fitted as\n"
	      "                             `dsload profile` fits it) and its "
	      "published\n"
	      "                             points, x --scale\n"
	      "profile:\n"
	      "      --profile NAME         run perf/profiles/NAME.ini\n"
	      "      --profile-dir DIR      where profiles are "
	      "(perf/profiles)\n"
	      "      --server-config FILE   start dsnfsd with FILE (and an "
	      "uncapped one\n"
	      "                             for the ceiling); else use "
	      "--server\n"
	      "      --dsnfsd PATH          the server binary (next to "
	      "dsload)\n"
	      "      --scale X              the traffic scale to start from "
	      "(the file's, or 1;\n"
	      "                             lowered to a third of the "
	      "ceiling)\n"
	      "      --no-ceiling           skip the uncapped ceiling runs\n"
	      "      --no-verify            do not verify data (the profile "
	      "verifies by default)\n"
	      "other:\n"
	      "      --version              print the version\n"
	      "  -h, --help                 this text\n",
	      out);
}

int opts_size_parse(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mul = 1;

	if (!s || *s < '0' || *s > '9') {
		return -EINVAL;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno) {
		return -EINVAL;
	}
	switch (*end) {
	case '\0':
		break;
	case 'k':
	case 'K':
		mul = 1024;
		break;
	case 'm':
	case 'M':
		mul = 1024 * 1024;
		break;
	case 'g':
	case 'G':
		mul = 1024 * 1024 * 1024;
		break;
	default:
		return -EINVAL;
	}
	if (*end && end[1] && strcmp(end + 1, "iB") && strcmp(end + 1, "B")) {
		return -EINVAL;
	}
	if (v > UINT64_MAX / mul) {
		return -EINVAL;
	}
	*out = v * mul;
	return 0;
}

static int opts_uint(const char *s, unsigned min, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	if (!s || *s < '0' || *s > '9') {
		return -EINVAL;
	}
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max) {
		return -EINVAL;
	}
	*out = (unsigned)v;
	return 0;
}

static int opts_seconds(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || end == s || !(v >= 0) || v > 86400) {
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* A rate (ops/s): 0 (none) up to 1e9. */
static int opts_rate(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || end == s || !(v >= 0) || v > 1e9) {
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int opts_port(const char *s, uint16_t *out)
{
	unsigned v;
	int err = opts_uint(s, 1, 65535, &v);

	if (!err) {
		*out = (uint16_t)v;
	}
	return err;
}

static int opts_ms(const char *s, unsigned min, int *out)
{
	unsigned v;
	int err = opts_uint(s, min, 3600000, &v);

	if (!err) {
		*out = (int)v;
	}
	return err;
}

static int opts_positive_seconds(const char *s, double *out)
{
	double v;
	int err = opts_seconds(s, &v);

	if (!err && v <= 0) {
		err = -EINVAL;
	}
	if (!err) {
		*out = v;
	}
	return err;
}

int opts_list_parse(const char *s, unsigned min, unsigned max,
		    struct opts_list *out)
{
	char buf[256], *save = NULL, *tok;

	if (strlen(s) >= sizeof(buf)) {
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	out->n = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (out->n == OPTS_LIST_MAX ||
		    opts_uint(tok, min, max, &out->v[out->n])) {
			return -EINVAL;
		}
		out->n++;
	}
	return out->n ? 0 : -EINVAL;
}

void opts_datastores_count(struct fleet_spec *spec, unsigned n)
{
	spec->ndatastores = n;
	for (unsigned i = 0; i < n; i++) {
		snprintf(spec->datastores[i], sizeof(spec->datastores[i]),
			 "ds%u", i + 1);
	}
}

static int opts_datastores(const char *s, struct dsload_opts *o)
{
	char buf[FLEET_DS_MAX * FLEET_NAME_MAX], *save = NULL, *tok;

	if (s[0] >= '0' && s[0] <= '9') {
		o->datastores_named = false;
		return opts_list_parse(s, 1, FLEET_DS_MAX, &o->ndatastores);
	}
	if (strlen(s) >= sizeof(buf)) {
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	o->spec.ndatastores = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (o->spec.ndatastores == FLEET_DS_MAX ||
		    strlen(tok) >= FLEET_NAME_MAX || strchr(tok, '/')) {
			return -EINVAL;
		}
		snprintf(o->spec.datastores[o->spec.ndatastores++],
			 FLEET_NAME_MAX, "%s", tok);
	}
	o->datastores_named = true;
	o->ndatastores.n = 1;
	o->ndatastores.v[0] = o->spec.ndatastores;
	return o->spec.ndatastores ? 0 : -EINVAL;
}

static int opts_copy(char *dst, const char *src)
{
	if (strlen(src) >= OPTS_PATH_MAX) {
		return -EINVAL;
	}
	snprintf(dst, OPTS_PATH_MAX, "%s", src);
	return 0;
}

static void opts_defaults(struct dsload_opts *o)
{
	memset(o, 0, sizeof(*o));
	fleet_spec_default(&o->spec);
	workload_default(&o->w);
	o->hosts = (struct opts_list){ 1, { 1 } };
	o->ndatastores = (struct opts_list){ 1, { 1 } };
	o->vms = (struct opts_list){ 1, { 1 } };
	o->vmdks = (struct opts_list){ 1, { 1 } };
	o->read_pcts = (struct opts_list){ 1, { 50 } };
	o->vmdks_auto = true;
	snprintf(o->corners, sizeof(o->corners),
		 "seqwrite,seqread,randwrite,randread");
	snprintf(o->profile_dir, sizeof(o->profile_dir), "perf/profiles");
}

/* One option; returns 0 or -EINVAL. */
static int opts_one(struct dsload_opts *o, int c, const char *arg)
{
	uint64_t size;
	unsigned u;

	switch (c) {
	case 's':
		if (strlen(arg) >= sizeof(o->spec.server)) {
			return -EINVAL;
		}
		snprintf(o->spec.server, sizeof(o->spec.server), "%s", arg);
		return 0;
	case OPT_PORTMAP:
		return opts_port(arg, &o->spec.portmap_port);
	case OPT_NFS_PORT:
		return opts_port(arg, &o->spec.nfs_port);
	case OPT_MOUNT_PORT:
		return opts_port(arg, &o->spec.mount_port);
	case 'H':
		return opts_list_parse(arg, 1, FLEET_HOSTS_MAX, &o->hosts);
	case 'D':
		return opts_datastores(arg, o);
	case OPT_VMS:
		return opts_list_parse(arg, 1, 1024, &o->vms);
	case OPT_VMDKS:
		o->vmdks_auto = false;
		return opts_list_parse(arg, 1, 1024, &o->vmdks);
	case OPT_PLACEMENT:
		o->placement_set = true;
		return place_policy_parse(arg, &o->spec.policy);
	case OPT_NCONNECT:
		/* ESXi's limits are checked with the others (esxi.c), so
		 * that the error names the one broken */
		return opts_uint(arg, 1, 1024, &o->spec.nconnect);
	case OPT_ESXI:
		return opts_uint(arg, 1, 99, &o->spec.esxi.version);
	case OPT_MAX_CONNS_DS:
		return opts_uint(arg, 1, 1024, &o->spec.esxi.max_conns_per_ds);
	case OPT_MAX_CONN_IP:
		return opts_uint(arg, 1, 65535, &o->spec.esxi.max_conn_per_ip);
	case OPT_TIMER_SCALE:
		return opts_positive_seconds(arg, &o->spec.esxi.timer_scale);
	case OPT_THREADS:
		o->threads_set = true;
		return opts_uint(arg, 1, FLEET_THREADS_MAX, &o->spec.threads);
	case OPT_VMDK_SIZE:
		o->vmdk_size_set = true;
		return opts_size_parse(arg, &o->spec.vmdk_bytes);
	case OPT_TIMEOUT:
		return opts_ms(arg, 1, &o->spec.timeout_ms);
	case OPT_CALL_TIMEOUT:
		return opts_ms(arg, 1, &o->spec.call_timeout_ms);
	case OPT_RECONNECT:
		return opts_ms(arg, 0, &o->spec.reconnect_ms);
	case OPT_HEARTBEAT:
		return opts_positive_seconds(arg, &o->spec.esxi.hb_frequency_s);
	case OPT_ADMIN_PORT:
		return opts_port(arg, &o->admin_port);
	case OPT_TOKEN_FILE:
		/* argv outlives the run: kept by pointer */
		admin_token_option(arg);
		return 0;
	case OPT_RESVPORT:
		o->spec.resvport = true;
		return 0;
	case OPT_VM_IOPS:
		o->vm_iops_set = true;
		return opts_rate(arg, &o->spec.vm_iops);
	case OPT_LCK:
		return opts_positive_seconds(arg, &o->spec.esxi.lck_refresh_s);
	case OPT_BS:
		if (opts_size_parse(arg, &size) || size == 0 ||
		    size > 1024 * 1024) {
			return -EINVAL;
		}
		o->w.bs_bytes = (uint32_t)size;
		return 0;
	case OPT_READ_PCT:
		return opts_list_parse(arg, 0, 100, &o->read_pcts);
	case OPT_RANDOM_PCT:
		return opts_uint(arg, 0, 100, &o->w.random_pct);
	case OPT_IODEPTH:
		o->iodepth_set = true;
		return opts_uint(arg, 1, 1024, &o->w.iodepth);
	case OPT_RAMP:
		o->ramp_set = true;
		return opts_seconds(arg, &o->w.ramp_s);
	case OPT_RUNTIME:
		o->runtime_set = true;
		return opts_positive_seconds(arg, &o->w.run_s);
	case OPT_STABLE:
		if (!strcmp(arg, "file_sync")) {
			o->w.stable = FILE_SYNC;
		} else if (!strcmp(arg, "unstable")) {
			o->w.stable = UNSTABLE;
		} else {
			return -EINVAL;
		}
		return 0;
	case OPT_COMMIT_EVERY:
		return opts_uint(arg, 1, 1u << 20, &o->w.commit_every);
	case OPT_VERIFY:
		o->w.verify = true;
		return 0;
	case OPT_ONE_PASS:
		o->w.one_pass = true;
		return 0;
	case OPT_PREFILL:
		o->prefill = true;
		return 0;
	case OPT_SEED:
		if (opts_uint(arg, 0, UINT32_MAX, &u)) {
			return -EINVAL;
		}
		o->w.seed = u;
		return 0;
	case OPT_PAUSE:
		o->pause_between_phases = true;
		return 0;
	case OPT_JSON:
		return opts_copy(o->json_path, arg);
	case OPT_CSV:
		return opts_copy(o->csv_path, arg);
	case OPT_OUT:
		return opts_copy(o->out_dir, arg);
	case OPT_QUIET:
		o->spec.progress = false;
		return 0;
	case OPT_JOBS:
		o->show_jobs = true;
		return 0;
	case OPT_CORNERS:
		if (strlen(arg) >= sizeof(o->corners)) {
			return -EINVAL;
		}
		snprintf(o->corners, sizeof(o->corners), "%s", arg);
		return 0;
	case OPT_PROFILE:
		o->cmd = DSLOAD_CMD_PROFILE;
		return opts_copy(o->profile, arg);
	case OPT_PROFILE_DIR:
		return opts_copy(o->profile_dir, arg);
	case OPT_SERVER_CONFIG:
		return opts_copy(o->server_config, arg);
	case OPT_DSNFSD:
		return opts_copy(o->dsnfsd, arg);
	case OPT_SCALE:
		return opts_positive_seconds(arg, &o->scale);
	case OPT_MODEL:
		return opts_copy(o->model, arg);
	case OPT_NO_VERIFY:
		o->no_verify = true;
		return 0;
	case OPT_NO_CEILING:
		o->no_ceiling = true;
		return 0;
	case OPT_VERSION:
		o->cmd = DSLOAD_CMD_VERSION;
		return 0;
	case 'h':
		o->cmd = DSLOAD_CMD_HELP;
		return 0;
	}
	return -EINVAL;
}

/* The long name of option @c, for messages. */
static const char *opts_name(int c)
{
	for (const struct option *opt = opts_long; opt->name; opt++) {
		if (opt->val == c) {
			return opt->name;
		}
	}
	return "?";
}

int opts_parse(int argc, char **argv, struct dsload_opts *o, char *errbuf,
	       size_t errlen)
{
	unsigned nds;
	int c, idx = 0;

	opts_defaults(o);
	if (argc > 1 && argv[1][0] != '-') {
		if (!strcmp(argv[1], "sweep")) {
			o->cmd = DSLOAD_CMD_SWEEP;
		} else if (!strcmp(argv[1], "profile")) {
			o->cmd = DSLOAD_CMD_PROFILE;
		} else if (strcmp(argv[1], "run") != 0) {
			snprintf(errbuf, errlen, "unknown command '%s'",
				 argv[1]);
			return -EINVAL;
		}
		argv++;
		argc--;
		if (o->cmd == DSLOAD_CMD_PROFILE) {
			if (argc < 2 || argv[1][0] == '-') {
				snprintf(errbuf, errlen,
					 "profile: which one? (dsload profile "
					 "anf-avs)");
				return -EINVAL;
			}
			opts_copy(o->profile, argv[1]);
			argv++;
			argc--;
		}
	}
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":s:H:D:h", opts_long, &idx)) !=
	       -1) {
		if (c == '?' || c == ':') {
			snprintf(errbuf, errlen, "%s option '%s'",
				 c == '?' ? "unknown" : "missing value for",
				 argv[optind - 1]);
			return -EINVAL;
		}
		if (opts_one(o, c, optarg)) {
			snprintf(errbuf, errlen, "bad value '%s' for '--%s'",
				 optarg ? optarg : "", opts_name(c));
			return -EINVAL;
		}
	}
	if (optind < argc) {
		snprintf(errbuf, errlen, "unexpected argument '%s'",
			 argv[optind]);
		return -EINVAL;
	}
	if (o->cmd == DSLOAD_CMD_RUN || o->cmd == DSLOAD_CMD_PROFILE) {
		o->spec.hosts = o->hosts.v[0];
		o->spec.vms = o->vms.v[0];
		o->spec.vmdks = o->vmdks.v[0];
		if (!o->datastores_named) {
			opts_datastores_count(&o->spec, o->ndatastores.v[0]);
		}
	}
	o->w.read_pct = o->read_pcts.v[0];
	/* ESXi's limits, at once rather than after the fleet is built
	 * (sweep: its largest datastore count) */
	nds = o->spec.ndatastores;
	for (unsigned i = 0; !o->datastores_named && i < o->ndatastores.n;
	     i++) {
		if (o->ndatastores.v[i] > nds) {
			nds = o->ndatastores.v[i];
		}
	}
	return esxi_conf_check(&o->spec.esxi, o->spec.nconnect, nds, errbuf,
			       errlen);
}
