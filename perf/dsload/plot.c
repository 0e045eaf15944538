// SPDX-License-Identifier: Apache-2.0
/*
 * plot: one gnuplot script per chart, drawn to PNG and SVG (plot.h).
 */
#include "perf/dsload/plot.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs gnuplot on @script with its output to stderr. */
static int plot_run(const char *script)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		execlp("gnuplot", "gnuplot", script, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0) {
		fprintf(stderr,
			"dsload: gnuplot %s failed (is gnuplot-nox installed? "
			"make deps); the data is beside it\n",
			script);
		return -ECHILD;
	}
	return 0;
}

int plot_draw(const char *gp_path, const char *png, const char *svg,
	      unsigned panels, unsigned height, plot_body_fn *body, void *arg)
{
	FILE *f = fopen(gp_path, "w");
	unsigned h = (panels ? panels : 1) * height;

	if (!f) {
		return -errno;
	}
	fprintf(f, "# written by dsload; gnuplot %s draws %s and %s\n", gp_path,
		png, svg);
	fprintf(f,
		"set terminal pngcairo size 1000,%u enhanced font "
		"'DejaVu Sans,10'\nset output '%s'\n",
		h, png);
	body(f, arg);
	fprintf(f, "unset output\nreset\n");
	fprintf(f,
		"set terminal svg size 1000,%u dynamic enhanced font "
		"'DejaVu Sans,10'\nset output '%s'\n",
		h, svg);
	body(f, arg);
	fprintf(f, "unset output\n");
	if (fclose(f)) {
		return -errno;
	}
	return plot_run(gp_path);
}
