/* geninst.c - derives the compiled kernel instances from the spaces.
 *
 * The set of instances in the fat binary is data: the union, over every
 * space given, of the points the planner accepts (deduplicated, sorted).
 * This host-only tool runs the same planner (grid/plan.c) without a
 * registry and writes, under --out:
 *   instances.txt        one config name per line ("FAMILY:TEXT" when the
 *                        family is not the default, mma)
 *   inst_K.cu            each family's registry entry lines (FA_INSTANCE(...)
 *                        for mma; kernels/family.h: instance) under the
 *                        includes of the families' templates, instances
 *                        split over --shards translation units by their
 *                        estimated compile time (fa_family.build_cost),
 *                        the longest first into the least-loaded unit
 *   inst_sm90a_K.cu      the same for the families whose code runs on
 *                        sm_90a only (fa_family.arch, e.g. wgmma), over
 *                        --arch-shards units the Makefile compiles with
 *                        -gencode=arch=compute_90a,code=sm_90a alone; when
 *                        --archs does not hold 90 these instances are left
 *                        out of the build (no shard, no registry entry)
 *   registry_table.inc   the sorted table kernels/registry.cu compiles
 *   build_id.h           FA_BUILD_ID: hash of the kernel sources, flags,
 *                        archs and instance list; FA_BUILD_ARCHS
 *   embedded.c           the text of the --embed headers, for kernel
 *                        variants (sweep/variant.h): fa_embedded_names[],
 *                        fa_embedded_texts[] (NULL-terminated), and
 *                        fa_code_flags[]: --code-flags split at blanks,
 *                        the nvcc flags variants are compiled with
 *                        (declared in kernels/embedded.h)
 * A file is rewritten only when its text changes, so make recompiles only
 * the shards whose instances moved.
 *
 * usage: geninst --out DIR --shards N [--arch-shards N] --archs "89 90"
 *                --hash-files "F..." --flags "NVCC FLAGS" [--embed "H..."]
 *                [--code-flags "NVCC FLAGS"]
 *                SPACE.json...
 *        geninst --check SPACE.json...
 *                reads and plans the spaces only, no file written: their
 *                problems and modes as one JSON line on stdout
 *                ({"problems": [...], "modes": [...]}, grid/problem_json.h,
 *                as `fasweep plan --json` says them), exit 0; or 2 with the
 *                refusal. scripts/run_default_sweep.sh asks before it builds
 *                a space's instances alone, and hands the plan to Triton's
 *                precompile and to the baselines while the build runs
 */
#include <cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/family.h"
#include "store/text.h"
#include "grid/plan.h"
#include "grid/problem_json.h"
#include "grid/space.h"

#define GEN_MAX 4096

typedef struct gen_args {
    const char *out, *archs, *hash_files, *flags, *embed, *code_flags;
    int shards, arch_shards, check;
    char **spaces;
    int n_spaces;
} gen_args;

static int cfg_cmp_qsort(const void *a, const void *b)
{
    return fa_config_cmp((const fa_config *)a, (const fa_config *)b);
}

static int hash_file(uint64_t *h, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "geninst: cannot read %s for the build id\n", path);
        return -1;
    }
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        *h = text_fnv1a(*h, buf, n);
    fclose(f);
    return 0;
}

/* Writes text to path unless the file already holds exactly that text. */
static int write_if_changed(const char *path, const char *text)
{
    const size_t len = strlen(text);
    FILE *f = fopen(path, "rb");
    if (f) {
        char *old = malloc(len + 2);
        size_t n = old ? fread(old, 1, len + 1, f) : 0;
        fclose(f);
        int same = old && n == len && memcmp(old, text, len) == 0;
        free(old);
        if (same)
            return 0;
    }
    f = fopen(path, "wb");
    if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "geninst: cannot write %s\n", path);
        return -1;
    }
    return 0;
}

/* A growable text buffer for the generated files. */
typedef struct gen_buf {
    char *s;
    size_t len, cap;
} gen_buf;

