/* ref_cpu.h - attention in double precision on the CPU, and fp16 <-> float
 * conversion, for checking the GPU reference and for host-side tests. */
#ifndef REF_CPU_H
#define REF_CPU_H

#include <stdint.h>

/* IEEE binary16 bits <-> float (round to nearest even; NaN/inf kept). */
float ref_half_to_float(uint16_t h);
uint16_t ref_float_to_half(float f);

/* out[B,H,S,D] = softmax(scale * q k^T (causal-masked)) v, in double, for
 * fp16 inputs given as bits. */
void ref_attention_cpu(const uint16_t *q, const uint16_t *k, const uint16_t *v, int batch,
                       int heads, int seq, int head_dim, int causal, double scale, double *out);

#endif /* REF_CPU_H */
