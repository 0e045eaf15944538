// SPDX-License-Identifier: Apache-2.0
/*
 * dsvmdk: the command-line face of vmdk/.  Parses argv, calls the library,
 * prints.  One function per subcommand, joined by one table; the library
 * does the work and names what went wrong in its error buffer.
 * Exit status: 0 done, 1 failed, 2 usage, 3 `check` found problems.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vmdk/vmdk.h"

#define EXIT_USAGE 2
#define EXIT_CORRUPT 3
#define IO_CHUNK_BYTES (1u << 20)

struct command {
	const char *name;
	const char *usage;
	int (*run)(int argc, char **argv);
};

static const struct command commands[];

static int usage_of(const char *name)
{
	for (const struct command *c = commands; c->name; c++) {
		if (!strcmp(c->name, name)) {
			fprintf(stderr, "usage: dsvmdk %s %s\n", c->name,
				c->usage);
		}
	}
	return EXIT_USAGE;
}

static int fail(const char *what, int err, const char *errbuf)
{
	if (errbuf && errbuf[0]) {
		fprintf(stderr, "dsvmdk: %s: %s\n", what, errbuf);
	} else {
		fprintf(stderr, "dsvmdk: %s: %s\n", what, strerror(-err));
	}
	return EXIT_FAILURE;
}

/* "10G", "512m", "4096", "1TiB" (binary units) -> bytes. */
static int parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMGT";
	char *end;
	unsigned long long v;
	const char *u;
	unsigned shift = 0;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-') {
		return -EINVAL;
	}
	if (*end) {
		u = strchr(units, toupper((unsigned char)*end));
		if (!u ||
		    (end[1] && strcmp(end + 1, "iB") && strcmp(end + 1, "B"))) {
			return -EINVAL;
		}
		shift = 10 * (unsigned)(u - units + 1);
	}
	if (v > (UINT64_MAX >> shift)) {
		return -ERANGE;
	}
	*out = (uint64_t)v << shift;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmd_create(int argc, char **argv)
{
	struct vmdk_create_opts o = { .type = VMDK_TYPE_THIN };
	char errbuf[512] = "";
	bool have_size = false;
	int opt;
	int err;

	while ((opt = getopt(argc, argv, "s:t:a:")) != -1) {
		switch (opt) {
		case 's':
			if (parse_size(optarg, &o.size_bytes)) {
				fprintf(stderr, "dsvmdk: bad size '%s'\n",
					optarg);
				return EXIT_USAGE;
			}
			have_size = true;
			break;
		case 't':
			if (vmdk_type_parse(optarg, &o.type)) {
				fprintf(stderr, "dsvmdk: bad type '%s'\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'a':
			o.adapter = optarg;
			break;
		default:
			return usage_of("create");
		}
	}
	if (!have_size || optind != argc - 1) {
		return usage_of("create");
	}
	err = vmdk_create(NULL, argv[optind], &o, errbuf, sizeof(errbuf));
	if (err) {
		return fail("create", err, errbuf);
	}
	printf("created %s: %s, %" PRIu64 " bytes\n", argv[optind],
	       vmdk_type_name(o.type), o.size_bytes);
	return 0;
}

static void print_alloc(const char *indent, const struct vmdk_alloc *a)
{
	printf("%slen %" PRIu64 ", nb %" PRIu64 " tbz %" PRIu64
	       ", bs %u, allocated %" PRIu64 "\n",
	       indent, a->file_bytes, a->nb, a->tbz, VMDK_ALLOC_BLOCK_BYTES,
	       a->allocated_bytes);
}

static int print_link(const struct vmdk *v)
{
	struct vmdk_extent_info ei;
	struct vmdk_info in;
	int err;

	err = vmdk_info_get(v, &in);
	if (err && err != -EOPNOTSUPP) {
		return err;
	}
	printf("disk %u: %s\n", in.depth, in.path);
	printf("  createType:   %s\n", in.create_type);
	printf("  provisioning: %s\n", in.provisioning);
	printf("  logical:      %" PRIu64 " bytes (%" PRIu64 " sectors)\n",
	       in.size_bytes, vmdk_bytes_to_sectors(in.size_bytes));
	printf("  allocated:    %" PRIu64 " bytes\n", in.alloc.allocated_bytes);
	printf("  nb %" PRIu64 " tbz %" PRIu64 "\n", in.alloc.nb, in.alloc.tbz);
	if (in.cylinders) {
		printf("  geometry:     %" PRIu32 "/%" PRIu32 "/%" PRIu32
		       " (C/H/S), adapter %s\n",
		       in.cylinders, in.heads, in.sectors, in.adapter);
	}
	printf("  CID:          %08" PRIx32 "\n", in.cid);
	printf("  parentCID:    %08" PRIx32 "\n", in.parent_cid);
	if (in.parent_hint) {
		printf("  parent:       %s\n", in.parent_hint);
	}
	for (unsigned i = 0; i < in.n_extents; i++) {
		err = vmdk_extent_info_get(v, i, &ei);
		if (err && err != -EOPNOTSUPP) {
			return err;
		}
		printf("  extent %u: %s %" PRIu64 " %s %s", i, ei.access,
		       vmdk_bytes_to_sectors(ei.size_bytes), ei.type,
		       ei.file ? ei.file : "");
		if (ei.grain_bytes) {
			printf(" (grain %" PRIu64 ")", ei.grain_bytes);
		}
		printf("\n");
		if (ei.file) {
			print_alloc("    ", &ei.alloc);
		}
	}
	return 0;
}

static int cmd_info(int argc, char **argv)
{
	char errbuf[512] = "";
	const struct vmdk *l;
	struct vmdk *v;
	unsigned depth = 0;
	int err;

	if (argc != 2) {
		return usage_of("info");
	}
	err = vmdk_open(NULL, argv[1], 0, &v, errbuf, sizeof(errbuf));
	if (err) {
		return fail("info", err, errbuf);
	}
	for (l = v; l; l = vmdk_parent(l)) {
		depth++;
	}
	printf("chain: %u disk%s\n", depth, depth == 1 ? "" : "s");
	for (l = v; l && !err; l = vmdk_parent(l)) {
		err = print_link(l);
	}
	vmdk_close(v);
	return err ? fail("info", err, NULL) : 0;
}

/* -o OFFSET -l LENGTH for cat and write. */
static int parse_range(int argc, char **argv, const char *cmd, uint64_t *off,
		       uint64_t *len, bool *have_len)
{
	int opt;

	while ((opt = getopt(argc, argv, "o:l:")) != -1) {
		if (opt == 'o' && !parse_size(optarg, off)) {
			continue;
		}
		if (opt == 'l' && !parse_size(optarg, len)) {
			*have_len = true;
			continue;
		}
		return usage_of(cmd);
	}
	return optind == argc - 1 ? 0 : usage_of(cmd);
}

static int cmd_cat(int argc, char **argv)
{
	uint64_t off = 0, len = 0;
	bool have_len = false;
	char errbuf[512] = "";
	struct vmdk *v;
	uint8_t *buf;
	int err;

	if (parse_range(argc, argv, "cat", &off, &len, &have_len)) {
		return EXIT_USAGE;
	}
	err = vmdk_open(NULL, argv[optind], 0, &v, errbuf, sizeof(errbuf));
	if (err) {
		return fail("cat", err, errbuf);
	}
	if (!have_len) {
		len = off < vmdk_size_bytes(v) ? vmdk_size_bytes(v) - off : 0;
	}
	buf = malloc(IO_CHUNK_BYTES);
	err = buf ? 0 : -ENOMEM;
	while (len && !err) {
		size_t n = len < IO_CHUNK_BYTES ? (size_t)len : IO_CHUNK_BYTES;

		err = vmdk_pread(v, buf, n, off);
		if (!err && fwrite(buf, 1, n, stdout) != n) {
			err = -EIO;
		}
		off += n;
		len -= n;
	}
	free(buf);
	vmdk_close(v);
	if (!err && fflush(stdout)) {
		err = -EIO;
	}
	return err ? fail("cat", err, NULL) : 0;
}

static int cmd_write(int argc, char **argv)
{
	uint64_t off = 0, len = 0, total = 0;
	bool have_len = false;
	char errbuf[512] = "";
	struct vmdk *v;
	uint8_t *buf;
	int err;

	if (parse_range(argc, argv, "write", &off, &len, &have_len)) {
		return EXIT_USAGE;
	}
	err = vmdk_open(NULL, argv[optind], VMDK_OPEN_RDWR, &v, errbuf,
			sizeof(errbuf));
	if (err) {
		return fail("write", err, errbuf);
	}
	buf = malloc(IO_CHUNK_BYTES);
	err = buf ? 0 : -ENOMEM;
	while (!err) {
		size_t n = fread(buf, 1, IO_CHUNK_BYTES, stdin);

		if (n == 0) {
			break;
		}
		err = vmdk_pwrite(v, buf, n, off);
		off += n;
		total += n;
	}
	if (!err) {
		err = vmdk_flush(v);
	}
	free(buf);
	vmdk_close(v);
	if (err) {
		return fail("write", err, NULL);
	}
	printf("wrote %" PRIu64 " bytes\n", total);
	return 0;
}

/* A progress bar on stderr, for a terminal only: quiet in scripts. */
static int progress_bar_cb(void *arg, uint64_t done, uint64_t total)
{
	int cols = 40;
	int fill = total ? (int)((double)done / (double)total * cols) : 0;

	(void)arg;
	fprintf(stderr, "\r[%.*s%*s] %5.1f%% ", fill,
		"########################################", cols - fill, "",
		total ? 100.0 * (double)done / (double)total : 100.0);
	if (done >= total) {
		fputc('\n', stderr);
	}
	fflush(stderr);
	return 0;
}

static vmdk_progress_fn progress_if_tty(void)
{
	return isatty(STDERR_FILENO) ? progress_bar_cb : NULL;
}

static void print_stats(const char *what, const struct vmdk_copy_stats *s,
			double secs)
{
	printf("%s: %.3f s, copied %" PRIu64 " bytes (%" PRIu64
	       " by the kernel), skipped %" PRIu64 " bytes\n",
	       what, secs, s->copied_bytes, s->offload_bytes, s->skipped_bytes);
}

/* `clone --full` and `convert`: the copy of @src to @dst with @o, timed;
 * @cmd names it in an error, @label in the figures. */
static int full_copy(const char *cmd, const char *label, const char *src,
		     const char *dst, const struct vmdk_clone_opts *o)
{
	struct vmdk_clone_opts with = *o;
	struct vmdk_copy_stats st;
	char errbuf[512] = "";
	double t0 = now_s();
	int err;

	with.progress = progress_if_tty();
	err = vmdk_clone_full(NULL, src, dst, &with, &st, errbuf,
			      sizeof(errbuf));
	if (err) {
		return fail(cmd, err, errbuf);
	}
	print_stats(label, &st, now_s() - t0);
	return 0;
}

static int cmd_clone(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "full", no_argument, NULL, 'f' },
		{ "linked", no_argument, NULL, 'l' },
		{ "native", no_argument, NULL, 'n' },
		{ "type", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct vmdk_clone_opts o = { .keep_type = true };
	char errbuf[512] = "";
	int mode = 0;
	double t0;
	int opt;
	int err;

	while ((opt = getopt_long(argc, argv, "t:", longopts, NULL)) != -1) {
		if (opt == 'f' || opt == 'l' || opt == 'n') {
			mode = opt;
		} else if (opt == 't' && !vmdk_type_parse(optarg, &o.type)) {
			o.keep_type = false;
		} else {
			return usage_of("clone");
		}
	}
	if (!mode || optind != argc - 2 || (mode != 'f' && !o.keep_type)) {
		return usage_of("clone");
	}
	if (mode == 'n') {
		t0 = now_s();
		err = vmdk_clone_native(NULL, argv[optind], argv[optind + 1],
					errbuf, sizeof(errbuf));
		if (err) {
			return fail("clone", err, errbuf);
		}
		printf("native clone %s -> %s: %.3f s; every block shared "
		       "(FICLONE)\n",
		       argv[optind], argv[optind + 1], now_s() - t0);
		return 0;
	}
	if (mode == 'l') {
		t0 = now_s();
		err = vmdk_clone_linked(NULL, argv[optind], argv[optind + 1],
					errbuf, sizeof(errbuf));
		if (err) {
			return fail("clone", err, errbuf);
		}
		printf("linked clone %s -> %s: %.3f s; %s is now read-only\n",
		       argv[optind], argv[optind + 1], now_s() - t0,
		       argv[optind]);
		return 0;
	}
	return full_copy("clone", "full clone", argv[optind], argv[optind + 1],
			 &o);
}

static int cmd_convert(int argc, char **argv)
{
	struct vmdk_clone_opts o = { .zero_detect = true };
	bool have_type = false;
	int opt;

	while ((opt = getopt(argc, argv, "t:")) != -1) {
		if (opt != 't' || vmdk_type_parse(optarg, &o.type)) {
			return usage_of("convert");
		}
		have_type = true;
	}
	if (!have_type || optind != argc - 2) {
		return usage_of("convert");
	}
	return full_copy("convert", "convert", argv[optind], argv[optind + 1],
			 &o);
}

static int cmd_snapshot(int argc, char **argv)
{
	char errbuf[512] = "";
	char child[4096];
	int err;

	if (argc != 2) {
		return usage_of("snapshot");
	}
	err = vmdk_snapshot(NULL, argv[1], child, sizeof(child), errbuf,
			    sizeof(errbuf));
	if (err) {
		return fail("snapshot", err, errbuf);
	}
	printf("snapshot of %s: write to %s from now on\n", argv[1], child);
	return 0;
}

static int cmd_consolidate(int argc, char **argv)
{
	struct vmdk_copy_stats st;
	char errbuf[512] = "";
	double t0 = now_s();
	int err;

	if (argc != 2) {
		return usage_of("consolidate");
	}
	err = vmdk_consolidate(NULL, argv[1], &st, errbuf, sizeof(errbuf));
	if (err) {
		return fail("consolidate", err, errbuf);
	}
	print_stats("consolidate", &st, now_s() - t0);
	printf("%s merged into its parent and removed\n", argv[1]);
	return 0;
}

static int cmd_inflate(int argc, char **argv)
{
	char errbuf[512] = "";
	double t0 = now_s();
	int err;

	if (argc != 2) {
		return usage_of("inflate");
	}
	err = vmdk_inflate_progress(NULL, argv[1], progress_if_tty(), NULL,
				    errbuf, sizeof(errbuf));
	if (err) {
		return fail("inflate", err, errbuf);
	}
	printf("inflated %s to eagerzeroedthick: %.3f s\n", argv[1],
	       now_s() - t0);
	return 0;
}

static void check_problem_cb(void *arg, const char *msg)
{
	(void)arg;
	if (strncmp(msg, "warning: ", 9)) {
		printf("ERROR: %s\n", msg);
	} else {
		printf("%s\n", msg);
	}
}

static int cmd_check(int argc, char **argv)
{
	struct vmdk_check_report rep;
	char errbuf[512] = "";
	int err;

	if (argc != 2) {
		return usage_of("check");
	}
	err = vmdk_check(NULL, argv[1], check_problem_cb, NULL, &rep, errbuf,
			 sizeof(errbuf));
	if (err) {
		return fail("check", err, errbuf);
	}
	printf("%u disk%s checked, %" PRIu64 " grains allocated, %" PRIu64
	       " bytes leaked\n",
	       rep.links, rep.links == 1 ? "" : "s", rep.allocated_grains,
	       rep.leaked_bytes);
	if (rep.warnings) {
		printf("%u warning%s (redundant tables lagging; harmless)\n",
		       rep.warnings, rep.warnings == 1 ? "" : "s");
	}
	if (rep.errors) {
		printf("%u error%s found\n", rep.errors,
		       rep.errors == 1 ? "" : "s");
		return EXIT_CORRUPT;
	}
	printf("No errors were found on the disk.\n");
	return 0;
}

static const struct command commands[] = {
	{ "create",
	  "-s SIZE [-t thin|zeroedthick|eagerzeroedthick|sparse] "
	  "[-a ADAPTER] DISK.vmdk",
	  cmd_create },
	{ "info", "DISK.vmdk", cmd_info },
	{ "cat", "[-o OFFSET] [-l LENGTH] DISK.vmdk > raw", cmd_cat },
	{ "write", "[-o OFFSET] DISK.vmdk < data", cmd_write },
	{ "clone",
	  "--full [-t TYPE] SRC.vmdk DST.vmdk | --linked SRC DST | --native "
	  "SRC DST",
	  cmd_clone },
	{ "snapshot", "DISK.vmdk", cmd_snapshot },
	{ "consolidate", "DELTA.vmdk", cmd_consolidate },
	{ "inflate", "DISK.vmdk", cmd_inflate },
	{ "convert", "-t thin|zeroedthick|eagerzeroedthick|sparse SRC DST",
	  cmd_convert },
	{ "check", "DISK.vmdk", cmd_check },
	{ NULL, NULL, NULL },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: dsvmdk COMMAND ...; commands:\n");
	for (const struct command *c = commands; c->name; c++) {
		fprintf(out, "  %s %s\n", c->name, c->usage);
	}
	fprintf(out, "  -V, --version  print the version\n"
		     "  -h, --help     this text\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("dsvmdk %s\n", DSNFS_VERSION);
		return 0;
	}
	for (const struct command *c = commands; c->name; c++) {
		if (!strcmp(c->name, argv[1])) {
			optind = 1;
			return c->run(argc - 1, argv + 1);
		}
	}
	fprintf(stderr, "dsvmdk: unknown command '%s'\n", argv[1]);
	return EXIT_USAGE;
}
