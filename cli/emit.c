/* emit.c - JSON documents and table rows on stdout (contract: emit.h). */
#include "emit.h"

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>

#include "cli.h"

static int emit_text(cJSON *doc, int pretty)
{
    char *text = doc ? (pretty ? cJSON_Print(doc) : cJSON_PrintUnformatted(doc)) : NULL;
    cJSON_Delete(doc);
    if (!text) {
        cli_say("out of memory printing JSON");
        return CLI_FAIL;
    }
    errno = 0;
    const int failed = puts(text) == EOF;
    cJSON_free(text);
    return failed ? cli_output_failed(errno) : CLI_OK;
}

int emit_json(cJSON *doc)
{
    return emit_text(doc, 1);
}

int emit_json_line(cJSON *doc)
{
    return emit_text(doc, 0);
}

void emit_row(FILE *out, const emit_col *cols, int n, const char *const *cells)
{
    char line[1024];
    size_t len = 0;
    for (int i = 0; i < n && len < sizeof line; i++) {
        const emit_col *c = &cols[i];
        const char *cell = cells ? cells[i] : c->head;
        const int w = c->left ? -c->width : c->width;
        len += (size_t)snprintf(line + len, sizeof line - len, "%*s%*s", c->gap, "", w,
                                cell ? cell : "");
    }
    if (len >= sizeof line)
        len = sizeof line - 1;
    while (len > 0 && line[len - 1] == ' ')
        len--;
    fprintf(out, "%.*s\n", (int)len, line);
}
