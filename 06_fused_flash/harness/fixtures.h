/**
 * @file fixtures.h
 * @brief The inputs of stage 06's checks and tests: attention calls on host
 *        memory, the hand-computed fixtures, and the cases of the shape grid
 *        with their rotation of layouts, dtypes, heads and score patterns.
 *        Plain C (no CUDA): the tests check all of it without a GPU.
 *
 * A ::flash_call is one call of the library on host memory: its
 * fa_attention_params hold host pointers (q, k, v, the whole span of o, and
 * lse or NULL) with the strides the device copies keep, and its
 * fa_attn_problem views the same inputs the way fa_attention_reference()
 * reads them, with the scale the kernels use (fa_attention_scale()). The
 * runner (runners.h) mirrors a call on the device; the judge (judge.h)
 * compares what came back with the reference.
 */
#ifndef FLASH_FIXTURES_H
#define FLASH_FIXTURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fa_adversarial.h"
#include "fa_math.h"
#include "fa_rng.h"
#include "fa_status.h"
#include "flashattn.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One call on host memory (see the file comment). */
typedef struct flash_call {
    fa_attention_params params; /**< host q, k, v, o (its whole span), lse or NULL */
    fa_attn_problem problem;    /**< the inputs as the reference reads them, the kernels' scale */
} flash_call;

/**
 * A call of these sizes and dtype on contiguous [B,N,H,D] tensors
 * (fa_attention_strides_bnhd()), every pointer NULL, the default scale, the
 * variant auto: what a call is made from.
 */
fa_attention_params flash_params(int64_t batch, int64_t heads_q, int64_t heads_kv, int64_t nq,
                                 int64_t nk, int64_t head_dim, fa_dtype dtype);

/** Elements from the first element of a tensor to its last, plus one; 0 when it has none. */
int64_t flash_span(const fa_strides *strides, int64_t batch, int64_t rows, int64_t heads,
                   int64_t head_dim);

/** Bytes of the span of o of @p p (its dtype, or fp32 with o_fp32). */
int64_t flash_o_bytes(const fa_attention_params *p);

/** Floats of lse of @p p: batch x heads_q x nq, packed heads_q x nq (whether or not p->lse is set). */
int64_t flash_lse_count(const fa_attention_params *p);

/** How tensors are laid out in memory. */
typedef enum flash_layout {
    FLASH_BNHD = 0, /**< [batch][n][heads][d]: fa_attention_strides_bnhd() */
    FLASH_BHND = 1  /**< [batch][heads][n][d]: fa_attention_strides_bhnd(), PyTorch's SDPA layout */
} flash_layout;

/** "bnhd" or "bhnd". */
const char *flash_layout_name(flash_layout layout);

/** Where the scores of a random case put each row's maximum. */
typedef enum flash_scores {
    FLASH_SCORES_SPREAD = 0, /**< random scores of the case's spread */
    FLASH_SCORES_ROW_BIAS,   /**< the same plus FLASH_ROW_BIAS on every score of a row */
    FLASH_SCORES_LATE_MAX,   /**< every row's maximum in the last key tile the kernel walks */
    FLASH_SCORES_RISING,     /**< the maximum rises by 1 in every key tile, in the kernel's walk */
    FLASH_SCORE_KINDS
} flash_scores;

/**
 * The row bias of FLASH_SCORES_ROW_BIAS: scores near 100 put the maximum far
 * above 88.7, where expf overflows, so a kernel that does not subtract the
 * running maximum before exponentiating writes inf or NaN.
 */
#define FLASH_ROW_BIAS 100.0

/** Rows of canaries after every head's rows of q, k and v in a padded case. */
enum { FLASH_PAD_ROWS = 3 };

/** Elements of gap after every row of o in a padded case (16 bytes and more: v2 stays aligned). */
enum { FLASH_O_GAP = 8 };

/** One case: its shape, storage and what it asks for. */
typedef struct flash_spec {
    int64_t batch, heads_q, heads_kv, nq, nk, head_dim;
    fa_dtype dtype;
    flash_layout layout;
    bool padded;          /**< canary rows after each head's rows of the inputs, gaps after o's rows */
    bool o_fp32;          /**< o in fp32 instead of the input dtype */
    bool lse;             /**< the call asks for lse */
    float scale;          /**< 0: the default 1 / sqrt(head_dim) */
    flash_scores scores;  /**< where the maxima sit */
    double spread;        /**< standard deviation of the scaled random scores */
    fa_mask mask;         /**< FA_MASK_NONE in stage 06's grid; stage 07's cases set every mask */
    int64_t window_left, window_right; /**< FA_MASK_WINDOW's extents */
} flash_spec;

/** "mha", "gqa" or "mqa" for the heads of @p s. */
const char *flash_heads_kind(const flash_spec *s);

/**
 * Writes the description of @p s that names a case: "nq=113 nk=203 d=40
 * bf16 bhnd gqa o=fp32", with " scale=0.118", " padded", " no-lse" and the
 * mask (" causal-tl", " causal-br", " window=17,0") where they apply.
 * Returns @p buf.
 */
const char *flash_spec_describe(const flash_spec *s, char *buf, size_t cap);

/* ---- the grid of shapes ---------------------------------------------------------------------- */

