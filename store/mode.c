/* mode.c - the timing modes' descriptor table (contract: mode.h). */
#include "mode.h"

#include <stdio.h>
#include <string.h>

/* What every mode fills beyond its timing: the same worker steps run for
 * each (docs/measurement.md, "One task, in the worker"). */
#define MODE_FILLS_COMMON                                                                          \
    "time.median_us/min_us/mean_us/stdev_us/cv/noise/samples, tflops, gbps, clock.*, "             \
    "sm_clock_mhz, mem_clock_mhz, throttle_reasons, throttled, cta_cycles_mean/max, waves, "       \
    "sm_imbalance"

#define MODE_UNC_MEDIAN_SE_TEXT                                                                    \
    "relative standard error of the median over this record's samples, "                           \
    "sqrt(pi/2) * stdev / (sqrt(n) * median)"

static const mode_desc mode_table[MODE_COUNT] = {
    {MODE_HOT, "hot", "L2 warm (inputs reused launch after launch); one launch per event pair",
     MODE_L2_WARM, MODE_LAUNCH_SINGLE, "stdrel", MODE_UNC_MEDIAN_SE, MODE_UNC_MEDIAN_SE_TEXT,
     MODE_FILLS_COMMON "; time.launches = 1"},
    {MODE_COLD, "cold",
     "L2 flushed before each sample (outside the events); one launch per event pair",
     MODE_L2_FLUSHED, MODE_LAUNCH_SINGLE, "stdrel", MODE_UNC_MEDIAN_SE, MODE_UNC_MEDIAN_SE_TEXT,
     MODE_FILLS_COMMON "; time.launches = 1"},
    {MODE_BATCH, "batch",
     "L2 warm; back-to-back launches (measure.batch_us) per event pair, time per launch",
     MODE_L2_WARM, MODE_LAUNCH_BATCH, "stdrel", MODE_UNC_MEDIAN_SE, MODE_UNC_MEDIAN_SE_TEXT,
     MODE_FILLS_COMMON "; time.launches = launches per sample (1 to 1000)"},
};

const mode_desc *mode_at(int i)
{
    return i >= 0 && i < MODE_COUNT ? &mode_table[i] : NULL;
}

int mode_index(const char *name)
{
    for (int i = 0; name && i < MODE_COUNT; i++)
        if (strcmp(name, mode_table[i].name) == 0)
            return i;
    return -1;
}

const mode_desc *mode_find(const char *name)
{
    return mode_at(mode_index(name));
}

const mode_desc *mode_default(void)
{
    return &mode_table[0];
}

const char *mode_uncertainty_name(mode_uncertainty u)
{
    switch (u) {
    case MODE_UNC_MEDIAN_SE:
        return "median_se";
    }
    return "unknown";
}

/* Joins the names as `quote NAME quote`, with sep between and last before
 * the last one, into buf (built once per buffer: the table is constant). */
static const char *mode_join(char *buf, size_t n, const char *quote, const char *sep,
                             const char *last)
{
    if (buf[0])
        return buf;
    size_t len = 0;
    for (int i = 0; i < MODE_COUNT && len < n; i++) {
        const char *s = i == 0 ? "" : i == MODE_COUNT - 1 ? last : sep;
        len +=
            (size_t)snprintf(buf + len, n - len, "%s%s%s%s", s, quote, mode_table[i].name, quote);
    }
    return buf;
}

const char *mode_names_text(void)
{
    static char buf[MODE_COUNT * (MODE_NAME_MAX + 2) + 1];
    return mode_join(buf, sizeof buf, "", ", ", ", ");
}

const char *mode_names_quoted(void)
{
    static char buf[MODE_COUNT * (MODE_NAME_MAX + 6) + 1];
    return mode_join(buf, sizeof buf, "\"", ", ", " or ");
}

const char *mode_help_text(void)
{
    static char buf[4096];
    if (buf[0])
        return buf;
    size_t len = 0;
    for (int i = 0; i < MODE_COUNT && len < sizeof buf; i++) {
        const mode_desc *d = &mode_table[i];
        len +=
            (size_t)snprintf(buf + len, sizeof buf - len,
                             "  %-6s %s\n"
                             "         stops by %s, noise by %s (docs/measurement.md)\n",
                             d->name, d->measures, d->stop, mode_uncertainty_name(d->uncertainty));
    }
    return buf;
}
