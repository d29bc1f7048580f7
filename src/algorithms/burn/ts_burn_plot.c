// ts_burn_plot.c: hand-written SVG of burn's rate and temperature over time, one colour per device, failed checks marked.
#include <math.h>
#include <stdio.h>

#include "algorithms/burn/ts_burn.h"

#define W 900
#define L 70        // left and right margins of the panels
#define R 40
#define T 40        // top of the rate panel
#define RATE_H 300  // rate panel height (the whole height without telemetry)
#define TEMP_H 110  // temperature panel height, below the rate panel
#define GAP 14      // between the panels
#define AXIS_H 44   // below the last panel: tick labels and the axis title
#define LINE_H 18   // one legend line
#define CHAR_W 7.0  // a generous average glyph width at font-size 12 (legend text is cut to fit)
#define MAX_TICKS 8 // on the time axis

static const char *const colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                      "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
#define ERR_COLOUR "#e00000"

// The smallest step 1, 2 or 5 x 10^e that cuts [0, v] into at most `ticks` steps.
static double nice_step(double v, int ticks) {
    if (!(v > 0)) return 1;
    double raw = v / ticks, p = pow(10, floor(log10(raw)));
    const double f[] = {1, 2, 5, 10};
    for (int i = 0; i < 4; i++)
        if (f[i] * p >= raw * (1 - 1e-12)) return f[i] * p;
    return 10 * p;
}

// Text for SVG: the characters XML reserves are escaped; at most `max` characters are kept.
static void put_text(FILE *f, const char *s, int max) {
    for (int i = 0; s[i] && i < max; i++) {
        switch (s[i]) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        default: fputc(s[i], f);
        }
    }
}

// One panel: a value axis [0, top] labelled every step, drawn at [y0, y0 + h], time [0, tmax].
typedef struct {
    double y0, h, top, step, scale; // scale: displayed value = stored value x scale
} panel;

typedef struct {
    double x0, pw, tmax;
    panel rate, temp;
    int have_temp;
} frame;

static double fx(const frame *fr, double t) { return fr->x0 + fr->pw * t / fr->tmax; }
static double fy(const panel *p, double v) { return p->y0 + p->h - p->h * v * p->scale / p->top; }

static int has_window(const ts_burn_sample *s) { return s->t_to > s->t_from && s->tflops > 0; }

static void draw_panel(FILE *f, const frame *fr, const panel *p, const char *cls, const char *label) {
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#444\"/>\n", fr->x0,
            p->y0, fr->pw, p->h);
    for (int g = 0; p->step * g <= p->top * (1 + 1e-9); g++) {
        double v = p->step * g, y = p->y0 + p->h - p->h * v / p->top;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", fr->x0, y,
                fr->x0 + fr->pw, y);
        fprintf(f, "<text class=\"%s\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", cls, fr->x0 - 6, y + 4, v);
    }
    double xstep = nice_step(fr->tmax, MAX_TICKS);
    for (int g = 1; xstep * g < fr->tmax * (1 - 1e-9); g++) {
        double x = fx(fr, xstep * g);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>\n", x, p->y0, x, p->y0 + p->h);
    }
    fprintf(f, "<text x=\"16\" y=\"%.1f\" transform=\"rotate(-90 16 %.1f)\" text-anchor=\"middle\">%s</text>\n",
            p->y0 + p->h / 2, p->y0 + p->h / 2, label);
}

// The time axis under the last panel: 0 to the run's length, never beyond it.
static void time_axis(FILE *f, const frame *fr, double y) {
    double xstep = nice_step(fr->tmax, MAX_TICKS);
    for (int g = 0; xstep * g <= fr->tmax * (1 + 1e-9); g++) {
        double x = fx(fr, xstep * g);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>\n", x, y, x, y + 4);
        fprintf(f, "<text class=\"xtick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n", x, y + 17,
                xstep * g);
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time in the checked phase (s)</text>\n",
            fr->x0 + fr->pw / 2, y + 36);
}

// The rate at the middle of each window (the products completed in it over its length), the
// temperature at each sample's time, a cross on each interval whose checks failed.
static void curves(FILE *f, const frame *fr, const ts_burn_dev_report *d, const char *c) {
    fprintf(f, "<polyline class=\"rate\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", c);
    for (int i = 0; i < d->nsamples; i++) {
        const ts_burn_sample *s = &d->samples[i];
        if (has_window(s)) fprintf(f, "%.1f,%.1f ", fx(fr, 0.5 * (s->t_from + s->t_to)), fy(&fr->rate, s->tflops));
    }
    fprintf(f, "\"/>\n");
    if (fr->have_temp) {
        fprintf(f, "<polyline class=\"temp\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", c);
        for (int i = 0; i < d->nsamples; i++) {
            const ts_burn_sample *s = &d->samples[i];
            if (isfinite(s->temp_c)) fprintf(f, "%.1f,%.1f ", fx(fr, s->t), fy(&fr->temp, s->temp_c));
        }
        fprintf(f, "\"/>\n");
    }
    double last_y = fy(&fr->rate, 0);
    for (int i = 0; i < d->nsamples; i++) {
        const ts_burn_sample *s = &d->samples[i];
        double x = fx(fr, has_window(s) ? 0.5 * (s->t_from + s->t_to) : s->t);
        double y = has_window(s) ? fy(&fr->rate, s->tflops) : last_y;
        if (has_window(s)) last_y = y;
        if (s->errors <= 0) continue;
        fprintf(f, "<path class=\"err\" d=\"M%.1f,%.1f l10,10 m0,-10 l-10,10\" stroke=\"%s\" stroke-width=\"2.5\">"
                   "<title>GPU %d: %lld failed check(s) in %.1f-%.1f s</title></path>\n",
                x - 5, y - 5, ERR_COLOUR, d->ordinal, (long long)s->errors, s->t_from, s->t);
    }
}

