// ts_hpl_plot.c: hand-written SVG plots of Linpack runs: HPL's per-iteration rate and stacked time split, and the pieces HPL-MxP's plot shares (ts_hpl_internal.h).
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "algorithms/hpl/ts_hpl.h"
#include "algorithms/hpl/ts_hpl_internal.h"
#include "core/ts_error.h"

// Layout (pixels).
enum { W = TS_PLOT_W, H = TS_PLOT_H, ML = TS_PLOT_ML, MR = TS_PLOT_MR, MT = TS_PLOT_MT, GAP = TS_PLOT_GAP };
#define PANEL_H TS_PLOT_PANEL_H

// Flops of the LU steps that eliminate columns [j, j+b) of an N x N matrix: F(N-j) - F(N-j-b) with
// HPL's count F(m) = 2/3 m^3 + 3/2 m^2, so the iterations add up to HPL's total.
static double step_flops(int64_t N, int64_t j, int64_t b) {
    int64_t m0 = N - j, m1 = N - j - b;
    if (m1 < 0) m1 = 0;
    return ts_hpl_flops(m0) - ts_hpl_flops(m1);
}

double ts_plot_nice_max(double v) {
    if (!(v > 0)) return 1.0;
    double p = pow(10.0, floor(log10(v)));
    double m = v / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

void ts_plot_frame(FILE *f, int y0, int h) {
    fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#333'/>\n", ML, y0, ML, y0 + h);
    fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#333'/>\n", ML, y0 + h, W - MR, y0 + h);
}

void ts_plot_ylabel(FILE *f, int y0, int h, const char *label) {
    fprintf(f, "<text x='14' y='%d' font-size='12' transform='rotate(-90 14 %d)' "
            "text-anchor='middle'>%s</text>\n", y0 + h / 2, y0 + h / 2, label);
}

void ts_plot_ytick(FILE *f, int y, const char *text) {
    fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#ddd'/>\n", ML + 1, y, W - MR, y);
    fprintf(f, "<text x='%d' y='%d' text-anchor='end' font-size='11'>%s</text>\n", ML - 5, y + 4, text);
}

void ts_plot_xtick(FILE *f, int x, int y, const char *text) {
    fprintf(f, "<text x='%d' y='%d' text-anchor='middle' font-size='11'>%s</text>\n", x, y, text);
}

// A linear axis: 0..ymax in 4 steps, the columns 0..N in 4 steps.
static void axis(FILE *f, int y0, int h, double ymax, const char *label, int64_t N) {
    char t[32];
    ts_plot_frame(f, y0, h);
    for (int i = 0; i <= 4; i++) {
        snprintf(t, sizeof t, "%.3g", ymax * i / 4);
        ts_plot_ytick(f, y0 + h - h * i / 4, t);
    }
    for (int i = 0; i <= 4; i++) {
        snprintf(t, sizeof t, "%" PRId64, N * i / 4);
        ts_plot_xtick(f, ML + (W - MR - ML) * i / 4, y0 + h + 14, t);
    }
    ts_plot_ylabel(f, y0, h, label);
}

void ts_plot_begin(FILE *f) {
    fprintf(f, "<?xml version='1.0' encoding='UTF-8'?>\n");
    fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' viewBox='0 0 %d %d' "
            "font-family='sans-serif'>\n", W, H, W, H);
    fprintf(f, "<rect width='%d' height='%d' fill='white'/>\n", W, H);
}

void ts_plot_legend(FILE *f, int y0, int n, const char *const *names, const char *const *colors) {
    for (int k = 0; k < n; k++) {
        int y = y0 + 10 + 18 * k;
        fprintf(f, "<rect x='%d' y='%d' width='12' height='12' fill='%s'/>\n", W - MR + 15, y, colors[k]);
        fprintf(f, "<text x='%d' y='%d' font-size='12'>%s</text>\n", W - MR + 33, y + 10, names[k]);
    }
}

void ts_plot_name(const char *path, int64_t k, int64_t total, char *out, size_t len) {
    if (total <= 1) {
        snprintf(out, len, "%s", path);
        return;
    }
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(path, '.');
    if (!dot || (slash && dot < slash)) {
        snprintf(out, len, "%s-%" PRId64, path, k + 1);
        return;
    }
    snprintf(out, len, "%.*s-%" PRId64 "%s", (int)(dot - path), path, k + 1, dot);
}

