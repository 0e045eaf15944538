// SPDX-License-Identifier: Apache-2.0
/*
 * vmdk: `dsnfsctl vmdk clone|reserve|stats`, the VAAI-NAS primitives run
 * by dsnfsd on a datastore (README.md, "Admin API": /volumes/NAME/clones,
 * /reserve, /stats).  Paths are relative to the datastore's root.  A
 * clone or reservation that runs on the server's thread is waited for
 * (ctl_op_wait(): a progress bar on a terminal).
 *
 *   vmdk clone DATASTORE SRC DST --full|--linked|--native
 *   vmdk reserve DATASTORE PATH --zeroedthick|--eagerzeroedthick
 *   vmdk stats DATASTORE PATH
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfsd/ctl/ctl.h"

static int vmdk_usage(void)
{
	fprintf(stderr, "usage: dsnfsctl vmdk clone DATASTORE SRC DST "
			"--full|--linked|--native\n"
			"       dsnfsctl vmdk reserve DATASTORE PATH "
			"--zeroedthick|--eagerzeroedthick\n"
			"       dsnfsctl vmdk stats DATASTORE PATH\n");
	return CTL_EXIT_USAGE;
}

/* The one option of @argv[@from..] that is in @opts ("--full", ...),
 * without its dashes, the others left as operands in @ops. */
static int vmdk_args(int argc, char **argv, const char *const *opts,
		     const char **choice, const char **ops, int nops)
{
	int n = 0;

	*choice = NULL;
	for (int i = 2; i < argc; i++) {
		bool hit = false;

		for (size_t k = 0; opts && opts[k]; k++) {
			if (!strcmp(argv[i], opts[k])) {
				if (*choice) {
					return -EINVAL;
				}
				*choice = opts[k] + 2;
				hit = true;
			}
		}
		if (hit) {
			continue;
		}
		if (argv[i][0] == '-' || n == nops) {
			return -EINVAL;
		}
		ops[n++] = argv[i];
	}
	return n == nops && (!opts || *choice) ? 0 : -EINVAL;
}

/* Prints what an operation did: its JSON (--json) or one line. */
static void vmdk_op_print(const struct ctl_remote *r, const json_t *op)
{
	const char *target = json_string_value(json_object_get(op, "target"));
	const json_t *secs = json_object_get(op, "seconds");
	char done[32];
	const json_t *d = json_object_get(op, "done_bytes");

	if (r->json) {
		ctl_json_print(op);
		return;
	}
	printf("%s %s %s:%s%s%s: %s, %s in %.3f s (operation "
	       "%" JSON_INTEGER_FORMAT ")\n",
	       json_string_value(json_object_get(op, "kind")),
	       json_string_value(json_object_get(op, "mode")),
	       json_string_value(json_object_get(op, "volume")),
	       json_string_value(json_object_get(op, "source")),
	       target && target[0] ? " -> " : "", target ? target : "",
	       json_string_value(json_object_get(op, "state")),
	       ctl_fmt_bytes(
		       json_is_integer(d) ? (uint64_t)json_integer_value(d) : 0,
		       done, sizeof(done)),
	       json_is_number(secs) ? json_number_value(secs) : 0.0,
	       json_integer_value(json_object_get(op, "id")));
}

/* POSTs @body (takes) to /volumes/@ds/@what and waits for the operation. */
static int vmdk_op_run(const struct ctl_remote *r, const char *ds,
		       const char *what, json_t *body)
{
	char path[160];
	json_t *op = NULL, *last = NULL;
	int rc;

	if (!body) {
		fprintf(stderr, "dsnfsctl: out of memory\n");
		return CTL_EXIT_FAIL;
	}
	snprintf(path, sizeof(path), "/volumes/%s/%s", ds, what);
	if (ctl_api_call(r, "POST", path, body, &op) || !op) {
		json_decref(op);
		return CTL_EXIT_FAIL;
	}
	rc = ctl_op_wait(r, op, &last);
	if (!rc) {
		vmdk_op_print(r, last);
	}
	json_decref(last);
	return rc ? CTL_EXIT_FAIL : CTL_EXIT_OK;
}

/* @s percent-encoded for a query string, into @buf. */
static int vmdk_query_escape(const char *s, char *buf, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (o + 4 > len) {
			return -ENAMETOOLONG;
		}
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr("-._~/", c)) {
			buf[o++] = (char)c;
		} else {
			buf[o++] = '%';
			buf[o++] = hex[c >> 4];
			buf[o++] = hex[c & 15];
		}
	}
	buf[o] = '\0';
	return 0;
}