static void buf_printf(gen_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#include <stdarg.h>
static void buf_printf(gen_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = (b->cap ? b->cap * 2 : 4096) + (size_t)n;
        char *s = realloc(b->s, cap);
        if (!s) {
            fprintf(stderr, "geninst: out of memory\n");
            exit(1);
        }
        b->s = s;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* The C name of c's registry entry: its family's (kernels/family.h). */
static void ident(const fa_config *c, char *buf, size_t n)
{
    fa_config_symbol(c, buf, n);
}

/* An instance's name in instances.txt: the config text, qualified by the
 * family when it is not the default. */
static void inst_name(const fa_config *c, char *buf, size_t n)
{
    char text[64];
    fa_config_format(c, text, sizeof text);
    if (c->family == FA_FAMILY_DEFAULT)
        snprintf(buf, n, "%s", text);
    else
        snprintf(buf, n, "%s:%s", fa_family_of(c)->name, text);
}

/* The accepted points of the space at path appended to set; with probs,
 * its problems appended to that array and its modes to modes
 * (grid/problem_json.h). 0 or -1. */
static int collect(const char *path, fa_config *set, int *n, json_b *jb, cJSON *probs, cJSON *modes)
{
    char err[SPACE_ERR_LEN];
    space *s = malloc(sizeof *s);
    plan p;
    if (!s || space_load(path, s, err, sizeof err) != 0) {
        fprintf(stderr, "geninst: %s\n", s ? err : "out of memory");
        free(s);
        return -1;
    }
    if (plan_build(s, NULL, NULL, &p) != 0) {
        fprintf(stderr, "geninst: out of memory planning %s\n", path);
        free(s);
        return -1;
    }
    if (probs) {
        space_problems_json(jb, probs, s);
        space_modes_json(jb, modes, s);
    }
    for (size_t i = 0; i < p.n; i++) {
        if (p.points[i].reason != PLAN_OK)
            continue;
        if (*n >= GEN_MAX) {
            fprintf(stderr, "geninst: more than %d instances; split the spaces\n", GEN_MAX);
            plan_free(&p);
            free(s);
            return -1;
        }
        set[(*n)++] = p.points[i].cfg;
    }
    plan_free(&p);
    free(s);
    return 0;
}

static int dedupe(fa_config *set, int n)
{
    qsort(set, (size_t)n, sizeof *set, cfg_cmp_qsort);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (m == 0 || fa_config_cmp(&set[m - 1], &set[i]) != 0)
            set[m++] = set[i];
    return m;
}

/* The one architecture-specific target the build has shards for: a family
 * with fa_family.arch compiles there (scripts' Makefile: inst_sm90a_K.cu). */
#define GEN_ARCH 90
#define GEN_ARCH_NAME "sm_90a"

/* Whether --archs holds arch (as a word: "89 90" holds 90). */
static int archs_hold(const char *archs, int arch)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", archs);
    for (char *tok = strtok(buf, " ,"); tok; tok = strtok(NULL, " ,"))
        if (atoi(tok) == arch)
            return 1;
    return 0;
}

/* Drops the instances of architecture-specific families the build does not
 * target; fails on a family whose target has no shards. Returns the new n,
 * or -1. */
static int keep_buildable(const gen_args *a, fa_config *set, int n)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        const fa_family *f = fa_family_of(&set[i]);
        if (f->arch && (f->arch != GEN_ARCH || strcmp(f->arch_name, GEN_ARCH_NAME) != 0)) {
            fprintf(stderr,
                    "geninst: family %s needs %s; the build has arch-specific shards for %s "
                    "only (Makefile)\n",
                    f->name, f->arch_name, GEN_ARCH_NAME);
            return -1;
        }
        if (f->arch && (a->arch_shards < 1 || !archs_hold(a->archs, f->arch)))
            continue;
        set[m++] = set[i];
    }
    return m;
}

/* Whether c goes to the architecture-specific shards. */
static int arch_specific(const fa_config *c)
{
    return fa_family_of(c)->arch != 0;
}

/* The shard of each instance with arch_specific() == as (others -1) in shard[]: the
 * longest first (fa_family_build_cost), each to the shard with the least estimated work so
 * far, the lower index on a tie, so the units make -j runs end close together; round robin
 * had put the six slowest mma instances of spaces/h100.json into one of 16 units (10.4 s of
 * CPU against 5.2 s for the quickest, sweep/NOTES-engine.md, fourteenth session). The same
 * instances give the same shards. */
