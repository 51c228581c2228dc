/* cmd_eval.c - `fasweep eval`: one point (or a head-to-head of a few),
 * measured as `grid` measures and stored as `grid` stores, with no space
 * file: the objective function an external tuner or evolution loop calls
 * (contract: cli.h).
 */
#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/fa_launch.h"
#include "../kernels/family.h"
#include "../seeds/group.h"
#include "../seeds/rank.h"
#include "../seeds/source.h"
#include "../store/json.h"
#include "../store/mode.h"
#include "../store/store.h"
#include "cli.h"
#include "emit.h"
#include "../grid/plan.h"
#include "../sweep/engine.h"
#include "../sweep/task.h"
#include "../sweep/variant.h"

typedef struct eval_args {
    const char *configs_text, *mode, *store, *space_path, *kernel;
    cli_problem problem;
    int json, device;
    int mode_set; /* --mode given (else a kernel file's mode= may set it) */
} eval_args;

/* ---- arguments ------------------------------------------------------------------------------- */

/* The configs of a comma-separated list into t (at most TASK_MAX_CONFIGS),
 * each checked against the problem and the planner's static rules and
 * looked up in this build. Returns 0, or a usage error. */
static int eval_configs(const char *text, const space *s, int variant, task *t)
{
    char buf[1024];
    if (strlen(text) >= sizeof buf)
        return cli_usage_error("--config is longer than %zu bytes", sizeof buf - 1);
    strcpy(buf, text);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        fa_config c;
        char bad[160];
        if (fa_config_parse_why(tok, &c, bad, sizeof bad) != 0) {
            if (bad[0]) /* its form, with a value no space could name */
                return cli_usage_error("config %s: %s", tok, bad);
            /* Every family's form, from the table. */
            char *forms = cli_help_text("{{CONFIG_EXAMPLES}}; {{LETTERS}}");
            for (char *p = forms; p && *p; p++)
                if (*p == '\n')
                    *p = ' '; /* one line */
            const int rc =
                cli_usage_error("--config '%s' is not a config text: TEXT (" FA_FAMILY_DEFAULT_NAME
                                ") or FAMILY:TEXT of a known kernel family, e.g. %s "
                                "(docs/families.md)",
                                tok, forms ? forms : "");
            free(forms);
            return rc;
        }
        if (t->n_configs == TASK_MAX_CONFIGS)
            return cli_usage_error("--config names more than %d configs", TASK_MAX_CONFIGS);
        if (c.head_dim != t->problem.head_dim)
            return cli_usage_error("config %s is for head_dim %d, the problem's is %d", tok,
                                   c.head_dim, t->problem.head_dim);
        if (c.dtype != t->problem.dtype)
            return cli_usage_error("config %s is for %s, the problem is %s (a bf16 config's text "
                                   "ends in .bf16)",
                                   tok, fa_dtype_name(c.dtype), fa_dtype_name(t->problem.dtype));
        const plan_point pt = {0, c, plan_check(&c, s->smem_limit), plan_smem_bytes(&c), s->arch};
        if (pt.reason != PLAN_OK) {
            char why[256];
            plan_reject_reason(&pt, s->smem_limit, why, sizeof why);
            return cli_usage_error("config %s cannot run: %s (%s)", tok, why,
                                   plan_reason_code(pt.reason));
        }
        if (!variant && !fa_registry_find(&c))
            return cli_usage_error("config %s is not compiled into this binary (build %s); add a "
                                   "space that accepts it to SPACES and rebuild (make "
                                   "SPACES=\"...\"), or pass --kernel",
                                   tok, fa_build_id());
        t->configs[t->n_configs++] = c;
    }
    if (t->n_configs == 0)
        return cli_usage_error("--config names no config");
    if (variant && t->n_configs > 1)
        return cli_usage_error("--kernel takes one config (the variant is compiled for it)");
    return 0;
}

/* The measurement settings: the space's when --space is given, else the
 * defaults a space gets (docs/spaces.md); the limit of shared memory of
 * the largest target (the launch says when the GPU has less). */
static int eval_space(const eval_args *a, space *s)
{
    if (a->space_path)
        return cli_load_space(a->space_path, s);
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "eval");
    s->smem_limit = 232448;
    space_measure_defaults(&s->measure);
    s->tolerance.rel_l2 = SPACE_DEFAULT_REL_L2;
    s->tolerance.max_abs = SPACE_DEFAULT_MAX_ABS;
    return 0;
}

