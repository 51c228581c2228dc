/* test_space.c - space file parsing: every rule, the error texts, defaults,
 * the real spaces in spaces/, and the problem text form.
 *
 * Run from the repository root: the files in spaces/ are read by relative path.
 * JSON in this file is written with single quotes for readability; q()
 * turns them into double quotes before parsing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grid/space.h"
#include "kernels/family.h"
#include "kernels/mma/mma.h"
#include "kernels/wgmma/traits.h"
#include "tests/unit/testutil.h"

/* ---- helpers --------------------------------------------------------------- */

/* The JSON text of src with ' replaced by " (caller frees). */
static char *q(const char *src)
{
    char *s = strdup(src);
    assert_non_null(s);
    for (char *p = s; *p; p++)
        if (*p == '\'')
            *p = '"';
    return s;
}

/* A space filled with a pattern, to prove failed parses leave it alone. */
static void poison(space *s)
{
    memset(s, 0x5a, sizeof *s);
}

static void assert_poisoned(const space *s)
{
    space ref;
    poison(&ref);
    assert_memory_equal(s, &ref, sizeof ref);
}

/* Parses raw bytes, expects failure with exactly `want` as the message and
 * *out untouched. */
static void expect_err_raw(const char *text, size_t len, const char *want)
{
    space s;
    char err[SPACE_ERR_LEN];
    poison(&s);
    memset(err, 'x', sizeof err);
    int rc = space_parse(text, len, "t.json", &s, err, sizeof err);
    if (rc != -1 || strcmp(err, want) != 0) {
        print_error("input: %.*s\nwant:  %s\ngot:   %s (rc %d)\n", (int)len, text, want,
                    rc == -1 ? err : "(success)", rc);
        fail();
    }
    assert_poisoned(&s);
}

static void expect_err(const char *json_sq, const char *want)
{
    char *t = q(json_sq);
    expect_err_raw(t, strlen(t), want);
    free(t);
}

static void parse_ok(const char *json_sq, space *s)
{
    char *t = q(json_sq);
    char err[SPACE_ERR_LEN] = "";
    int rc = space_parse(t, strlen(t), "t.json", s, err, sizeof err);
    if (rc != 0) {
        print_error("input: %s\nerror: %s\n", t, err);
        fail();
    }
    free(t);
}

/* Independent FNV-1a 64, checked against published vectors below. */
static void fnv_hex(const char *s, size_t n, char out[17])
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ULL;
    }
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* Pieces of a valid document; tests swap one piece for a bad one. */
#define T_OK "'target': {'arch': 'sm_89', 'smem_limit': 49152}"
#define PROB "{'batch': 4, 'heads': 8, 'seq_len': 512, 'head_dim': 64}"
#define P_OK "'problems': [" PROB "]"
#define AXES(m, n, w, s, z)                                                                        \
    "'axes': {'BLOCK_M': " m ", 'BLOCK_N': " n ", 'NUM_WARPS': " w ", 'STAGES': " s                \
    ", 'SWIZZLE': " z "}"
#define A_OK AXES("[64, 128]", "[64]", "[4]", "[1, 2]", "[0, 1]")
#define DOC(...) "{'name': 't', " __VA_ARGS__ "}"
#define GOOD DOC(T_OK ", " P_OK ", " A_OK)
#define WITH_T(t) DOC("'target': " t ", " P_OK ", " A_OK)
#define WITH_P(p) DOC(T_OK ", 'problems': " p ", " A_OK)
#define WITH_PROB(body) WITH_P("[{" body "}]")
#define WITH_A(a) DOC(T_OK ", " P_OK ", " a)
#define WITH_M(m) DOC(T_OK ", " P_OK ", " A_OK ", 'measure': " m)
#define WITH_TOL(t) DOC(T_OK ", " P_OK ", " A_OK ", 'tolerance': " t)

typedef struct bad_case {
    const char *json; /* single-quoted */
    const char *want; /* exact message */
} bad_case;

static void run_cases(const bad_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        expect_err(c[i].json, c[i].want);
}

#define RUN(cases) run_cases(cases, sizeof cases / sizeof cases[0])

/* ---- the text level --------------------------------------------------------------- */

static void test_text_level(void **state)
{
    (void)state;
    expect_err_raw("", 0, "t.json: the file is empty, expected a JSON object (see docs/spaces.md)");
    expect_err_raw(" \n\t\r\n", 5,
                   "t.json: the file is empty, expected a JSON object (see docs/spaces.md)");
    expect_err("[1] ", "t.json: expected a JSON object at the top level (see docs/spaces.md), "
                       "got an array");
    expect_err("42", "t.json: expected a JSON object at the top level (see docs/spaces.md), "
                     "got 42");
    expect_err("'x'", "t.json: expected a JSON object at the top level (see docs/spaces.md), "
                      "got \"x\"");
    expect_err("[1] [2]", "t.json:1:5: unexpected text '[2]' after the JSON value; a space file "
                          "holds one object");
    expect_err("{}\n {}", "t.json:2:2: unexpected text '{}' after the JSON value; a space file "
                          "holds one object");
    expect_err(GOOD " x", "t.json:1:241: unexpected text 'x' after the JSON value; a space file "
                          "holds one object");
    /* A NUL byte inside otherwise valid JSON, and one at the end. */
    expect_err_raw(
        "{\"name\"\0: 1}", 12,
        "t.json:1:8: NUL byte in the file; a space file is UTF-8 JSON text (wrong file?)");
    char *good = q(GOOD);
    size_t n = strlen(good);
    good[n - 1] = '\0';
    expect_err_raw(good, n,
                   "t.json:1:239: NUL byte in the file; a space file is UTF-8 JSON text "
                   "(wrong file?)");
    free(good);
}

static void test_syntax_errors(void **state)
{
    (void)state;
    /* Missing comma on line 3: the column is that of the unexpected key. */
    expect_err("{\n  'name': 't',\n  'target': {'arch': 'sm_89' 'smem_limit': 1}\n}",
               "t.json:3:30: JSON syntax error near '\"smem_limit\": 1}...'");
    expect_err("{'a': 1,}", "t.json:1:9: JSON syntax error near '}'");
    expect_err("{\n\t'a': tru }", "t.json:2:7: JSON syntax error near 'tru }'");
    /* Text that stops: the position is the end of the file. */
    expect_err("{'a': ", "t.json:1:7: JSON syntax error near end of file (an unclosed string, "
                         "array or object?)");
    expect_err("{'name': 't'\n\n",
               "t.json:3:1: JSON syntax error near end of file (an unclosed string, array or "
               "object?)");
    /* Control bytes, which cJSON alone would take for whitespace. */
    expect_err_raw("{\"a\":\n \x01\x02}", 10,
                   "t.json:2:2: control character 0x01 in the file; JSON allows only tab, newline "
                   "and carriage return (inside a string write \\u0001)");
    expect_err_raw("{\"name\": \"a\x1b[31m\"}", 17,
                   "t.json:1:12: control character 0x1b in the file; JSON allows only tab, "
                   "newline and carriage return (inside a string write \\u001b)");
}

/* ---- each level of the document ---------------------------------------------------------- */

static void test_top_level(void **state)
{
    (void)state;
    static const bad_case cases[] = {
        /* families: since the wgmma family (a space sweeps several). */
        {"{'nmae': 't'}",
         "t.json: nmae: unknown key, expected one of name, description, family, "
         "target, problems, axes, families, measure, tolerance (check the spelling)"},
        {DOC(T_OK ", " P_OK ", " A_OK ", 'name': 'u'"),
         "t.json: name: duplicate key, each key may appear once"},
        {"{" T_OK ", " P_OK ", " A_OK "}",
         "t.json: name: missing required key, expected a name of 1 to 63 printable characters"},
        {"{'name': ''}", "t.json: name: expected a name of 1 to 63 printable characters, got \"\""},
        {"{'name': 7}", "t.json: name: expected a name of 1 to 63 printable characters, got 7"},
        {"{'name': 'a\\u0001b'}",
         "t.json: name: expected a name of 1 to 63 printable characters, got \"a\\x01b\""},
        {"{'name': '0123456789012345678901234567890123456789012345678901234567890123'}",
         "t.json: name: expected a name of 1 to 63 printable characters, got "
         "\"01234567890123456789012345678901...\""},
        {"{'name': 't', 'description': ['x']}",
         "t.json: description: expected a string, got an array"},
        {"{'name': 't'}",
         "t.json: target: missing required key, expected an object with keys gpu, arch, "
         "smem_limit"},
        {DOC(T_OK ", " A_OK), "t.json: problems: missing required key, expected a non-empty "
                              "array of at most 16 problem objects"},
        {DOC(T_OK ", " P_OK), "t.json: axes: missing required key, expected an object with keys "
                              "BLOCK_M, BLOCK_N, NUM_WARPS, STAGES, SWIZZLE"},
        /* Keys are case-sensitive. */
        {"{'Name': 't'}", "t.json: Name: unknown key, expected one of name, description, family, "
                          "target, problems, axes, families, measure, tolerance (check the "
                          "spelling)"},
        /* An unprintable key is escaped in the path. */
        {"{'k\\u0007': 1}",
         "t.json: k\\x07: unknown key, expected one of name, description, "
         "family, target, problems, axes, families, measure, tolerance (check the "
         "spelling)"},
    };
    RUN(cases);
    /* A 63-character name is the longest allowed. */
    space s;
    parse_ok(DOC(T_OK ", " P_OK ", " A_OK ", 'description': 'd'") "", &s);
    parse_ok("{'name': '012345678901234567890123456789012345678901234567890123456789012', " T_OK
             ", " P_OK ", " A_OK "}",
             &s);
    assert_int_equal(strlen(s.name), 63);
}

