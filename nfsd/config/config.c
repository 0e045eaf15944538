// SPDX-License-Identifier: Apache-2.0
/*
 * config: parses dsnfsd.conf with libinih and the -e NAME=DIR option into
 * struct config.  Every error names the file, the line and the key.
 */
#include "nfsd/config/config.h"

#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nfsd/base/base.h"
#include "nfsd/pool/pool.h"

#define CONFIG_SECTION_DATASTORE "datastore "

void config_defaults(struct config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->listen, sizeof(cfg->listen), "127.0.0.1");
	cfg->nfs_port = 2049;
	cfg->mount_port = 20048;
	cfg->portmap_port = 111;
	cfg->workers = 0;
	cfg->work_threads = 0; /* config_work_threads() */
	cfg->group_commit = true;
	cfg->intent_log_mib = 128;
	cfg->intent_log_checkpoint_ms = 1000;
	/* The log keeps the writes it wins on (small, random) and sends
	 * large ones and a file's sequential stream in place, where the
	 * second copy of their bytes would be the cost (ZFS without a
	 * separate log device, zfs_immediate_write_sz: docs/durability.md,
	 * "Large and sequential stable writes"). */
	cfg->intent_log_inplace_min_bytes = 32 * 1024;
	cfg->intent_log_inplace_seq_min_bytes = 0; /* off: measured slower */
	cfg->intent_log_inplace_direct = true;
	cfg->intent_log_inplace_uring = true;
	snprintf(cfg->state_dir, sizeof(cfg->state_dir), "var/state");
	cfg->max_record_bytes = 1024 * 1024 + 4096;
	cfg->max_inflight_per_conn = 128;
	cfg->max_output_bytes_per_conn = 8 * 1024 * 1024;
	cfg->read_zero_copy = true;
	cfg->read_zero_copy_min_bytes = 32 * 1024; /* as nfs3_service_init */
	cfg->max_conns = 4096;
	cfg->max_conns_per_host = 1024;
	/* As knfsd: idle TCP clients are dropped after 6 minutes and simply
	 * reconnect; ESXi's heartbeats keep a mounted datastore busy. */
	cfg->idle_timeout_ms = 360000;
	cfg->record_timeout_ms = 30000;
	cfg->memory_trim_ms = 2000;
	cfg->nfs_udp = true;
	snprintf(cfg->admin_listen, sizeof(cfg->admin_listen), "127.0.0.1");
	cfg->admin_port = 8049; /* ADMIN_DEFAULT_PORT */
}

/* State for one ini_parse_stream run.  inih goes on after an error and
 * reports only the line of the first, so the reader counts lines and the
 * handler keeps the first message with its line. */
struct config_parse {
	struct config *cfg;
	FILE *file; /* the input: a file, or else ... */
	const char *text; /* ... the rest of a string */
	int line; /* lines read so far: the one being handled */
	int error_line; /* 0, or the line that @error is about */
	char error[512];
};