/* The task of the arguments. Returns 0, or the exit status after a message. */
static int eval_task(const eval_args *a, const space *s, task *t)
{
    memset(t, 0, sizeof *t);
    if (space_problem_parse(a->problem.text, &t->problem) != 0)
        return cli_usage_error("--problem is required (B,H,S,D or b4.h8.s512.d64.nc)");
    if (t->problem.head_dim != 64 && t->problem.head_dim != 128 && t->problem.head_dim != 256)
        return cli_usage_error("problem %s has head_dim %d: the kernels are built for 64, 128 and "
                               "256",
                               a->problem.text, t->problem.head_dim);
    char why[160];
    if (space_problem_check(&t->problem, why, sizeof why) != 0)
        return cli_usage_error("problem %s: %s", a->problem.text, why);
    int rc = eval_configs(a->configs_text, s, a->kernel != NULL, t);
    if (rc)
        return rc;
    char err[512];
    if (a->kernel && variant_load(a->kernel, &t->configs[0], &t->variant, err, sizeof err) != 0)
        return cli_usage_error("%s", err);
    t->n_modes = 1;
    snprintf(t->modes[0], sizeof t->modes[0], "%s", a->mode);
    t->measure = s->measure;
    t->tol = s->tolerance;
    return 0;
}

/* ---- results --------------------------------------------------------------------------------- */

/* The best "ok" kernel record of the group other than the keys this eval
 * writes, and the fastest baseline: what the new medians are compared to.
 * Read before the new records are stored. */
typedef struct eval_ref {
    double best_us, baseline_us;
    char best_config[64], baseline[64];
} eval_ref;

static void eval_reference(store *st, const record *mine, int n, eval_ref *ref)
{
    memset(ref, 0, sizeof *ref);
    /* Variants too: an evolution loop compares with its earlier candidates. */
    rank_filter f = {mine[0].device, mine[0].problem, mine[0].mode, 1};
    rank_result rr;
    if (rank_topk(st, &f, TASK_MAX_CONFIGS + 1, &rr) != STORE_OK)
        return;
    for (int g = 0; g < rr.n_groups; g++) {
        const rank_group *gr = &rr.groups[g];
        for (int i = 0; i < gr->n_top && ref->best_us == 0; i++) {
            int own = 0;
            for (int j = 0; j < n; j++)
                own |= strcmp(gr->top[i].config, mine[j].config) == 0 &&
                       strcmp(gr->top[i].build, mine[j].build) == 0;
            if (!own) {
                ref->best_us = gr->top[i].time.median_us;
                snprintf(ref->best_config, sizeof ref->best_config, "%s", gr->top[i].config);
            }
        }
        if (gr->has_baseline) {
            ref->baseline_us = gr->best_baseline.time.median_us;
            snprintf(ref->baseline, sizeof ref->baseline, "%s", gr->best_baseline.config);
        }
    }
    rank_free(&rr);
}

/* One compiler line `FILE(LINE): SEVERITY: TEXT` as {file, line, severity,
 * message} (line is cut at its '(' for the file); NULL for another line
 * (nothing noted in b) or out of memory (noted in b). */
static cJSON *eval_compile_message(json_b *b, char *line)
{
    char *paren = strstr(line, "): ");
    char *open = paren;
    while (open && open > line && *open != '(')
        open--;
    if (!open || *open != '(')
        return NULL;
    char *end;
    const long ln = strtol(open + 1, &end, 10);
    const char *sev = paren + 3, *colon = strstr(sev, ": ");
    if (end != paren || ln <= 0 || !colon || colon - sev > 31)
        return NULL;
    *open = '\0';
    cJSON *e = json_check(b, cJSON_CreateObject());
    char sv[32];
    snprintf(sv, sizeof sv, "%.*s", (int)(colon - sev), sev);
    json_str(b, e, "file", line);
    json_num(b, e, "line", (double)ln);
    json_str(b, e, "severity", sv);
    json_str(b, e, "message", colon + 2);
    return e;
}

/* The compiler's messages of a log (nvcc's `FILE(LINE): error: TEXT`
 * lines, at most 16; other lines skipped) as the array KEY of o. */
