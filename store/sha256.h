/* sha256.h - SHA-256 (FIPS 180-4) of a byte string, as lower-case hex.
 *
 * What a seed names its kernel source by (docs/seeds.md, source.sha256): the SHA-256 of
 * the template text this binary embeds, or of a kernel variant's file, so
 * a reader can check with `sha256sum` that a source is the one measured.
 * No allocation, no state beyond the call.
 */
#ifndef SHA256_H
#define SHA256_H

#include <stddef.h>

/* Room for the hex digest with its NUL. */
#define SHA256_HEX_LEN 65

/* The SHA-256 of data[0..n) into hex (64 lower-case digits and a NUL). */
void sha256_hex(const void *data, size_t n, char hex[SHA256_HEX_LEN]);

#endif /* SHA256_H */
