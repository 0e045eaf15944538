/* SPDX-License-Identifier: Apache-2.0 */
/*
 * plot: charts drawn by gnuplot (Debian's gnuplot-nox, mk/packages.txt).
 * A caller writes the data and the body of a script (the plot commands
 * of its panels); plot_draw() writes the script around it twice, once for
 * a PNG (pngcairo) and once for an SVG, and runs gnuplot on it.
 */
#ifndef DSLOAD_PLOT_H
#define DSLOAD_PLOT_H

#include <stdio.h>

/* Writes the plot commands of the chart to @f; @arg is the caller's. */
typedef void plot_body_fn(FILE *f, void *arg);

/*
 * Writes @gp_path: @body twice, into @png and @svg (@panels panels one
 * above the other, each @height pixels high), then runs gnuplot.
 * Returns 0, or -errno when the script cannot be written or gnuplot
 * failed (a message on stderr names gnuplot-nox; the data stays).
 */
int plot_draw(const char *gp_path, const char *png, const char *svg,
	      unsigned panels, unsigned height, plot_body_fn *body, void *arg);

#endif