static void eval_compile_errors(json_b *b, cJSON *o, const char *key, const char *log)
{
    cJSON *a = json_arr(b, o, key);
    int n = 0;
    for (const char *p = log; a && *p && n < 16; p += strcspn(p, "\n"), p += *p == '\n') {
        char line[1024];
        const size_t len = strcspn(p, "\n");
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), p);
        cJSON *e = eval_compile_message(b, line);
        if (e)
            json_push(b, a, e);
        n += e != NULL;
    }
}

/* The gate a record went through: its errors against the tolerances, and
 * whether it passed (null: not reached, e.g. compile_error, crashed). */
static void eval_gate_json(json_b *b, cJSON *o, const record *r, const space_tolerance *tol)
{
    cJSON *g = json_obj(b, o, "gate");
    json_num(b, g, "rel_l2", r->rel_l2);
    json_num(b, g, "max_abs", r->max_abs);
    json_num(b, g, "rel_l2_max", tol->rel_l2);
    json_num(b, g, "max_abs_max", tol->max_abs);
    if (r->status == RECORD_ST_OK || r->status == RECORD_ST_WRONG)
        json_bool(b, g, "passed", r->status == RECORD_ST_OK);
    else
        json_null(b, g, "passed");
}

/* One line of JSON per record: what a tuner reads. Its names are the
 * record's (store/record.c, the seeds'): local_bytes, sm_median_mhz,
 * below_threshold; unknown is null (store/json.h), a measured 0 stays 0.
 * log: the compiler's full output for a compile_error (the record's error
 * holds its first 255 bytes), else NULL. Returns the exit status: out of
 * memory is one message and CLI_FAIL, nothing printed. */
static int eval_print_json(const record *r, const eval_ref *ref, const space_tolerance *tol,
                           const char *log)
{
    json_b b = JSON_B_INIT;
    cJSON *o = json_check(&b, cJSON_CreateObject());
    const int ok = r->status == RECORD_ST_OK;
    json_str(&b, o, "status", record_status_name(r->status));
    json_str(&b, o, "config", r->config);
    json_str(&b, o, "problem", r->problem);
    json_str(&b, o, "mode", r->mode);
    json_str(&b, o, "device", r->device);
    json_str(&b, o, "build", r->build);
    json_num(&b, o, "median_us", ok ? r->time.median_us : NAN);
    /* The 95 % interval an independent run lands in (null: none; a tuner
     * compares two candidates by it, store/record.h's record_tie). */
    json_num(&b, o, "ci_lo_us", ok && record_has_ci(r) ? r->time.ci_lo_us : NAN);
    json_num(&b, o, "ci_hi_us", ok && record_has_ci(r) ? r->time.ci_hi_us : NAN);
    json_num(&b, o, "rounds", r->time.round.n);
    json_num(&b, o, "noise", ok ? r->time.noise : NAN);
    json_num(&b, o, "samples", r->time.samples);
    json_num(&b, o, "rel_l2", r->rel_l2);
    json_num(&b, o, "max_abs", r->max_abs);
    /* A source that did not compile has no resources: unknown, not 0. */
    const int built = r->status != RECORD_ST_COMPILE_ERROR;
    json_num(&b, o, "regs", built ? r->regs : NAN);
    json_num(&b, o, "local_bytes", built ? r->local_bytes : NAN);
    json_num(&b, o, "smem_bytes", built ? (double)r->smem_static + (double)r->smem_dynamic : NAN);
    json_num(&b, o, "tflops", ok ? r->tflops : NAN);
    json_num(&b, o, "speedup_vs_best",
             ok && ref->best_us > 0 ? ref->best_us / r->time.median_us : NAN);
    if (ref->best_us > 0)
        json_str(&b, o, "best_config", ref->best_config);
    else
        json_null(&b, o, "best_config");
    json_num(&b, o, "speedup_vs_baseline",
             ok && ref->baseline_us > 0 ? ref->baseline_us / r->time.median_us : NAN);
    json_int_or_null(&b, o, "sm_median_mhz", r->clock.median_mhz, -1);
    json_tri(&b, o, "below_threshold", r->clock.below);
    json_str(&b, o, "error", r->error);
    /* the check that refused it (sweep/task.h task_checks), null if none */
    const char *check = r->status == RECORD_ST_OK ? NULL : task_check_of(r->error);
    if (check)
        json_str(&b, o, "check", check);
    else
        json_null(&b, o, "check");
    /* An edited kernel (its file), and what its compiler said. */
    json_bool(&b, o, "variant", record_is_variant(r));
    if (r->kernel_path[0])
        json_str(&b, o, "kernel", r->kernel_path);
    else
        json_null(&b, o, "kernel");
    json_num(&b, o, "max_blocks_per_sm", built ? r->max_blocks_per_sm : NAN);
    eval_gate_json(&b, o, r, tol);
    eval_compile_errors(&b, o, "compile_errors",
                        r->status == RECORD_ST_COMPILE_ERROR ? (log ? log : r->error) : "");
    return emit_json_line(json_done(&b, o));
}