/* The kernel family: the default (mma) when the file names none, the
 * family named, and an unknown or malformed one refused with the known
 * families in the message. */
#define WG_AXES(m, n, c, s, p)                                                                     \
    "'axes': {'BLOCK_M': " m ", 'BLOCK_N': " n ", 'CONSUMER_WG': " c ", 'STAGES': " s              \
    ", 'PIPELINE': " p "}"
#define WG_OK WG_AXES("[128, 192]", "[128]", "[2, 3]", "[2]", "[2, 3]")
#define WITH_FAM(f) DOC(T_OK ", " P_OK ", " A_OK ", 'families': " f)

static void test_family(void **state)
{
    (void)state;
    space s;
    parse_ok(DOC(T_OK ", " P_OK ", " A_OK), &s);
    assert_int_equal(s.family, FA_FAMILY_DEFAULT);
    assert_string_equal(fa_family_get(s.family)->name, "mma");
    assert_int_equal(s.n_extra, 0);
    parse_ok(DOC(T_OK ", " P_OK ", " A_OK ", 'family': 'mma'"), &s);
    assert_int_equal(s.family, fa_family_index("mma"));
    /* A space of the wgmma family alone: its axes at the top level. */
    parse_ok(DOC(T_OK ", " P_OK ", " WG_OK ", 'family': 'wgmma'"), &s);
    assert_int_equal(s.family, FA_FAMILY_WGMMA);
    assert_int_equal(s.axis_len[MMA_BLOCK_M], 2);
    assert_int_equal(s.axis[MMA_SWIZZLE][1], 3);
    static const bad_case cases[] = {
        {DOC(T_OK ", " P_OK ", " A_OK ", 'family': 'tc'"),
         "t.json: family: unknown kernel family \"tc\", expected one of mma, wgmma "
         "(docs/families.md)"},
        {DOC(T_OK ", " P_OK ", " A_OK ", 'family': 'MMA'"),
         "t.json: family: unknown kernel family \"MMA\", expected one of mma, wgmma "
         "(docs/families.md)"},
        {DOC(T_OK ", " P_OK ", " A_OK ", 'family': ''"),
         "t.json: family: expected a kernel family name, one of mma, wgmma, got \"\""},
        {DOC(T_OK ", " P_OK ", " A_OK ", 'family': 3"),
         "t.json: family: expected a kernel family name, one of mma, wgmma, got 3"},
        {DOC(T_OK ", " P_OK ", " A_OK ", 'family': 'mma', 'family': 'mma'"),
         "t.json: family: duplicate key, each key may appear once"},
        /* The wgmma family's axes are its own. */
        {DOC(T_OK ", " P_OK ", " A_OK ", 'family': 'wgmma'"),
         "t.json: axes.NUM_WARPS: unknown key, expected one of BLOCK_M, BLOCK_N, CONSUMER_WG, "
         "STAGES, PIPELINE (check the spelling)"},
    };
    RUN(cases);
}

/* "families": the grids of the other families, each with its own axes. */
static void test_families(void **state)
{
    (void)state;
    space s;
    parse_ok(WITH_FAM("{'wgmma': {" WG_OK "}}"), &s);
    assert_int_equal(s.family, FA_FAMILY_MMA);
    assert_int_equal(s.axis_len[MMA_NUM_WARPS], 1); /* the mma grid, unchanged */
    assert_int_equal(s.n_extra, 1);
    assert_int_equal(s.extra[0].family, FA_FAMILY_WGMMA);
    const int len[SPACE_AXIS_COUNT] = {2, 1, 2, 1, 2};
    assert_memory_equal(s.extra[0].axis_len, len, sizeof len);
    assert_int_equal(s.extra[0].axis[WG_BLOCK_M][1], 192);
    assert_int_equal(s.extra[0].axis[WG_CONSUMER_WG][1], 3);
    space_grid g;
    space_grid_main(&s, &g);
    assert_int_equal(g.family, FA_FAMILY_MMA);
    assert_memory_equal(g.axis_len, s.axis_len, sizeof g.axis_len);
    /* A wgmma space can sweep mma too. */
    parse_ok(DOC(T_OK ", " P_OK ", " WG_OK ", 'family': 'wgmma', 'families': {'mma': {" A_OK "}}"),
             &s);
    assert_int_equal(s.family, FA_FAMILY_WGMMA);
    assert_int_equal(s.extra[0].family, FA_FAMILY_MMA);
    static const bad_case cases[] = {
        {WITH_FAM("[]"), "t.json: families: expected an object of kernel families (mma, wgmma), "
                         "each {\"axes\": {...}}, got an empty array"},
        {WITH_FAM("{}"), "t.json: families: expected an object of kernel families (mma, wgmma), "
                         "each {\"axes\": {...}}, got an object"},
        {WITH_FAM("{'tc': {" WG_OK "}}"),
         "t.json: families.tc: unknown kernel family \"tc\", expected one of mma, wgmma "
         "(docs/families.md)"},
        /* An unknown key with a line break (found by fuzz_space): the
         * message stays one line, the key's bytes escaped. */
        {WITH_FAM("{'wg\\nmma': {" WG_OK "}}"),
         "t.json: families.wg\\x0amma: unknown kernel family \"wg\\x0amma\", expected one of "
         "mma, wgmma (docs/families.md)"},
        {WITH_FAM("{'mma': {" A_OK "}}"),
         "t.json: families.mma: mma is the space's own family (\"family\", default mma): give "
         "its axes in the top-level \"axes\" and remove this entry"},
        {WITH_FAM("{'wgmma': {" WG_OK "}, 'wgmma': {" WG_OK "}}"),
         "t.json: families.wgmma: duplicate key, each key may appear once"},
        {WITH_FAM("{'wgmma': 3}"), "t.json: families.wgmma: expected an object with the key "
                                   "axes, got 3"},
        {WITH_FAM("{'wgmma': {}}"), "t.json: families.wgmma.axes: missing required key, expected "
                                    "an object with keys BLOCK_M, BLOCK_N, CONSUMER_WG, STAGES, "
                                    "PIPELINE"},
        {WITH_FAM("{'wgmma': {" WG_OK ", 'x': 1}}"),
         "t.json: families.wgmma.x: unknown key, expected one of axes (check the spelling)"},
        {WITH_FAM("{'wgmma': {" A_OK "}}"),
         "t.json: families.wgmma.axes.NUM_WARPS: unknown key, expected one of BLOCK_M, BLOCK_N, "
         "CONSUMER_WG, STAGES, PIPELINE (check the spelling)"},
        {WITH_FAM("{'wgmma': {" WG_AXES("[128]", "[128]", "[4]", "[2]", "[2]") "}}"),
         "t.json: families.wgmma.axes.CONSUMER_WG[0]: expected 1, 2 or 3 consumer warpgroups, "
         "got 4"},
        {WITH_FAM("{'wgmma': {" WG_AXES("[100]", "[128]", "[2]", "[2]", "[2]") "}}"),
         "t.json: families.wgmma.axes.BLOCK_M[0]: expected 64, 128 or 192 (64 x CONSUMER_WG), "
         "got 100"},
        {WITH_FAM("{'wgmma': {" WG_AXES("[128]", "[128]", "[2]", "[1]", "[2]") "}}"),
         "t.json: families.wgmma.axes.STAGES[0]: expected an integer from 2 to 8, got 1"},
        {WITH_FAM("{'wgmma': {" WG_AXES("[128]", "[128]", "[2]", "[2]", "[2, 2]") "}}"),
         "t.json: families.wgmma.axes.PIPELINE[1]: expected distinct values, got 2 again (also "
         "at [0])"},
    };
    RUN(cases);
}

