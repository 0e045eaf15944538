// SPDX-License-Identifier: Apache-2.0
/*
 * kchost: the host side of the kernel-client guest (tests/kclient).
 *
 *   kchost reap CMD [ARGS...]
 *	Runs CMD (qemu) as our child while we are a child subreaper
 *	(PR_SET_CHILD_SUBREAPER), so the relays libslirp starts through a
 *	double fork become our children and are reaped here, not left as
 *	zombies for a PID 1 that may never wait for them.  SIGTERM, SIGINT
 *	and SIGHUP go on to CMD.  When CMD exits, the rest of our children
 *	get 3 s to finish, then SIGTERM, then SIGKILL (each by pid).  Exits
 *	with CMD's status, 128 + the signal if a signal ended it.
 *
 *   kchost relay PORT PIDDIR [resv]
 *	Started by qemu for each TCP connection the guest opens to a
 *	"guestfwd=tcp:ADDR:PORT-cmd:kchost relay PORT PIDDIR" rule; fds 0
 *	and 1 are slirp's end of that connection.  Connects to
 *	127.0.0.1:PORT (nothing else, ever) and copies both ways until one
 *	side closes.  "resv" binds a reserved source port (512..1023), as
 *	the kernel client's resvport does.  PIDDIR/relay.PID exists while
 *	the relay runs, so run-guest.sh can end a straggler by pid.  fd 2
 *	is the guest's stream too: nothing is ever written to it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RELAY_BUF_BYTES (256 * 1024)
#define REAP_GRACE_MS 3000
#define REAP_TERM_MS 5000
#define REAP_GIVE_UP_MS 8000

static volatile sig_atomic_t reap_child_pid;

/* ---- reap ---------------------------------------------------------------- */

static void reap_forward_cb(int sig)
{
	if (reap_child_pid > 0) {
		kill((pid_t)reap_child_pid, sig);
	}
}

/* Parent pid and state of @pid from /proc/PID/stat; 0 or -errno. */
static int proc_stat_read(pid_t pid, pid_t *ppid, char *state)
{
	char path[64], buf[512];
	FILE *f;
	size_t len;
	char *p;
	int pp;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f) {
		return -errno;
	}
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	/* comm may hold spaces and parentheses: the last ')' ends it. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %d", state, &pp) != 2) {
		return -EINVAL;
	}
	*ppid = (pid_t)pp;
	return 0;
}

/* Counts our children still in /proc; sends @sig (0: none) to the live. */
static int reap_children_signal(int sig)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t me = getpid();
	int n = 0;

	if (!d) {
		return 0;
	}
	while ((e = readdir(d)) != NULL) {
		pid_t pid = (pid_t)atoi(e->d_name), ppid;
		char state;

		if (pid <= 0 || proc_stat_read(pid, &ppid, &state) ||
		    ppid != me) {
			continue;
		}
		n++;
		if (sig && state != 'Z') {
			kill(pid, sig);
		}
	}
	closedir(d);
	return n;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static int kchost_reap(char **argv)
{
	struct sigaction sa = { .sa_handler = reap_forward_cb };
	int status = 0, st;
	bool termed = false, killed = false;
	long t0;
	pid_t pid, w;

	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
		perror("kchost: PR_SET_CHILD_SUBREAPER");
		return 1;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	pid = fork();
	if (pid < 0) {
		perror("kchost: fork");
		return 1;
	}
	if (pid == 0) {
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		execvp(argv[0], argv);
		perror(argv[0]);
		_exit(127);
	}
	reap_child_pid = pid;
	for (;;) {
		w = waitpid(-1, &st, 0);
		if (w < 0 && errno == EINTR) {
			continue;
		}
		if (w < 0) {
			break;
		}
		if (w == pid) {
			status = st;
			break;
		}
	}
	reap_child_pid = 0;

	/* Relays end by themselves once qemu has closed their sockets. */
	t0 = now_ms();
	for (;;) {
		long el;

		while (waitpid(-1, NULL, WNOHANG) > 0) {
		}
		if (reap_children_signal(0) == 0) {
			break;
		}
		el = now_ms() - t0;
		if (el > REAP_GRACE_MS && !termed) {
			reap_children_signal(SIGTERM);
			termed = true;
		}
		if (el > REAP_TERM_MS && !killed) {
			reap_children_signal(SIGKILL);
			killed = true;
		}
		if (el > REAP_GIVE_UP_MS) {
			break;
		}
		usleep(50 * 1000);
	}
	if (WIFEXITED(status)) {
		return WEXITSTATUS(status);
	}
	return 128 + WTERMSIG(status);
}

