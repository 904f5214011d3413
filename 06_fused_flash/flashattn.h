/**
 * @file flashattn.h
 * @brief The attention forward library: one call, fa_attention_forward(),
 *        that runs the fused kernels of \ref stage06 (M24, the launcher).
 *
 * For every query row i of head h in batch b:
 *   s_j = scale q_i . k_j over the keys j the mask allows,
 *   o_i = sum_j softmax(s)_j v_j,  lse_i = ln sum_j exp(s_j)  (natural log),
 * with grouped-query attention: query head h reads key/value head
 * h / (heads_q / heads_kv). A row with no allowed key gets o = 0 and
 * lse = -inf. (FlashAttention 2.8 returns lse = +inf there, PyTorch's math
 * path o = NaN.)
 *
 * Tensors are read through element strides, the last dimension contiguous:
 * element (b, n, h, d) of q is q[b q_strides.batch + n q_strides.row +
 * h q_strides.head + d]. fa_attention_strides_bnhd() and
 * fa_attention_strides_bhnd() fill them for the two usual layouts.
 *
 * A packed batch (cu_seqlens_q and cu_seqlens_k set) holds batch sequences
 * of their own lengths one after the other: q and o are [nq][heads_q][head_dim]
 * and k, v [nk][heads_kv][head_dim] through the row and head strides (the
 * batch strides are unused), nq and nk the totals, and lse is
 * [heads_q][nq]. Sequence b is its own attention problem of
 * cu_seqlens_q[b + 1] - cu_seqlens_q[b] rows and as many keys as
 * cu_seqlens_k gives it, its mask aligned to its own lengths; no row sees
 * another sequence's keys. fa_attention_forward() reads the offsets back to
 * the host to check them (one synchronisation of the stream), and the
 * kernels read them again: they must not change until the call is done.
 * Rows of q and o outside every sequence (before cu_seqlens_q[0], after
 * cu_seqlens_q[batch]) are neither read nor written.
 *
 * Every field is validated before any launch: a bad one gives a status and a
 * message (fa_last_error()) naming the field, its value and what is allowed;
 * nothing is written then. Zero-size work (batch, heads or nq of 0) is a
 * valid no-op. The library allocates no device memory: the only device
 * memory it writes is o and lse (a packed batch's call copies its offsets
 * into a host buffer of 8 (batch + 1) bytes).
 */
#ifndef FLASHATTN_H
#define FLASHATTN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fa_attention_ref.h"
#include "fa_half.h"
#include "fa_mask.h"
#include "fa_status.h"

#if FA_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Which kernel runs. */
typedef enum fa_variant {
    FA_VARIANT_AUTO = 0,         /**< v3 where it runs (from head dim 40), else v2 where it runs, else v1 */
    FA_VARIANT_CUDA_CORES = 1,   /**< v1: fp32 on CUDA cores; any dtype, any head dim up to 256 */
    FA_VARIANT_TENSOR_CORES = 2, /**< v2: mma.sync (sm_80+), FlashAttention-2's structure; bf16/fp16 */
    FA_VARIANT_HOPPER = 3,       /**< v3: wgmma and TMA, warp-specialised (compute capability 9.0);
                                      bf16/fp16, head dim a multiple of 8 up to 256, o in the input dtype, any
                                      mask, plain or packed, nk >= 1 */
} fa_variant;

/** Element strides of one tensor of shape [batch][rows][heads][head_dim] (the last is 1). */
typedef struct fa_strides {
    int64_t batch;
    int64_t row;
    int64_t head;
} fa_strides;