static int assign_shards(const fa_config *set, int n, int as, int shards, int *shard, double *lo,
                         double *hi)
{
    int *order = malloc(sizeof *order * (size_t)(n ? n : 1));
    double *cost = malloc(sizeof *cost * (size_t)(n ? n : 1));
    double *load = calloc((size_t)(shards > 0 ? shards : 1), sizeof *load);
    if (!order || !cost || !load) {
        free(order);
        free(cost);
        free(load);
        return -1;
    }
    int m = 0;
    for (int i = 0; i < n; i++) {
        shard[i] = -1;
        cost[i] = fa_family_build_cost(&set[i]);
        if (arch_specific(&set[i]) == as)
            order[m++] = i;
    }
    for (int i = 1; i < m; i++) /* by cost, descending; stable (insertion) */
        for (int j = i; j > 0 && cost[order[j]] > cost[order[j - 1]]; j--) {
            const int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (int i = 0; i < m && shards > 0; i++) {
        int best = 0;
        for (int k = 1; k < shards; k++)
            if (load[k] < load[best])
                best = k;
        shard[order[i]] = best;
        load[best] += cost[order[i]];
    }
    *lo = *hi = shards > 0 ? load[0] : 0;
    for (int k = 1; k < shards; k++) {
        *lo = load[k] < *lo ? load[k] : *lo;
        *hi = load[k] > *hi ? load[k] : *hi;
    }
    free(order);
    free(cost);
    free(load);
    return 0;
}

/* The members of shard k (assign_shards) as indices into set, in set's order. */
static int shard_members(const int *shard, int n, int k, int *idx)
{
    int m = 0;
    for (int i = 0; i < n; i++)
        if (shard[i] == k)
            idx[m++] = i;
    return m;
}

/* One shard: the template of every family it holds, then their lines. */
static int write_shard(const char *path, const fa_config *set, const int *idx, int m)
{
    gen_buf b = {0};
    char line[256];
    buf_printf(&b, "// generated by scripts/geninst.c from the spaces: do not edit\n");
    for (int f = 0; f < fa_family_count(); f++) {
        int used = 0;
        for (int i = 0; i < m && !used; i++)
            used = set[idx[i]].family == f;
        if (used)
            buf_printf(&b, "#include \"%s\"\n", fa_family_get(f)->header);
    }
    buf_printf(&b, "\n");
    for (int i = 0; i < m; i++) {
        fa_config_instance(&set[idx[i]], line, sizeof line);
        buf_printf(&b, "%s\n", line);
    }
    int rc = write_if_changed(path, b.s);
    free(b.s);
    return rc;
}

/* The shards of both kinds; lo[as], hi[as]: the least and most estimated work of a shard. */
static int write_shards(const gen_args *a, const fa_config *set, int n, double lo[2], double hi[2])
{
    int *idx = malloc(sizeof *idx * (size_t)(n ? n : 1));
    int *shard = malloc(sizeof *shard * (size_t)(n ? n : 1));
    int rc = idx && shard ? 0 : -1;
    for (int as = 0; as <= 1 && !rc; as++) {
        const int shards = as ? a->arch_shards : a->shards;
        rc = assign_shards(set, n, as, shards, shard, &lo[as], &hi[as]);
        for (int k = 0; k < shards && !rc; k++) {
            char path[1024];
            snprintf(path, sizeof path, "%s/inst_%s%d.cu", a->out, as ? "sm90a_" : "", k);
            rc = write_shard(path, set, idx, shard_members(shard, n, k, idx));
        }
    }
    free(idx);
    free(shard);
    return rc;
}

static int write_table(const gen_args *a, const fa_config *set, int n)
{
    gen_buf b = {0}, list = {0};
    char id[96], name[96], path[1024];
    buf_printf(&b, "// generated by scripts/geninst.c from the spaces: do not edit\n");
    for (int i = 0; i < n; i++) {
        ident(&set[i], id, sizeof id);
        buf_printf(&b, "extern \"C\" const fa_instance %s;\n", id);
        inst_name(&set[i], name, sizeof name);
        buf_printf(&list, "%s\n", name);
    }
    buf_printf(&b, "static const fa_instance *const fa_table[] = {\n");
    for (int i = 0; i < n; i++) {
        ident(&set[i], id, sizeof id);
        buf_printf(&b, "    &%s,\n", id);
    }
    buf_printf(&b, "    NULL};\n#define FA_TABLE_LEN %d\n", n);
    snprintf(path, sizeof path, "%s/registry_table.inc", a->out);
    int rc = write_if_changed(path, b.s);
    snprintf(path, sizeof path, "%s/instances.txt", a->out);
    if (!rc)
        rc = write_if_changed(path, list.s ? list.s : "");
    free(b.s);
    free(list.s);
    return rc;
}

static int write_build_id(const gen_args *a, const fa_config *set, int n)
{
    uint64_t h = TEXT_FNV_INIT;
    char files[4096];
    snprintf(files, sizeof files, "%s", a->hash_files);
    for (char *tok = strtok(files, " "); tok; tok = strtok(NULL, " "))
        if (hash_file(&h, tok))
            return -1;
    h = text_fnv1a(h, a->flags, strlen(a->flags));
    h = text_fnv1a(h, a->archs, strlen(a->archs));
    /* The six slots of each config as before families, so an mma-only
     * build keeps its id; a family other than mma adds its name. */
    for (int i = 0; i < n; i++) {
        int v[FA_CONFIG_SLOTS];
        fa_config_slots(&set[i], v);
        h = text_fnv1a(h, v, sizeof v);
        if (set[i].family != FA_FAMILY_DEFAULT)
            h = text_fnv1a(h, fa_family_of(&set[i])->name, strlen(fa_family_of(&set[i])->name));
    }
    char archs[256];
    snprintf(archs, sizeof archs, "%s", a->archs);
    for (char *p = archs; *p; p++)
        if (*p == ' ')
            *p = ',';
    gen_buf b = {0};
    buf_printf(&b,
               "// generated by scripts/geninst.c: do not edit\n"
               "#define FA_BUILD_ID \"%016llx\"\n#define FA_BUILD_ARCHS \"%s\"\n",
               (unsigned long long)h, archs);
    char path[1024];
    snprintf(path, sizeof path, "%s/build_id.h", a->out);
    int rc = write_if_changed(path, b.s);
    free(b.s);
    return rc;
}

/* Appends the contents of path as a C string literal, one source line per
 * line of it. */
static int buf_literal(gen_buf *b, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "geninst: cannot read %s to embed\n", path);
        return -1;
    }
    buf_printf(b, "    \"");
    int c;
    while ((c = fgetc(f)) != EOF) {
        if (c == '\n')
            buf_printf(b, "\\n\"\n    \"");
        else if (c == '\\' || c == '"')
            buf_printf(b, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            buf_printf(b, "\\%03o", c);
        else
            buf_printf(b, "%c", c);
    }
    buf_printf(b, "\",\n");
    fclose(f);
    return 0;
}

