/* test_json.c - store/json.h: the null rule (unknown is null, a measured 0
 * stays 0) and the one out-of-memory flag (json_done: the whole document or
 * NULL). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "store/json.h"
#include "tests/unit/testjson.h"

static void test_null_rule(void **st)
{
    (void)st;
    json_b b = JSON_B_INIT;
    cJSON *o = json_check(&b, cJSON_CreateObject());
    json_num(&b, o, "zero", 0);
    json_num(&b, o, "nan", NAN);
    json_num(&b, o, "inf", INFINITY);
    json_float(&b, o, "f0", 0.0);
    json_float(&b, o, "fnan", NAN);
    json_int_or_null(&b, o, "mhz", -1, -1);
    json_int_or_null(&b, o, "mhz0", 0, -1);
    json_tri(&b, o, "yes", 1);
    json_tri(&b, o, "no", 0);
    json_tri(&b, o, "unknown", -1);
    char *t = tu_json_text(json_done(&b, o), 0);
    assert_string_equal(t, "{\"zero\":0,\"nan\":null,\"inf\":null,\"f0\":0.0,\"fnan\":null,"
                           "\"mhz\":null,\"mhz0\":0,\"yes\":true,\"no\":false,"
                           "\"unknown\":null}");
    cJSON_free(t);
}

static int refuse_after = -1, refused;
static void *failing_malloc(size_t n)
{
    if (refuse_after == 0) {
        refused = 1;
        return NULL;
    }
    if (refuse_after > 0)
        refuse_after--;
    return malloc(n);
}

/* One failed allocation anywhere: json_done frees the document and says
 * NULL, whatever was added after it. */
static void test_out_of_memory_once(void **st)
{
    (void)st;
    cJSON_Hooks h = {failing_malloc, free};
    for (int n = 0; n < 12; n++) {
        cJSON_InitHooks(&h);
        refuse_after = n;
        refused = 0;
        json_b b = JSON_B_INIT;
        cJSON *o = json_check(&b, cJSON_CreateObject());
        cJSON *in = json_obj(&b, o, "in");
        json_str(&b, in, "s", "text");
        cJSON *a = json_arr(&b, o, "a");
        json_push(&b, a, cJSON_CreateNumber(1));
        json_num(&b, o, "n", 2);
        json_null(&b, o, "z");
        cJSON *doc = json_done(&b, o);
        refuse_after = -1;
        cJSON_InitHooks(NULL);
        if (refused) {
            assert_null(doc);
            assert_int_equal(b.ok, 0);
        } else {
            char *t = tu_json_text(doc, 0);
            assert_string_equal(t, "{\"in\":{\"s\":\"text\"},\"a\":[1],\"n\":2,\"z\":null}");
            cJSON_free(t);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_null_rule),
        cmocka_unit_test(test_out_of_memory_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
