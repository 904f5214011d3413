/**
 * @file online.h
 * @brief Stage 04 API: online softmax. M13 running max, M14 correction factor,
 *        M15 update running sum, M16 rescale output (the lesson is \ref stage04).
 *
 * Every kernel has two launchers with one signature: `ref_<op>` (the solution,
 * online.cu) and `learner_<op>` (the exercise, learner/online.cu). Both are
 * the same launch code, harness/launch.cu, compiled once against each kernel
 * file: they call `<op>_validate()` before touching the GPU, return FA_OK at
 * once for zero-size work, and enqueue one kernel on the given stream without
 * waiting for it.
 *
 * The kernels, by milestone:
 * - M13-M16, the traces: one thread per row walks the row chunk by chunk and
 *   records, after every chunk, one part of the running state: the running
 *   max m_t (M13), the correction factor alpha_t (M14), the running sum l_t
 *   (M15), the unnormalised output o_t (M16). They exist to check each update
 *   on its own against the invariants of the lesson; they are not fast.
 * - M15 also: softmax_rows_online, the one-pass softmax of rows of any length.
 * - M16 also: attn_rows_online, attention one query row per warp with keys and
 *   values visited in chunks; the warps of a block share each chunk of K and V
 *   through shared memory.
 *
 * Rules shared by every launcher:
 * - pointers are device pointers to fp32 arrays with the 4-byte alignment of a
 *   float (every load is a scalar load); NULL is accepted only where the array
 *   has no element; outputs must not overlap inputs;
 * - sizes are element counts of type int64_t, never negative; every offset is
 *   computed in 64 bits;
 * - a score of -inf is a masked entry: it weighs exactly 0. A row whose
 *   entries are all masked (or that has none) is a row with no allowed key:
 *   its probabilities and output are 0 and its lse is -inf, never NaN;
 * - NaN follows the course's one rule for a max (fa_max_nan(), fa_math.h): a
 *   NaN entry makes the running max NaN from its chunk on, and with it every
 *   weight, the sum, the output and the lse of its row (and every probability
 *   of the row); other rows are unaffected. A +inf entry makes its row NaN
 *   too (its weight is exp(inf - inf)).
 *
 * A failing call returns a status and records a message that names the
 * argument, its value and what was expected (see fa_last_error()).
 */
#ifndef ONLINE_H
#define ONLINE_H

#include <stddef.h>
#include <stdint.h>

#include "fa_index.h"
#include "fa_mask.h"
#include "fa_status.h"

#if FA_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Launch shapes of the stage, shared by the kernels, the launch code
 * (harness/launch.cu), the CPU model and the bounds.
 */
enum {
    ONLINE_TRACE_THREADS = 128,       /**< threads per block of the traces (one thread per row) */
    SOFTMAX_ONLINE_CHUNK = 4,         /**< entries a thread folds into its state per update */
    SOFTMAX_ONLINE_MIN_THREADS = 32,  /**< threads per row for the shortest rows: one warp */
    SOFTMAX_ONLINE_MAX_THREADS = 256, /**< threads per row from 1024 entries on */
    /** Warps per softmax block at most: the states the block merges across warps. */
    SOFTMAX_ONLINE_MAX_WARPS = SOFTMAX_ONLINE_MAX_THREADS / FA_WARP_THREADS,
    ATTN_ONLINE_WARPS = 8,            /**< query rows per attention block, one per warp */
    ATTN_ONLINE_THREADS = ATTN_ONLINE_WARPS * FA_WARP_THREADS, /**< threads per attention block */
    ATTN_ONLINE_MAX_CHUNK = 64,       /**< largest key chunk: two keys per lane */
    /** Keys of a chunk each lane scores: lane j takes keys j and j + 32. */
    ATTN_ONLINE_KEYS_PER_LANE = ATTN_ONLINE_MAX_CHUNK / FA_WARP_THREADS,
    ATTN_ONLINE_MAX_HEAD_DIM = 256,   /**< largest head dimension: eight columns per lane */
    ATTN_ONLINE_VECTOR_FLOATS = 4     /**< floats per float4: the shared tiles' unit */
};

/** Which part of the state a trace records after each chunk (the trace kernel's template argument). */
typedef enum online_trace_op {
    ONLINE_TRACE_MAX = 0,    /**< M13: m_t */
    ONLINE_TRACE_CORRECTION, /**< M14: alpha_t */
    ONLINE_TRACE_SUM,        /**< M15: l_t */
    ONLINE_TRACE_OUTPUT      /**< M16: o_t */
} online_trace_op;