static void test_target(void **state)
{
    (void)state;
    static const bad_case cases[] = {
        {WITH_T("[]"),
         "t.json: target: expected an object with keys gpu, arch, smem_limit, got an empty array"},
        {WITH_T("{'arch': 'sm_89', 'smem_limit': 49152, 'cc': 1}"),
         "t.json: target.cc: unknown key, expected one of gpu, arch, smem_limit (check the "
         "spelling)"},
        {WITH_T("{'arch': 'sm_89', 'arch': 'sm_89', 'smem_limit': 49152}"),
         "t.json: target.arch: duplicate key, each key may appear once"},
        {WITH_T("{'smem_limit': 49152}"), "t.json: target.arch: missing required key, expected "
                                          "one of \"sm_80\", \"sm_86\", \"sm_89\", \"sm_90\""},
        {WITH_T("{'arch': 'sm_75', 'smem_limit': 49152}"),
         "t.json: target.arch: expected one of \"sm_80\", \"sm_86\", \"sm_89\", \"sm_90\", got "
         "\"sm_75\""},
        {WITH_T("{'arch': 89, 'smem_limit': 49152}"),
         "t.json: target.arch: expected one of \"sm_80\", \"sm_86\", \"sm_89\", \"sm_90\", got 89"},
        {WITH_T("{'arch': 'sm_89'}"), "t.json: target.smem_limit: missing required key, "
                                      "expected an integer number of bytes from 1 to 262144"},
        {WITH_T("{'arch': 'sm_89', 'smem_limit': 0}"),
         "t.json: target.smem_limit: expected an integer number of bytes from 1 to 262144, got 0"},
        {WITH_T("{'arch': 'sm_89', 'smem_limit': 262145}"),
         "t.json: target.smem_limit: expected an integer number of bytes from 1 to 262144, got "
         "262145"},
        {WITH_T("{'arch': 'sm_89', 'smem_limit': 2.5}"),
         "t.json: target.smem_limit: expected an integer number of bytes from 1 to 262144, got "
         "2.5"},
        {WITH_T("{'arch': 'sm_89', 'smem_limit': 1e400}"),
         "t.json: target.smem_limit: expected an integer number of bytes from 1 to 262144, got a "
         "number too large to represent"},
        {WITH_T("{'arch': 'sm_89', 'smem_limit': '49152'}"),
         "t.json: target.smem_limit: expected an integer number of bytes from 1 to 262144, got "
         "\"49152\""},
        {WITH_T("{'arch': 'sm_89', 'smem_limit': null}"),
         "t.json: target.smem_limit: expected an integer number of bytes from 1 to 262144, got "
         "null"},
        {WITH_T("{'gpu': true, 'arch': 'sm_89', 'smem_limit': 1}"),
         "t.json: target.gpu: expected a GPU name of at most 63 characters, got true"},
        {WITH_T("{'gpu': "
                "'0123456789012345678901234567890123456789012345678901234567890123', 'arch': "
                "'sm_89', 'smem_limit': 1}"),
         "t.json: target.gpu: expected a GPU name of at most 63 characters, got "
         "\"01234567890123456789012345678901...\""},
    };
    RUN(cases);

    static const struct {
        const char *arch;
        int want;
    } archs[] = {{"sm_80", 80}, {"sm_86", 86}, {"sm_89", 89}, {"sm_90", 90}};
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++) {
        char doc[1024];
        snprintf(doc, sizeof doc,
                 DOC("'target': {'gpu': 'G', 'arch': '%s', 'smem_limit': 262144}, " P_OK ", " A_OK),
                 archs[i].arch);
        space s;
        parse_ok(doc, &s);
        assert_int_equal(s.arch, archs[i].want);
        assert_int_equal(s.smem_limit, 262144);
        assert_string_equal(s.gpu, "G");
    }
}

static void test_problems(void **state)
{
    (void)state;
    static const bad_case cases[] = {
        {WITH_P("[]"), "t.json: problems: expected a non-empty array of at most 16 problem "
                       "objects, got an empty array"},
        {WITH_P("{}"), "t.json: problems: expected a non-empty array of at most 16 problem "
                       "objects, got an object"},
        {WITH_P("[" PROB ", 3]"), "t.json: problems[1]: expected an object with keys batch, "
                                  "heads, kv_heads, seq_len, head_dim, causal, dtype, got 3"},
        {WITH_PROB("'heads': 8, 'seq_len': 512, 'head_dim': 64"),
         "t.json: problems[0].batch: missing required key, expected an integer >= 1"},
        {WITH_PROB("'batch': 0, 'heads': 8, 'seq_len': 512, 'head_dim': 64"),
         "t.json: problems[0].batch: expected an integer >= 1, got 0"},
        {WITH_PROB("'batch': 4, 'heads': -8, 'seq_len': 512, 'head_dim': 64"),
         "t.json: problems[0].heads: expected an integer >= 1, got -8"},
        {WITH_PROB("'batch': 4, 'heads': 8, 'seq_len': 5.5, 'head_dim': 64"),
         "t.json: problems[0].seq_len: expected an integer >= 1, got 5.5"},
        {WITH_PROB("'batch': 4, 'heads': 8, 'seq_len': 3000000000, 'head_dim': 64"),
         "t.json: problems[0].seq_len: expected an integer >= 1, got 3000000000"},
        {WITH_PROB("'batch': 4, 'heads': 8, 'seq_len': 512"),
         "t.json: problems[0].head_dim: missing required key, expected an integer >= 1"},
        {WITH_PROB("'batch': 4, 'heads': 8, 'seq_len': 512, 'head_dim': 96"),
         "t.json: problems[0].head_dim: unsupported head_dim 96: expected 64, 128 or 256"},
        {WITH_PROB("'batch': 4, 'heads': 8, 'seq_len': 512, 'head_dim': 512"),
         "t.json: problems[0].head_dim: unsupported head_dim 512: expected 64, 128 or 256"},
        {WITH_PROB("'batch': 4, 'heads': 8, 'seq_len': 512, 'head_dim': 64, 'causal': 1"),
         "t.json: problems[0].causal: expected true or false, got 1"},
        {WITH_PROB("'batch': 4, 'heads': 8, 'seq_len': 512, 'head_dim': 64, 'dtype': 'fp32'"),
         "t.json: problems[0].dtype: expected \"fp16\" or \"bf16\", got \"fp32\""},
        {WITH_PROB("'batch': 4, 'heads': 8, 'seq_len': 512, 'head_dim': 64, 'dtype': 'BF16'"),
         "t.json: problems[0].dtype: expected \"fp16\" or \"bf16\", got \"BF16\""},
        {WITH_PROB("'batch': 4, 'heads': 8, 'seq_len': 512, 'head_dim': 64, 'dtype': 1"),
         "t.json: problems[0].dtype: expected \"fp16\" or \"bf16\", got 1"},
        {WITH_PROB("'batch': 4, 'heads': 8, 'kv_heads': 3, 'seq_len': 512, 'head_dim': 64"),
         "t.json: problems[0].kv_heads: expected an integer from 1 to heads (8) that divides it "
         "(each K/V head serves heads / kv_heads query heads), got 3"},
        {WITH_PROB("'batch': 4, 'heads': 8, 'kv_heads': 16, 'seq_len': 512, 'head_dim': 64"),
         "t.json: problems[0].kv_heads: expected an integer from 1 to heads (8) that divides it "
         "(each K/V head serves heads / kv_heads query heads), got 16"},
        {WITH_PROB("'batch': 4, 'heads': 8, 'kv_heads': 0, 'seq_len': 512, 'head_dim': 64"),
         "t.json: problems[0].kv_heads: expected an integer from 1 to heads (8) that divides it "
         "(each K/V head serves heads / kv_heads query heads), got 0"},
        {WITH_PROB("'batch': 4, 'heads': 8, 'kv_heads': 2.5, 'seq_len': 512, 'head_dim': 64"),
         "t.json: problems[0].kv_heads: expected an integer from 1 to heads (8) that divides it "
         "(each K/V head serves heads / kv_heads query heads), got 2.5"},
        {WITH_PROB("'batch': 4, 'heads': 8, 'kv_heads': '2', 'seq_len': 512, 'head_dim': 64"),
         "t.json: problems[0].kv_heads: expected an integer from 1 to heads (8) that divides it "
         "(each K/V head serves heads / kv_heads query heads), got \"2\""},
        {WITH_PROB("'batch': 4, 'heads': 8, 'kv_heads': 2, 'kv_heads': 2, 'seq_len': 512, "
                   "'head_dim': 64"),
         "t.json: problems[0].kv_heads: duplicate key, each key may appear once"},
        {WITH_PROB("'batch': 4, 'heads': 8, 'seq_len': 512, 'head_dim': 64, 'mask': 1"),
         "t.json: problems[0].mask: unknown key, expected one of batch, heads, kv_heads, seq_len, "
         "head_dim, causal, dtype (check the spelling)"},
        {WITH_PROB("'batch': 4, 'batch': 4, 'heads': 8, 'seq_len': 512, 'head_dim': 64"),
         "t.json: problems[0].batch: duplicate key, each key may appear once"},
        /* Defaults count: an explicit causal false equals the default. */
        {WITH_P("[" PROB ", {'batch': 4, 'heads': 8, 'seq_len': 512, 'head_dim': 64, 'causal': "
                "false, 'dtype': 'fp16'}]"),
         "t.json: problems[1]: duplicate problem b4.h8.s512.d64.nc (same as problems[0]), remove "
         "one"},
        /* kv_heads equal to the heads is the default: the same problem. */
        {WITH_P("[" PROB ", {'batch': 4, 'heads': 8, 'kv_heads': 8, 'seq_len': 512, "
                "'head_dim': 64}]"),
         "t.json: problems[1]: duplicate problem b4.h8.s512.d64.nc (same as problems[0]), remove "
         "one"},
        {WITH_P("[{'batch': 1, 'heads': 32, 'kv_heads': 8, 'seq_len': 4096, 'head_dim': 128, "
                "'causal': true, 'dtype': 'bf16'}, {'dtype': 'bf16', 'causal': true, 'head_dim': "
                "128, 'seq_len': 4096, 'kv_heads': 8, 'heads': 32, 'batch': 1}]"),
         "t.json: problems[1]: duplicate problem b1.h32.kv8.s4096.d128.c.bf16 (same as "
         "problems[0]), remove one"},
        {WITH_P("[" PROB "," PROB "," PROB "," PROB "," PROB "," PROB "," PROB "," PROB "," PROB
                "," PROB "," PROB "," PROB "," PROB "," PROB "," PROB "," PROB "," PROB "]"),
         "t.json: problems: expected at most 16 problems, got 17 (split the space)"},
    };
    RUN(cases);

    /* Same shape, causal and not: two problems. Defaults filled in. */
    space s;
    parse_ok(WITH_P("[" PROB ", {'batch': 4, 'heads': 8, 'seq_len': 512, 'head_dim': 128}, "
                    "{'batch': 4, 'heads': 8, 'seq_len': 512, 'head_dim': 64, 'causal': true}]"),
             &s);
    assert_int_equal(s.n_problems, 3);
    assert_int_equal(s.problems[0].causal, 0);
    assert_int_equal(s.problems[1].head_dim, 128);
    assert_int_equal(s.problems[2].causal, 1);
    assert_int_equal(s.problems[2].seq_len, 512);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(s.problems[i].kv_heads, 8); /* left out: the heads */
        assert_int_equal(s.problems[i].dtype, FA_DTYPE_FP16);
    }

    /* Problems that differ only in dtype or kv_heads are different problems; head_dim 256 is
     * the space's to hold (a family that cannot run it rejects its points in the plan). */
    parse_ok(WITH_P("[" PROB ", {'batch': 4, 'heads': 8, 'seq_len': 512, 'head_dim': 64, "
                    "'dtype': 'bf16'}, {'batch': 4, 'heads': 8, 'kv_heads': 2, 'seq_len': 512, "
                    "'head_dim': 64}, {'batch': 4, 'heads': 8, 'kv_heads': 1, 'seq_len': 512, "
                    "'head_dim': 64, 'dtype': 'bf16'}, {'batch': 2, 'heads': 16, 'kv_heads': 8, "
                    "'seq_len': 4096, 'head_dim': 256, 'causal': true, 'dtype': 'fp16'}]"),
             &s);
    assert_int_equal(s.n_problems, 5);
    static const char *const text[] = {"b4.h8.s512.d64.nc", "b4.h8.s512.d64.nc.bf16",
                                       "b4.h8.kv2.s512.d64.nc", "b4.h8.kv1.s512.d64.nc.bf16",
                                       "b2.h16.kv8.s4096.d256.c"};
    for (int i = 0; i < 5; i++) {
        char buf[64];
        space_problem_format(&s.problems[i], buf, sizeof buf);
        assert_string_equal(buf, text[i]);
    }
    assert_int_equal(s.problems[1].dtype, FA_DTYPE_BF16);
    assert_int_equal(s.problems[1].kv_heads, 8);
    assert_int_equal(s.problems[3].kv_heads, 1);
    assert_int_equal(s.problems[4].head_dim, 256);
}