/* ---- relay --------------------------------------------------------------- */

/* Writes all of @buf; 0 or -errno. */
static int write_full(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* A socket connected to 127.0.0.1:@port, from a port < 1024 if @resv;
 * returns the fd or -errno. */
static int relay_connect(int port, bool resv)
{
	struct sockaddr_in to = {
		.sin_family = AF_INET,
		.sin_port = htons((uint16_t)port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int lport = resv ? 1023 : 0;

	for (;;) {
		struct sockaddr_in from = {
			.sin_family = AF_INET,
			.sin_port = htons((uint16_t)lport),
			.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
		};
		int s = socket(AF_INET, SOCK_STREAM, 0), err;

		if (s < 0) {
			return -errno;
		}
		if ((!resv ||
		     bind(s, (struct sockaddr *)&from, sizeof(from)) == 0) &&
		    connect(s, (struct sockaddr *)&to, sizeof(to)) == 0) {
			return s;
		}
		err = errno;
		close(s);
		/* Only a taken source port is worth another try. */
		if (!resv || (err != EADDRINUSE && err != EADDRNOTAVAIL) ||
		    --lport < 512) {
			return -err;
		}
	}
}

/* Copies once from @from to @to; false when the relay should end. */
static bool relay_copy(int from, int to, char *buf)
{
	ssize_t n;

	do {
		n = read(from, buf, RELAY_BUF_BYTES);
	} while (n < 0 && errno == EINTR);
	return n > 0 && write_full(to, buf, (size_t)n) == 0;
}

static int kchost_relay(int argc, char **argv)
{
	static char buf[RELAY_BUF_BYTES];
	char pidfile[4096] = "";
	int port, s, one = 1, fd;
	bool resv;

	/* fd 2 is the guest's TCP stream: a message there would corrupt it. */
	fd = open("/dev/null", O_WRONLY);
	if (fd >= 0 && fd != 2) {
		dup2(fd, 2);
		close(fd);
	}
	port = atoi(argv[0]);
	if (port <= 0 || port > 65535) {
		return 2;
	}
	resv = argc > 2 && strcmp(argv[2], "resv") == 0;
	signal(SIGPIPE, SIG_IGN);
	if (argc > 1) {
		snprintf(pidfile, sizeof(pidfile), "%s/relay.%d", argv[1],
			 (int)getpid());
		fd = open(pidfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0) {
			pidfile[0] = '\0';
		} else {
			close(fd);
		}
	}
	s = relay_connect(port, resv);
	if (s >= 0) {
		struct pollfd pf[2] = {
			{ .fd = 0, .events = POLLIN },
			{ .fd = s, .events = POLLIN },
		};

		setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		setsockopt(0, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		for (;;) {
			if (poll(pf, 2, -1) < 0) {
				if (errno == EINTR) {
					continue;
				}
				break;
			}
			/* slirp's socket keeps Nagle on: without a quick ACK
			 * its next small write (one RPC call) waits for our
			 * delayed ACK, up to 40 ms.  QUICKACK is not sticky,
			 * so it is set again before every read. */
			setsockopt(0, IPPROTO_TCP, TCP_QUICKACK, &one,
				   sizeof(one));
			if (pf[0].revents && !relay_copy(0, s, buf)) {
				break;
			}
			if (pf[1].revents && !relay_copy(s, 1, buf)) {
				break;
			}
		}
		close(s);
	}
	if (pidfile[0]) {
		unlink(pidfile);
	}
	return s >= 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "reap") == 0) {
		return kchost_reap(argv + 2);
	}
	if (argc >= 3 && strcmp(argv[1], "relay") == 0) {
		return kchost_relay(argc - 2, argv + 2);
	}
	fprintf(stderr, "usage: kchost reap CMD [ARGS...]\n"
			"       kchost relay PORT [PIDDIR [resv]]\n");
	return 2;
}
