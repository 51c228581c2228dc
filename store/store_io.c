/* store_io.c - records to and from files: CSV / JSON-lines export and the
 * all-or-nothing JSON-lines import (contract: store_io.h).
 *
 * Both formats come from record_to_json, so they always carry exactly
 * the store's fields: a CSV column is a JSON leaf ("time.median_us" is the
 * column median_us; leaf names are unique across the groups).
 */
#include "store_io.h"

#include <cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

/* A record is about 1.5 KB of JSON; a line this long is no record (and
 * reading it whole could exhaust memory: a 400 MB line, /dev/zero). */
#define IO_LINE_MAX (1L << 20)

/* ---- export -------------------------------------------------------------------------------- */

/* RFC 4180: a field holding a comma, quote or line break is quoted, with
 * quotes doubled; anything else is written as is. A text field (text: 1)
 * that a spreadsheet would read as a formula (it starts with = + - @, a
 * tab or CR: CSV injection) gets a leading single quote, which spreadsheets
 * show as text; numbers are never text fields, so they stay numbers. */
static void io_csv_field(FILE *out, const char *s, int text)
{
    const int guard = text && s[0] && strchr("=+-@\t\r", s[0]);
    if (!strpbrk(s, ",\"\r\n")) {
        if (guard)
            fputc('\'', out);
        fputs(s, out);
        return;
    }
    fputc('"', out);
    if (guard)
        fputc('\'', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

/* One leaf: its name (header) or its value. Numbers that are not integers
 * are raw items (exact shortest text, see store.h); integers are numbers;
 * null (a non-finite double) is an empty field; an array of numbers (the
 * rounds) is one field, its numbers separated by spaces. */
static void io_csv_leaf(FILE *out, const cJSON *v, int header)
{
    if (header) {
        io_csv_field(out, v->string, 0);
    } else if (cJSON_IsArray(v)) {
        const cJSON *e;
        int first = 1;
        cJSON_ArrayForEach(e, v)
        {
            if (!first)
                fputc(' ', out);
            first = 0;
            if (cJSON_IsRaw(e))
                fputs(e->valuestring, out);
            else if (cJSON_IsNumber(e))
                fprintf(out, "%.17g", e->valuedouble);
        }
    } else if (cJSON_IsString(v) || cJSON_IsRaw(v))
        io_csv_field(out, v->valuestring, cJSON_IsString(v)); /* raw: a number */
    else if (cJSON_IsNumber(v))
        fprintf(out, "%.0f", v->valuedouble);
}

/* Writes the header row (header = 1) or the record's row from its JSON. */
static void io_csv_row(FILE *out, const cJSON *j, int header)
{
    int first = 1;
    for (const cJSON *m = j->child; m; m = m->next) {
        if (strcmp(m->string, "schema") == 0) /* the line format, not data */
            continue;
        const cJSON *leaf = cJSON_IsObject(m) ? m->child : m;
        for (; leaf; leaf = cJSON_IsObject(m) ? leaf->next : NULL) {
            if (!first)
                fputc(',', out);
            first = 0;
            io_csv_leaf(out, leaf, header);
        }
    }
    fputc('\n', out);
}

typedef struct io_export {
    store_io_format fmt;
    FILE *out;
    int rc;
} io_export;

static int io_export_one(const record *r, void *ctx)
{
    io_export *e = ctx;
    cJSON *j = record_to_json(r);
    if (!j) {
        e->rc = STORE_ENOMEM;
        return 1;
    }
    if (e->fmt == STORE_IO_CSV) {
        io_csv_row(e->out, j, 0);
    } else {
        char *text = cJSON_PrintUnformatted(j);
        if (!text) {
            cJSON_Delete(j);
            e->rc = STORE_ENOMEM;
            return 1;
        }
        fputs(text, e->out);
        fputc('\n', e->out);
        cJSON_free(text);
    }
    cJSON_Delete(j);
    /* Stop at the first failed write instead of formatting the rest. */
    if (ferror(e->out)) {
        e->rc = STORE_EIO;
        return 1;
    }
    return 0;
}

/* The CSV header from a blank record, so it is there even for no rows. */
static int io_csv_header(FILE *out)
{
    record blank;
    memset(&blank, 0, sizeof blank);
    cJSON *j = record_to_json(&blank);
    if (!j)
        return STORE_ENOMEM;
    io_csv_row(out, j, 1);
    cJSON_Delete(j);
    return STORE_OK;
}

int store_io_export(store *s, const char *prefix, store_io_format fmt, FILE *out)
{
    if (!s)
        return STORE_EINVAL;
    if (!out || (fmt != STORE_IO_CSV && fmt != STORE_IO_JSONL))
        return store_set_error(s, STORE_EINVAL, "store_export: no output file or unknown format");
    io_export e = {fmt, out, STORE_OK};
    if (fmt == STORE_IO_CSV && io_csv_header(out) != STORE_OK)
        return store_set_error(s, STORE_ENOMEM, "export: out of memory");
    int rc = store_scan(s, prefix, io_export_one, &e);
    if (rc != STORE_OK)
        return rc; /* store_scan set the message */
    const int werr = fflush(out) != 0 || ferror(out);
    if (e.rc == STORE_ENOMEM)
        return store_set_error(s, STORE_ENOMEM, "export: out of memory");
    if (e.rc == STORE_EIO || werr)
        return store_set_error(s, STORE_EIO,
                               "export: writing the output failed (%s); check free space and the "
                               "output path",
                               errno ? strerror(errno) : "write error");
    return STORE_OK;
}

/* ---- import -------------------------------------------------------------------------------- */

typedef struct io_recs {
    record *r;
    size_t n, cap;
} io_recs;

static int io_recs_push(io_recs *v, const record *r)
{
    if (v->n == v->cap) {
        const size_t cap = v->cap ? v->cap * 2 : 64;
        record *p = realloc(v->r, cap * sizeof *p);
        if (!p)
            return -1;
        v->r = p;
        v->cap = cap;
    }
    v->r[v->n++] = *r;
    return 0;
}

static int io_blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
            return 0;
    return 1;
}

/* Where a JSON syntax error is, as printable text for a message. */
static void io_near(const char *at, const char *end, char *buf, size_t n)
{
    size_t o = 0;
    for (; at < end && o + 5 < n && o < 24; at++) {
        const unsigned char c = (unsigned char)*at;
        if (c == '\n' || c == '\r')
            break;
        buf[o++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    buf[o] = '\0';
}

/* Bytes JSON text may not hold raw: every control character but tab, CR
 * and LF (inside a string they must be escaped; a raw NUL would also cut
 * the C string cJSON makes of it). Returns the offset of the first, or -1. */
static long io_raw_control(const char *line, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        const unsigned char c = (unsigned char)line[i];
        if (c < 0x20 && c != '\t' && c != '\r' && c != '\n')
            return (long)i;
    }
    return -1;
}

int store_io_parse_line(const char *line, size_t len, record *r, char *why, size_t n)
{
    const long raw = io_raw_control(line, len);
    if (raw >= 0) {
        snprintf(why, n,
                 "a raw control character 0x%02x at byte %ld; JSON text allows none (inside a "
                 "string write \\u00XX)",
                 (unsigned char)line[raw], raw + 1);
        return -1;
    }
    if (text_json_nul_escape(line, len) >= 0) {
        snprintf(why, n, "a string holds \\u0000 (a NUL character), which no field may hold");
        return -1;
    }
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(line, len, &end, 0);
    if (!j) {
        /* On failure cJSON points end at the error (not the global
         * cJSON_GetErrorPtr, which is shared by threads). */
        char near[32];
        io_near(end && end >= line && end <= line + len ? end : line, line + len, near,
                sizeof near);
        snprintf(why, n, "not valid JSON (near \"%s\"); each line must be one record object", near);
        return -1;
    }
    if (!io_blank(end, (size_t)(line + len - end))) {
        cJSON_Delete(j);
        snprintf(why, n, "text after the JSON object; put one record per line");
        return -1;
    }
    char jerr[512];
    const int rc = record_from_json(j, r, jerr, sizeof jerr);
    cJSON_Delete(j);
    if (rc != 0) {
        snprintf(why, n, "%s", jerr);
        return -1;
    }
    return 0;
}

/* Reads one line (its '\n' included) into *buf, growing it up to
 * IO_LINE_MAX. Returns its length, 0 at the end, -1 when the line is
 * longer than IO_LINE_MAX, -2 on a read error or when memory runs out
 * (errno says which). Unlike getline, a failure is never mistaken for the
 * end of the input. */
static long io_read_line(FILE *in, char **buf, size_t *cap)
{
    size_t len = 0;
    int c = 0;
    errno = 0;
    while ((c = getc_unlocked(in)) != EOF) {
        if (len + 2 > *cap) {
            if (*cap >= (size_t)IO_LINE_MAX)
                return -1;
            size_t ncap = *cap ? 2 * *cap : 4096;
            if (ncap > (size_t)IO_LINE_MAX)
                ncap = IO_LINE_MAX;
            char *p = realloc(*buf, ncap);
            if (!p) {
                errno = ENOMEM;
                return -2;
            }
            *buf = p;
            *cap = ncap;
        }
        (*buf)[len++] = (char)c;
        if (c == '\n')
            break;
    }
    if (c == EOF && ferror(in))
        return -2;
    return (long)len;
}

/* Reads every line of in into v; on a bad or unreadable line, err gets
 * "NAME:N: why". */
static int io_read_all(FILE *in, const char *name, io_recs *v, char *err, size_t errlen)
{
    char *line = NULL;
    size_t cap = 0;
    long len, lineno = 0;
    int rc = STORE_OK;
    while ((len = io_read_line(in, &line, &cap)) > 0) {
        lineno++;
        if (io_blank(line, (size_t)len))
            continue;
        record r;
        char why[640];
        if (store_io_parse_line(line, (size_t)len, &r, why, sizeof why) != 0) {
            snprintf(err, errlen, "%s:%ld: %s", name, lineno, why);
            rc = STORE_EINVAL;
            break;
        }
        if (io_recs_push(v, &r) != 0) {
            snprintf(err, errlen, "%s:%ld: out of memory holding the records", name, lineno);
            rc = STORE_ENOMEM;
            break;
        }
    }
    if (len == -1) {
        snprintf(err, errlen,
                 "%s:%ld: the line is longer than %ld bytes; a record is one line of "
                 "about 1.5 KB (wrong file?)",
                 name, lineno + 1, IO_LINE_MAX);
        rc = STORE_EINVAL;
    } else if (len == -2) {
        const int e = errno ? errno : EIO;
        if (e == ENOMEM)
            snprintf(err, errlen, "%s:%ld: out of memory reading the line", name, lineno + 1);
        else
            snprintf(err, errlen, "%s: cannot read after line %ld: %s", name, lineno, strerror(e));
        rc = e == ENOMEM ? STORE_ENOMEM : STORE_EINVAL;
    }
    free(line);
    return rc;
}

int store_io_import(store *s, FILE *in, const char *name, long *n_out, char *err, size_t errlen)
{
    char dummy[1];
    if (!err || errlen == 0) {
        err = dummy;
        errlen = sizeof dummy;
    }
    err[0] = '\0';
    if (n_out)
        *n_out = 0;
    if (!name)
        name = "input";
    if (!s || !in) {
        snprintf(err, errlen, "store_io_import: no store or no input");
        return STORE_EINVAL;
    }
    io_recs v = {0};
    /* Everything is parsed and checked before the first write. */
    int rc = io_read_all(in, name, &v, err, errlen);
    if (rc == STORE_OK) {
        rc = store_put_many(s, v.r, v.n);
        if (rc != STORE_OK)
            snprintf(err, errlen, "%s: %s", name, store_last_error(s));
        else if (n_out)
            *n_out = (long)v.n;
    }
    free(v.r);
    return rc;
}