/**
 * FlashAttention-2's test grid: (nq, nk) in {(113, 203), (128, 217),
 * (113, 211), (108, 256), (256, 512), (512, 256), (1024, 1024),
 * (1023, 1024), (1024, 1023), (1, 239), (3, 799), (127, 512), (127, 513),
 * (239, 1), (799, 3), (1, 1)} times head dimensions {32, 40, 59, 64, 96, 111,
 * 128, 160, 192, 224, 256} (40, 59 and 111 in version 1 only: version 2 takes
 * multiples of 8, and these three are only worth it once; version 3 runs
 * version 2's, o in the input dtype only, dtypes as version 2). The full run
 * covers every (shape, head dimension) pair of a version once; what varies
 * from pair to pair rotates so that every shape and every head dimension
 * meets both layouts, every dtype of the version, MHA, GQA and MQA, o in the
 * input dtype and in fp32, each score pattern and spread:
 *   layout (s + k) mod 2, dtype (s + 2k) mod 3 (v1) or (s / 2 + k) mod 2 (v2),
 *   heads (2s + k) mod 3, o_fp32 (s / 2 + k / 2) mod 2, scores (s / 2 + k) mod 4,
 *   spread (s + 2k) mod 4 of {0.3, 1, 3, 8}, padded when (3s + k) mod 4 = 1,
 *   no lse when (s + 3k) mod 5 = 4, an explicit scale when (s + k) mod 7 = 3,
 * for the shape s and head dimension k of the pair (their indices in the
 * lists above). --quick keeps every fifth pair of the shapes of at most
 * FLASH_QUICK_MAX_PAIRS query-key pairs.
 */
int flash_grid_count(int version, bool quick);

/**
 * The head dimensions of the grid of version @p version, the pairs of a
 * shape, into *@p dims; returns their count.
 */
int flash_grid_head_dims(int version, const int64_t **dims);

/** Case @p index (0 .. flash_grid_count() - 1) of the grid of version @p version. */
flash_spec flash_grid_spec(int version, bool quick, int index);

/**
 * The library's refusal of the sizes, dtype, head dimension, mask or scale
 * of @p s for version @p version, as far as fa_attention_supported() checks
 * them before a tensor's pointer (a version's own limits, such as version
 * 2's dtypes, come after): FA_OK when it would go on, so that a case it
 * refuses is named before any memory is made for it.
 */
fa_status flash_spec_refusal(const flash_spec *s, int version);

/** Query-key pairs nq x nk of the largest shape --quick keeps. */
enum { FLASH_QUICK_MAX_PAIRS = 1 << 17 };

/* ---- cases ------------------------------------------------------------------------------------- */

/** A call and the host memory it points to. */
typedef struct flash_case {
    flash_call call;
    fa_attn_case inputs; /**< q, k, v of head_dim >= FA_CASE_MIN_HEAD_DIM */
    void *plain[3];      /**< q, k, v of a smaller head_dim (plain normal values), else NULL */
    void *o;             /**< the span of o (call.params.o), poisoned */
    float *lse;          /**< call.params.lse, poisoned, or NULL */
} flash_case;

/**
 * Zero inputs of the shape and storage of @p s, the outputs poisoned, the
 * call's scale set (s->scale, 0 for the default) and the problem's scale the
 * kernels' (fa_attention_scale()). FA_ERR_INVALID_SIZE, FA_ERR_OVERFLOW,
 * FA_ERR_OUT_OF_MEMORY; on failure @p c is left empty.
 */
fa_status flash_case_alloc(flash_case *c, const flash_spec *s);

/**
 * A random case of @p s for version @p version: scores from
 * fa_adversarial.h's generators (spread, row bias, the maximum placed per key
 * tile of flash_block_n() keys, in the order the version walks them), values
 * normal(0, 1), canaries in the padding rows. Head dimensions below
 * FA_CASE_MIN_HEAD_DIM (no room for the control dimensions) get plain normal
 * q and k of the spread and ignore the pattern.
 */
fa_status flash_case_random(flash_case *c, const flash_spec *s, int version, fa_rng *rng);

/** Frees what @p c owns and zeroes it (safe on a zeroed case). */
void flash_case_free(flash_case *c);

/** Poisons the outputs of @p c again (before another run). */
void flash_case_poison(flash_case *c);

/* ---- fixtures ---------------------------------------------------------------------------------- */

/** A hand-computed case: its call, and o and lse worked out in fixtures.c. */
typedef struct flash_fixture {
    flash_case c;
    double *o;   /**< [batch][heads_q][nq][head_dim] */
    double *lse; /**< [batch][heads_q][nq] */
} flash_fixture;

/** How many fixtures there are (indices 0 .. count - 1). */
extern const int flash_fixture_count;

/** Fixture @p index's name, as case names print it: "2-tile", "no-keys". */
const char *flash_fixture_name(int index);

/**
 * Builds fixture @p index for a kernel of @p block_n keys per tile
 * (flash_block_n()) in @p dtype (the small integers are exact in every
 * dtype), o in @p dtype, lse asked for, layout [B,N,H,D].
 */
fa_status flash_fixture_make(int index, int64_t block_n, fa_dtype dtype, flash_fixture *x);

/** Frees @p x and zeroes it. */
void flash_fixture_free(flash_fixture *x);

#ifdef __cplusplus
}
#endif

#endif /* FLASH_FIXTURES_H */