static void config_parse_error(struct config_parse *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Keeps the first error found; later ones do not replace it. */
static void config_parse_error(struct config_parse *p, const char *fmt, ...)
{
	va_list ap;

	if (p->error_line) {
		return;
	}
	p->error_line = p->line;
	va_start(ap, fmt);
	vsnprintf(p->error, sizeof(p->error), fmt, ap);
	va_end(ap);
}

/*
 * inih's reader: one line (at most @num - 1 bytes) per call, like fgets,
 * without its newline when it fills the buffer.  inih would parse the rest
 * of a longer line as a line of its own, cutting a long value short and
 * reading its tail as a key: that is an error here.
 */
static char *config_read_line(char *str, int num, void *stream)
{
	struct config_parse *p = stream;
	bool more = false;
	size_t n = 0;
	int ch;

	if (p->file) {
		if (!fgets(str, num, p->file)) {
			return NULL;
		}
		n = strlen(str);
		if (n > 0 && str[n - 1] != '\n') {
			ch = getc(p->file);
			more = ch != EOF && ch != '\n';
			if (more) {
				ungetc(ch, p->file);
			}
		}
	} else {
		if (p->text[0] == '\0' || num < 2) {
			return NULL;
		}
		while (n < (size_t)num - 1 && p->text[n] != '\0') {
			str[n] = p->text[n];
			if (str[n++] == '\n') {
				break;
			}
		}
		str[n] = '\0';
		p->text += n;
		if (str[n - 1] != '\n' && p->text[0] == '\n') {
			p->text++; /* the line ends right here */
		} else if (str[n - 1] != '\n' && p->text[0] != '\0') {
			more = true;
		}
	}
	p->line++;
	if (more) {
		config_parse_error(p, "line longer than %d characters",
				   num - 1);
	}
	return str;
}

static int config_parse_uint(const char *value, unsigned long max,
			     unsigned long *out)
{
	char *end;
	unsigned long v;

	if (value[0] == '\0' || value[0] == '-') {
		return -EINVAL;
	}
	errno = 0;
	v = strtoul(value, &end, 10);
	if (errno || *end != '\0' || v > max) {
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int config_parse_bool(const char *value, bool *out)
{
	if (!strcasecmp(value, "true") || !strcasecmp(value, "yes") ||
	    !strcmp(value, "1") || !strcasecmp(value, "on")) {
		*out = true;
		return 0;
	}
	if (!strcasecmp(value, "false") || !strcasecmp(value, "no") ||
	    !strcmp(value, "0") || !strcasecmp(value, "off")) {
		*out = false;
		return 0;
	}
	return -EINVAL;
}

static int config_parse_port(const char *value, bool off_allowed, int *out)
{
	unsigned long v;

	if (off_allowed && !strcasecmp(value, "off")) {
		*out = CONFIG_PORT_OFF;
		return 0;
	}
	if (config_parse_uint(value, 65535, &v)) {
		return -EINVAL;
	}
	*out = (int)v;
	return 0;
}

static int config_copy(char *dst, size_t dst_len, const char *value)
{
	size_t len = strlen(value);

	if (len >= dst_len) {
		return -ENAMETOOLONG;
	}
	memcpy(dst, value, len + 1);
	return 0;
}

/* What a [server] key's value is, and how it is parsed into its field. */
enum config_key_type {
	CONFIG_KEY_TEXT, /* a string that must fit its field */
	CONFIG_KEY_TEXT_OFF, /* the same, or "off": the empty string */
	CONFIG_KEY_PORT, /* an int, 0 to 65535 */
	CONFIG_KEY_PORT_OFF, /* the same, or "off": CONFIG_PORT_OFF */
	CONFIG_KEY_BOOL, /* true/yes/1/on or false/no/0/off */
	CONFIG_KEY_AUTO, /* a bool said as "auto" or "off" */
	CONFIG_KEY_UINT, /* a 32-bit unsigned field, min to max */
};

/* A field of struct config: where it is and how big; with the bounds of
 * a CONFIG_KEY_UINT. */
#define CONFIG_FIELD(f)                                                        \
	offsetof(struct config, f), sizeof(((struct config *)0)->f), 0, 0
#define CONFIG_RANGE(f, min, max)                                              \
	offsetof(struct config, f), sizeof(((struct config *)0)->f), min, max

/* CONFIG_KEY_UINT stores a uint32_t; workers and work_threads are unsigned. */
_Static_assert(sizeof(unsigned) == sizeof(uint32_t), "unsigned is 32 bits");

/* The keys of [server].  t0004 reads each row's first string, the key, to
 * check that dsnfsd.conf(5) names it: keep a row's key on its first line. */
static const struct config_server_key {
	const char *key;
	enum config_key_type type;
	size_t offset, size;
	unsigned long min, max; /* CONFIG_KEY_UINT */
} config_server_keys[] = {
	{ "listen", CONFIG_KEY_TEXT, CONFIG_FIELD(listen) },
	{ "nfs_port", CONFIG_KEY_PORT, CONFIG_FIELD(nfs_port) },
	{ "mount_port", CONFIG_KEY_PORT, CONFIG_FIELD(mount_port) },
	{ "portmap_port", CONFIG_KEY_PORT_OFF, CONFIG_FIELD(portmap_port) },
	{ "admin_listen", CONFIG_KEY_TEXT, CONFIG_FIELD(admin_listen) },
	{ "admin_port", CONFIG_KEY_PORT_OFF, CONFIG_FIELD(admin_port) },
	{ "state_dir", CONFIG_KEY_TEXT, CONFIG_FIELD(state_dir) },
	{ "trace", CONFIG_KEY_BOOL, CONFIG_FIELD(trace) },
	{ "nfs_udp", CONFIG_KEY_BOOL, CONFIG_FIELD(nfs_udp) },
	{ "read_zero_copy", CONFIG_KEY_BOOL, CONFIG_FIELD(read_zero_copy) },
	{ "read_zero_copy_min_bytes", CONFIG_KEY_UINT,
	  CONFIG_RANGE(read_zero_copy_min_bytes, 0, 1u << 20) },
	{ "group_commit", CONFIG_KEY_BOOL, CONFIG_FIELD(group_commit) },
	{ "intent_log", CONFIG_KEY_TEXT_OFF, CONFIG_FIELD(intent_log) },
	/* The ring holds two 4 MiB batches at least; 1 TiB at most. */
	{ "intent_log_mib", CONFIG_KEY_UINT,
	  CONFIG_RANGE(intent_log_mib, 8, 1u << 20) },
	{ "intent_log_checkpoint_ms", CONFIG_KEY_UINT,
	  CONFIG_RANGE(intent_log_checkpoint_ms, 0, 3600000) },
	/* Past 1 MiB (the largest WRITE) it would mean 0.  The second is
	 * the key's older name, kept for configs that have it. */
	{ "intent_log_inplace_min_bytes", CONFIG_KEY_UINT,
	  CONFIG_RANGE(intent_log_inplace_min_bytes, 0, 1u << 20) },
	{ "intent_log_immediate_max_bytes", CONFIG_KEY_UINT,
	  CONFIG_RANGE(intent_log_inplace_min_bytes, 0, 1u << 20) },
	{ "intent_log_inplace_sequential_min_bytes", CONFIG_KEY_UINT,
	  CONFIG_RANGE(intent_log_inplace_seq_min_bytes, 0, 1u << 20) },
	{ "intent_log_inplace_direct", CONFIG_KEY_BOOL,
	  CONFIG_FIELD(intent_log_inplace_direct) },
	{ "intent_log_inplace_uring", CONFIG_KEY_BOOL,
	  CONFIG_FIELD(intent_log_inplace_uring) },
	{ "io_offload", CONFIG_KEY_AUTO, CONFIG_FIELD(io_offload_auto) },
	{ "workers", CONFIG_KEY_UINT, CONFIG_RANGE(workers, 0, 256) },
	{ "work_threads", CONFIG_KEY_UINT, CONFIG_RANGE(work_threads, 1, 256) },
	/* Room for a 1 MiB WRITE and its header at least. */
	{ "max_record_bytes", CONFIG_KEY_UINT,
	  CONFIG_RANGE(max_record_bytes, 8192, 64u << 20) },
	{ "max_inflight_per_conn", CONFIG_KEY_UINT,
	  CONFIG_RANGE(max_inflight_per_conn, 1, 65536) },
	{ "max_output_bytes_per_conn", CONFIG_KEY_UINT,
	  CONFIG_RANGE(max_output_bytes_per_conn, 65536, 1u << 30) },
	{ "max_conns", CONFIG_KEY_UINT, CONFIG_RANGE(max_conns, 1, 1000000) },
	{ "max_conns_per_host", CONFIG_KEY_UINT,
	  CONFIG_RANGE(max_conns_per_host, 1, 1000000) },
	{ "idle_timeout_ms", CONFIG_KEY_UINT,
	  CONFIG_RANGE(idle_timeout_ms, 0, 86400000) },
	{ "record_timeout_ms", CONFIG_KEY_UINT,
	  CONFIG_RANGE(record_timeout_ms, 0, 3600000) },
	{ "memory_trim_ms", CONFIG_KEY_UINT,
	  CONFIG_RANGE(memory_trim_ms, 0, 3600000) },
	{ "file_cache_fds", CONFIG_KEY_UINT,
	  CONFIG_RANGE(file_cache_fds, 0, 1u << 25) },
};

/* Parses @value into the field @k describes: 0, or -EINVAL (-ENAMETOOLONG
 * for a string longer than its field). */
static int config_server_key_set(struct config *cfg,
				 const struct config_server_key *k,
				 const char *value)
{
	char *field = (char *)cfg + k->offset;
	unsigned long v;

	switch (k->type) {
	case CONFIG_KEY_TEXT_OFF:
		if (!strcmp(value, "off")) {
			field[0] = '\0';
			return 0;
		}
		/* fall through */
	case CONFIG_KEY_TEXT:
		return config_copy(field, k->size, value);
	case CONFIG_KEY_PORT:
	case CONFIG_KEY_PORT_OFF:
		return config_parse_port(value, k->type == CONFIG_KEY_PORT_OFF,
					 (int *)field);
	case CONFIG_KEY_BOOL:
		return config_parse_bool(value, (bool *)field);
	case CONFIG_KEY_AUTO:
		if (strcmp(value, "off") && strcmp(value, "auto")) {
			return -EINVAL;
		}
		*(bool *)field = !strcmp(value, "auto");
		return 0;
	case CONFIG_KEY_UINT:
		if (config_parse_uint(value, k->max, &v) || v < k->min) {
			return -EINVAL;
		}
		*(uint32_t *)field = (uint32_t)v;
		return 0;
	}
	return -EINVAL;
}

/* A [server] key: 0, -EINVAL, or -ENOENT for a key not of [server]. */
static int config_server_key(struct config *cfg, const char *key,
			     const char *value)
{
	for (size_t i = 0; i < ARRAY_SIZE(config_server_keys); i++) {
		if (!strcmp(key, config_server_keys[i].key)) {
			return config_server_key_set(
				cfg, &config_server_keys[i], value);
		}
	}
	return -ENOENT;
}

/* "10.0.0.0/8, 127.0.0.1" -> the datastore's client list. */
static int config_parse_clients(struct config_datastore *ds, const char *value)
{
	char buf[1024];
	char *save = NULL;

	if (config_copy(buf, sizeof(buf), value)) {
		return -EINVAL;
	}
	ds->nclients = 0;
	ds->clients_default = false;
	for (char *tok = strtok_r(buf, ", \t", &save); tok;
	     tok = strtok_r(NULL, ", \t", &save)) {
		/* "*": everyone, said explicitly (an empty list). */
		if (!strcmp(tok, "*")) {
			ds->everyone = true;
			continue;
		}
		if (ds->nclients == EXPORT_MAX_CLIENTS) {
			return -E2BIG;
		}
		if (export_client_parse(tok, &ds->clients[ds->nclients])) {
			return -EINVAL;
		}
		ds->nclients++;
	}
	/* An empty value would read as everyone: say "*" for that. */
	if (ds->nclients == 0 && !ds->everyone) {
		return -EINVAL;
	}
	/* "*" and addresses together: the addresses would mean nothing. */
	if (ds->nclients > 0 && ds->everyone) {
		return -EINVAL;
	}
	return 0;
}

/* The keys of a cephfs datastore; ds->ceph_line is the first one's. */
static int config_datastore_ceph_key(struct config_datastore *ds,
				     const char *key, const char *value,
				     int line)
{
	int err = -ENOENT;

	if (!strcmp(key, "ceph_conf")) {
		err = config_copy(ds->ceph_conf, sizeof(ds->ceph_conf), value);
	} else if (!strcmp(key, "ceph_path")) {
		err = value[0] == '/'
			      ? config_copy(ds->ceph_path,
					    sizeof(ds->ceph_path), value)
			      : -EINVAL;
	} else if (!strcmp(key, "ceph_user")) {
		err = value[0] ? config_copy(ds->ceph_user,
					     sizeof(ds->ceph_user), value)
			       : -EINVAL;
	} else if (!strcmp(key, "ceph_fs")) {
		err = config_copy(ds->ceph_fs, sizeof(ds->ceph_fs), value);
	} else if (!strcmp(key, "ceph_readahead_mib")) {
		unsigned long v;

		err = config_parse_uint(value, CONFIG_CEPH_READAHEAD_MAX_MIB,
					&v);
		if (!err) {
			ds->ceph_readahead_mib = (uint32_t)v;
		}
	}
	if (!err && !ds->ceph_line) {
		ds->ceph_line = line;
	}
	return err;
}

/* snapshot_hourly .. snapshot_monthly: a schedule of the datastore's
 * snapshot policy (policy.h), its keeps summed at most 255. */
static int config_datastore_policy_key(struct config_datastore *ds,
				       const char *key, const char *value)
{
	struct snap_policy p = ds->policy;
	enum snap_policy_kind k;
	char why[256];

	if (!strcmp(key, "snapshot_hourly")) {
		k = SNAP_POLICY_HOURLY;
	} else if (!strcmp(key, "snapshot_daily")) {
		k = SNAP_POLICY_DAILY;
	} else if (!strcmp(key, "snapshot_weekly")) {
		k = SNAP_POLICY_WEEKLY;
	} else if (!strcmp(key, "snapshot_monthly")) {
		k = SNAP_POLICY_MONTHLY;
	} else {
		return -ENOENT;
	}
	if (snap_policy_sched_parse(k, value, &p.k[k], why, sizeof(why)) ||
	    snap_policy_check(&p, why, sizeof(why))) {
		return -EINVAL;
	}
	ds->policy = p;
	return 0;
}

static int config_datastore_key(struct config_datastore *ds, const char *key,
				const char *value, int line)
{
	unsigned long v;
	int err;

	if (!strcmp(key, "path")) {
		ds->path_line = line;
		return config_copy(ds->path, sizeof(ds->path), value);
	}
	if (!strcmp(key, "backend")) {
		ds->backend_line = line;
		if (!strcmp(value, "local")) {
			ds->backend = CONFIG_BACKEND_LOCAL;
		} else if (!strcmp(value, "cephfs")) {
			ds->backend = CONFIG_BACKEND_CEPHFS;
		} else {
			return -EINVAL;
		}
		return 0;
	}
	if (!strncmp(key, "ceph_", 5)) {
		return config_datastore_ceph_key(ds, key, value, line);
	}
	if (!strcmp(key, "clients")) {
		ds->everyone = false;
		return config_parse_clients(ds, value);
	}
	if (!strcmp(key, "read_only")) {
		return config_parse_bool(value, &ds->read_only);
	}
	if (!strcmp(key, "snapshot_dir")) {
		return config_parse_bool(value, &ds->snapshot_dir);
	}
	if (!strcmp(key, "zero_on_first_write")) {
		return config_parse_bool(value, &ds->zero_on_first_write);
	}
	/* snapshot_hourly .. snapshot_monthly */
	err = config_datastore_policy_key(ds, key, value);
	if (err != -ENOENT) {
		return err;
	}
	if (!strcmp(key, "intent_log")) {
		ds->intent_log_line = line;
		return config_copy(ds->intent_log, sizeof(ds->intent_log),
				   value);
	}
	if (!strcmp(key, "intent_log_gateway")) {
		/* It names a RADOS object: no separators, no spaces. */
		if (!value[0] ||
		    strspn(value, "abcdefghijklmnopqrstuvwxyz"
				  "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				  "0123456789-_") != strlen(value)) {
			return -EINVAL;
		}
		return config_copy(ds->intent_log_gateway,
				   sizeof(ds->intent_log_gateway), value);
	}
	if (!strcmp(key, "secure")) {
		return config_parse_bool(value, &ds->secure);
	}
	if (!strcmp(key, "squash")) {
		if (!strcmp(value, "none")) {
			ds->squash = EXPORT_SQUASH_NONE;
		} else if (!strcmp(value, "root")) {
			ds->squash = EXPORT_SQUASH_ROOT;
		} else if (!strcmp(value, "all")) {
			ds->squash = EXPORT_SQUASH_ALL;
		} else {
			return -EINVAL;
		}
		return 0;
	}
	if (!strcmp(key, "anonuid") || !strcmp(key, "anongid")) {
		if (config_parse_uint(value, UINT32_MAX, &v)) {
			return -EINVAL;
		}
		if (key[4] == 'u') {
			ds->anon_uid = (uint32_t)v;
		} else {
			ds->anon_gid = (uint32_t)v;
		}
		return 0;
	}
	if (!strcmp(key, "fsid")) {
		if (config_parse_uint(value, UINT32_MAX, &v) || v == 0) {
			return -EINVAL;
		}
		ds->fsid = (uint32_t)v;
		return 0;
	}
	return -ENOENT;
}

/* The client list of a datastore that names none: loopback only,
 * 127.0.0.0/8 and ::1 (IPv4 clients of a "::" listener arrive as
 * ::ffff:127.x.y.z and are matched as IPv4, export.c). */
static void config_clients_loopback(struct config_datastore *ds)
{
	(void)export_client_parse("127.0.0.0/8", &ds->clients[0]);
	(void)export_client_parse("::1", &ds->clients[1]);
	ds->nclients = 2;
	ds->clients_default = true;
	ds->everyone = false;
}

/* A datastore is a volume of the pool model: one name rule for both. */
_Static_assert(sizeof(((struct config_datastore *)0)->name) == POOL_NAME_MAX,
	       "a datastore's name is a volume's");

static struct config_datastore *config_datastore_get(struct config *cfg,
						     const char *name)
{
	struct config_datastore *ds;

	for (size_t i = 0; i < cfg->ndatastores; i++) {
		if (!strcmp(cfg->datastores[i].name, name)) {
			return &cfg->datastores[i];
		}
	}
	if (cfg->ndatastores == CONFIG_MAX_DATASTORES ||
	    !pool_name_valid(name)) {
		return NULL;
	}
	ds = &cfg->datastores[cfg->ndatastores++];
	memset(ds, 0, sizeof(*ds));
	snprintf(ds->name, sizeof(ds->name), "%s", name);
	/* As knfsd's defaults: root_squash, secure, and with no clients
	 * given, this machine only (docs/security.md, section 2). */
	ds->squash = EXPORT_SQUASH_ROOT;
	ds->secure = true;
	config_clients_loopback(ds);
	ds->anon_uid = EXPORT_ANON_ID;
	ds->anon_gid = EXPORT_ANON_ID;
	ds->snapshot_dir = true;
	snprintf(ds->ceph_user, sizeof(ds->ceph_user), "admin");
	ds->ceph_readahead_mib = CONFIG_CEPH_READAHEAD_MIB;
	return ds;
}

/* Hands a key no part of config.c took to the section hook; keeps the
 * hook's message.  Returns its 0, -ENOENT or -EINVAL. */
static int config_hook_key(struct config_parse *p, const char *section,
			   const char *key, const char *value)
{
	char why[256] = "";
	int err;

	if (!p->cfg->section_hook) {
		return -ENOENT;
	}
	err = p->cfg->section_hook(p->cfg->section_hook_arg, section, key,
				   value, why, sizeof(why));
	if (err && err != -ENOENT) {
		config_parse_error(p, "[%s] %s: %s", section, key,
				   why[0] ? why : "invalid value");
	}
	return err;
}

static int config_ini_handler(void *user, const char *section, const char *key,
			      const char *value)
{
	struct config_parse *p = user;
	bool ours = true;
	int err;

	if (p->error_line) {
		return 0; /* the config is not used: do not fill it further */
	}
	if (!strcmp(section, "server")) {
		err = config_server_key(p->cfg, key, value);
	} else if (!strncmp(section, CONFIG_SECTION_DATASTORE,
			    strlen(CONFIG_SECTION_DATASTORE))) {
		const char *name = section + strlen(CONFIG_SECTION_DATASTORE);
		struct config_datastore *ds =
			config_datastore_get(p->cfg, name);

		if (!ds) {
			config_parse_error(p,
					   "[datastore %s]: bad name (letters, "
					   "digits, '-', '_', '.'; at most 63) "
					   "or more than %d datastores",
					   name, CONFIG_MAX_DATASTORES);
			return 0;
		}
		err = config_datastore_key(ds, key, value, p->line);
	} else {
		ours = false;
		err = -ENOENT;
	}
	/* Keys of other modules: [pool NAME], [traffic], [admin], and the
	 * pool keys of [datastore NAME] (pool, quota, throughput_mibps). */
	if (err == -ENOENT) {
		err = config_hook_key(p, section, key, value);
		if (err && err != -ENOENT) {
			return 0;
		}
	}
	if (err == -ENOENT) {
		if (ours || p->cfg->section_hook) {
			config_parse_error(p, "[%s]: unknown key '%s'", section,
					   key);
		} else {
			config_parse_error(p, "unknown section [%s]", section);
		}
		return 0;
	}
	if (err) {
		config_parse_error(p, "[%s] %s: invalid value '%s'", section,
				   key, value);
		return 0;
	}
	return 1;
}

/* Records an error about line @line (one read earlier), if none yet. */
static void config_line_error(struct config_parse *p, int line, const char *fmt,
			      ...) __attribute__((format(printf, 3, 4)));

static void config_line_error(struct config_parse *p, int line, const char *fmt,
			      ...)
{
	va_list ap;

	if (p->error_line) {
		return;
	}
	p->error_line = line;
	va_start(ap, fmt);
	vsnprintf(p->error, sizeof(p->error), fmt, ap);
	va_end(ap);
}

/* The checks of a [datastore NAME] that need all its keys: those that
 * name the backend's files must fit the backend.  Each names the line of
 * the key at fault (the backend line for a key that is missing). */
static void config_datastore_check(struct config_parse *p,
				   const struct config_datastore *ds)
{
	int bl = ds->backend_line;

	if (ds->backend == CONFIG_BACKEND_LOCAL) {
		if (ds->ceph_line) {
			config_line_error(p, ds->ceph_line,
					  "[datastore %s] ceph_*: only for "
					  "backend = cephfs",
					  ds->name);
		} else if (!strcmp(ds->intent_log, "rados")) {
			config_line_error(p, ds->intent_log_line,
					  "[datastore %s] intent_log: rados "
					  "is for backend = cephfs (a local "
					  "datastore's log is a file: give "
					  "its path)",
					  ds->name);
		}
		return;
	}
	if (!ds->ceph_conf[0]) {
		config_line_error(p, bl,
				  "[datastore %s] backend: cephfs needs "
				  "ceph_conf (the cluster's ceph.conf)",
				  ds->name);
	} else if (!ds->ceph_path[0]) {
		config_line_error(p, bl,
				  "[datastore %s] backend: cephfs needs "
				  "ceph_path (the CephFS directory served)",
				  ds->name);
	} else if (ds->path_line) {
		config_line_error(p, ds->path_line,
				  "[datastore %s] path: not used by backend "
				  "cephfs (ceph_path names its directory)",
				  ds->name);
	} else if (ds->intent_log[0] && strcmp(ds->intent_log, "off") &&
		   strcmp(ds->intent_log, "rados")) {
		config_line_error(p, ds->intent_log_line,
				  "[datastore %s] intent_log: the cephfs "
				  "backend's log is in the cluster: rados "
				  "or off, not a file",
				  ds->name);
	}
}

/* Turns ini_parse_stream's result into 0 / -errno and a "NAME:LINE: ..."
 * message. */
static int config_parse_result(int rc, const char *name,
			       const struct config_parse *p, char *errbuf,
			       size_t errlen)
{
	if (rc < 0) {
		snprintf(errbuf, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	/* rc is the line of inih's first error: a syntax error, or the first
	 * line the handler refused.  Ours may come first (a long line). */
	if (p->error_line && (rc == 0 || p->error_line <= rc)) {
		snprintf(errbuf, errlen, "%s:%d: %s", name, p->error_line,
			 p->error);
		return -EINVAL;
	}
	if (rc == 0) {
		return 0;
	}
	snprintf(errbuf, errlen, "%s:%d: syntax error", name, rc);
	return -EINVAL;
}

int config_load_file(struct config *cfg, const char *path, char *errbuf,
		     size_t errlen)
{
	struct config_parse p = { .cfg = cfg };
	int rc, err;

	p.file = fopen(path, "r");
	if (!p.file) {
		err = -errno;
		snprintf(errbuf, errlen, "%s: cannot open: %s", path,
			 strerror(-err));
		return err;
	}
	rc = ini_parse_stream(config_read_line, &p, config_ini_handler, &p);
	fclose(p.file);
	for (size_t i = 0; rc == 0 && i < cfg->ndatastores; i++) {
		config_datastore_check(&p, &cfg->datastores[i]);
	}
	return config_parse_result(rc, path, &p, errbuf, errlen);
}

int config_load_string(struct config *cfg, const char *name, const char *text,
		       char *errbuf, size_t errlen)
{
	struct config_parse p = { .cfg = cfg, .text = text };
	int rc = ini_parse_stream(config_read_line, &p, config_ini_handler, &p);

	for (size_t i = 0; rc == 0 && i < cfg->ndatastores; i++) {
		config_datastore_check(&p, &cfg->datastores[i]);
	}
	return config_parse_result(rc, name, &p, errbuf, errlen);
}

int config_add_export_arg(struct config *cfg, const char *arg, char *errbuf,
			  size_t errlen)
{
	const char *eq = strchr(arg, '=');
	char name[64];
	struct config_datastore *ds;

	if (!eq || eq == arg || eq[1] == '\0' ||
	    (size_t)(eq - arg) >= sizeof(name)) {
		snprintf(errbuf, errlen, "-e %s: expected NAME=DIR", arg);
		return -EINVAL;
	}
	memcpy(name, arg, (size_t)(eq - arg));
	name[eq - arg] = '\0';
	ds = config_datastore_get(cfg, name);
	if (!ds || config_copy(ds->path, sizeof(ds->path), eq + 1)) {
		snprintf(errbuf, errlen,
			 "-e %s: bad datastore name or path too long", arg);
		return -EINVAL;
	}
	return 0;
}