/* embedded.c: the --embed headers' names (without their folder) and texts. */
static int write_embedded(const gen_args *a)
{
    gen_buf names = {0}, texts = {0};
    char files[4096];
    snprintf(files, sizeof files, "%s", a->embed);
    buf_printf(&names, "// generated by scripts/geninst.c: do not edit\n#include <stddef.h>\n"
                       "#include \"kernels/embedded.h\"\n"
                       "const char *const fa_code_flags[] = {\n");
    char flags[4096];
    snprintf(flags, sizeof flags, "%s", a->code_flags);
    for (char *tok = strtok(flags, " \t"); tok; tok = strtok(NULL, " \t")) {
        buf_printf(&names, "    \"");
        for (const char *c = tok; *c; c++)
            buf_printf(&names, (*c == '"' || *c == '\\') ? "\\%c" : "%c", *c);
        buf_printf(&names, "\",\n");
    }
    buf_printf(&names, "    NULL};\n"
                       "const char *const fa_embedded_names[] = {\n");
    buf_printf(&texts, "const char *const fa_embedded_texts[] = {\n");
    int rc = 0;
    for (char *tok = strtok(files, " "); tok && !rc; tok = strtok(NULL, " ")) {
        const char *base = strrchr(tok, '/');
        buf_printf(&names, "    \"%s\",\n", base ? base + 1 : tok);
        rc = buf_literal(&texts, tok);
    }
    buf_printf(&names, "    NULL};\n");
    buf_printf(&texts, "    NULL};\n");
    char path[1024];
    snprintf(path, sizeof path, "%s/embedded.c", a->out);
    if (!rc) {
        buf_printf(&names, "%s", texts.s);
        rc = write_if_changed(path, names.s);
    }
    free(names.s);
    free(texts.s);
    return rc;
}

