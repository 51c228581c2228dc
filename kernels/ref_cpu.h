/* ref_cpu.h - attention in double precision on the CPU, and fp16 <-> float
 * conversion, for checking the GPU reference and for host-side tests. */
#ifndef REF_CPU_H
#define REF_CPU_H

#include <stdint.h>

/* IEEE binary16 bits <-> float (round to nearest even; NaN/inf kept). */
float ref_half_to_float(uint16_t h);
uint16_t ref_float_to_half(float f);
/* The same for an element of dtype (FA_DTYPE_FP16 0, FA_DTYPE_BF16 1). */
float ref_elem_to_float(uint16_t x, int dtype);
uint16_t ref_float_to_elem(float f, int dtype);

/* out[B,H,S,D] = softmax(scale * q k^T (causal-masked)) v, in double, for
 * inputs of dtype given as bits: q [B,H,S,D], k and v [B,KVH,S,D] (query
 * head h reads K/V head h / (heads / kv_heads)). */
void ref_attention_cpu(const uint16_t *q, const uint16_t *k, const uint16_t *v, int batch,
                       int heads, int kv_heads, int seq, int head_dim, int causal, int dtype,
                       double scale, double *out);

#endif /* REF_CPU_H */