/* A BLOCK_M axis whose first value is not a positive multiple of 16 (got:
 * how the error names the value). */
#define BAD_BLOCK_M0(axis, got)                                                                    \
    {                                                                                              \
        WITH_A(AXES(axis, "[64]", "[4]", "[1]", "[0]")),                                           \
            "t.json: axes.BLOCK_M[0]: expected a positive integer multiple of 16, got " got        \
    }

static void test_axes(void **state)
{
    (void)state;
    static const bad_case cases[] = {
        {WITH_A("'axes': []"), "t.json: axes: expected an object with keys BLOCK_M, BLOCK_N, "
                               "NUM_WARPS, STAGES, SWIZZLE, got an empty array"},
        {WITH_A("'axes': {'BLOCK_M': [64], 'BLOCK_N': [64], 'NUM_WARPS': [4], 'STAGES': [1]}"),
         "t.json: axes.SWIZZLE: missing required key, expected a non-empty array of at most 16 "
         "distinct values, each 0 or 1"},
        {WITH_A("'axes': {'BLOCK_M': [64], 'BLOCK_K': [64]}"),
         "t.json: axes.BLOCK_K: unknown key, expected one of BLOCK_M, BLOCK_N, NUM_WARPS, STAGES, "
         "SWIZZLE (check the spelling)"},
        {WITH_A("'axes': {'BLOCK_M': [64], 'BLOCK_M': [128]}"),
         "t.json: axes.BLOCK_M: duplicate key, each key may appear once"},
        {WITH_A(AXES("[]", "[64]", "[4]", "[1]", "[0]")),
         "t.json: axes.BLOCK_M: expected a non-empty array of at most 16 distinct values, each a "
         "positive integer multiple of 16, got an empty array"},
        {WITH_A(AXES("64", "[64]", "[4]", "[1]", "[0]")),
         "t.json: axes.BLOCK_M: expected a non-empty array of at most 16 distinct values, each a "
         "positive integer multiple of 16, got 64"},
        {WITH_A(AXES("[64, 128, 40]", "[64]", "[4]", "[1]", "[0]")),
         "t.json: axes.BLOCK_M[2]: expected a positive integer multiple of 16, got 40"},
        BAD_BLOCK_M0("[0]", "0"),
        BAD_BLOCK_M0("[-16]", "-16"),
        {WITH_A(AXES("[528]", "[64]", "[4]", "[1]", "[0]")),
         "t.json: axes.BLOCK_M[0]: expected a multiple of 16 of at most 512, got 528"},
        BAD_BLOCK_M0("[64.5]", "64.5"),
        BAD_BLOCK_M0("['64']", "\"64\""),
        BAD_BLOCK_M0("[1e400]", "a number too large to represent"),
        BAD_BLOCK_M0("[4294967312]", "4294967312"),
        {WITH_A(AXES("[64, 128, 64]", "[64]", "[4]", "[1]", "[0]")),
         "t.json: axes.BLOCK_M[2]: expected distinct values, got 64 again (also at [0])"},
        {WITH_A(AXES("[64]", "[8]", "[4]", "[1]", "[0]")),
         "t.json: axes.BLOCK_N[0]: expected a positive integer multiple of 16, got 8"},
        {WITH_A(AXES("[64]", "[1024]", "[4]", "[1]", "[0]")),
         "t.json: axes.BLOCK_N[0]: expected a multiple of 16 of at most 512, got 1024"},
        {WITH_A(AXES("[64]", "[64]", "[3]", "[1]", "[0]")),
         "t.json: axes.NUM_WARPS[0]: expected a warp count of 1, 2, 4, 8 or 16, got 3"},
        {WITH_A(AXES("[64]", "[64]", "[32]", "[1]", "[0]")),
         "t.json: axes.NUM_WARPS[0]: expected a warp count of 1, 2, 4, 8 or 16, got 32"},
        {WITH_A(AXES("[64]", "[64]", "[0]", "[1]", "[0]")),
         "t.json: axes.NUM_WARPS[0]: expected a warp count of 1, 2, 4, 8 or 16, got 0"},
        {WITH_A(AXES("[64]", "[64]", "[4]", "[0]", "[0]")),
         "t.json: axes.STAGES[0]: expected an integer from 1 to 8, got 0"},
        {WITH_A(AXES("[64]", "[64]", "[4]", "[1, 9]", "[0]")),
         "t.json: axes.STAGES[1]: expected an integer from 1 to 8, got 9"},
        {WITH_A(AXES("[64]", "[64]", "[4]", "[1]", "[2]")),
         "t.json: axes.SWIZZLE[0]: expected 0 or 1, got 2"},
        {WITH_A(AXES("[64]", "[64]", "[4]", "[1]", "[-1]")),
         "t.json: axes.SWIZZLE[0]: expected 0 or 1, got -1"},
        {WITH_A(AXES("[64]", "[64]", "[4]", "[1]", "[true]")),
         "t.json: axes.SWIZZLE[0]: expected 0 or 1, got true"},
        {WITH_A(AXES("[64]", "[64]", "[4]", "[1]", "[0, 1, 0]")),
         "t.json: axes.SWIZZLE[2]: expected distinct values, got 0 again (also at [0])"},
        {WITH_A(AXES("[16,32,48,64,80,96,112,128,144,160,176,192,208,224,240,256,272]", "[64]",
                     "[4]", "[1]", "[0]")),
         "t.json: axes.BLOCK_M: expected at most 16 values, got more"},
    };
    RUN(cases);

    /* Order as written is kept; 16 values and the bounds 16, 512 pass. */
    space s;
    parse_ok(WITH_A(AXES("[512,16,32,48,64,80,96,112,128,144,160,176,192,208,224,240]", "[128, 16]",
                         "[16, 1, 2, 8, 4]", "[8, 1]", "[1, 0]")),
             &s);
    assert_int_equal(s.axis_len[MMA_BLOCK_M], 16);
    assert_int_equal(s.axis[MMA_BLOCK_M][0], 512);
    assert_int_equal(s.axis[MMA_BLOCK_M][15], 240);
    assert_int_equal(s.axis_len[MMA_BLOCK_N], 2);
    assert_int_equal(s.axis[MMA_BLOCK_N][1], 16);
    assert_int_equal(s.axis_len[MMA_NUM_WARPS], 5);
    assert_int_equal(s.axis[MMA_NUM_WARPS][0], 16);
    assert_int_equal(s.axis[MMA_STAGES][0], 8);
    assert_int_equal(s.axis[MMA_SWIZZLE][0], 1);
    assert_int_equal(s.axis[MMA_SWIZZLE][1], 0);
    /* Integral doubles are integers. */
    parse_ok(WITH_A(AXES("[64.0, 1.28e2]", "[64]", "[4]", "[1]", "[0]")), &s);
    assert_int_equal(s.axis[MMA_BLOCK_M][1], 128);
}

