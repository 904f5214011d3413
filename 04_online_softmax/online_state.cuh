/**
 * @file online_state.cuh
 * @brief The running state (m, l, o) of online softmax for one row: its
 *        updates M13-M16, the merge of two partial states, and the end.
 *
 * A row x_0, x_1, ... is visited in chunks. After the entries seen so far the
 * state holds
 *   m = their max,  l = sum_j exp(x_j - m),  o = sum_j exp(x_j - m) v_j
 * (o per output column, kept by the caller beside the state). A new chunk
 * raises m to m' and every old term exp(x_j - m) must become exp(x_j - m'):
 * multiplying by alpha = exp(m - m') does exactly that, for l and for o alike,
 * because exp(x_j - m) exp(m - m') = exp(x_j - m'). The order of the updates:
 *   m'    = max(m, max of the chunk)                          M13
 *   alpha = exp(m - m')                                       M14
 *   l'    = alpha l + sum over the chunk of exp(x_j - m')     M15
 *   o'    = alpha o + sum over the chunk of exp(x_j - m') v_j M16
 * and at the end o / l and lse = m + ln l. \ref stage04 proves the invariant.
 *
 * This file is the template of the state: each update is one line, and the
 * comment above it says why it is written that way. Each is one fp32
 * operation whose rounding the bound of \ref numerics counts: the sums take
 * one FMA (alpha l + s rounded once), the merge rounds its two products on
 * their own so that it is commutative bit for bit. The CPU model
 * (harness/model.c) performs the same operations in the same order.
 *
 * NaN: every max here is fa_max_nan() (fa_math.h), the course's one max. A
 * NaN entry makes m NaN, so alpha, every later weight, l, o and lse are NaN:
 * the row says it met a NaN instead of hiding it.
 *
 * Later stages include this header for their own tiles; every function is
 * `static __device__ __forceinline__`, usable by any thread.
 */
#ifndef ONLINE_STATE_CUH
#define ONLINE_STATE_CUH

#include <math.h>

#include "fa_math.h"

/** The running max and sum of one row; the output columns live with the caller. */
typedef struct online_state {
    float max; /**< m: the largest entry seen; -inf while no allowed entry was seen */
    float sum; /**< l = sum_j exp(x_j - m) over the entries seen; 0 while none is allowed */
} online_state;

/**
 * The state before any entry: m = -inf, the identity of max, and l = 0 (and
 * o = 0), the empty sums. It is the identity of online_merge().
 */
static __device__ __forceinline__ online_state online_state_empty(void)
{
    const online_state empty = {-INFINITY, 0.0f};
    return empty;
}

/**
 * M13: the running max after a chunk whose largest entry is @p chunk_max.
 * Exact: max never rounds. fa_max_nan() and not `fmaxf`: `fmaxf` returns the
 * other operand when one is NaN, so a NaN entry would vanish from m.
 */
static __device__ __forceinline__ float online_running_max(float max_old, float chunk_max)
{
    return fa_max_nan(max_old, chunk_max);
}

/**
 * The max that is subtracted inside exp: @p max itself, or 0 while it is
 * -inf. Until the first allowed entry m = -inf, and x - m would be
 * (-inf) - (-inf) = NaN for the weights and the correction factor, poisoning
 * l and o for the rest of the row. Subtracting 0 gives exp(-inf - 0) = 0: a
 * masked entry weighs exactly 0, and the correction of an empty state is 0,
 * which rescales nothing. Any finite value would do; 0 is FlashAttention's
 * choice. (A NaN m stays NaN: it is not -inf.)
 */
static __device__ __forceinline__ float online_max_offset(float max)
{
    return max == -INFINITY ? 0.0f : max;
}

/**
 * M14: the correction factor alpha = exp(m_old - m_new), in [0, 1], that
 * rescales sums taken against @p max_old to @p max_new (>= max_old). The
 * argument is <= 0, so exp never overflows; it is exactly 0 when the max did
 * not rise (alpha = 1), and -inf from the empty state (alpha = 0, whatever
 * max_new is, -inf included, thanks to the offset).
 */
