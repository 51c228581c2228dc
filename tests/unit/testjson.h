/* testjson.h - a cJSON document as the text a command prints, for the unit
 * tests that read a document back: printed whole (cJSON_Print, as `topk
 * --json` and the seeds files; or unformatted), the document freed. Include
 * <cmocka.h> and <cJSON.h> first. */
#ifndef TESTJSON_H
#define TESTJSON_H

/* doc's text (free it with cJSON_free); doc is deleted. Fails the test when
 * doc is NULL or cannot be printed. */
static inline char *tu_json_text(cJSON *doc, int formatted)
{
    assert_non_null(doc);
    char *t = formatted ? cJSON_Print(doc) : cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    assert_non_null(t);
    return t;
}

#endif /* TESTJSON_H */
