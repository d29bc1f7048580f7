// ts_mxp_plot.c: SVG of one HPL-MxP run: the LU's rate per block column over time, the refinement's scaled residual per step.
#include <errno.h>
#include <math.h>
#include <string.h>

#include "algorithms/hpl/ts_hpl_internal.h"
#include "algorithms/hpl_mxp/ts_mxp.h"
#include "core/ts_error.h"

enum { W = TS_PLOT_W, H = TS_PLOT_H, ML = TS_PLOT_ML, MR = TS_PLOT_MR, MT = TS_PLOT_MT, GAP = TS_PLOT_GAP };
#define PANEL_H TS_PLOT_PANEL_H

// Top: the rate of each block column of the LU (its flops over the seconds since the one before)
// and the running rate (flops so far over seconds so far), against the LU's elapsed time.
static void lu_panel(FILE *f, const ts_mxp_lu_point *pt, int n, double t_lu) {
    const double pw = W - MR - ML;
    double tmax = t_lu > 0 ? t_lu : 0, rmax = 0;
    for (int i = 0; i < n; i++) {
        const double dt = pt[i].t - (i ? pt[i - 1].t : 0), df = pt[i].flops - (i ? pt[i - 1].flops : 0);
        const double rate = dt > 0 ? df / dt : 0;
        if (rate > rmax) rmax = rate;
        if (pt[i].t > tmax) tmax = pt[i].t;
    }
    if (!(tmax > 0)) tmax = 1;
    const int giga = rmax < 1e12; // GFLOP/s below 1 TFLOP/s, as the result lines print rates
    const double unit = giga ? 1e9 : 1e12;
    const double ymax = ts_plot_nice_max(rmax / unit);
    const int y0 = MT;
    char t[32];
    ts_plot_frame(f, y0, PANEL_H);
    for (int i = 0; i <= 4; i++) {
        snprintf(t, sizeof t, "%.3g", ymax * i / 4);
        ts_plot_ytick(f, y0 + PANEL_H - PANEL_H * i / 4, t);
        snprintf(t, sizeof t, "%.3g", tmax * i / 4);
        ts_plot_xtick(f, ML + (int)pw * i / 4, y0 + PANEL_H + 14, t);
    }
    ts_plot_ylabel(f, y0, PANEL_H, giga ? "LU GFLOP/s" : "LU TFLOP/s");
    fprintf(f, "<text x='%d' y='%d' text-anchor='middle' font-size='12'>LU seconds</text>\n", ML + (int)pw / 2,
            y0 + PANEL_H + 30);
    for (int s = 0; s < 2; s++) { // 0: per block column, 1: running
        fprintf(f, "<polyline id='%s' fill='none' stroke='%s' stroke-width='1.5'%s points='",
                s ? "lu-running" : "lu-rate", s ? "#ff7f0e" : "#1f77b4", s ? " stroke-dasharray='6 3'" : "");
        for (int i = 0; i < n; i++) {
            const double dt = s ? pt[i].t : pt[i].t - (i ? pt[i - 1].t : 0);
            const double df = s ? pt[i].flops : pt[i].flops - (i ? pt[i - 1].flops : 0);
            const double rate = dt > 0 ? df / dt / unit : 0;
            fprintf(f, "%.1f,%.1f ", ML + pw * pt[i].t / tmax, y0 + PANEL_H - PANEL_H * rate / ymax);
        }
        fprintf(f, "'/>\n");
    }
}