/* A parsed space's name, target (GPU, arch, shared-memory limit) and
 * number of problems. */
static void expect_target(const space *s, const char *name, const char *gpu, int arch,
                          long smem_limit, int n_problems)
{
    assert_string_equal(s->name, name);
    assert_string_equal(s->gpu, gpu);
    assert_int_equal(s->arch, arch);
    assert_int_equal(s->smem_limit, smem_limit);
    assert_int_equal(s->n_problems, n_problems);
}

/* The stop rule's settings of a parsed measure object, its number of
 * modes and the first mode. */
static void expect_measure(const space_measure *m, int warmup, int min_samples, int max_samples,
                           double noise, double max_seconds, double timeout_s, int n_modes,
                           const char *mode0)
{
    assert_int_equal(m->warmup_runs, warmup);
    assert_int_equal(m->min_samples, min_samples);
    assert_int_equal(m->max_samples, max_samples);
    assert_float_equal(m->noise, noise, 0);
    assert_float_equal(m->max_seconds, max_seconds, 0);
    assert_float_equal(m->timeout_s, timeout_s, 0);
    assert_int_equal(m->n_modes, n_modes);
    assert_string_equal(m->modes[0], mode0);
}

static void test_measure_and_tolerance(void **state)
{
    (void)state;
    static const bad_case cases[] = {
        {WITH_M("[]"), "t.json: measure: expected an object with keys warmup_runs, min_samples, "
                       "max_samples, noise, max_seconds, timeout_s, modes, batch_us, "
                       "clock_tolerance, clock_pause_ms, max_discards, calibrate_ms, rounds, "
                       "ci_floor, got an empty array"},
        {WITH_M("{'runs': 1}"),
         "t.json: measure.runs: unknown key, expected one of warmup_runs, min_samples, "
         "max_samples, noise, max_seconds, timeout_s, modes, batch_us, clock_tolerance, "
         "clock_pause_ms, max_discards, calibrate_ms, rounds, ci_floor (check the spelling)"},
        {WITH_M("{'noise': 0.1, 'noise': 0.1}"),
         "t.json: measure.noise: duplicate key, each key may appear once"},
        {WITH_M("{'warmup_runs': -1}"),
         "t.json: measure.warmup_runs: expected an integer >= 0, got -1"},
        {WITH_M("{'warmup_runs': 1.5}"),
         "t.json: measure.warmup_runs: expected an integer >= 0, got 1.5"},
        {WITH_M("{'min_samples': 0}"),
         "t.json: measure.min_samples: expected an integer from 1 to 1000000, got 0"},
        {WITH_M("{'max_samples': 0}"),
         "t.json: measure.max_samples: expected an integer from 1 to 1000000, got 0"},
        {WITH_M("{'min_samples': 50, 'max_samples': 49}"),
         "t.json: measure.max_samples: expected an integer >= min_samples (50), got 49"},
        {WITH_M("{'min_samples': 300}"),
         "t.json: measure.max_samples: expected max_samples >= min_samples (300), got the "
         "default 200 (set max_samples)"},
        {WITH_M("{'max_samples': 5}"),
         "t.json: measure.max_samples: expected an integer >= min_samples (10), got 5"},
        {WITH_M("{'noise': 0}"),
         "t.json: measure.noise: expected a number between 0 and 1 (exclusive), got 0"},
        {WITH_M("{'noise': 1}"),
         "t.json: measure.noise: expected a number between 0 and 1 (exclusive), got 1"},
        {WITH_M("{'noise': '1%'}"),
         "t.json: measure.noise: expected a number between 0 and 1 (exclusive), got \"1%\""},
        {WITH_M("{'max_seconds': 0}"),
         "t.json: measure.max_seconds: expected a number of seconds > 0, got 0"},
        {WITH_M("{'max_seconds': 1e999}"),
         "t.json: measure.max_seconds: expected a number of seconds > 0, got a number too large "
         "to represent"},
        {WITH_M("{'timeout_s': -2.5}"),
         "t.json: measure.timeout_s: expected a number of seconds > 0, got -2.5"},
        {WITH_M("{'modes': []}"), "t.json: measure.modes: expected a non-empty array of distinct "
                                  "\"hot\" / \"cold\" / \"batch\", got an empty array"},
        {WITH_M("{'modes': 'hot'}"), "t.json: measure.modes: expected a non-empty array of "
                                     "distinct \"hot\" / \"cold\" / \"batch\", got \"hot\""},
        {WITH_M("{'modes': ['hot', 'warm']}"),
         "t.json: measure.modes[1]: expected \"hot\", \"cold\" or \"batch\", got \"warm\""},
        {WITH_M("{'modes': ['hot', 'cold', 'batch', 'hot']}"),
         "t.json: measure.modes[3]: expected distinct modes, got \"hot\" again (also at [0])"},
        {WITH_M("{'clock_tolerance': 1}"),
         "t.json: measure.clock_tolerance: expected a fraction between 0 and 1 (exclusive), got "
         "1"},
        {WITH_M("{'max_discards': -1}"),
         "t.json: measure.max_discards: expected an integer >= 0, got -1"},
        {WITH_M("{'batch_us': 0}"),
         "t.json: measure.batch_us: expected a number of microseconds, 0 < x < 1e6, got 0"},
        {WITH_M("{'calibrate_ms': 20000}"),
         "t.json: measure.calibrate_ms: expected a number of milliseconds, 0 < x < 10000, got "
         "20000"},
        {WITH_M("{'rounds': 0}"), "t.json: measure.rounds: expected an integer from 1 to 8, got 0"},
        {WITH_M("{'rounds': 9}"), "t.json: measure.rounds: expected an integer from 1 to 8, got 9"},
        {WITH_M("{'ci_floor': 0.5}"),
         "t.json: measure.ci_floor: expected a fraction, 0 < x < 0.5, got 0.5"},
        {WITH_M("{'modes': ['cold', 'cold']}"),
         "t.json: measure.modes[1]: expected distinct modes, got \"cold\" again (also at [0])"},
        {WITH_M("{'modes': ['hot', 'cold', 'hot']}"),
         "t.json: measure.modes[2]: expected distinct modes, got \"hot\" again (also at [0])"},
        {WITH_TOL("1"), "t.json: tolerance: expected an object with keys rel_l2, max_abs, got 1"},
        {WITH_TOL("{'rel_l2': 0}"), "t.json: tolerance.rel_l2: expected a number > 0, got 0"},
        {WITH_TOL("{'max_abs': -1}"), "t.json: tolerance.max_abs: expected a number > 0, got -1"},
        {WITH_TOL("{'atol': 1}"), "t.json: tolerance.atol: unknown key, expected one of rel_l2, "
                                  "max_abs (check the spelling)"},
    };
    RUN(cases);

    space s;
    parse_ok(WITH_M("{'warmup_runs': 0, 'min_samples': 300, 'max_samples': 300, 'noise': 0.5, "
                    "'max_seconds': 2, 'timeout_s': 0.25, 'modes': ['cold', 'hot']}"),
             &s);
    expect_measure(&s.measure, 0, 300, 300, 0.5, 2, 0.25, 2, "cold");
    assert_string_equal(s.measure.modes[1], "hot");
    parse_ok(WITH_TOL("{'rel_l2': 0.1}"), &s);
    assert_float_equal(s.tolerance.rel_l2, 0.1, 0);
    assert_float_equal(s.tolerance.max_abs, 3e-2, 0);
}

