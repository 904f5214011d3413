/**
 * @file fa_problem.h
 * @brief The problem a driver's flags describe (`--nq 100 --nk 37 --d 64`),
 *        for the milestones that read it.
 *
 * Each milestone of the course map (fa_milestones.h) names the flags its
 * check reads. With any of them given, a driver runs one random case of that
 * problem (named "flags") instead of its fixtures and random sweep, and times
 * that size: the way to reproduce a shape seen elsewhere, or to time one.
 * A field the flags leave out takes the check's default for it.
 */
#ifndef FA_PROBLEM_H
#define FA_PROBLEM_H

#include <stdint.h>

#include "fa_half.h"
#include "fa_mask.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One bit per problem flag. */
typedef enum fa_problem_flag {
    FA_PROBLEM_N = 1u << 0,        /**< --n: elements of a vector, or of a row */
    FA_PROBLEM_ROWS = 1u << 1,     /**< --rows */
    FA_PROBLEM_COLS = 1u << 2,     /**< --cols */
    FA_PROBLEM_M = 1u << 3,        /**< --m: rows of a matrix product (with --n, --k) */
    FA_PROBLEM_K = 1u << 4,        /**< --k: the reduced dimension of a matrix product */
    FA_PROBLEM_BATCH = 1u << 5,    /**< --batch */
    FA_PROBLEM_HEADS = 1u << 6,    /**< --heads: query heads */
    FA_PROBLEM_HEADS_KV = 1u << 7, /**< --heads-kv: key/value heads (a divisor of --heads) */
    FA_PROBLEM_NQ = 1u << 8,       /**< --nq: query rows */
    FA_PROBLEM_NK = 1u << 9,       /**< --nk: keys */
    FA_PROBLEM_D = 1u << 10,       /**< --d: head dimension */
    FA_PROBLEM_DTYPE = 1u << 11,   /**< --dtype fp32|bf16|fp16 */
    FA_PROBLEM_MASK = 1u << 12,    /**< --mask none|causal|causal-bottom-right (|window) */
    FA_PROBLEM_CHUNK = 1u << 13,   /**< --chunk: keys (or entries) per online update */
    FA_PROBLEM_WINDOW_LEFT = 1u << 14, /**< --window-left: --mask window's extent before the diagonal */
    FA_PROBLEM_WINDOW_RIGHT = 1u << 15 /**< --window-right: its extent after the diagonal */
} fa_problem_flag;

/** Both extents of a window: a stage that takes them offers --mask window too. */
#define FA_PROBLEM_WINDOW (FA_PROBLEM_WINDOW_LEFT | FA_PROBLEM_WINDOW_RIGHT)

/** The attention flags, as most attention milestones read them. */
#define FA_PROBLEM_ATTENTION                                                                  \
    (FA_PROBLEM_BATCH | FA_PROBLEM_HEADS | FA_PROBLEM_HEADS_KV | FA_PROBLEM_NQ | FA_PROBLEM_NK | \
     FA_PROBLEM_D | FA_PROBLEM_MASK)

/** A problem from the flags; only the fields whose bit is in @p given were set. */
typedef struct fa_problem {
    unsigned given; /**< the ::fa_problem_flag bits of the flags on the command line */
    int64_t n, rows, cols, m, k;
    int64_t batch, heads, heads_kv, nq, nk, d, chunk;
    int64_t window_left, window_right; /**< --mask window's extents, each >= -1 (-1: unbounded) */
    fa_dtype dtype;
    fa_mask mask;
} fa_problem;

/** True when flag @p flag was given. */
static inline int fa_problem_has(const fa_problem *p, fa_problem_flag flag)
{
    return (p->given & (unsigned)flag) != 0;
}

/** The field of @p flag when given, else @p fallback (an int64 field). */
int64_t fa_problem_get(const fa_problem *p, fa_problem_flag flag, int64_t fallback);

/** The flag's name without dashes ("nq"), or NULL for a value that is not one flag. */
const char *fa_problem_flag_name(fa_problem_flag flag);

/** The names of the mask flag's choices, in ::fa_mask order: "none", "causal", ... */
const char *fa_mask_flag_name(fa_mask mask);

#ifdef __cplusplus
}
#endif

#endif /* FA_PROBLEM_H */