/**
 * Threads the softmax_rows_online kernel gives a row of @p n entries: the
 * smallest power of two from ::SOFTMAX_ONLINE_MIN_THREADS up to
 * ::SOFTMAX_ONLINE_MAX_THREADS that covers the row with one chunk per thread,
 * so short rows do not leave most of a block idle. The CPU model and the
 * bound replay the kernel with this same count.
 */
static inline int softmax_rows_online_threads(int64_t n)
{
    int threads = SOFTMAX_ONLINE_MIN_THREADS;
    while (threads < SOFTMAX_ONLINE_MAX_THREADS && (int64_t)threads * SOFTMAX_ONLINE_CHUNK < n)
        threads *= 2;
    return threads;
}

/** Chunks of a row of @p n entries cut every @p chunk entries (chunk >= 1): the trace's length. */
static inline FA_CONSTEXPR FA_HOST_DEVICE int64_t online_chunk_count(int64_t n, int64_t chunk)
{
    return fa_ceil_div(n, chunk);
}

/**
 * Row stride of the attention kernel's shared tiles, in float4s: head_dim
 * rounded up to whole float4s, then to an odd count. A lane reading its own
 * row of a tile as float4s is served with seven other lanes in one wavefront;
 * with an odd stride the eight rows start in eight different groups of four
 * banks, so the read has no bank conflict.
 */
static inline FA_CONSTEXPR FA_HOST_DEVICE int attn_tile_stride4(int64_t head_dim)
{
    return (int)fa_ceil_div(head_dim, ATTN_ONLINE_VECTOR_FLOATS) | 1;
}

/**
 * Dynamic shared memory the launch gives each attention block, in bytes: the
 * q rows of its ::ATTN_ONLINE_WARPS warps, then one chunk of K and one of V,
 * every row attn_tile_stride4(head_dim) float4s. At most about 138 KiB
 * (head_dim 256, chunk 64).
 */
static inline FA_CONSTEXPR FA_HOST_DEVICE int64_t attn_shared_bytes(int64_t head_dim,
                                                                    int64_t chunk)
{
    return (ATTN_ONLINE_WARPS + 2 * chunk) * attn_tile_stride4(head_dim) *
           (int64_t)(ATTN_ONLINE_VECTOR_FLOATS * sizeof(float));
}

/**
 * One attention problem for attn_rows_online. Tensors are contiguous fp32,
 * [batch][heads][rows][head_dim] row-major; query head h reads key/value head
 * h / (heads_q / heads_kv) (grouped-query attention; heads_kv = heads_q is
 * plain multi-head attention).
 */
typedef struct attn_online_args {
    const float *q;     /**< [batch][heads_q][nq][head_dim] */
    const float *k;     /**< [batch][heads_kv][nk][head_dim] */
    const float *v;     /**< [batch][heads_kv][nk][head_dim] */
    float *o;           /**< [batch][heads_q][nq][head_dim] */
    float *lse;         /**< [batch][heads_q][nq], natural log; NULL when not wanted */
    int64_t batch;      /**< >= 0 */
    int64_t heads_q;    /**< >= 0, a multiple of heads_kv */
    int64_t heads_kv;   /**< >= 1 when heads_q > 0 */
    int64_t nq;         /**< query rows, >= 0 */
    int64_t nk;         /**< keys, >= 0 (0: every row has no allowed key) */
    int64_t head_dim;   /**< 1 .. ::ATTN_ONLINE_MAX_HEAD_DIM */
    float scale;        /**< multiplies q.k; finite (1/sqrt(head_dim) usually) */
    fa_mask mask;       /**< none, causal top-left or causal bottom-right (fa_mask_key_range()) */
    int64_t chunk;      /**< keys per chunk, 1 .. ::ATTN_ONLINE_MAX_CHUNK */
} attn_online_args;

/* ---- validation (plain C) ---------------------------------------------------------------- */