/* doc as one line on stdout, freed: 0, or 1 (out of memory, or stdout). */
static int gen_print_json(cJSON *doc)
{
    char *text = doc ? cJSON_PrintUnformatted(doc) : NULL;
    cJSON_Delete(doc);
    int rc = !text || printf("%s\n", text) < 0 || fflush(stdout) != 0;
    if (rc)
        fprintf(stderr, "geninst: --check: cannot write the problems (out of memory, or stdout)\n");
    cJSON_free(text);
    return rc;
}

static int parse_args(int argc, char **argv, gen_args *a)
{
    memset(a, 0, sizeof *a);
    a->archs = "90";
    a->hash_files = "";
    a->flags = "";
    a->embed = "";
    a->code_flags = "";
    a->shards = 1;
    a->arch_shards = 1;
    int i = 1;
    while (i + 1 < argc && !strcmp(argv[i], "--check")) { /* the one option without a value */
        a->check = 1;
        i++;
    }
    for (; i + 1 < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
        if (!strcmp(argv[i], "--out"))
            a->out = argv[i + 1];
        else if (!strcmp(argv[i], "--shards"))
            a->shards = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--arch-shards"))
            a->arch_shards = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--archs"))
            a->archs = argv[i + 1];
        else if (!strcmp(argv[i], "--hash-files"))
            a->hash_files = argv[i + 1];
        else if (!strcmp(argv[i], "--flags"))
            a->flags = argv[i + 1];
        else if (!strcmp(argv[i], "--embed"))
            a->embed = argv[i + 1];
        else if (!strcmp(argv[i], "--code-flags"))
            a->code_flags = argv[i + 1];
        else
            return -1;
    }
    a->spaces = argv + i;
    a->n_spaces = argc - i;
    return ((a->out || a->check) && a->shards >= 1 && a->shards <= 256 && a->arch_shards >= 0 &&
            a->arch_shards <= 256 && a->n_spaces > 0)
               ? 0
               : -1;
}

int main(int argc, char **argv)
{
    gen_args a;
    if (parse_args(argc, argv, &a) != 0) {
        fprintf(stderr, "usage: geninst --out DIR --shards N [--arch-shards N] [--archs \"89 90\"] "
                        "[--hash-files \"F...\"] [--flags \"...\"] [--embed \"H...\"] "
                        "[--code-flags \"...\"] "
                        "SPACE.json... | geninst --check SPACE.json...\n");
        return 2;
    }
    fa_config *set = malloc(sizeof *set * GEN_MAX);
    int n = 0;
    if (!set)
        return 1;
    json_b jb = JSON_B_INIT;
    cJSON *doc = a.check ? json_check(&jb, cJSON_CreateObject()) : NULL;
    cJSON *probs = doc ? json_arr(&jb, doc, "problems") : NULL;
    cJSON *modes = doc ? json_arr(&jb, doc, "modes") : NULL;
    for (int i = 0; i < a.n_spaces; i++)
        if (collect(a.spaces[i], set, &n, &jb, probs, modes) != 0) {
            cJSON_Delete(doc);
            free(set);
            return 2;
        }
    n = dedupe(set, n);
    if (a.check) { /* the spaces' problems, one JSON line on stdout */
        free(set);
        return gen_print_json(json_done(&jb, doc));
    }
    if ((n = keep_buildable(&a, set, n)) < 0) {
        free(set);
        return 2;
    }
    double lo[2], hi[2];
    int rc = write_shards(&a, set, n, lo, hi) || write_table(&a, set, n) ||
             write_build_id(&a, set, n) || write_embedded(&a);
    if (!rc) /* the estimates: fa_family_build_cost (1 an instance where a family has none) */
        fprintf(stderr,
                "geninst: %d instances from %d space(s) in %d shard(s) of estimated cost %.2f to "
                "%.2f, and %d for sm_90a of %.2f to %.2f\n",
                n, a.n_spaces, a.shards, lo[0], hi[0], a.arch_shards, lo[1], hi[1]);
    free(set);
    return rc ? 1 : 0;
}