static __device__ __forceinline__ float online_correction(float max_old, float max_new)
{
    return expf(max_old - online_max_offset(max_new));
}

/**
 * The weight exp(x - m) of entry @p x against the running max @p max (>= x):
 * in (0, 1] for an allowed entry, so no sum can overflow, and exactly 0 for a
 * masked one (x = -inf), through the same offset.
 */
static __device__ __forceinline__ float online_weight(float x, float max)
{
    return expf(x - online_max_offset(max));
}

/**
 * M15: l' = alpha l + s, where @p chunk_sum = s is the sum of the chunk's
 * weights taken against the new max (so only the old l needs alpha). One
 * FMA: alpha l is not rounded before the addition.
 */
static __device__ __forceinline__ float online_update_sum(float sum, float alpha, float chunk_sum)
{
    return fmaf(alpha, sum, chunk_sum);
}

/**
 * M16: o' = alpha o + w, for one output column, where @p chunk_out = w is the
 * chunk's sum of weight times value taken against the new max. The same
 * update as online_update_sum(): l is the output of the value 1, which is why
 * o / l needs no correction at the end. Forgetting to rescale o (o' = o + w)
 * leaves earlier chunks weighted against a max that is no longer the max.
 */
static __device__ __forceinline__ float online_rescale_output(float out, float alpha,
                                                              float chunk_out)
{
    return fmaf(alpha, out, chunk_out);
}

/**
 * The combine of two partial states of one row over disjoint sets of entries:
 *   m = max(m_a, m_b),  l = l_a exp(m_a - m) + l_b exp(m_b - m).
 * Each side is rescaled to the common max, exactly as one chunk update
 * rescales the old state; the factors are returned in @p alpha_a and
 * @p alpha_b (one of them is 1, both are 0 when both states are empty) so
 * that outputs merge the same way with online_merge_output().
 *
 * Associative and commutative in exact arithmetic, so states may be combined
 * in any tree: that is what lets a row be split across threads, warps or
 * blocks. In fp32 it is commutative bit for bit: fa_max_nan() commutes, and
 * the two products are rounded on their own (`__fmul_rn` cannot be fused
 * into an FMA), so swapping a and b swaps the operands of one addition. The
 * empty state is the identity.
 */
static __device__ __forceinline__ online_state online_merge(online_state a, online_state b,
                                                            float *alpha_a, float *alpha_b)
{
    const float max = online_running_max(a.max, b.max);
    *alpha_a = online_correction(a.max, max);
    *alpha_b = online_correction(b.max, max);
    const online_state merged = {max, __fadd_rn(__fmul_rn(a.sum, *alpha_a), __fmul_rn(b.sum, *alpha_b))};
    return merged;
}

/** One output column of a merge: o_a alpha_a + o_b alpha_b, with the factors of online_merge(). */
static __device__ __forceinline__ float online_merge_output(float out_a, float alpha_a,
                                                            float out_b, float alpha_b)
{
    return __fadd_rn(__fmul_rn(out_a, alpha_a), __fmul_rn(out_b, alpha_b));
}

/**
 * The final output o / l (one IEEE division). A row with no allowed entry has
 * l = 0 and o = 0, where o / l would be 0 / 0 = NaN: its output is 0, the
 * weighted mean of nothing. A NaN sum stays NaN.
 */
static __device__ __forceinline__ float online_normalise(float out, float sum)
{
    return sum == 0.0f ? 0.0f : out / sum;
}

/**
 * lse = m + ln l, the log of the softmax denominator in natural units. A row
 * with no allowed entry has l = 0: its lse is -inf (the log of an empty sum),
 * which later merges read as "weight 0". A NaN sum stays NaN.
 */
static __device__ __forceinline__ float online_lse(online_state state)
{
    return state.sum == 0.0f ? -INFINITY : state.max + logf(state.sum);
}

#endif /* ONLINE_STATE_CUH */