/**
 * Checks the arguments of ref_online_max_trace() and learner_online_max_trace()
 * without touching memory.
 * @return FA_OK (also for rows = 0 or n = 0, whatever the pointers), or
 *         ::FA_ERR_INVALID_SIZE (rows or n < 0, chunk < 1), ::FA_ERR_OVERFLOW
 *         (rows * n floats overflow 64-bit byte offsets, or the grid needs
 *         more than 2^31 - 1 blocks), ::FA_ERR_NULL_POINTER (x or the trace is
 *         NULL while it has elements), ::FA_ERR_MISALIGNED (a pointer not
 *         4-byte aligned) or ::FA_ERR_INVALID_ARGUMENT (the trace overlaps x).
 */
fa_status online_max_trace_validate(const float *x, const float *max_trace, int64_t rows,
                                    int64_t n, int64_t chunk);

/** Checks the arguments of the M14 trace launchers; as online_max_trace_validate(). */
fa_status online_correction_trace_validate(const float *x, const float *correction_trace,
                                           int64_t rows, int64_t n, int64_t chunk);

/** Checks the arguments of the M15 trace launchers; as online_max_trace_validate(). */
fa_status online_sum_trace_validate(const float *x, const float *sum_trace, int64_t rows,
                                    int64_t n, int64_t chunk);

/**
 * Checks the arguments of the M16 trace launchers: as
 * online_max_trace_validate(), with @p v checked like @p x (and the trace
 * must not overlap v either).
 */
fa_status online_output_trace_validate(const float *x, const float *v,
                                       const float *output_trace, int64_t rows, int64_t n,
                                       int64_t chunk);

/**
 * Checks the arguments of ref_softmax_rows_online() and its learner twin.
 * @return FA_OK (also for rows = 0, whatever the pointers), or
 *         ::FA_ERR_INVALID_SIZE (rows or n < 0), ::FA_ERR_UNSUPPORTED (rows
 *         above 2^31 - 1, the grid limit of one block per row),
 *         ::FA_ERR_OVERFLOW (rows * n floats overflow 64-bit byte offsets),
 *         ::FA_ERR_NULL_POINTER (x or p NULL while rows * n > 0),
 *         ::FA_ERR_MISALIGNED (a pointer not 4-byte aligned) or
 *         ::FA_ERR_INVALID_ARGUMENT (p or lse overlaps x, or lse overlaps p).
 */
fa_status softmax_rows_online_validate(const float *x, const float *p, const float *lse,
                                       int64_t rows, int64_t n);

/**
 * Checks the arguments of ref_attn_rows_online() and its learner twin.
 * @return FA_OK (also when batch * heads_q * nq = 0, whatever the
 *         pointers), or ::FA_ERR_NULL_POINTER (@p args NULL, or a tensor NULL
 *         while it has elements), ::FA_ERR_INVALID_SIZE (a size < 0,
 *         heads_kv < 1 with heads_q > 0, heads_q not a multiple of heads_kv,
 *         chunk < 1), ::FA_ERR_UNSUPPORTED (head_dim outside 1..256, chunk
 *         above 64), ::FA_ERR_INVALID_ARGUMENT (scale not finite, mask not an
 *         ::fa_mask, o or lse overlapping an input or each other),
 *         ::FA_ERR_MISALIGNED (a pointer not 4-byte aligned) or
 *         ::FA_ERR_OVERFLOW (a tensor's byte size overflows 64 bits, or the
 *         grid needs more than 2^31 - 1 blocks).
 */
fa_status attn_rows_online_validate(const attn_online_args *args);

#if FA_HAVE_CUDA
/* ---- launchers (CUDA) -------------------------------------------------------------------- */

/**
 * M13: the running max after every chunk of every row.
 *
 * Row r of x is cut into T = online_chunk_count(n, chunk) chunks of @p chunk
 * entries (the last one shorter). After chunk t, max_trace[r * T + t] = max
 * of x[r][0 .. min((t + 1) chunk, n)), -inf while every entry so far is
 * -inf, NaN from the chunk of a NaN entry on. The max is exact (max never
 * rounds), so the trace is known bit for bit.
 *
 * @param x          [rows][n] row-major
 * @param max_trace  [rows][T] row-major
 * @param rows       >= 0
 * @param n          >= 0 (0: no chunk, nothing written)
 * @param chunk      entries per chunk, >= 1 (chunk >= n: one chunk)
 * @param stream     the stream the kernel is enqueued on
 * @return as online_max_trace_validate(), or ::FA_ERR_CUDA / ::FA_ERR_NO_DEVICE
 *         when the launch fails; the learner's twin returns
 *         ::FA_ERR_NOT_IMPLEMENTED while its file holds `FA_TODO(13);`.
 */