static void eval_print_text(const record *r, const eval_ref *ref)
{
    if (r->status != RECORD_ST_OK) {
        printf("%s %s %s: %s: %s\n", r->problem, r->config, r->mode, record_status_name(r->status),
               r->error);
        return;
    }
    printf("%s %s %s: ok %.3f us", r->problem, r->config, r->mode, r->time.median_us);
    if (record_has_ci(r))
        printf(" (95 %% interval %.3f..%.3f us, %d rounds", r->time.ci_lo_us, r->time.ci_hi_us,
               r->time.round.n);
    else
        printf(" (no interval, %d rounds", r->time.round.n);
    printf(", %d samples, %.1f TFLOPS)", r->time.samples, r->tflops);
    if (ref->best_us > 0)
        printf(", %.3fx the stored best (%s %.3f us)", ref->best_us / r->time.median_us,
               ref->best_config, ref->best_us);
    if (ref->baseline_us > 0)
        printf(", %.3fx %s", ref->baseline_us / r->time.median_us, ref->baseline);
    putchar('\n');
}

/* ---- the run --------------------------------------------------------------------------------- */

/* The engine's hooks: the stored best is read before the new records go
 * in, each stored record is printed, and any that is not ok fails. */
/* Kernel files measured head to head with the configs in one eval. */
#define EVAL_MAX_KERNELS 8
#define EVAL_MAX_RECORDS (TASK_MAX_RECORDS + EVAL_MAX_KERNELS)

typedef struct eval_out {
    const eval_args *a;
    const space_tolerance *tol; /* the gate's */
    store *st;
    eval_ref ref;
    int have_ref;
    int n;                        /* records of the jobs (job tag + index) */
    record rec[EVAL_MAX_RECORDS]; /* each as last stored */
} eval_out;

static void eval_measured(void *ctx, const engine_job *job, const record *recs, int n)
{
    eval_out *o = ctx;
    if (job->t.round == 0 && !o->have_ref) { /* before any of this eval's records is in */
        eval_reference(o->st, recs, n, &o->ref);
        o->have_ref = 1;
    }
}

static void eval_stored(void *ctx, const engine_job *job, int idx, const record *r)
{
    eval_out *o = ctx;
    const size_t i = job->tag + (size_t)idx;
    if (idx >= 0 && i < EVAL_MAX_RECORDS) {
        o->rec[i] = *r;
        if ((int)i + 1 > o->n)
            o->n = (int)i + 1;
    }
}

/* After the last round: each record as stored (its interval set by then),
 * printed. Returns the exit status: 1 when any is not ok. */
static int eval_print(eval_out *o)
{
    int rc = CLI_OK;
    for (int i = 0; i < o->n; i++) {
        record *r = &o->rec[i];
        char key[RECORD_KEY_LEN];
        if (record_key(r, key, sizeof key) == 0)
            (void)store_get(o->st, key, r); /* else: the record as the engine stored it */
        if (o->a->json) {
            if (eval_print_json(r, &o->ref, o->tol, NULL) != CLI_OK)
                return CLI_FAIL;
        } else
            eval_print_text(r, &o->ref);
        if (r->status != RECORD_ST_OK)
            rc = CLI_FAIL;
    }
    return rc;
}

/* A variant that does not compile: its compile_error record stored (with
 * a GPU and so a store st) and printed. Returns the exit status. */