int ts_hpl_plot_svg(const char *path, const ts_hpl_case *c, const ts_hpl_result *r) {
    if (!r->iters || r->n_iters <= 0)
        TS_RAISE(TS_ERR_ARG, "no per-iteration timings to plot for %s", path);
    FILE *f = fopen(path, "w");
    if (!f) TS_RAISE(TS_ERR_IO, "cannot write the plot '%s': %s", path, strerror(errno));

    const int n = r->n_iters;
    const int64_t N = c->N > 0 ? c->N : 1;
    const double pw = W - MR - ML;
    double tf_max = 0, t_max = 0;
    for (int i = 0; i < n; i++) {
        const ts_hpl_iter *it = &r->iters[i];
        int64_t b = (i + 1 < n ? r->iters[i + 1].col : N) - it->col;
        if (b <= 0) b = c->NB;
        double tf = it->total > 0 ? step_flops(N, it->col, b) / it->total / 1e12 : 0;
        if (tf > tf_max) tf_max = tf;
        double s = it->fact + it->bcast + it->swap + it->update + it->idle;
        if (s < it->total) s = it->total;
        if (s > t_max) t_max = s;
    }
    // GFLOP/s below 1 TFLOP/s (CPU and simulated runs), as the result lines print rates
    const int giga = tf_max < 1.0;
    const double unit = giga ? 1e9 : 1e12;
    if (giga) tf_max *= 1e3;
    tf_max = ts_plot_nice_max(tf_max);
    t_max = ts_plot_nice_max(t_max);

    char tv[64];
    ts_hpl_tv_format(c, tv, sizeof tv);
    ts_plot_begin(f);
    fprintf(f, "<text x='%d' y='22' font-size='15'>tessera hpl %s N=%" PRId64 " NB=%d P=%d Q=%d: "
            "%.2f s, %.4g %s (%s)</text>\n", ML, tv, c->N, c->NB, c->P, c->Q, r->time,
            giga ? r->gflops : r->gflops / 1e3, giga ? "GFLOP/s" : "TFLOP/s", r->exec_used[0] ? r->exec_used : "?");

    // Top: the rate of each iteration against its first column.
    int y0 = MT;
    axis(f, y0, PANEL_H, tf_max, giga ? "GFLOP/s per iteration" : "TFLOP/s per iteration", N);
    fprintf(f, "<polyline fill='none' stroke='#1f77b4' stroke-width='1.5' points='");
    for (int i = 0; i < n; i++) {
        const ts_hpl_iter *it = &r->iters[i];
        int64_t b = (i + 1 < n ? r->iters[i + 1].col : N) - it->col;
        if (b <= 0) b = c->NB;
        double tf = it->total > 0 ? step_flops(N, it->col, b) / it->total / unit : 0;
        double x = ML + pw * (double)it->col / N;
        double y = y0 + PANEL_H - PANEL_H * tf / tf_max;
        fprintf(f, "%.1f,%.1f ", x, y);
    }
    fprintf(f, "'/>\n");

    // Bottom: stacked seconds per iteration.
    static const char *const names[5] = {"fact", "bcast", "swap", "update", "idle"};
    static const char *const colors[5] = {"#d62728", "#ff7f0e", "#2ca02c", "#1f77b4", "#bbbbbb"};
    int y1 = MT + PANEL_H + GAP;
    axis(f, y1, PANEL_H, t_max, "seconds per iteration", N);
    for (int i = 0; i < n; i++) {
        const ts_hpl_iter *it = &r->iters[i];
        int64_t next = i + 1 < n ? r->iters[i + 1].col : N;
        double x = ML + pw * (double)it->col / N;
        double w = pw * (double)(next - it->col) / N;
        if (w < 0.5) w = 0.5;
        const double v[5] = {it->fact, it->bcast, it->swap, it->update, it->idle};
        double acc = 0;
        for (int k = 0; k < 5; k++) {
            if (!(v[k] > 0)) continue;
            double h = PANEL_H * v[k] / t_max;
            double y = y1 + PANEL_H - PANEL_H * acc / t_max - h;
            fprintf(f, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.2f' fill='%s'/>\n", x, y, w, h,
                    colors[k]);
            acc += v[k];
        }
    }
    fprintf(f, "<text x='%d' y='%d' text-anchor='middle' font-size='12'>column</text>\n",
            ML + (int)pw / 2, H - 8);
    ts_plot_legend(f, y1, 5, names, colors);
    fprintf(f, "</svg>\n");
    if (fclose(f) != 0) TS_RAISE(TS_ERR_IO, "writing the plot '%s' failed", path);
    return 0;
}