static void test_defaults(void **state)
{
    (void)state;
    space s;
    poison(&s);
    char *t = q(GOOD);
    char err[SPACE_ERR_LEN];
    assert_int_equal(space_parse(t, strlen(t), "dir/t.json", &s, err, sizeof err), 0);
    expect_target(&s, "t", "", 89, 49152, 1);
    assert_string_equal(s.path, "dir/t.json");
    assert_int_equal(s.problems[0].batch, 4);
    assert_int_equal(s.problems[0].heads, 8);
    assert_int_equal(s.problems[0].seq_len, 512);
    assert_int_equal(s.problems[0].head_dim, 64);
    assert_int_equal(s.problems[0].causal, 0);
    expect_measure(&s.measure, 3, 10, 200, 0.01, 0.5, 10, 1, "hot");
    assert_float_equal(s.tolerance.rel_l2, 5e-3, 0);
    assert_float_equal(s.tolerance.max_abs, 3e-2, 0);
    /* An empty measure / tolerance object also means all defaults. */
    space e;
    parse_ok(DOC(T_OK ", " P_OK ", " A_OK ", 'measure': {}, 'tolerance': {}"), &e);
    assert_int_equal(e.measure.max_samples, 200);
    assert_string_equal(e.measure.modes[0], "hot");
    assert_float_equal(e.tolerance.max_abs, 3e-2, 0);

    /* The hash is FNV-1a 64 of the exact bytes: whitespace changes it. */
    char want[17];
    fnv_hex(t, strlen(t), want);
    assert_string_equal(s.hash, want);
    char *t2 = q(GOOD "\n");
    assert_int_equal(space_parse(t2, strlen(t2), "t", &e, err, sizeof err), 0);
    assert_string_not_equal(e.hash, s.hash);
    fnv_hex(t2, strlen(t2), want);
    assert_string_equal(e.hash, want);
    free(t);
    free(t2);
    /* A NULL name reads "<string>" in path and messages. */
    assert_int_equal(space_parse("[]", 2, NULL, &e, err, sizeof err), -1);
    assert_true(strncmp(err, "<string>: ", 10) == 0);
}

static void test_fnv_vectors(void **state)
{
    (void)state;
    /* Published FNV-1a 64 test vectors, so fnv_hex above is trusted. */
    char h[17];
    fnv_hex("", 0, h);
    assert_string_equal(h, "cbf29ce484222325");
    fnv_hex("a", 1, h);
    assert_string_equal(h, "af63dc4c8601ec8c");
    fnv_hex("foobar", 6, h);
    assert_string_equal(h, "85944171f73967e8");
}

static void test_err_buffer(void **state)
{
    (void)state;
    space s;
    char small[12];
    memset(small, 'x', sizeof small);
    assert_int_equal(space_parse("[]", 2, "t.json", &s, small, sizeof small), -1);
    assert_int_equal(strlen(small), sizeof small - 1);
    assert_string_equal(small, "t.json: exp");
    /* No buffer at all is allowed. */
    assert_int_equal(space_parse("[]", 2, "t.json", &s, NULL, 0), -1);
    /* A name too long for space.path is refused rather than cut. */
    char name[400];
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    char err[SPACE_ERR_LEN];
    char *t = q(GOOD);
    poison(&s);
    assert_int_equal(space_parse(t, strlen(t), name, &s, err, sizeof err), -1);
    assert_non_null(strstr(err, "file name is longer than 255 bytes"));
    assert_poisoned(&s);
    free(t);
}

/* ---- space_load -------------------------------------------------------------------------- */