static int eval_compile_error(const eval_args *a, const space *s, engine *e, store *st, record *r,
                              const char *log)
{
    fprintf(stderr, "%s\n", log);
    if (st) {
        if (engine_put(e, st, r, ENGINE_PUT, 0) != 0) {
            cli_say("%s", e->err);
            return CLI_FAIL;
        }
    } else {
        cli_say("no CUDA GPU: the compile_error result (sm_%d) is not stored (a record needs the "
                "GPU's name)",
                r->cc);
    }
    const eval_ref ref = {0};
    if (a->json)
        (void)eval_print_json(r, &ref, &s->tolerance, log); /* exit 1 either way */
    else
        eval_print_text(r, &ref);
    return CLI_FAIL;
}

/* The tasks t[0..n) (a config head-to-head and/or kernel variants) measured
 * head to head in one engine call: every variant compiled first (one that
 * does not is stored and printed as compile_error, the others go on), then
 * all of them in the engine's rounds, each round in a rotated order. */
static int eval_run(const eval_args *a, const space *s, task *t, int n)
{
    static engine e;
    const engine_options eo = {.device = a->device,
                               .space_name = s->name,
                               .space_hash = s->hash,
                               .rounds = s->measure.rounds,
                               .ci_floor = s->measure.ci_floor};
    int variants = 0;
    for (int i = 0; i < n; i++)
        variants += t[i].variant.path[0] != '\0';
    const int gpu = engine_open(&e, &eo) == 0;
    if (!gpu && !variants) {
        cli_say("no CUDA GPU found: %s -- eval needs a GPU", e.err);
        return CLI_FAIL;
    }
    char no_gpu[sizeof e.err];
    snprintf(no_gpu, sizeof no_gpu, "%s", e.err);
    /* Without a GPU nothing is stored: no store is made. */
    store *st = gpu ? cli_open_store(cli_store_path(a->store), 0) : NULL;
    int rc = gpu && !st ? CLI_FAIL : CLI_OK, failed = 0;
    static engine_job jobs[1 + EVAL_MAX_KERNELS];
    int nj = 0;
    size_t tag = 0;
    for (int i = 0; i < n && rc == CLI_OK; i++) {
        if (t[i].variant.path[0]) { /* before any GPU work */
            static char log[8192];
            static record r;
            const int vr = engine_variant(&e, &t[i], &r, log, sizeof log);
            if (vr < 0) {
                cli_say("cannot compile the kernel variant %s: %s", t[i].variant.path, log);
                rc = CLI_FAIL;
            } else if (vr > 0) {
                failed |= eval_compile_error(a, s, &e, st, &r, log) != CLI_OK;
                continue;
            }
        }
        memset(&jobs[nj], 0, sizeof jobs[nj]);
        jobs[nj].t = t[i];
        jobs[nj++].tag = tag;
        tag += (size_t)(t[i].n_configs * t[i].n_modes);
    }
    if (rc == CLI_OK && nj > 0 && !gpu) {
        for (int i = 0; i < nj; i++)
            if (jobs[i].t.variant.so[0])
                cli_say("no CUDA GPU found: %s -- the variant compiled (%s); eval needs a GPU to "
                        "run it",
                        no_gpu, jobs[i].t.variant.so);
        rc = CLI_FAIL;
    }
    if (rc == CLI_OK && nj > 0) {
        static eval_out o;
        memset(&o, 0, sizeof o);
        o.a = a;
        o.tol = &s->tolerance;
        o.st = st;
        const engine_sink sink = {&o, eval_measured, eval_stored, NULL};
        if (engine_measure(&e, st, jobs, (size_t)nj, ENGINE_PUT, &sink) != 0) {
            cli_say("%s", e.err);
            rc = CLI_FAIL;
        } else
            rc = eval_print(&o);
    }
    engine_close(&e);
    if (st)
        store_close(st);
    return rc == CLI_OK && failed ? CLI_FAIL : rc;
}

/* ---- the config a kernel file names ---------------------------------------------------------- */

/* The value of `key=` in a tag line, into buf; 0, or -1 when absent. */
static int eval_tag_value(const char *line, const char *key, char *buf, size_t n)
{
    const size_t kl = strlen(key);
    for (const char *p = line; (p = strstr(p, key)) != NULL; p += kl) {
        if ((p != line && p[-1] != ' ' && p[-1] != '\t') || p[kl] != '=')
            continue;
        const char *v = p + kl + 1;
        const size_t len = strcspn(v, " \t\r\n");
        if (len == 0 || len >= n)
            return -1;
        memcpy(buf, v, len);
        buf[len] = '\0';
        return 0;
    }
    return -1;
}

