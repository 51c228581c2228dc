/* progress.c - live progress line or periodic log lines (contract: progress.h). */
#include "progress.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROGRESS_LOG_EVERY_S 2.0

double progress_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void progress_start(progress *p, FILE *out, long total)
{
    memset(p, 0, sizeof *p);
    p->out = out;
    p->tty = out && isatty(fileno(out));
    p->total = total;
    p->t0 = p->last_print = progress_now();
}

/* "1:05" or "1:02:03"; "?" before the first task ends. */
static void progress_eta(const progress *p, char *buf, size_t n)
{
    if (p->done == 0 || p->total <= p->done) {
        snprintf(buf, n, p->total <= p->done ? "0:00" : "?");
        return;
    }
    const double per = (progress_now() - p->t0) / (double)p->done;
    const long s = (long)(per * (double)(p->total - p->done) + 0.5);
    if (s >= 3600)
        snprintf(buf, n, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    else
        snprintf(buf, n, "%ld:%02ld", s / 60, s % 60);
}

static void progress_line(progress *p, const char *end)
{
    char eta[32];
    progress_eta(p, eta, sizeof eta);
    const int pct = p->total > 0 ? (int)(100 * p->done / p->total) : 100;
    /* \033[K clears what a longer previous line left on a terminal. */
    fprintf(p->out, "%s[%ld/%ld %3d%% ETA %s] %s%s%s%s%s", p->tty ? "\r" : "", p->done, p->total,
            pct, eta, p->now, p->best[0] ? "  best " : "", p->best, p->tty ? "\033[K" : "", end);
    fflush(p->out);
    p->last_print = progress_now();
}

void progress_begin_task(progress *p, const char *what)
{
    if (!p || !p->out)
        return;
    snprintf(p->now, sizeof p->now, "%s", what);
    if (p->tty) {
        progress_line(p, "");
        p->live = 1;
    }
}

void progress_end_task(progress *p, const char *best)
{
    if (!p || !p->out)
        return;
    p->done++;
    if (best)
        snprintf(p->best, sizeof p->best, "%s", best);
    if (p->tty) {
        progress_line(p, "");
        p->live = 1;
        return;
    }
    const int decile = p->total > 0 ? (int)(10 * p->done / p->total) : 10;
    if (decile != p->last_decile || p->done == p->total ||
        progress_now() - p->last_print >= PROGRESS_LOG_EVERY_S) {
        p->last_decile = decile;
        progress_line(p, "\n");
    }
}

/* A message on its own line ("d64... hot: crashed: ..."). */
static void progress_note(progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void progress_note(progress *p, const char *fmt, ...)
{
    if (!p || !p->out)
        return;
    if (p->live)
        fputs("\r\033[K", p->out);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(p->out, fmt, ap);
    va_end(ap);
    fputc('\n', p->out);
    if (p->live) /* put the live line back under the note */
        progress_line(p, "");
    fflush(p->out);
}

void progress_say(progress *p, const char *fmt, ...)
{
    if (!p || !p->out)
        return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    progress_note(p, "fasweep: %s", buf);
}

void progress_finish(progress *p)
{
    if (!p || !p->out)
        return;
    if (p->live)
        fputc('\n', p->out);
    p->live = 0;
    fflush(p->out);
}

int progress_hook(const char *name, const char *value)
{
    const char *v = getenv(name);
    return v && strcmp(v, value) == 0;
}

int progress_tracing(void)
{
    static int on = -1;
    if (on < 0)
        on = getenv("FASWEEP_TRACE") != NULL;
    return on;
}

void progress_phase(const char *what)
{
    static double t0 = -1;
    if (!progress_tracing())
        return;
    const double t = progress_now();
    if (t0 < 0) { /* the first: also the wall clock, to place the phases in a caller's timing */
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        t0 = t;
        fprintf(stderr, "TRACE phase %s 0.000 s (epoch %lld.%06ld)\n", what, (long long)now.tv_sec,
                now.tv_nsec / 1000);
        return;
    }
    fprintf(stderr, "TRACE phase %s %.3f s\n", what, t - t0);
}

void progress_trace_ms(const char *name, double ms)
{
    if (progress_tracing())
        fprintf(stderr, "TRACE %-28s %9.3f ms pid %d\n", name, ms, (int)getpid());
}

void progress_step(const char *what)
{
    static double last;
    if (!what)
        last = 0;
    if (!what || !progress_tracing())
        return;
    const double t = progress_now();
    progress_trace_ms(what, last > 0 ? (t - last) * 1e3 : 0.0);
    last = t;
}
