/**
 * @file fa_half.h
 * @brief bf16 and fp16 conversion on the host with round-to-nearest-even.
 *
 * The 16-bit values are carried as uint16_t bit patterns so that C code needs
 * no compiler extension. Conversions follow IEEE 754 exactly: ties go to the
 * even neighbour, values past the largest finite number round to infinity,
 * subnormals are kept (fp16) and NaN stays NaN (quiet) with its sign.
 */
#ifndef FA_HALF_H
#define FA_HALF_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Element type of a tensor in device or host memory. */
typedef enum fa_dtype {
    FA_F32 = 0,  /**< IEEE binary32 */
    FA_BF16 = 1, /**< bfloat16: 8 exponent bits, 7 fraction bits */
    FA_F16 = 2   /**< IEEE binary16: 5 exponent bits, 10 fraction bits */
} fa_dtype;

/** Bytes of one element of @p dtype (4 or 2). */
int fa_dtype_size(fa_dtype dtype);

/** Lower-case name: "fp32", "bf16", "fp16". */
const char *fa_dtype_name(fa_dtype dtype);

/** Unit roundoff of @p dtype: 2^-24, 2^-8 or 2^-11. */
double fa_dtype_unit_roundoff(fa_dtype dtype);

uint16_t fa_float_to_bf16(float x);   /**< round to nearest even */
float fa_bf16_to_float(uint16_t bits); /**< exact */
uint16_t fa_float_to_fp16(float x);   /**< round to nearest even, subnormals kept */
float fa_fp16_to_float(uint16_t bits); /**< exact */

/** Rounds @p x to the nearest value of @p dtype and returns it as a float. */
float fa_round_to(fa_dtype dtype, float x);

/** Element @p i of a host array of @p dtype, widened to float. */
float fa_load(const void *data, fa_dtype dtype, int64_t i);

/** Stores @p x (rounded to nearest even) as element @p i of a host array of @p dtype. */
void fa_store(void *data, fa_dtype dtype, int64_t i, float x);

#ifdef __cplusplus
}
#endif

#endif /* FA_HALF_H */