/* Fills what --problem, --config and --mode left out from the kernel
 * file's first line, `// fasweep: problem=P config=C mode=M` (what `topk
 * --emit-source` writes; mode optional). Returns 0, or a usage error. */
static int eval_from_kernel(eval_args *a)
{
    static char cfg[256], mode[16];
    FILE *f = fopen(a->kernel, "r");
    char line[1024] = "";
    if (!f)
        return cli_usage_error("cannot read --kernel %s: %s", a->kernel, strerror(errno));
    const int got = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    char prob[64];
    if (!got || strncmp(line, SOURCE_TAG, strlen(SOURCE_TAG)) != 0 ||
        eval_tag_value(line, "problem", prob, sizeof prob) ||
        eval_tag_value(line, "config", cfg, sizeof cfg))
        return cli_usage_error("--kernel %s does not start with a line '%s problem=P config=C' "
                               "(as `fasweep topk --emit-source` writes); pass --problem P and "
                               "--config C",
                               a->kernel, SOURCE_TAG);
    space_problem sp;
    if (!a->problem.set) {
        if (space_problem_parse(prob, &sp) != 0 ||
            space_problem_format(&sp, a->problem.text, sizeof a->problem.text) >=
                (int)sizeof a->problem.text)
            return cli_usage_error("--kernel %s: its problem=%s is not a problem text like "
                                   "b4.h8.s512.d64.nc; pass --problem P",
                                   a->kernel, prob);
        a->problem.set = 1;
    }
    if (!a->configs_text)
        a->configs_text = cfg;
    if (!a->mode_set && eval_tag_value(line, "mode", mode, sizeof mode) == 0) {
        if (!mode_find(mode))
            return cli_usage_error("--kernel %s: its mode=%s is not one of %s; pass --mode M",
                                   a->kernel, mode, mode_names_text());
        a->mode = mode;
    }
    return 0;
}

/* The task of one kernel file (or, with kernel NULL, of the configs alone):
 * its config from --config, else from the file's tag line. */
static int eval_one(const eval_args *given, const char *kernel, const space *s, task *t)
{
    eval_args a = *given;
    int rc;
    a.kernel = kernel;
    if (a.kernel && (!a.problem.set || !a.configs_text) && (rc = eval_from_kernel(&a)))
        return rc;
    if (!a.problem.set)
        return cli_usage_error("--problem P is required (or --kernel FILE that names it, as "
                               "`fasweep topk --emit-source` writes)");
    if (!a.configs_text)
        return cli_usage_error("--config C is required (or --kernel FILE that names it, as "
                               "`fasweep topk --emit-source` writes)");
    return eval_task(&a, s, t);
}

/* The required options checked (a kernel file may name them), the space
 * and the tasks built, the run. Kernel files: --kernel FILE and every
 * argument; with more than one, --config (when given) is also measured as
 * compiled instances, and every candidate goes head to head in the
 * engine's rounds. Returns the exit status. */
static int eval_command(const eval_args *given, int nargs, char **args)
{
    eval_args a = *given;
    int rc;
    a.mode_set = a.mode != NULL;
    if (!a.mode)
        a.mode = "hot";
    const char *kernels[EVAL_MAX_KERNELS];
    int nk = 0;
    if (a.kernel)
        kernels[nk++] = a.kernel;
    for (int i = 0; i < nargs; i++) {
        if (nk == EVAL_MAX_KERNELS)
            return cli_usage_error("at most %d kernel files in one eval", EVAL_MAX_KERNELS);
        kernels[nk++] = args[i];
    }
    static space s;
    static task t[1 + EVAL_MAX_KERNELS];
    if ((rc = eval_space(&a, &s)))
        return rc;
    if (nk <= 1) {
        if ((rc = eval_one(&a, nk ? kernels[0] : NULL, &s, &t[0])) == 0)
            return eval_run(&a, &s, t, 1);
        return rc;
    }
    int n = 0;
    if (a.configs_text && strchr(a.configs_text, ',') == NULL) {
        if ((rc = eval_one(&a, NULL, &s, &t[n++])))
            return rc;
    } else if (a.configs_text) {
        /* several configs: the instances head to head; kernel files name their own */
        if ((rc = eval_one(&a, NULL, &s, &t[n++])))
            return rc;
        a.configs_text = NULL;
    }
    for (int i = 0; i < nk; i++) {
        if ((rc = eval_one(&a, kernels[i], &s, &t[n])))
            return rc;
        char p0[48], pn[48];
        space_problem_format(&t[0].problem, p0, sizeof p0);
        space_problem_format(&t[n].problem, pn, sizeof pn);
        if (strcmp(p0, pn) != 0)
            return cli_usage_error("kernel file %s names another problem than the first "
                                   "candidate: one eval measures one problem",
                                   kernels[i]);
        for (int j = 0; j < n; j++)
            if (t[j].variant.build[0] && strcmp(t[j].variant.build, t[n].variant.build) == 0 &&
                fa_config_cmp(&t[j].configs[0], &t[n].configs[0]) == 0)
                return cli_usage_error("kernel file %s is the same source as %s at the same "
                                       "config (build %s): one candidate, one record key; pass "
                                       "it once",
                                       kernels[i], t[j].variant.path, t[n].variant.build);
        n++;
    }
    return eval_run(&a, &s, t, n);
}

