/* text.h - what every untrusted string goes through: the one validation of
 * text that enters a store key, a file name or a name (valid UTF-8, no
 * control characters, bounded length), the printable copy used to quote
 * such text in an error message, and the FNV-1a hash used for ids.
 *
 * A leaf module: it includes nothing of the project, so the space parser,
 * the record codec and the store can all use it.
 */
#ifndef TEXT_H
#define TEXT_H

#include <stddef.h>
#include <stdint.h>

/* Why s (len bytes) may not be a name, or NULL when it may: it must be
 * valid UTF-8 (no overlong forms, surrogates or code points past U+10FFFF)
 * and hold no control character: C0 (U+0000-U+001F), DEL (U+007F) or C1
 * (U+0080-U+009F, e.g. U+0085 NEXT LINE), and no invisible or
 * direction-changing format character (U+200B-U+200F, U+202A-U+202E,
 * U+2060-U+2064, U+2066-U+2069, U+FEFF), which make two names look the
 * same or reorder a terminal line. A NUL inside the len bytes is a
 * control character too, so a string cut short by one is caught when its
 * real length is known. The reason is a static string ("holds a control
 * character", "is not valid UTF-8"). */
const char *text_bad(const char *s, size_t len);

/* The same for free text (an error message, a description): only valid
 * UTF-8 is asked for; control characters are allowed (JSON escapes them). */
const char *text_bad_utf8(const char *s, size_t len);

/* Copies src (up to its NUL) into the field dst of n bytes as valid
 * UTF-8: a byte that does not start a valid sequence becomes '?', and the
 * copy is cut before the first character that does not fit whole, so a
 * multi-byte character is never split (a record's free-text field such as
 * `error` must be valid UTF-8, or the store and import refuse it). Always
 * NUL-terminated when n > 0. Returns the bytes written (without the NUL). */
size_t text_copy_utf8(char *dst, size_t n, const char *src);

/* Where JSON text holds the escape \u0000 inside a string (the offset of
 * its backslash), or -1: a C string decoded from it would end early and
 * silently lose its tail (cJSON keeps no length), so a caller refuses such
 * input before decoding it. */
long text_json_nul_escape(const char *json, size_t len);

/* Copies untrusted bytes for a message: printable ASCII as is, anything
 * else (and the backslash) as \xHH, cut after `max` input bytes with "...";
 * stops at a line break when stop_nl is set. Writes at most n bytes,
 * always NUL-terminated when n > 0. */
void text_clean(const char *s, size_t len, size_t max, int stop_nl, char *buf, size_t n);

/* FNV-1a 64: ids and hashes of files and names, not a security boundary.
 * Start with TEXT_FNV_INIT; chain calls to hash several pieces. */
#define TEXT_FNV_INIT 14695981039346656037ULL
uint64_t text_fnv1a(uint64_t h, const void *data, size_t n);

/* Writes the printf-style message FMT into err (errlen bytes, cut to fit)
 * and returns -1: `return text_errf(err, errlen, ...)` for the functions
 * that fail with -1 and a message in a caller's buffer. */
int text_errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ISO-8601 UTC text of Unix seconds t ("2024-11-22T16:30:05Z"); the epoch
 * for a negative or unrepresentable t. */
void text_iso8601(double t, char *buf, size_t n);

/* The shortest "%.Ng" text (N from 15 to 17) of a finite x that reads
 * back as exactly x. Returns what snprintf returns. */
int text_double(double x, char *buf, size_t n);

/* text_double, always with a '.' or an exponent so a JSON reader takes it
 * as a float ("1.0", not "1"). Returns what snprintf returns. */
int text_float(double x, char *buf, size_t n);

#endif /* TEXT_H */