// Bottom: the scaled residual before each correction and at the end (log axis), the bound dashed.
static void residual_panel(FILE *f, const ts_mxp_result *r, double bound) {
    const double pw = W - MR - ML;
    const int y0 = MT + PANEL_H + GAP, n = r->n_history;
    double lo = bound, hi = bound;
    for (int i = 0; i < n; i++) {
        const double v = r->history[i];
        if (!(v > 0) || !isfinite(v)) continue;
        if (v < lo) lo = v;
        if (v > hi) hi = v;
    }
    const int e0 = (int)floor(log10(lo)) - 1, e1 = (int)ceil(log10(hi)) + (log10(hi) == ceil(log10(hi)));
    const int span = e1 - e0 > 0 ? e1 - e0 : 1;
    const int step = (span + 7) / 8; // at most 8 decades labelled
#define YOF(v) (y0 + PANEL_H - PANEL_H * (log10(v) - e0) / span)
    char t[32];
    ts_plot_frame(f, y0, PANEL_H);
    for (int e = e0; e <= e1; e += step) {
        snprintf(t, sizeof t, "1e%d", e);
        ts_plot_ytick(f, (int)lround(YOF(pow(10.0, e))), t);
    }
    ts_plot_ylabel(f, y0, PANEL_H, "scaled residual");
    const int last = n > 1 ? n - 1 : 1;
    for (int i = 0; i < n; i++)
        if (n <= 12 || i % ((n + 11) / 12) == 0 || i == n - 1) {
            snprintf(t, sizeof t, "%d", i);
            ts_plot_xtick(f, ML + (int)lround(pw * i / last), y0 + PANEL_H + 14, t);
        }
    fprintf(f, "<text x='%d' y='%d' text-anchor='middle' font-size='12'>refinement step</text>\n", ML + (int)pw / 2,
            y0 + PANEL_H + 30);
    const double yb = YOF(bound);
    fprintf(f, "<line id='bound' x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='#d62728' stroke-dasharray='6 3'/>\n", ML,
            yb, W - MR, yb);
    fprintf(f, "<text x='%d' y='%.1f' font-size='11' fill='#d62728'>bound %g</text>\n", W - MR + 5, yb + 4, bound);
    // points: the plotted value clamped to the axis (0: its bottom; infinite or NaN: its top)
    fprintf(f, "<polyline id='residual' fill='none' stroke='#2ca02c' stroke-width='1.5' points='");
    for (int i = 0; i < n; i++) {
        const double v = r->history[i];
        const double y = v > 0 && isfinite(v) ? YOF(v) : v == 0 ? y0 + PANEL_H : y0;
        fprintf(f, "%.1f,%.1f ", ML + pw * i / last, y);
    }
    fprintf(f, "'/>\n");
    for (int i = 0; i < n; i++) {
        const double v = r->history[i];
        const double y = v > 0 && isfinite(v) ? YOF(v) : v == 0 ? y0 + PANEL_H : y0;
        fprintf(f, "<circle cx='%.1f' cy='%.1f' r='3' fill='%s'><title>step %d: %.6e</title></circle>\n",
                ML + pw * i / last, y, v < bound ? "#2ca02c" : "#d62728", i, v);
    }
#undef YOF
}

int ts_mxp_plot_svg(const char *path, const ts_mxp_case *c, const ts_mxp_result *r, const ts_mxp_lu_point *pt,
                    int npt) {
    if (npt <= 0 && r->n_history <= 0)
        TS_RAISE(TS_ERR_ARG, "no LU progress and no refinement to plot for %s", path);
    FILE *f = fopen(path, "w");
    if (!f) TS_RAISE(TS_ERR_IO, "cannot write the plot '%s': %s", path, strerror(errno));
    char tv[16];
    ts_mxp_tv(c, tv);
    const int giga = r->gflops < 1e3;
    ts_plot_begin(f);
    fprintf(f, "<text x='%d' y='18' font-size='15'>tessera hpl-mxp %s N=%lld NB=%d P=%d Q=%d: %.2f s, %.4g %s (%s)</text>\n",
            ML, tv, (long long)c->N, c->NB, c->P, c->Q, r->time, giga ? r->gflops : r->gflops / 1e3,
            giga ? "GFLOP/s" : "TFLOP/s", r->exec_used[0] ? r->exec_used : "?");
    fprintf(f, "<text x='%d' y='33' font-size='11'>LU %.3f s, refinement %.3f s, %d iteration%s: residual %.3g %s%s</text>\n",
            ML, r->t_lu, r->t_ir, r->iterations, r->iterations == 1 ? "" : "s", r->resid,
            r->passed ? "PASSED" : "FAILED", ts_mxp_fmt_list_eligible(c->fmt) ? "" : "; " TS_MXP_FP8_NOTE);
    lu_panel(f, pt, npt, r->t_lu);
    residual_panel(f, r, c->threshold);
    static const char *const names[4] = {"LU per block col.", "LU running", "residual", "bound"};
    static const char *const colors[4] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"};
    ts_plot_legend(f, MT, 4, names, colors);
    fprintf(f, "</svg>\n");
    if (fclose(f) != 0) TS_RAISE(TS_ERR_IO, "writing the plot '%s' failed", path);
    return 0;
}