static const char *const stats_header[] = { "FILE",   "SIZE", "ALLOCATED",
					    "SHARED", "NB",   "TBZ",
					    NULL };

static void stats_row(struct ctl_table *t, const json_t *f)
{
	char size[32], alloc[32], shared[32], nb[32], tbz[32];
	const char *name = json_string_value(json_object_get(f, "file"));

	ctl_table_row(
		t, name ? name : json_string_value(json_object_get(f, "path")),
		ctl_fmt_member(f,
			       json_object_get(f, "file_bytes") ? "file_bytes"
								: "size_bytes",
			       true, size, sizeof(size)),
		ctl_fmt_member(f, "allocated_bytes", true, alloc,
			       sizeof(alloc)),
		ctl_fmt_member(f, "shared_bytes", true, shared, sizeof(shared)),
		ctl_fmt_member(f, "nb", false, nb, sizeof(nb)),
		ctl_fmt_member(f, "tbz", false, tbz, sizeof(tbz)));
}

static int vmdk_stats(const struct ctl_remote *r, const char *ds,
		      const char *rel)
{
	char path[3300], q[3100], size[32], alloc[32], shared[32], nb[32],
		tbz[32];
	json_t *doc;
	int rc;

	if (vmdk_query_escape(rel, q, sizeof(q))) {
		fprintf(stderr, "dsnfsctl: path too long\n");
		return CTL_EXIT_USAGE;
	}
	snprintf(path, sizeof(path), "/volumes/%s/stats?path=%s", ds, q);
	if (ctl_api_call(r, "GET", path, NULL, &doc)) {
		return CTL_EXIT_FAIL;
	}
	if (r->json) {
		ctl_json_print(doc);
		json_decref(doc);
		return CTL_EXIT_OK;
	}
	printf("%s:%s: %s, %s, logical %s, allocated %s, shared %s, nb %s "
	       "tbz %s (1 MiB blocks)\n",
	       ds, rel, json_string_value(json_object_get(doc, "kind")),
	       json_is_string(json_object_get(doc, "provisioning"))
		       ? json_string_value(json_object_get(doc, "provisioning"))
		       : "-",
	       ctl_fmt_member(doc, "size_bytes", true, size, sizeof(size)),
	       ctl_fmt_member(doc, "allocated_bytes", true, alloc,
			      sizeof(alloc)),
	       ctl_fmt_member(doc, "shared_bytes", true, shared,
			      sizeof(shared)),
	       ctl_fmt_member(doc, "nb", false, nb, sizeof(nb)),
	       ctl_fmt_member(doc, "tbz", false, tbz, sizeof(tbz)));
	rc = json_object_get(doc, "files")
		     ? ctl_items_print(r, doc, "files", stats_header, stats_row)
		     : CTL_EXIT_OK;
	json_decref(doc);
	return rc;
}

int ctl_vmdk_main(const struct ctl_remote *r, int argc, char **argv)
{
	static const char *const clone_opts[] = { "--full", "--linked",
						  "--native", NULL };
	static const char *const reserve_opts[] = { "--zeroedthick",
						    "--eagerzeroedthick",
						    NULL };
	const char *ops[3], *choice;

	if (argc < 2) {
		return vmdk_usage();
	}
	if (!strcmp(argv[1], "clone")) {
		if (vmdk_args(argc, argv, clone_opts, &choice, ops, 3)) {
			return vmdk_usage();
		}
		return vmdk_op_run(r, ops[0], "clones",
				   json_pack("{s:s, s:s, s:s}", "source",
					     ops[1], "target", ops[2], "mode",
					     choice));
	}
	if (!strcmp(argv[1], "reserve")) {
		if (vmdk_args(argc, argv, reserve_opts, &choice, ops, 2)) {
			return vmdk_usage();
		}
		return vmdk_op_run(r, ops[0], "reserve",
				   json_pack("{s:s, s:s}", "path", ops[1],
					     "type", choice));
	}
	if (!strcmp(argv[1], "stats")) {
		if (vmdk_args(argc, argv, NULL, &choice, ops, 2)) {
			return vmdk_usage();
		}
		return vmdk_stats(r, ops[0], ops[1]);
	}
	return vmdk_usage();
}