/** One attention forward call. Zero-initialise, then set what applies. */
typedef struct fa_attention_params {
    const void *q;          /**< [batch][nq][heads_q][head_dim] through q_strides, of dtype */
    const void *k;          /**< [batch][nk][heads_kv][head_dim] through k_strides */
    const void *v;          /**< [batch][nk][heads_kv][head_dim] through v_strides */
    void *o;                /**< [batch][nq][heads_q][head_dim] through o_strides: dtype, or fp32 */
    float *lse;             /**< optional [batch][heads_q][nq] fp32, contiguous (packed:
                                 [heads_q][nq]); NULL: not written */
    fa_dtype dtype;         /**< of q, k, v: FA_F32, FA_BF16 or FA_F16 */
    bool o_fp32;            /**< o is fp32 instead of dtype */
    int64_t batch;
    int64_t heads_q;        /**< a multiple of heads_kv (MHA: equal; MQA: heads_kv = 1) */
    int64_t heads_kv;
    int64_t nq;             /**< query rows */
    int64_t nk;             /**< keys (0: every row has no allowed key) */
    int64_t head_dim;
    fa_strides q_strides, k_strides, v_strides, o_strides;
    float scale;            /**< multiplies q.k; 0 means 1 / sqrt(head_dim); else finite and > 0 */
    fa_mask mask;           /**< which keys each row sees (fa_mask.h): none, causal top-left or
                                 bottom-right, or a sliding window */
    int64_t window_left;    /**< FA_MASK_WINDOW: keys allowed before the bottom-right diagonal, */
    int64_t window_right;   /**< and after it; -1 unbounded (FlashAttention's window_size);
                                 ignored by the other masks */
    const int32_t *cu_seqlens_q; /**< a packed batch (both or neither; NULL: not packed): device
                                      int32 [batch + 1], sequence b's query rows are
                                      cu_seqlens_q[b] .. cu_seqlens_q[b + 1] - 1 of q and o */
    const int32_t *cu_seqlens_k; /**< and its keys cu_seqlens_k[b] .. cu_seqlens_k[b + 1] - 1 */
    int64_t max_seqlen_q;   /**< packed: at least the longest sequence's rows (it sizes the grid;
                                 0: every sequence empty, nothing to do) */
    int64_t max_seqlen_k;   /**< packed: at least the longest sequence's keys */
    fa_variant variant;     /**< FA_VARIANT_AUTO, or one kernel (refused if it cannot run the call) */
} fa_attention_params;

/** Strides of contiguous [batch][n][heads][head_dim] tensors (PyTorch's q.transpose(1, 2) layout). */
fa_strides fa_attention_strides_bnhd(int64_t n, int64_t heads, int64_t head_dim);

/** Strides of contiguous [batch][heads][n][head_dim] tensors (PyTorch's SDPA layout). */
fa_strides fa_attention_strides_bhnd(int64_t n, int64_t heads, int64_t head_dim);

/**
 * Validates every field of @p p (without touching device memory) and says
 * which kernel would run: *@p chosen (may be NULL) receives the variant.
 * FA_VARIANT_HOPPER and FA_VARIANT_AUTO also ask the current device (version
 * 3 runs on compute capability 9.0 only), so their answer depends on
 * cudaSetDevice().
 * @return FA_OK, or the status of the first bad field with its message:
 *         ::FA_ERR_NULL_POINTER, ::FA_ERR_INVALID_SIZE, ::FA_ERR_BAD_STRIDE,
 *         ::FA_ERR_MISALIGNED, ::FA_ERR_OVERFLOW, ::FA_ERR_INVALID_ARGUMENT,
 *         or ::FA_ERR_UNSUPPORTED (what no kernel of this build runs, or what
 *         the variant asked for cannot run, with what it can).
 */
fa_status fa_attention_supported(const fa_attention_params *p, fa_variant *chosen);

/**
 * The numerical method of the kernel fa_attention_forward() would run for
 * @p p (block size, accumulation, P rounding, exp, normalisation, output
 * dtype): what a checker needs to judge its output by its own error bound
 * (fa_attention_reference()).
 * @return as fa_attention_supported().
 */
fa_status fa_attention_method(const fa_attention_params *p, fa_attn_method *method);

/** The scale the kernels use: p->scale, or 1 / sqrt(head_dim) (in fp32) when it is 0. */
float fa_attention_scale(const fa_attention_params *p);

/** "auto", "v1 CUDA cores", "v2 tensor cores", "v3 Hopper" (or "unknown"). */
const char *fa_attention_variant_name(fa_variant variant);

/**
 * sizeof(fa_attention_params) in this build of the library: a binding that
 * mirrors the struct field by field (python/flashattn.py) compares its own
 * size with it when it loads, so a header changed without its mirror fails
 * there instead of passing shifted fields.
 */
size_t fa_attention_params_size(void);

#if FA_HAVE_CUDA
/**
 * Enqueues the attention forward of @p p on @p stream: validates
 * (fa_attention_supported()), chooses the kernel and launches it. No
 * synchronisation, except for a packed batch: its offsets are copied to the
 * host and checked first (non-decreasing, within nq and nk, no sequence
 * longer than max_seqlen_q or max_seqlen_k), so a packed call cannot be
 * captured in a CUDA graph.
 * @return as fa_attention_supported(), ::FA_ERR_INVALID_ARGUMENT for bad
 *         offsets, ::FA_ERR_OUT_OF_MEMORY when their host buffer cannot be
 *         had, ::FA_ERR_NO_DEVICE, or ::FA_ERR_CUDA when the launch (or the
 *         copy) fails.
 */
fa_status fa_attention_forward(const fa_attention_params *p, cudaStream_t stream);
#endif

#ifdef __cplusplus
}
#endif

#endif /* FLASHATTN_H */
