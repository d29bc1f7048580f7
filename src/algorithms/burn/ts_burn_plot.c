// ts_burn_plot.c: hand-written SVG of burn's rate and temperature over time, one colour per device.
#include <math.h>

#include "algorithms/burn/ts_burn.h"

#define W 900
#define H 420
#define L 70  // margins: left, right, top, bottom
#define R 70
#define T 40
#define B 50

static const char *const colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                      "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};

static double nice_ceil(double v) {
    if (!(v > 0)) return 1;
    double p = pow(10, floor(log10(v)));
    for (double f = 1; f <= 10; f += (f < 2 ? 1 : f < 5 ? 3 : 5))
        if (f * p >= v) return f * p;
    return 10 * p;
}

int ts_burn_plot_svg(FILE *f, const ts_burn_dev_report *devs, int ndev, const char *title) {
    double tmax = 0, fmaxv = 0, cmax = 0;
    int have_temp = 0;
    for (int d = 0; d < ndev; d++)
        for (int i = 0; i < devs[d].nsamples; i++) {
            const ts_burn_sample *s = &devs[d].samples[i];
            tmax = fmax(tmax, s->t);
            fmaxv = fmax(fmaxv, s->tflops);
            if (isfinite(s->temp_c)) have_temp = 1, cmax = fmax(cmax, s->temp_c);
        }
    tmax = nice_ceil(tmax);
    fmaxv = nice_ceil(fmaxv * 1.1);
    cmax = have_temp ? nice_ceil(cmax * 1.1) : 100;
    const double pw = W - L - R, ph = H - T - B;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
               "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, H);
    fprintf(f, "<text x=\"%d\" y=\"22\" font-size=\"15\">%s</text>\n", L, title ? title : "tessera burn");
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%g\" height=\"%g\" fill=\"none\" stroke=\"#444\"/>\n", L, T, pw, ph);
    for (int g = 0; g <= 5; g++) {
        double y = T + ph - ph * g / 5.0, x = L + pw * g / 5.0;
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", L, y, L + pw, y);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.3g</text>\n", L - 6, y + 4, fmaxv * g / 5.0);
        if (have_temp)
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%.0f</text>\n", L + pw + 6, y + 4, cmax * g / 5.0);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.3g</text>\n", x, T + ph + 16, tmax * g / 5.0);
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">time (s)</text>\n", L + pw / 2, H - 12);
    fprintf(f, "<text x=\"16\" y=\"%.1f\" transform=\"rotate(-90 16 %.1f)\" text-anchor=\"middle\">TFLOP/s "
               "(solid)</text>\n", T + ph / 2, T + ph / 2);
    if (have_temp)
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" transform=\"rotate(90 %d %.1f)\" text-anchor=\"middle\">temperature "
                   "&#176;C (dashed)</text>\n", W - 16, T + ph / 2, W - 16, T + ph / 2);
    for (int d = 0; d < ndev; d++) {
        const char *c = colours[d % 8];
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", c);
        for (int i = 0; i < devs[d].nsamples; i++) {
            const ts_burn_sample *s = &devs[d].samples[i];
            fprintf(f, "%.1f,%.1f ", L + pw * s->t / tmax, T + ph - ph * s->tflops / fmaxv);
        }
        fprintf(f, "\"/>\n");
        if (have_temp) {
            fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-dasharray=\"5,3\" points=\"", c);
            for (int i = 0; i < devs[d].nsamples; i++) {
                const ts_burn_sample *s = &devs[d].samples[i];
                if (isfinite(s->temp_c)) fprintf(f, "%.1f,%.1f ", L + pw * s->t / tmax, T + ph - ph * s->temp_c / cmax);
            }
            fprintf(f, "\"/>\n");
        }
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" fill=\"%s\">device %d: %s</text>\n", L + 10.0 + 200.0 * (d % 4),
                T + 16 + 14 * (d / 4), c, devs[d].ordinal, devs[d].name);
    }
    fprintf(f, "</svg>\n");
    return ferror(f) ? -1 : 0;
}
