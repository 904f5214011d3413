/**
 * @file fa_math.h
 * @brief The float functions and constants the kernels and the CPU models
 *        share, so that both compute the same bits: the course's one max,
 *        which keeps NaN, the reduction step, the softmax's -inf guard, and
 *        log2(e) and ln 2 in fp32.
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

/**
 * log2(e) rounded to fp32 (0x3FB8AA3B = 1.44269502162933349609375; an error
 * bound that multiplies by it accounts for its rounding). The kernels compute
 * exp(x) as exp2(x FA_LOG2E_F) (ex2.approx), and fold the softmax scale into
 * the factor: c = scale FA_LOG2E_F.
 */
#define FA_LOG2E_F 1.4426950408889634f

/**
 * ln 2 rounded to fp32 (0x1.62e43p-1), the fixtures' softmax scale:
 * fp32(FA_LN2_F FA_LOG2E_F) = 1 exactly, so their scores scaled for exp2 are
 * the integers written in them.
 */
#define FA_LN2_F 0x1.62e43p-1f

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

/** op(a, b): a + b, or fa_max_nan(a, b); the one step of every reduction, kernel and model. */
static inline FA_HOST_DEVICE float fa_reduce_combine(fa_reduce_op op, float a, float b)
{
    return op == FA_REDUCE_SUM ? a + b : fa_max_nan(a, b);
}

/**
 * The max a softmax subtracts inside exp: @p max itself, or 0 while it is
 * -inf (a row with no allowed entry yet), so that a masked entry's weight is
 * exp(-inf - 0) = 0 and never exp(-inf - -inf) = NaN. The host models' form
 * of the kernels' online_max_offset() (stage 04, M14).
 */
static inline FA_HOST_DEVICE float fa_max_offset(float max)
{
    return max == -INFINITY ? 0.0f : max;
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
