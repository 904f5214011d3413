/**
 * @file fa_math.h
 * @brief The float functions the kernels and the CPU models share, so that
 *        both compute the same bits: the course's one max, which keeps NaN.
 *
 * **The NaN policy of every max in the course.** A max over values that hold
 * a NaN is NaN. `fmaxf` (and C's `fmax`) do the opposite: they return the
 * other operand, so a NaN in a row would vanish from the row max and the
 * result would look valid. In attention a NaN score makes the row NaN either
 * way (its weight exp(NaN - m) is NaN), but a max that drops NaN hides the
 * bad input from any kernel that uses the max on its own (M4's row max, the
 * running max of M13), so one rule holds everywhere: fa_max_nan() in kernels,
 * models and references, and the reductions of fa_kernel.cuh built on it.
 * A masked score is -inf, never NaN, so masking is unaffected.
 */
#ifndef FA_MATH_H
#define FA_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fa_index.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The two reductions of the course: + and the NaN-keeping max. */
typedef enum fa_reduce_op { FA_REDUCE_SUM, FA_REDUCE_MAX } fa_reduce_op;

/** The NaN CUDA's arithmetic produces (0x7FFFFFFF); the host returns it too, for the same bits. */
static inline FA_HOST_DEVICE float fa_canonical_nan(void)
{
    const uint32_t bits = UINT32_C(0x7FFFFFFF);
    float nan;
    memcpy(&nan, &bits, sizeof nan);
    return nan;
}

/**
 * max(a, b) that returns NaN when either operand is NaN (IEEE 754-2019
 * `maximum`, PyTorch's `torch.max`), with +0 above -0. On the GPU it is one
 * instruction, `max.NaN.f32` (sm_80 and newer); the host computes the same
 * bits in C, the canonical NaN included, so a CPU model matches a kernel
 * exactly.
 */
static inline FA_HOST_DEVICE float fa_max_nan(float a, float b)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    float result;
    asm("max.NaN.f32 %0, %1, %2;" : "=f"(result) : "f"(a), "f"(b));
    return result;
#else
    if (a != a || b != b)
        return fa_canonical_nan();
    if (a == b) /* equal, or +0 and -0: +0 wins */
        return signbit(a) ? b : a;
    return a > b ? a : b;
#endif
}

/**
 * The same rule for the double-precision statistics of the checks (worst
 * ratios, largest errors): a NaN is kept, so a NaN error can never hide
 * behind a finite "worst" and pass.
 */
static inline FA_HOST_DEVICE double fa_max_nan_double(double a, double b)
{
    if (a != a)
        return a;
    if (b != b)
        return b;
    return a > b ? a : b;
}

#ifdef __cplusplus
}
#endif

#endif /* FA_MATH_H */
