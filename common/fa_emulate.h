/**
 * @file fa_emulate.h
 * @brief A CPU emulation of a fused attention kernel's arithmetic, correct or
 *        with one deliberate bug, to prove on the CPU that the bound of
 *        fa_attention_ref.h holds and that the check can fail.
 *
 * Every fp32 operation is a C float operation (round to nearest even), P is
 * rounded with fa_round_to(), the row is processed in key blocks with the
 * online softmax of FlashAttention-2 (running max, rescale of l and O), and a
 * tensor-core accumulation aligns each group of 8 products and the
 * accumulator to the largest exponent and truncates, as measured by Fasi,
 * Higham, Mikaitis and Pranesh (2021).
 *
 * In adversarial mode, each step whose accuracy is documented as a budget
 * rather than a rounding rule is pushed to the edge of that budget, in the
 * direction that moves one chosen output away from the exact answer: exp
 * (expf, exp2f, ex2.approx) by 2 ulp, __expf by 2 + floor(1.173 |x|) ulp,
 * rcp.approx by 1 ulp, logf by 1 ulp, and weights below 2^-126 are flushed to
 * zero. Correctly rounded fp32 operations have no freedom and stay rounded to
 * nearest; tensor-core sums keep their truncation. The bound must still cover
 * the result: that is the CPU check of the bound itself.
 *
 * A dropped __syncthreads() cannot be emulated here: it is a race between
 * threads, and this emulation has one thread per row and no shared memory.
 */
#ifndef FA_EMULATE_H
#define FA_EMULATE_H

#include <stdbool.h>
#include <stdint.h>

#include "fa_attention_ref.h"
#include "fa_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A deliberate bug planted in the emulated kernel (the mutants of docs/numerics.md). */
typedef enum fa_mutant {
    FA_MUTANT_NONE = 0,            /**< the correct kernel */
    FA_MUTANT_NO_RESCALE_O,        /**< O is not multiplied by exp(m_old - m_new) when the max rises */
    FA_MUTANT_NO_RESCALE_L,        /**< l is not multiplied by exp(m_old - m_new) when the max rises */
    FA_MUTANT_RESCALE_WRONG_SIGN,  /**< the rescale factor is exp(m_new - m_old) */
    FA_MUTANT_LOG2E_FORGOTTEN,     /**< exp2 of the scaled score without the factor log2(e) */
    FA_MUTANT_LOG2E_DOUBLED,       /**< the factor log2(e) applied twice */
    FA_MUTANT_SCALE_ONE_OVER_D,    /**< scale 1/D instead of the problem's scale */
    FA_MUTANT_NO_SCALE,            /**< scale 1 */
    FA_MUTANT_CAUSAL_ONE_AHEAD,    /**< causal mask j <= i + 1 (one key too many) */
    FA_MUTANT_CAUSAL_STRICT,       /**< causal mask j < i (the diagonal excluded) */
    FA_MUTANT_TAIL_ROUNDED_UP,     /**< the last key block is read in full: keys up to ceil(N / B) B */
    FA_MUTANT_LSE_WITHOUT_MAX,     /**< lse = ln l, the running max forgotten */
    FA_MUTANT_LSE_LOG2,            /**< lse left in log2 units */
    FA_MUTANT_NO_NORMALISATION,    /**< o = O, the final 1 / l forgotten */
    FA_MUTANT_MAX_INIT_ZERO,       /**< the running max starts at 0 instead of -inf */
    FA_MUTANT_NAN_EMPTY_ROW,       /**< a row with no allowed key gives 0 / 0 = NaN */
    FA_MUTANT_PV_BF16_ACCUMULATOR, /**< O accumulated in bf16 instead of fp32 */
    FA_MUTANT_COUNT
} fa_mutant;

/** One line naming the bug, e.g. "causal mask j <= i + 1". */
const char *fa_mutant_description(fa_mutant mutant);

/** The kernel to emulate: its declared method, optional equivalent variations and a mutant. */
typedef struct fa_emulation {
    fa_attn_method method;     /**< block_n 0 means one block over the whole row (the naive kernel) */
    bool reverse_block_order;  /**< visit key blocks last to first (FlashAttention-2's loop order) */
    bool reverse_sum_order;    /**< accumulate every sum (q.k, rowsum, P.V) from its last term to its first */
    bool unscaled_exp;         /**< take the max over unscaled q.k and evaluate expf(scale (x - m)) */
    fa_mutant mutant;
    bool adversarial;          /**< push every budgeted step to the edge of its budget (see the file comment) */
    int adversarial_sign;      /**< +1: push the target up; -1: push it down */
    int64_t adversarial_column;/**< the target: column of o, or -1 for lse */
    const fa_attn_reference *adversarial_reference; /**< exact o the adversary steers by (required when adversarial) */
} fa_emulation;

/**
 * Runs the emulated kernel on @p p: writes o ([B][Hq][Nq][D] contiguous, the
 * stored dtype widened to float) and, when @p lse is not NULL, lse
 * ([B][Hq][Nq], natural log; -inf on a row with no allowed key).
 *
 * The emulation reads q, k, v through the views exactly as the reference does.
 * FA_MUTANT_TAIL_ROUNDED_UP reads keys past nk (or past key_length[b]) up to
 * the next multiple of block_n: the k and v views must hold that many rows
 * (fa_case_create() allocates them as canary padding). The mask mutants need a
 * causal mask to differ from the correct kernel. Returns FA_ERR_NULL_POINTER,
 * FA_ERR_INVALID_ARGUMENT (bad enum, adversarial without a reference or sign,
 * block_n = 0 with a mutant that needs blocks), FA_ERR_OVERFLOW (sizes the
 * reference would refuse, or key rows and views whose offsets overflow) or
 * FA_ERR_OUT_OF_MEMORY.
 *
 * Every max is fa_max_nan(), as in the kernels: a NaN score is never dropped
 * from a block's max, so a block whose only allowed key is NaN still poisons
 * the row, as the reference says it must.
 */
FA_MUST_CHECK fa_status fa_emulate_attention(const fa_attn_problem *p, const fa_emulation *e,
                                             float *o, float *lse);

/**
 * expf(@p arg) as the adversary evaluates it: the correctly rounded value,
 * pushed by the 2 ulp the budget allows in @p direction (+1 up, -1 down) and
 * flushed to zero below 2^-126; @p direction 0 leaves it rounded to nearest.
 * exp(0) = 1 and exp(-inf) = 0 exactly. For emulations of other kernels (the
 * softmax ones of test_numerics) that must spend the same budget.
 */
float fa_emulate_expf(float arg, int direction);

#ifdef __cplusplus
}
#endif

#endif /* FA_EMULATE_H */