fa_status ref_online_max_trace(const float *x, float *max_trace, int64_t rows, int64_t n,
                               int64_t chunk, cudaStream_t stream);
/** The learner's M13, same contract as ref_online_max_trace(). */
fa_status learner_online_max_trace(const float *x, float *max_trace, int64_t rows, int64_t n,
                                   int64_t chunk, cudaStream_t stream);

/**
 * M14: the correction factor of every chunk, alpha_t = exp(m_(t-1) - m_t) in
 * [0, 1], with the chunks and m_t of ref_online_max_trace(): the factor that
 * rescales what was summed against the old max to the new one. It is 1 when
 * the max did not rise and 0 when the state before the chunk was empty
 * (m_(t-1) = -inf, which includes t = 0): nothing to rescale, and never NaN
 * unless the row holds a NaN.
 *
 * @param x                 [rows][n] row-major
 * @param correction_trace  [rows][T] row-major, T = online_chunk_count(n, chunk)
 * @param rows              >= 0
 * @param n                 >= 0 (0: no chunk, nothing written)
 * @param chunk             entries per chunk, >= 1
 * @param stream            the stream the kernel is enqueued on
 * @return as online_correction_trace_validate(), or a launch failure; the
 *         learner's twin returns ::FA_ERR_NOT_IMPLEMENTED while its file
 *         holds `FA_TODO(14);`.
 */
fa_status ref_online_correction_trace(const float *x, float *correction_trace, int64_t rows,
                                      int64_t n, int64_t chunk, cudaStream_t stream);
/** The learner's M14, same contract as ref_online_correction_trace(). */
fa_status learner_online_correction_trace(const float *x, float *correction_trace,
                                          int64_t rows, int64_t n, int64_t chunk,
                                          cudaStream_t stream);

/**
 * M15: the running sum after every chunk, sum_trace[r * T + t] = l_t =
 * sum over the entries j of chunks 0..t of exp(x_j - m_t), computed online:
 * l_t = alpha_t l_(t-1) + sum over chunk t of exp(x_j - m_t). 0 while every
 * entry so far is masked.
 *
 * @param x          [rows][n] row-major
 * @param sum_trace  [rows][T] row-major, T = online_chunk_count(n, chunk)
 * @param rows       >= 0
 * @param n          >= 0 (0: no chunk, nothing written)
 * @param chunk      entries per chunk, >= 1
 * @param stream     the stream the kernel is enqueued on
 * @return as online_sum_trace_validate(), or a launch failure; the learner's
 *         twin returns ::FA_ERR_NOT_IMPLEMENTED while its file holds
 *         `FA_TODO(15);`.
 */
fa_status ref_online_sum_trace(const float *x, float *sum_trace, int64_t rows, int64_t n,
                               int64_t chunk, cudaStream_t stream);
/** The learner's M15 trace, same contract as ref_online_sum_trace(). */
fa_status learner_online_sum_trace(const float *x, float *sum_trace, int64_t rows, int64_t n,
                                   int64_t chunk, cudaStream_t stream);

/**
 * M16: the unnormalised output after every chunk, for one value per entry:
 * output_trace[r * T + t] = o_t = sum over the entries j of chunks 0..t of
 * exp(x_j - m_t) v_j, computed online: o_t = alpha_t o_(t-1) + sum over
 * chunk t of exp(x_j - m_t) v_j. (o_t / l_t is the softmax-weighted mean of
 * the values seen; attention does the same for every column of V.) The value
 * of a masked entry is never used.
 *
 * @param x             [rows][n] row-major
 * @param v             [rows][n] row-major: the value of each entry
 * @param output_trace  [rows][T] row-major, T = online_chunk_count(n, chunk)
 * @param rows          >= 0
 * @param n             >= 0 (0: no chunk, nothing written)
 * @param chunk         entries per chunk, >= 1
 * @param stream        the stream the kernel is enqueued on
 * @return as online_output_trace_validate(), or a launch failure; the
 *         learner's twin returns ::FA_ERR_NOT_IMPLEMENTED while its file
 *         holds `FA_TODO(16);`.
 */
fa_status ref_online_output_trace(const float *x, const float *v, float *output_trace,
                                  int64_t rows, int64_t n, int64_t chunk, cudaStream_t stream);