static void write_file(const char *path, const char *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static void test_load(void **state)
{
    (void)state;
    char dir[256], path[512], err[SPACE_ERR_LEN];
    assert_non_null(tu_tmpdir(dir, sizeof dir));
    space s, p;

    snprintf(path, sizeof path, "%s/missing.json", dir);
    poison(&s);
    assert_int_equal(space_load(path, &s, err, sizeof err), -1);
    char want[1024];
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory (check the path)",
             path);
    assert_string_equal(err, want);
    assert_poisoned(&s);

    assert_int_equal(space_load(dir, &s, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: is a directory, expected a space JSON file", dir);
    assert_string_equal(err, want);

    /* A good file: same result as space_parse of its bytes, path kept. */
    char *t = q(GOOD);
    snprintf(path, sizeof path, "%s/good.json", dir);
    write_file(path, t, strlen(t));
    assert_int_equal(space_load(path, &s, err, sizeof err), 0);
    assert_int_equal(space_parse(t, strlen(t), path, &p, err, sizeof err), 0);
    assert_memory_equal(&s, &p, sizeof s);
    assert_string_equal(s.path, path);

    /* Exactly 1 MiB (padded with spaces) loads; one byte more does not. */
    const size_t mib = 1u << 20;
    char *big = malloc(mib + 1);
    assert_non_null(big);
    memset(big, ' ', mib + 1);
    memcpy(big, t, strlen(t));
    snprintf(path, sizeof path, "%s/big.json", dir);
    write_file(path, big, mib);
    assert_int_equal(space_load(path, &s, err, sizeof err), 0);
    write_file(path, big, mib + 1);
    poison(&s);
    assert_int_equal(space_load(path, &s, err, sizeof err), -1);
    snprintf(want, sizeof want,
             "%s: file is 1048577 bytes, a space file may be at most 1048576 bytes (1 MiB); "
             "wrong file?",
             path);
    assert_string_equal(err, want);
    assert_poisoned(&s);
    free(big);

    /* Errors inside a loaded file name the file. */
    snprintf(path, sizeof path, "%s/bad.json", dir);
    write_file(path, "{\n  \"name\": 1\n}\n", 16);
    assert_int_equal(space_load(path, &s, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: name: expected a name of 1 to 63 printable characters, got 1",
             path);
    assert_string_equal(err, want);
    free(t);
    tu_rmtree(dir);
}

/* ---- the real spaces ------------------------------------------------------------------------ */

static void test_real_spaces(void **state)
{
    (void)state;
    space s;
    char err[SPACE_ERR_LEN];

    if (space_load("spaces/l4.json", &s, err, sizeof err) != 0) {
        print_error("%s (run from the repository root)\n", err);
        fail();
    }
    expect_target(&s, "l4", "NVIDIA L4", 89, 49152, 1);
    assert_int_equal(s.n_extra, 0);
    assert_int_equal(s.problems[0].seq_len, 512);
    const int l4_len[SPACE_AXIS_COUNT] = {3, 3, 3, 3, 2};
    assert_memory_equal(s.axis_len, l4_len, sizeof l4_len);
    assert_int_equal(s.axis[MMA_BLOCK_M][2], 128);
    assert_int_equal(s.measure.n_modes, 3);
    assert_string_equal(s.measure.modes[1], "cold");
    assert_string_equal(s.measure.modes[2], "batch");
    /* per round; three rounds (honest error bars) */
    assert_int_equal(s.measure.min_samples, 10);
    assert_int_equal(s.measure.max_samples, 100);
    assert_float_equal(s.measure.max_seconds, 0.012, 1e-12);
    assert_int_equal(s.measure.rounds, 3);
    assert_float_equal(s.measure.ci_floor, 0.007, 1e-12);
    assert_int_equal(strlen(s.hash), 16);

    assert_int_equal(space_load("spaces/h100.json", &s, err, sizeof err), 0);
    assert_string_equal(s.name, "h100");
    assert_int_equal(s.arch, 90);
    assert_int_equal(s.smem_limit, 232448);
    assert_int_equal(s.n_problems, 3);
    assert_int_equal(s.problems[2].head_dim, 128);
    assert_int_equal(s.axis_len[MMA_BLOCK_N], 3);
    assert_int_equal(s.axis[MMA_BLOCK_N][2], 256);
    /* h100 sweeps the wgmma family too (families.wgmma). */
    assert_int_equal(s.n_extra, 1);
    assert_int_equal(s.extra[0].family, FA_FAMILY_WGMMA);
    assert_int_equal(s.extra[0].axis_len[WG_BLOCK_M], 3); /* 64 for the key split too */

    assert_int_equal(space_load("spaces/ci.json", &s, err, sizeof err), 0);
    assert_string_equal(s.name, "ci");
    assert_int_equal(s.n_problems, 3);
    /* the third: bf16 grouped-query (4 query heads on 2 K/V heads) */
    assert_int_equal(s.problems[2].dtype, FA_DTYPE_BF16);
    assert_int_equal(s.problems[2].kv_heads, 2);
    /* One wgmma point, so the CI build compiles it for sm_90a (a sm_90 target). */
    assert_int_equal(s.arch, 90);
    assert_int_equal(s.n_extra, 1);
    assert_int_equal(s.extra[0].family, FA_FAMILY_WGMMA);
    assert_int_equal(s.problems[1].causal, 1);
    assert_int_equal(s.problems[1].head_dim, 128);
    /* ci.json leaves these out: defaults. */
    assert_int_equal(s.measure.warmup_runs, 3);
    assert_float_equal(s.measure.noise, 0.01, 0);
    assert_float_equal(s.measure.timeout_s, 10, 0);
    assert_int_equal(s.measure.n_modes, 2);
    assert_string_equal(s.measure.modes[1], "batch");
    for (int i = 0; i < 2; i++) { /* the first two name no kv_heads, dtype "fp16": MHA fp16 */
        assert_int_equal(s.problems[i].kv_heads, s.problems[i].heads);
        assert_int_equal(s.problems[i].dtype, FA_DTYPE_FP16);
    }

    /* The model spaces: bf16 GQA problems of the wgmma family. */
    assert_int_equal(space_load("spaces/llama3-8b.json", &s, err, sizeof err), 0);
    assert_int_equal(s.family, FA_FAMILY_WGMMA);
    assert_int_equal(s.n_problems, 5);
    for (int i = 0; i < s.n_problems; i++) {
        const space_problem *p = &s.problems[i];
        assert_int_equal(p->heads, 32);
        assert_int_equal(p->kv_heads, 8);
        assert_int_equal(p->head_dim, 128);
        assert_int_equal(p->dtype, FA_DTYPE_BF16);
        assert_int_equal(p->causal, 1);
        assert_true(p->batch * p->seq_len == 16384 || (p->batch == 1 && p->seq_len == 4096));
    }
    char txt[64];
    space_problem_format(&s.problems[4], txt, sizeof txt);
    assert_string_equal(txt, "b1.h32.kv8.s4096.d128.c.bf16");
    assert_int_equal(space_load("spaces/gemma2-d256.json", &s, err, sizeof err), 0);
    assert_int_equal(s.family, FA_FAMILY_WGMMA);
    assert_int_equal(s.n_problems, 2);
    space_problem_format(&s.problems[0], txt, sizeof txt);
    assert_string_equal(txt, "b2.h16.kv8.s4096.d256.c.bf16");
    space_problem_format(&s.problems[1], txt, sizeof txt);
    assert_string_equal(txt, "b2.h16.kv8.s4096.d256.nc.bf16");
}

/* ---- problem text and cost ----------------------------------------------------------------------
 */

static void test_problem_text(void **state)
{
    (void)state;
    char buf[64];
    space_problem p = {4, 8, 512, 64, 0, 8, 0}, r;
    assert_int_equal(space_problem_format(&p, buf, sizeof buf), 17);
    assert_string_equal(buf, "b4.h8.s512.d64.nc");
    p.causal = 1;
    space_problem_format(&p, buf, sizeof buf);
    assert_string_equal(buf, "b4.h8.s512.d64.c");

    /* Every text: the problem it names, and back to the same text. fp16 with kv_heads = heads
     * writes what every problem wrote before kv_heads and dtype (old keys stay keys). */
    static const struct {
        space_problem p;
        const char *text;
    } cases[] = {
        {{4, 8, 512, 64, 0, 8, FA_DTYPE_FP16}, "b4.h8.s512.d64.nc"},
        {{4, 8, 512, 64, 1, 8, FA_DTYPE_FP16}, "b4.h8.s512.d64.c"},
        {{1, 1, 1, 128, 0, 1, FA_DTYPE_FP16}, "b1.h1.s1.d128.nc"},
        {{INT_MAX, 16, 2048, 128, 1, 16, FA_DTYPE_FP16}, "b2147483647.h16.s2048.d128.c"},
        {{1, 32, 4096, 128, 1, 8, FA_DTYPE_FP16}, "b1.h32.kv8.s4096.d128.c"},
        {{1, 32, 4096, 128, 1, 8, FA_DTYPE_BF16}, "b1.h32.kv8.s4096.d128.c.bf16"},
        {{4, 8, 512, 64, 0, 8, FA_DTYPE_BF16}, "b4.h8.s512.d64.nc.bf16"},
        {{2, 32, 1024, 64, 0, 1, FA_DTYPE_FP16}, "b2.h32.kv1.s1024.d64.nc"},
        {{2, 16, 4096, 256, 0, 8, FA_DTYPE_BF16}, "b2.h16.kv8.s4096.d256.nc.bf16"},
        {{3, 10, 7, 64, 1, 5, FA_DTYPE_FP16}, "b3.h10.kv5.s7.d64.c"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(space_problem_format(&cases[i].p, buf, sizeof buf),
                         (int)strlen(cases[i].text));
        assert_string_equal(buf, cases[i].text);
        memset(&r, 0x5a, sizeof r);
        assert_int_equal(space_problem_parse(buf, &r), 0);
        assert_memory_equal(&r, &cases[i].p, sizeof r);
        char why[160]; /* the text does not check the launch limits: INT_MAX batches parse */
        assert_int_equal(space_problem_check(&r, why, sizeof why), r.batch == INT_MAX ? -1 : 0);
    }

    /* The short forms: B,H[:KV],S,D[,DTYPE], non-causal; KV may equal H there. */
    static const struct {
        const char *text;
        space_problem p;
    } shorts[] = {
        {"16,16,2048,64", {16, 16, 2048, 64, 0, 16, FA_DTYPE_FP16}},
        {"1,32:8,4096,128", {1, 32, 4096, 128, 0, 8, FA_DTYPE_FP16}},
        {"1,32:8,4096,128,bf16", {1, 32, 4096, 128, 0, 8, FA_DTYPE_BF16}},
        {"4,8,512,64,bf16", {4, 8, 512, 64, 0, 8, FA_DTYPE_BF16}},
        {"4,8,512,64,fp16", {4, 8, 512, 64, 0, 8, FA_DTYPE_FP16}},
        {"4,8:8,512,64", {4, 8, 512, 64, 0, 8, FA_DTYPE_FP16}},
        {"4,8:1,512,64", {4, 8, 512, 64, 0, 1, FA_DTYPE_FP16}},
    };
    for (size_t i = 0; i < sizeof shorts / sizeof shorts[0]; i++) {
        memset(&r, 0x5a, sizeof r);
        if (space_problem_parse(shorts[i].text, &r) != 0) {
            print_error("refused \"%s\"\n", shorts[i].text);
            fail();
        }
        assert_memory_equal(&r, &shorts[i].p, sizeof r);
    }

    static const char *const bad[] = {
        "",
        "b4.h8.s512.d64",
        "b4.h8.s512.d64.",
        "b4.h8.s512.d64.x",
        "b4.h8.s512.d64.ncx",
        "b4.h8.s512.d64.nc ",
        " b4.h8.s512.d64.nc",
        "B4.h8.s512.d64.nc",
        "b4.s512.h8.d64.nc",
        "b04.h8.s512.d64.nc",
        "b0.h8.s512.d64.nc",
        "b-4.h8.s512.d64.nc",
        "b+4.h8.s512.d64.nc",
        "b4.h8.s512.d2147483648.nc",
        "b4,h8,s512,d64",
        "4,8,512",
        "4,8,512,64,",
        "4,8,512,64,1",
        "4,8,512,64.c",
        "4, 8,512,64",
        "4,8,512,064",
        "0,8,512,64",
        "-4,8,512,64",
        "4,8,512,99999999999",
        "4;8;512;64",
        /* kv_heads: only when not the heads, a divisor of them, no leading zeros */
        "b4.h8.kv8.s512.d64.nc",
        "b4.h8.kv3.s512.d64.nc",
        "b4.h8.kv16.s512.d64.nc",
        "b4.h8.kv0.s512.d64.nc",
        "b4.h8.kv02.s512.d64.nc",
        "b4.h8.kv.s512.d64.nc",
        "b4.h8.kv2",
        "b4.kv2.h8.s512.d64.nc",
        "b4.h8.s512.kv2.d64.nc",
        "b4.h8.KV2.s512.d64.nc",
        "b4.h8.k2.s512.d64.nc",
        "b4.h8.kv-2.s512.d64.nc",
        /* dtype: only a name that is not the default, last, in lower case */
        "b4.h8.s512.d64.nc.fp16",
        "b4.h8.s512.d64.nc.BF16",
        "b4.h8.s512.d64.nc.bf16.",
        "b4.h8.s512.d64.nc.bf16x",
        "b4.h8.s512.d64.nc.",
        "b4.h8.s512.d64.nc.fp32",
        "b4.h8.s512.d64.bf16",
        "b4.h8.s512.d64.bf16.nc",
        "b4.h8.s512.d64.c.bf16.bf16",
        "b4.h8.s512.d64.cbf16",
        "b4.h8.s512.d64.c,bf16",
        /* the short form's */
        "4,8:3,512,64",
        "4,8:16,512,64",
        "4,8:0,512,64",
        "4,8:,512,64",
        "4:2,8,512,64",
        "4,8,512:2,64",
        "4,8,512,64,BF16",
        "4,8,512,64,bf16,",
        "4,8,512,64,c",
        "4,8,512,64.bf16",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&r, 0x5a, sizeof r);
        if (space_problem_parse(bad[i], &r) != -1) {
            print_error("accepted \"%s\"\n", bad[i]);
            fail();
        }
        space_problem untouched;
        memset(&untouched, 0x5a, sizeof untouched);
        assert_memory_equal(&r, &untouched, sizeof r);
    }
    assert_int_equal(space_problem_parse(NULL, &r), -1);
}

static void test_problem_cost(void **state)
{
    (void)state;
    space_problem p = {4, 8, 512, 64, 0, 8, 0};
    /* 4 * 4*8*512*512*64 */
    assert_float_equal(space_problem_flops(&p), 2147483648.0, 0);
    /* 4 tensors * 4*8*512*64 elements * 2 bytes */
    assert_float_equal(space_problem_bytes(&p), 8388608.0, 0);
    p.causal = 1;
    assert_float_equal(space_problem_flops(&p), 1073741824.0, 0);
    assert_float_equal(space_problem_bytes(&p), 8388608.0, 0);
    /* Large shapes must not overflow int arithmetic. */
    space_problem big = {64, 64, 65536, 128, 0, 64, 0};
    assert_float_equal(space_problem_flops(&big), 4.0 * 64 * 64 * 65536.0 * 65536.0 * 128, 0);
    assert_float_equal(space_problem_bytes(&big), 4.0 * 64 * 64 * 65536.0 * 128 * 2, 0);
    /* Q, K, V: three of the four tensors (what the measurement's floor needs read). */
    assert_float_equal(space_problem_input_bytes(&p), 6291456.0, 0);

    /* GQA: the same FLOPs, K and V at kv_heads heads; bf16 is 2 bytes too. */
    space_problem g = {1, 32, 4096, 128, 1, 8, FA_DTYPE_BF16};
    assert_float_equal(space_problem_flops(&g), 0.5 * 4.0 * 32 * 4096.0 * 4096.0 * 128, 0);
    assert_float_equal(space_problem_bytes(&g),
                       (2.0 * 32 * 4096 * 128 + 2.0 * 8 * 4096 * 128) * 2.0, 0);
    assert_float_equal(space_problem_input_bytes(&g),
                       (1.0 * 32 * 4096 * 128 + 2.0 * 8 * 4096 * 128) * 2.0, 0);
    g.kv_heads = 1; /* MQA */
    assert_float_equal(space_problem_bytes(&g), (2.0 * 32 + 2.0) * 4096 * 128 * 2.0, 0);
    g.kv_heads = 32;
    g.dtype = FA_DTYPE_FP16;
    assert_float_equal(space_problem_bytes(&g), 4.0 * 32 * 4096.0 * 128 * 2, 0);
}

static void test_problem_check(void **state)
{
    (void)state;
    char why[160];
    space_problem p = {4, 8, 512, 64, 0, 8, FA_DTYPE_FP16};
    assert_int_equal(space_problem_check(&p, why, sizeof why), 0);
    static const int kv_ok[] = {1, 2, 4, 8};
    for (size_t i = 0; i < sizeof kv_ok / sizeof kv_ok[0]; i++) {
        p.kv_heads = kv_ok[i];
        assert_int_equal(space_problem_check(&p, why, sizeof why), 0);
    }
    static const int kv_bad[] = {0, -8, 3, 5, 16, INT_MIN};
    for (size_t i = 0; i < sizeof kv_bad / sizeof kv_bad[0]; i++) {
        p.kv_heads = kv_bad[i];
        assert_int_equal(space_problem_check(&p, why, sizeof why), -1);
        char want[160];
        snprintf(want, sizeof want,
                 "kv_heads %d does not divide heads 8 (each K/V head serves heads / kv_heads "
                 "query heads: 1 <= kv_heads <= heads)",
                 kv_bad[i]);
        assert_string_equal(why, want);
    }
    p.kv_heads = 8;
    p.dtype = FA_DTYPE_BF16;
    assert_int_equal(space_problem_check(&p, why, sizeof why), 0);
    p.dtype = FA_DTYPE_COUNT;
    assert_int_equal(space_problem_check(&p, why, sizeof why), -1);
    assert_string_equal(why, "dtype 2 is not fp16 or bf16");
    p.dtype = -1;
    assert_int_equal(space_problem_check(&p, why, sizeof why), -1);

    assert_string_equal(space_dtype_name(FA_DTYPE_FP16), "fp16");
    assert_string_equal(space_dtype_name(FA_DTYPE_BF16), "bf16");
    assert_null(space_dtype_name(FA_DTYPE_COUNT));
    assert_null(space_dtype_name(-1));
    assert_int_equal(space_dtype_of("fp16"), FA_DTYPE_FP16);
    assert_int_equal(space_dtype_of("bf16"), FA_DTYPE_BF16);
    assert_int_equal(space_dtype_of("fp32"), -1);
    assert_int_equal(space_dtype_of(""), -1);
    assert_int_equal(space_dtype_of(NULL), -1);
}

/* Family f's axes 0 to SPACE_AXIS_COUNT - 1 are named names[], in index
 * order; the index past them names none ("?"). */
static void expect_axis_names(int f, const char *const names[SPACE_AXIS_COUNT])
{
    for (int a = 0; a < SPACE_AXIS_COUNT; a++)
        assert_string_equal(space_axis_name(f, a), names[a]);
    assert_string_equal(space_axis_name(f, SPACE_AXIS_COUNT), "?");
}

static void test_axis_names(void **state)
{
    (void)state;
    /* Each family's names, by its own indices (the tuner files name a
     * grid's axes with these); a family out of range names no axis. */
    static const char *const mma[SPACE_AXIS_COUNT] = {[MMA_BLOCK_M] = "BLOCK_M",
                                                      [MMA_BLOCK_N] = "BLOCK_N",
                                                      [MMA_NUM_WARPS] = "NUM_WARPS",
                                                      [MMA_STAGES] = "STAGES",
                                                      [MMA_SWIZZLE] = "SWIZZLE"};
    static const char *const wgmma[SPACE_AXIS_COUNT] = {[WG_BLOCK_M] = "BLOCK_M",
                                                        [WG_BLOCK_N] = "BLOCK_N",
                                                        [WG_CONSUMER_WG] = "CONSUMER_WG",
                                                        [WG_STAGES] = "STAGES",
                                                        [WG_PIPELINE] = "PIPELINE"};
    expect_axis_names(FA_FAMILY_MMA, mma);
    expect_axis_names(FA_FAMILY_WGMMA, wgmma);
    assert_string_equal(space_axis_name(fa_family_count(), 0), "?");
    assert_string_equal(space_axis_name(-1, 0), "?");
}

TU_TESTS(test_text_level, test_syntax_errors, test_top_level, test_family, test_families,
         test_target, test_problems, test_axes, test_measure_and_tolerance, test_defaults,
         test_fnv_vectors, test_err_buffer, test_load, test_real_spaces, test_problem_text,
         test_problem_cost, test_problem_check, test_axis_names)