static const cli_opt eval_opts[] = {
    CLI_OPT_VAL("problem", CLI_PROBLEM, eval_args, problem, "P", CLI_HELP_PROBLEM),
    CLI_OPT_VAL("config", CLI_STR, eval_args, configs_text, "C",
                "config text of a kernel family (TEXT alone is " FA_FAMILY_DEFAULT_NAME "'s,\n"
                "FAMILY:TEXT another family's), e.g.\n"
                "{{CONFIG_EXAMPLES}};\n"
                "a comma list for a head-to-head (at most 8; the same config twice is allowed)"),
    CLI_OPT_VAL("mode", CLI_MODE, eval_args, mode, "M", CLI_HELP_MODE),
    CLI_OPT_VAL("kernel", CLI_PATH, eval_args, kernel, "FILE.cuh",
                "an edited copy of the config's family template\n"
                "({{TEMPLATES}}):\n"
                "compiled for the local GPU at the config (one), cached, run in place of\n"
                "the compiled instance, gated and checked like it (docs/measurement.md); its\n"
                "records' build is src-HASH of the source (a source that does not\n"
                "compile is status compile_error, found before any GPU work); without\n"
                "--problem/--config/--mode, its first line `// fasweep: problem=P config=C\n"
                "mode=M` gives them (`fasweep topk --emit-source` writes it)"),
    CLI_OPT_VAL("space", CLI_PATH, eval_args, space_path, "FILE",
                "take the measurement settings and tolerances from this space (else the\n"
                "defaults a space gets) and name it in the records' provenance"),
    CLI_OPT_FLAG("json", eval_args, json, "one JSON line per config"),
    CLI_OPT_STORE(eval_args),
    CLI_OPT_CUDA_DEVICE(eval_args, device),
    {0}};

CLI_MAIN(eval, eval_args, eval_command)

CLI_COMMAND(
    eval, .summary = "check and time one point (or a head-to-head of a few), into the store",
    .usage = "--problem P --config C[,C...] [OPTIONS] [KERNEL.cuh...]\n--kernel FILE [OPTIONS] "
             "[KERNEL.cuh...]",
    .about =
        "Checks and times one point exactly as `grid` does (the same worker, gate, timing and\n"
        "record, crash isolation included) and stores it like a grid record: the objective\n"
        "function for an external tuner or evolution loop. Several configs are measured head\n"
        "to head (interleaved blocks in every round); so are kernel files given as\n"
        "arguments (each at --config's one config or its own tag line), beside --config's\n"
        "compiled instances: any mix, up to 8 files, in the engine's rotating rounds. Prints\n"
        "per candidate its status,\n"
        "median, noise, and its speedup over the stored best of its group (other configs or\n"
        "builds) and over the fastest stored baseline; --json: one line of JSON per config,\n"
        "with \"check\": the check that refused it (stream, gate, repeat, tails, magnitude,\n"
        "inputs, timed, floor; docs/measurement.md) or null.\n",
    .exit = "0 ok, 1 wrong, crashed, timeout, compile_error, implausible or no GPU, 2 bad\n"
            "arguments (an unknown config text, a config not in this binary, a problem the\n"
            "kernel cannot run, a --kernel file that is missing or not a kernel of the\n"
            "config's family).");