/** The learner's M16 trace, same contract as ref_online_output_trace(). */
fa_status learner_online_output_trace(const float *x, const float *v, float *output_trace,
                                      int64_t rows, int64_t n, int64_t chunk,
                                      cudaStream_t stream);

/**
 * M15, the complete kernel: softmax of every row with the max and the sum
 * found in one pass, p[r][j] = exp(x[r][j] - m_r) / l_r, and optionally
 * lse[r] = m_r + ln l_r.
 *
 * One block per row, softmax_rows_online_threads(n) threads. Pass 1 reads the
 * row once: each thread folds its entries into its own state (m, l),
 * ::SOFTMAX_ONLINE_CHUNK strided entries per update, then the block merges the
 * states (the associative combine). Pass 2 reads the row again to write p:
 * the normalised probabilities need the final m and l, so they cannot be
 * written before the whole row is seen. 8 bytes read and 4 written per entry,
 * against 12 read and 4 written for the three passes of \ref stage03.
 *
 * Edges: a row with no allowed entry (all -inf, or n = 0) gets p = 0 and
 * lse = -inf; NaN and +inf make their row NaN (file comment).
 *
 * @param x       [rows][n] row-major
 * @param p       [rows][n] row-major; must not overlap x
 * @param lse     [rows], natural log, or NULL
 * @param rows    >= 0, at most 2^31 - 1
 * @param n       >= 0, any length
 * @param stream  the stream the kernel is enqueued on
 * @return as softmax_rows_online_validate(), or a launch failure; the
 *         learner's twin returns ::FA_ERR_NOT_IMPLEMENTED while its file
 *         holds `FA_TODO(15);`.
 */
fa_status ref_softmax_rows_online(const float *x, float *p, float *lse, int64_t rows, int64_t n,
                                  cudaStream_t stream);
/** The learner's one-pass softmax, same contract as ref_softmax_rows_online(). */
fa_status learner_softmax_rows_online(const float *x, float *p, float *lse, int64_t rows,
                                      int64_t n, cudaStream_t stream);

/**
 * M16, the complete kernel: attention with online softmax, one query row per
 * warp. For row i of head h in batch b: s_j = scale q_i . k_j over the
 * allowed keys j of fa_mask_key_range(mask, i, nq, nk), visited in chunks of
 * args->chunk keys in order; o_i = sum_j exp(s_j - m) v_j / l and
 * lse_i = m + ln l, with the state (m, l, o) updated once per chunk. S and P
 * are never stored: Q, K, V are read and O written, nothing else.
 *
 * A block takes ::ATTN_ONLINE_WARPS consecutive rows of one (batch, head),
 * one per warp, with attn_shared_bytes(head_dim, chunk) bytes of dynamic
 * shared memory, above 48 KiB opted into on each launch. A call needing more
 * than the device's opt-in limit (sm_86 and sm_89 offer 99 KiB) returns
 * ::FA_ERR_UNSUPPORTED naming head_dim, chunk and both byte counts; a smaller
 * chunk then fits. The reference copies each chunk of K and V into that
 * memory once for all its rows and stops after the last chunk any of its
 * rows may see; the per-row arithmetic is that of one warp alone, so the
 * result of a row does not depend on its neighbours.
 *
 * fp32 throughout: dot products by FMA in the order d = 0..head_dim-1, expf,
 * one division per output. A row with no allowed key gets o = 0 and
 * lse = -inf. Judged by the blocked online bound of \ref numerics with
 * block_n = args->chunk.
 *
 * @param args    the problem (see ::attn_online_args)
 * @param stream  the stream the kernel is enqueued on
 * @return as attn_rows_online_validate(), ::FA_ERR_UNSUPPORTED when the
 *         tiles exceed the device's shared memory per block, or a launch
 *         failure; the learner's twin returns ::FA_ERR_NOT_IMPLEMENTED while
 *         its file holds `FA_TODO(16);`.
 */
fa_status ref_attn_rows_online(const attn_online_args *args, cudaStream_t stream);
/** The learner's online attention, same contract as ref_attn_rows_online(). */
fa_status learner_attn_rows_online(const attn_online_args *args, cudaStream_t stream);
#endif /* FA_HAVE_CUDA */

#ifdef __cplusplus
}
#endif

#endif /* ONLINE_H */
