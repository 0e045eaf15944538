// SPDX-License-Identifier: Apache-2.0
/*
 * server: starting and stopping a dsnfsd for the profile runner, and the
 * few keys of its config the runner needs (see server.h).  The config is
 * parsed with libinih, like dsnfsd's own.
 */
#include "perf/dsload/server.h"

#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nfsd/base/base.h"
#include "perf/dsload/clock.h"
#include "perf/dsload/conf_copy.h"

/* The longest argv server_start() is given, and the 11 listen options. */
#define SERVER_ARGV_MAX (SERVER_ARGV_UNCAPPED_MAX + 12)
#define SERVER_START_TIMEOUT_MS 10000
#define SERVER_DS_PREFIX "datastore "

static int server_ini_cb(void *user, const char *section, const char *key,
			 const char *value)
{
	struct server_config *cfg = user;
	size_t plen = strlen(SERVER_DS_PREFIX);

	if (!strncmp(section, SERVER_DS_PREFIX, plen) && !strcmp(key, "path")) {
		const char *name = section + plen;

		if (cfg->ndatastores == FLEET_DS_MAX ||
		    strlen(name) >= FLEET_NAME_MAX ||
		    strlen(value) >= SERVER_PATH_MAX) {
			return 0;
		}
		snprintf(cfg->names[cfg->ndatastores], FLEET_NAME_MAX, "%s",
			 name);
		snprintf(cfg->paths[cfg->ndatastores], SERVER_PATH_MAX, "%s",
			 value);
		cfg->ndatastores++;
	} else if (!strcmp(section, "server") && !strcmp(key, "state_dir")) {
		if (strlen(value) >= SERVER_PATH_MAX) {
			return 0;
		}
		snprintf(cfg->state_dir, SERVER_PATH_MAX, "%s", value);
	} else if (!strcmp(section, "traffic")) {
		cfg->has_traffic = true;
		if (!strcmp(key, "scale")) {
			char *end;
			double v = strtod(value, &end);

			if (*end || !(v > 0)) {
				return 0;
			}
			cfg->scale = v;
		}
	}
	return 1;
}

/* Whether the config line @t (leading blanks skipped) sets an access key
 * of a datastore (server_access_write()). */
static bool server_access_key(const char *t)
{
	static const char *const keys[] = {
		"clients", "secure", "squash", "anonuid", "anongid",
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		size_t len = strlen(keys[i]);

		if (!strncmp(t, keys[i], len) &&
		    (t[len] == ' ' || t[len] == '\t' || t[len] == '=')) {
			return true;
		}
	}
	return false;
}

/* Whether @section ("[datastore NAME]...", leading blanks skipped) names
 * a datastore of @cfg. */
static bool server_access_section(const char *section,
				  const struct server_config *cfg)
{
	const char *name = section + 1 + strlen(SERVER_DS_PREFIX);
	size_t len;

	if (strncmp(section + 1, SERVER_DS_PREFIX, strlen(SERVER_DS_PREFIX))) {
		return false;
	}
	len = strcspn(name, "]");
	if (name[len] != ']') {
		return false;
	}
	for (unsigned d = 0; d < cfg->ndatastores; d++) {
		if (strlen(cfg->names[d]) == len &&
		    !strncmp(cfg->names[d], name, len)) {
			return true;
		}
	}
	return false;
}

int server_access_write(const char *base_path, const struct server_config *cfg,
			const char *out_path, char *errbuf, size_t errlen)
{
	FILE *in, *out;
	char line[1024];
	bool ours = false;
	int err;

	err = conf_copy_open(base_path, &in, out_path, &out, errbuf, errlen);
	if (err) {
		return err;
	}
	fprintf(out,
		"; the access keys of %s's datastores, for the uncapped "
		"dsnfsd of dsload profile (-e NAME=DIR)\n",
		base_path);
	while (fgets(line, sizeof(line), in)) {
		const char *t = line + strspn(line, " \t");

		if (*t == '[') {
			ours = server_access_section(t, cfg);
			if (ours) {
				fputs(t, out);
			}
		} else if (ours && server_access_key(t)) {
			fputs(t, out);
		}
	}
	return conf_copy_close(in, out, out_path, errbuf, errlen);
}

void server_argv_uncapped(const struct server_config *cfg, const char *dsnfsd,
			  const char *state_dir, const char *access_conf,
			  char storage[][SERVER_EXPORT_ARG_MAX],
			  const char **argv)
{
	size_t n = 0;

	argv[n++] = dsnfsd;
	argv[n++] = "-s";
	argv[n++] = state_dir;
	argv[n++] = "-c";
	argv[n++] = access_conf;
	for (unsigned d = 0; d < cfg->ndatastores; d++) {
		snprintf(storage[d], SERVER_EXPORT_ARG_MAX, "%s=%s",
			 cfg->names[d], cfg->paths[d]);
		argv[n++] = "-e";
		argv[n++] = storage[d];
	}
	argv[n] = NULL;
}

