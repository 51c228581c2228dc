/* text.c - name validation, printable copies, FNV-1a (contract: text.h). */
#include "text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Length of the UTF-8 sequence at p (at most `left` bytes) and its code
 * point, or 0 when it is not a valid, shortest-form sequence. */
static size_t text_utf8_seq(const unsigned char *p, size_t left, unsigned *cp)
{
    static const unsigned min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    size_t n;
    unsigned c;
    if (p[0] < 0x80) {
        *cp = p[0];
        return 1;
    }
    if ((p[0] & 0xE0) == 0xC0) {
        n = 2;
        c = p[0] & 0x1F;
    } else if ((p[0] & 0xF0) == 0xE0) {
        n = 3;
        c = p[0] & 0x0F;
    } else if ((p[0] & 0xF8) == 0xF0) {
        n = 4;
        c = p[0] & 0x07;
    } else {
        return 0; /* a continuation byte or 0xF8..0xFF first */
    }
    if (n > left)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        c = (c << 6) | (p[i] & 0x3F);
    }
    if (c < min_cp[n] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        return 0; /* overlong, out of range, or a surrogate */
    *cp = c;
    return n;
}

/* Invisible and direction-changing format characters: zero-width space
 * and joiners, LRM/RLM, the bidi embeddings, overrides and isolates, the
 * word joiner and invisible operators, the BOM. In a name they make two
 * different names print the same ("NVIDIA L4" and "NVIDIA L4" + U+200B) or
 * reorder what a terminal shows around them (U+202E, "Trojan Source"). */
static int text_invisible(unsigned cp)
{
    return (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) ||
           (cp >= 0x2060 && cp <= 0x2064) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xFEFF;
}

/* The reason s is not valid (UTF-8, and without control characters unless
 * controls_ok), or NULL. */
static const char *text_check(const char *s, size_t len, int controls_ok)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        unsigned cp;
        const size_t n = text_utf8_seq(p + i, len - i, &cp);
        if (n == 0)
            return "is not valid UTF-8";
        if (!controls_ok && (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)))
            return "holds a control character";
        if (!controls_ok && text_invisible(cp))
            return "holds an invisible or direction-changing character (U+200B-U+200F, "
                   "U+202A-U+202E, U+2060-U+2064, U+2066-U+2069, U+FEFF)";
        i += n;
    }
    return NULL;
}

const char *text_bad(const char *s, size_t len)
{
    return text_check(s, len, 0);
}

const char *text_bad_utf8(const char *s, size_t len)
{
    return text_check(s, len, 1);
}

size_t text_copy_utf8(char *dst, size_t n, const char *src)
{
    if (n == 0)
        return 0;
    const unsigned char *p = (const unsigned char *)src;
    const size_t len = strlen(src);
    size_t i = 0, o = 0;
    while (i < len) {
        unsigned cp;
        const size_t k = text_utf8_seq(p + i, len - i, &cp);
        const size_t w = k ? k : 1; /* an invalid byte is written as one '?' */
        if (o + w > n - 1)
            break; /* the next character does not fit whole */
        if (k)
            memcpy(dst + o, p + i, k);
        else
            dst[o] = '?';
        o += w;
        i += w;
    }
    dst[o] = '\0';
    return o;
}

long text_json_nul_escape(const char *json, size_t len)
{
    int in_string = 0;
    for (size_t i = 0; i < len; i++) {
        if (json[i] == '"') {
            in_string = !in_string;
        } else if (in_string && json[i] == '\\' && i + 1 < len) {
            if (json[i + 1] == 'u' && i + 5 < len && memcmp(json + i + 2, "0000", 4) == 0)
                return (long)i;
            i++; /* the escaped character, a quote included */
        }
    }
    return -1;
}

void text_clean(const char *s, size_t len, size_t max, int stop_nl, char *buf, size_t n)
{
    size_t o = 0;
    if (n == 0)
        return;
    for (size_t i = 0; i < len && o + 8 < n; i++) {
        const unsigned char ch = (unsigned char)s[i];
        if (i == max) {
            memcpy(buf + o, "...", 3);
            o += 3;
            break;
        }
        if (stop_nl && (ch == '\n' || ch == '\r'))
            break;
        if (ch >= 0x20 && ch < 0x7f && ch != '\\')
            buf[o++] = (char)ch;
        else
            o += (size_t)snprintf(buf + o, n - o, "\\x%02x", ch);
    }
    buf[o] = '\0';
}

uint64_t text_fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

int text_errf(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

void text_iso8601(double t, char *buf, size_t n)
{
    const time_t tt = (time_t)t;
    struct tm tm;
    if (!(t >= 0) || !gmtime_r(&tt, &tm) || strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(buf, n, "1970-01-01T00:00:00Z");
}

int text_double(double x, char *buf, size_t n)
{
    int len = 0;
    for (int digits = 15; digits <= 17; digits++) {
        len = snprintf(buf, n, "%.*g", digits, x);
        if (len < 0 || (size_t)len >= n || strtod(buf, NULL) == x)
            break;
    }
    return len;
}

int text_float(double x, char *buf, size_t n)
{
    int len = text_double(x, buf, n);
    if (len >= 0 && (size_t)len + 2 < n && !strpbrk(buf, ".eEni")) {
        strcat(buf, ".0");
        len += 2;
    }
    return len;
}
