/* ref_cpu.c - fp64 CPU attention and fp16 conversions (see ref_cpu.h). */
#include "ref_cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

float ref_half_to_float(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    const int exp = (h >> 10) & 0x1f;
    const uint32_t man = h & 0x3ff;
    float f;
    if (exp == 0) {
        f = ldexpf((float)man, -24); /* zero or subnormal */
    } else if (exp == 31) {
        f = man ? NAN : INFINITY;
    } else {
        f = ldexpf((float)(man | 0x400), exp - 25);
    }
    uint32_t bits;
    memcpy(&bits, &f, 4);
    bits |= sign;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t ref_float_to_half(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, 4);
    const uint16_t sign = (uint16_t)((bits >> 16) & 0x8000);
    const float a = fabsf(f);
    if (isnan(f))
        return sign | 0x7e00;
    if (a >= 65520.0f) /* rounds to infinity */
        return sign | 0x7c00;
    if (a < ldexpf(1.0f, -14)) { /* subnormal: units of 2^-24 */
        return sign | (uint16_t)lrintf(a * 16777216.0f);
    }
    int e;
    const float m = frexpf(a, &e); /* a = m * 2^e, m in [0.5, 1) */
    /* 11 significant bits: round m * 2^11 to an integer (ties to even). */
    long sig = lrintf(m * 2048.0f);
    if (sig == 2048) { /* rounding carried into the next binade */
        sig = 1024;
        e += 1;
    }
    if (e + 14 >= 31)
        return sign | 0x7c00;
    return sign | (uint16_t)(((e + 14) << 10) | (sig & 0x3ff));
}

float ref_elem_to_float(uint16_t x, int dtype)
{
    if (dtype != 1)
        return ref_half_to_float(x);
    const uint32_t bits = (uint32_t)x << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

uint16_t ref_float_to_elem(float f, int dtype)
{
    if (dtype != 1)
        return ref_float_to_half(f);
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    if ((bits & 0x7fffffffu) > 0x7f800000u) /* NaN stays a NaN */
        return (uint16_t)((bits >> 16) | 0x40u);
    bits += 0x7fffu + ((bits >> 16) & 1u); /* round to nearest even */
    return (uint16_t)(bits >> 16);
}

static void row_attention(const double *qrow, const uint16_t *k, const uint16_t *v, int n_keys,
                          int d, int dtype, double scale, double *scores, double *out)
{
    double mx = -INFINITY;
    for (int j = 0; j < n_keys; j++) {
        double s = 0;
        for (int x = 0; x < d; x++)
            s += qrow[x] * ref_elem_to_float(k[(long)j * d + x], dtype);
        scores[j] = s * scale;
        if (scores[j] > mx)
            mx = scores[j];
    }
    double sum = 0;
    for (int x = 0; x < d; x++)
        out[x] = 0;
    for (int j = 0; j < n_keys; j++) {
        const double p = exp(scores[j] - mx);
        sum += p;
        for (int x = 0; x < d; x++)
            out[x] += p * ref_elem_to_float(v[(long)j * d + x], dtype);
    }
    for (int x = 0; x < d; x++)
        out[x] /= sum;
}

void ref_attention_cpu(const uint16_t *q, const uint16_t *k, const uint16_t *v, int batch,
                       int heads, int kv_heads, int seq, int head_dim, int causal, int dtype,
                       double scale, double *out)
{
    double *scores = malloc(sizeof(double) * (size_t)seq);
    double *qrow = malloc(sizeof(double) * (size_t)head_dim);
    if (!scores || !qrow) {
        free(scores);
        free(qrow);
        for (long i = 0; i < (long)batch * heads * seq * head_dim; i++)
            out[i] = NAN; /* never silently "pass" */
        return;
    }
    const int group = kv_heads > 0 && heads % kv_heads == 0 ? heads / kv_heads : 1;
    for (long h = 0; h < (long)batch * heads; h++) {
        const long base = h * seq * head_dim, kv_base = h / group * seq * head_dim;
        for (int i = 0; i < seq; i++) {
            for (int x = 0; x < head_dim; x++)
                qrow[x] = ref_elem_to_float(q[base + (long)i * head_dim + x], dtype);
            row_attention(qrow, k + kv_base, v + kv_base, causal ? i + 1 : seq, head_dim, dtype,
                          scale, scores, out + base + (long)i * head_dim);
        }
    }
    free(scores);
    free(qrow);
}