int server_config_read(const char *path, struct server_config *cfg,
		       char *errbuf, size_t errlen)
{
	int line;

	memset(cfg, 0, sizeof(*cfg));
	cfg->scale = 1.0;
	line = ini_parse(path, server_ini_cb, cfg);
	if (line == -1) {
		snprintf(errbuf, errlen, "%s: cannot open", path);
		return -ENOENT;
	}
	if (line != 0) {
		snprintf(errbuf, errlen, "%s:%d: not understood", path, line);
		return -EINVAL;
	}
	if (cfg->ndatastores == 0) {
		snprintf(errbuf, errlen, "%s: no [datastore NAME] with a path",
			 path);
		return -EINVAL;
	}
	return 0;
}

static int server_mkdir_p(const char *path)
{
	char buf[SERVER_PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/') {
			continue;
		}
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST) {
			return -errno;
		}
		*p = '/';
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST) {
		return -errno;
	}
	return 0;
}

int server_dirs_make(const struct server_config *cfg, char *errbuf,
		     size_t errlen)
{
	for (unsigned d = 0; d < cfg->ndatastores; d++) {
		int err = server_mkdir_p(cfg->paths[d]);

		if (err) {
			snprintf(errbuf, errlen, "%s: %s", cfg->paths[d],
				 strerror(-err));
			return err;
		}
	}
	return 0;
}

void server_default_path(char *buf, size_t len)
{
	char exe[SERVER_PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0) {
		snprintf(buf, len, "dsnfsd");
		return;
	}
	exe[n] = '\0';
	snprintf(buf, len, "%s/dsnfsd", dirname(exe));
}

static int server_port(const char *line, const char *key, uint16_t *out)
{
	const char *p = strstr(line, key);
	long v;

	if (!p) {
		return -EINVAL;
	}
	v = strtol(p + strlen(key), NULL, 10);
	if (v <= 0 || v > 65535) {
		return -EINVAL;
	}
	*out = (uint16_t)v;
	return 0;
}

/* Reads the first line of @fd within the start timeout. */
static int server_line_read(int fd, char *line, size_t len)
{
	int64_t deadline =
		dsload_now_ns() + SERVER_START_TIMEOUT_MS * DSLOAD_NS_PER_MS;
	size_t have = 0;

	while (have + 1 < len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int64_t left = deadline - dsload_now_ns();
		ssize_t n;

		if (left <= 0) {
			return -ETIMEDOUT;
		}
		if (poll(&pfd, 1, (int)(left / DSLOAD_NS_PER_MS) + 1) <= 0) {
			continue;
		}
		n = read(fd, line + have, 1);
		if (n <= 0) {
			return -EPIPE;
		}
		if (line[have] == '\n') {
			break;
		}
		have++;
	}
	line[have] = '\0';
	return 0;
}

int server_start(const char *dsnfsd, const char *const *argv,
		 const char *log_path, struct server_proc *sp, char *errbuf,
		 size_t errlen)
{
	static const char *const listen_args[] = {
		"-f", "-l", "127.0.0.1", "-p", "0", "-m",
		"0",  "-P", "0",	 "-A", "0",
	};
	const char *args[SERVER_ARGV_MAX];
	char line[512];
	size_t n = 0;
	int pipefd[2], err;

	for (; argv[n] && n + 12 < SERVER_ARGV_MAX; n++) {
		args[n] = argv[n];
	}
	for (size_t i = 0; i < ARRAY_SIZE(listen_args); i++) {
		args[n++] = listen_args[i];
	}
	args[n] = NULL;
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		return -errno;
	}
	memset(sp, 0, sizeof(*sp));
	sp->pid = fork();
	if (sp->pid == 0) {
		int log = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(pipefd[1], STDOUT_FILENO);
		if (log >= 0) {
			dup2(log, STDERR_FILENO);
		}
		execv(dsnfsd, (char *const *)args);
		_exit(127);
	}
	close(pipefd[1]);
	if (sp->pid < 0) {
		err = -errno;
		close(pipefd[0]);
		return err;
	}
	err = server_line_read(pipefd[0], line, sizeof(line));
	close(pipefd[0]);
	if (!err && (strncmp(line, "dsnfsd: listening", 17) ||
		     server_port(line, "nfs=", &sp->nfs_port) ||
		     server_port(line, "mount=", &sp->mount_port))) {
		err = -EPROTO;
	}
	if (!err && server_port(line, "portmap=", &sp->portmap_port)) {
		sp->portmap_port = 0;
	}
	if (!err && server_port(line, "admin=", &sp->admin_port)) {
		sp->admin_port = 0;
	}
	if (err) {
		snprintf(errbuf, errlen, "%s did not start (%s); see %s",
			 dsnfsd, strerror(-err), log_path);
		server_stop(sp);
		return err;
	}
	return 0;
}

int server_stop(struct server_proc *sp)
{
	int st = 0;

	if (sp->pid <= 0) {
		return 0;
	}
	kill(sp->pid, SIGTERM);
	for (int i = 0; i < 100; i++) {
		struct timespec ts = { 0, 100 * DSLOAD_NS_PER_MS };

		if (waitpid(sp->pid, &st, WNOHANG) == sp->pid) {
			sp->pid = 0;
			return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		}
		nanosleep(&ts, NULL);
	}
	kill(sp->pid, SIGKILL);
	waitpid(sp->pid, &st, 0);
	sp->pid = 0;
	return -1;
}