// One line per device under the plot: its colour, verdict, sustained rate and name; then the key.
static void legend(FILE *f, const frame *fr, const ts_burn_dev_report *devs, int ndev, double y, const char *unit) {
    int room = (int)((W - L - 40) / CHAR_W); // characters that fit after the swatch
    for (int d = 0; d < ndev; d++, y += LINE_H) {
        const ts_burn_dev_report *r = &devs[d];
        ts_burn_verdict v = ts_burn_verdict_of(r);
        char verdict[64], line[256];
        if (v == TS_BURN_FAULTY) snprintf(verdict, sizeof verdict, "FAULTY (%lld errors)", (long long)r->errors);
        else snprintf(verdict, sizeof verdict, "%s", ts_burn_verdict_name(v));
        snprintf(line, sizeof line, "GPU %d: %s, %.4g %s sustained: %s", r->ordinal, verdict,
                 r->tflops * fr->rate.scale, unit, r->name);
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"3\"/>\n", L, y - 4,
                L + 24, y - 4, colours[d % 8]);
        fprintf(f, "<text class=\"legend\" x=\"%d\" y=\"%.1f\" fill=\"%s\">", L + 32, y,
                v == TS_BURN_OK ? "#222" : ERR_COLOUR);
        put_text(f, line, room);
        fprintf(f, "</text>\n");
    }
    fprintf(f, "<text class=\"legend\" x=\"%d\" y=\"%.1f\" fill=\"#444\">rate: whole checked products per interval, "
               "drawn at its middle; <tspan fill=\"%s\">&#215;</tspan>: failed checks in the interval%s</text>\n",
            L, y, ERR_COLOUR, fr->have_temp ? "" : "; no telemetry");
}

int ts_burn_plot_svg(FILE *f, const ts_burn_dev_report *devs, int ndev, double seconds, const char *title) {
    double tmax = seconds, rmax = 0, cmax = 0;
    int have_temp = 0;
    for (int d = 0; d < ndev; d++) {
        if (devs[d].seconds > tmax) tmax = devs[d].seconds;
        for (int i = 0; i < devs[d].nsamples; i++) {
            const ts_burn_sample *s = &devs[d].samples[i];
            tmax = fmax(tmax, fmax(s->t, s->t_to));
            if (has_window(s)) rmax = fmax(rmax, s->tflops);
            if (isfinite(s->temp_c)) have_temp = 1, cmax = fmax(cmax, s->temp_c);
        }
    }
    frame fr = {.x0 = L, .pw = W - L - R, .tmax = tmax > 0 ? tmax : 1, .have_temp = have_temp};
    // Below 1 TFLOP/s (simulated devices, small sizes) the rate reads GFLOP/s.
    double scale = rmax < 1.0 ? 1e3 : 1.0;
    const char *unit = scale > 1 ? "GFLOP/s" : "TFLOP/s";
    double rstep = nice_step(rmax * scale * 1.05, 6);
    fr.rate = (panel){.y0 = T, .h = RATE_H, .step = rstep, .scale = scale,
                      .top = fmax(rstep, rstep * ceil(rmax * scale * 1.05 / rstep - 1e-9))};
    double bottom = T + RATE_H;
    if (have_temp) {
        double cstep = nice_step(cmax * 1.05, 4);
        fr.temp = (panel){.y0 = bottom + GAP, .h = TEMP_H, .step = cstep, .scale = 1,
                          .top = fmax(cstep, cstep * ceil(cmax * 1.05 / cstep - 1e-9))};
        bottom += GAP + TEMP_H;
    }
    int height = (int)bottom + AXIS_H + LINE_H * (ndev + 1) + 8;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
               "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, height);
    fprintf(f, "<text x=\"%d\" y=\"22\" font-size=\"15\">", L);
    put_text(f, title ? title : "tessera burn", 110);
    fprintf(f, "</text>\n");
    char label[32];
    snprintf(label, sizeof label, "%s", unit);
    draw_panel(f, &fr, &fr.rate, "ytick", label);
    if (have_temp) draw_panel(f, &fr, &fr.temp, "ctick", "temperature &#176;C");
    time_axis(f, &fr, bottom);
    for (int d = 0; d < ndev; d++) curves(f, &fr, &devs[d], colours[d % 8]);
    legend(f, &fr, devs, ndev, bottom + AXIS_H + LINE_H - 4, unit);
    fprintf(f, "</svg>\n");
    return ferror(f) ? -1 : 0;
}
