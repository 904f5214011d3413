/*
 * Stage 04 — YOUR KERNELS (the exercise). Lesson: 04_online_softmax/README.md.
 *
 * Work through the milestones in order. For each one:
 *   1. write the state function(s) and the kernel code marked TODO(Mn) below
 *      (signatures are given);
 *   2. delete the FA_TODO(...) line at the top of the milestone's launcher(s);
 *   3. build and check:   cmake --build build -t stage04
 *                          build/04_online_softmax/stage04 --impl learner --milestone N
 * The driver runs your kernels on hand-computed fixtures and random rows
 * (rising, falling, masked, extreme, ...) and names the first case and
 * coordinate that is wrong.
 *
 * What each milestone asks for:
 *   M13 running max:        online_running_max(), then the max part of
 *                           online_trace_kernel;
 *   M14 correction factor:  online_max_offset(), online_correction(), the
 *                           trace's alpha;
 *   M15 update running sum: online_weight(), online_update_sum(), the trace's
 *                           l; then the one-pass softmax: online_merge(),
 *                           merge_lanes(), online_normalise(), online_lse()
 *                           and softmax_rows_online_kernel;
 *   M16 rescale output:     online_rescale_output(), the trace's o; then
 *                           attn_rows_online_kernel.
 *
 * Do not include online_state.cuh: it is the solution. Your state functions
 * live in this file. The launch code is complete (validation, grid, launch,
 * error check) and the same as the reference's; it sits in static launch_*
 * helpers so that each public launcher reads as two lines: the FA_TODO(...)
 * to delete, then the call. `[[maybe_unused]]` only keeps the compiler quiet
 * while a function is not called yet, and the `(void)arg;` lines silence
 * "unused parameter": delete them as you go.
 */
#include <math.h>
#include <stdint.h>

#include <cuda_runtime.h>

#include "fa_device.h"
#include "online.h"
#include "fa_index.h"

/* Keys each lane scores per chunk (attention), warps per softmax block at most. */
[[maybe_unused]] static constexpr int KEYS_PER_LANE = ATTN_ONLINE_MAX_CHUNK / FA_WARP_THREADS;
[[maybe_unused]] static constexpr int SOFTMAX_MAX_WARPS =
    SOFTMAX_ONLINE_MAX_THREADS / FA_WARP_THREADS;

static_assert(ATTN_ONLINE_MAX_CHUNK % FA_WARP_THREADS == 0,
              "a chunk is scored by whole warps: KEYS_PER_LANE keys per lane");
static_assert(ATTN_ONLINE_MAX_HEAD_DIM % FA_WARP_THREADS == 0,
              "each lane owns head_dim / 32 output columns");

/* ---- the state of one row ---------------------------------------------------------------- */

/** The running max and sum of one row; output columns live with the caller. */
typedef struct online_state {
    float max; /* m: the largest entry seen; -inf while none is allowed */
    float sum; /* l = sum_j exp(x_j - m) over the entries seen */
} online_state;

/** The state before any entry. Given: m = -inf (nothing seen), l = 0. */
[[maybe_unused]] static __device__ __forceinline__ online_state online_state_empty(void)
{
    online_state empty = {-INFINITY, 0.0f};
    return empty;
}

/*
 * TODO(M13): the running max after a chunk whose largest entry is chunk_max.
 * One line. Use fmaxf (it ignores NaN; a NaN entry reaches the sum instead).
 */
[[maybe_unused]] static __device__ __forceinline__ float online_running_max(float max_old,
                                                                            float chunk_max)
{
    (void)max_old;
    (void)chunk_max;
    return 0.0f;
}

/*
 * TODO(M14): the max to subtract inside exp. While every entry seen is masked,
 * m = -inf, and x - m = (-inf) - (-inf) = NaN would poison the row. Return m,
 * or 0 when m is -inf (exp(-inf - 0) = 0: masked entries weigh nothing).
 */
[[maybe_unused]] static __device__ __forceinline__ float online_max_offset(float max)
{
    (void)max;
    return 0.0f;
}

/*
 * TODO(M14): alpha = exp(max_old - max_new), with max_new passed through
 * online_max_offset(). 1 when the max did not rise, 0 from the empty state.
 */
[[maybe_unused]] static __device__ __forceinline__ float online_correction(float max_old,
                                                                           float max_new)
{
    (void)max_old;
    (void)max_new;
    return 0.0f;
}

/* TODO(M15): the weight exp(x - m) of an entry (0 for x = -inf); the offset again. */
[[maybe_unused]] static __device__ __forceinline__ float online_weight(float x, float max)
{
    (void)x;
    (void)max;
    return 0.0f;
}

/* TODO(M15): l' = alpha * l + chunk_sum, rounded once: fmaf. */
[[maybe_unused]] static __device__ __forceinline__ float online_update_sum(float sum, float alpha,
                                                                           float chunk_sum)
{
    (void)sum;
    (void)alpha;
    (void)chunk_sum;
    return 0.0f;
}

/* TODO(M16): o' = alpha * o + chunk_out for one column: the same update as l. */
[[maybe_unused]] static __device__ __forceinline__ float online_rescale_output(float out,
                                                                               float alpha,
                                                                               float chunk_out)
{
    (void)out;
    (void)alpha;
    (void)chunk_out;
    return 0.0f;
}

/*
 * TODO(M15): merge two partial states of one row:
 *   m = max(m_a, m_b),  l = l_a exp(m_a - m) + l_b exp(m_b - m),
 * returning the two factors in *alpha_a and *alpha_b (online_correction()).
 * Hint: write the sum with __fmul_rn and __fadd_rn. The compiler cannot fuse
 * those into an FMA, so merge(a, b) and merge(b, a) give the same bits, which
 * merge_lanes() relies on.
 */
[[maybe_unused]] static __device__ __forceinline__ online_state
online_merge(online_state a, online_state b, float *alpha_a, float *alpha_b)
{
    (void)b;
    *alpha_a = 0.0f;
    *alpha_b = 0.0f;
    return a;
}

/* TODO(M15): o / l, and 0 when l = 0 (a row with no allowed entry: 0 / 0 is NaN). */
[[maybe_unused]] static __device__ __forceinline__ float online_normalise(float out, float sum)
{
    (void)out;
    (void)sum;
    return 0.0f;
}

/* TODO(M15): lse = m + logf(l), and -inf when l = 0. */
[[maybe_unused]] static __device__ __forceinline__ float online_lse(online_state state)
{
    (void)state;
    return 0.0f;
}

/* ---- M13-M16: the traces ----------------------------------------------------------------- */

/** Which part of the state a trace records after each chunk. */
enum online_trace_kind { TRACE_MAX, TRACE_CORRECTION, TRACE_SUM, TRACE_OUTPUT };

/*
 * TODO(M13-M16): one thread per row walks its row chunk by chunk and writes,
 * after chunk t, trace[row * chunks + t] = the part of the state TRACE names.
 *
 *   row = blockIdx.x * blockDim.x + threadIdx.x (as int64_t); return if >= rows
 *   state = online_state_empty(); out = 0
 *   for t in 0 .. chunks-1, entries start = t * chunk .. min(start + chunk, n) - 1:
 *     chunk_max   = fmaxf over the chunk's entries
 *     max_new     = online_running_max(state.max, chunk_max)          M13
 *     alpha       = online_correction(state.max, max_new)             M14
 *     chunk_sum   = sum of online_weight(x_j, max_new), in order      M15
 *     chunk_out   = fmaf(weight_j, v[row * n + j], chunk_out), skipping x_j = -inf
 *                   (a masked entry's value is never read)            M16
 *     state.sum   = online_update_sum(state.sum, alpha, chunk_sum)
 *     out         = online_rescale_output(out, alpha, chunk_out)
 *     state.max   = max_new
 *     record state.max, alpha, state.sum or out (switch on TRACE)
 * For M13 only the max part is needed; the rest comes with M14-M16.
 */
template <online_trace_kind TRACE>
static __global__ void __launch_bounds__(ONLINE_TRACE_THREADS)
online_trace_kernel(const float *x, const float *v, float *trace, int64_t rows, int64_t n,
                    int64_t chunk, int64_t chunks)
{
    (void)x;
    (void)v;
    (void)trace;
    (void)rows;
    (void)n;
    (void)chunk;
    (void)chunks;
}

template <online_trace_kind TRACE>
static fa_status launch_trace(const float *x, const float *v, float *trace, int64_t rows,
                              int64_t n, int64_t chunk, cudaStream_t stream)
{
    if (rows == 0 || n == 0)
        return FA_OK;
    const int64_t blocks = fa_ceil_div(rows, ONLINE_TRACE_THREADS);
    online_trace_kernel<TRACE><<<(unsigned)blocks, ONLINE_TRACE_THREADS, 0, stream>>>(
        x, v, trace, rows, n, chunk, online_chunk_count(n, chunk));
    FA_LAUNCH_CHECK();
    return FA_OK;
}

static fa_status launch_max_trace(const float *x, float *max_trace, int64_t rows, int64_t n,
                                  int64_t chunk, cudaStream_t stream)
{
    FA_TRY(online_max_trace_validate(x, max_trace, rows, n, chunk));
    return launch_trace<TRACE_MAX>(x, nullptr, max_trace, rows, n, chunk, stream);
}

static fa_status launch_correction_trace(const float *x, float *correction_trace, int64_t rows,
                                         int64_t n, int64_t chunk, cudaStream_t stream)
{
    FA_TRY(online_correction_trace_validate(x, correction_trace, rows, n, chunk));
    return launch_trace<TRACE_CORRECTION>(x, nullptr, correction_trace, rows, n, chunk, stream);
}

static fa_status launch_sum_trace(const float *x, float *sum_trace, int64_t rows, int64_t n,
                                  int64_t chunk, cudaStream_t stream)
{
    FA_TRY(online_sum_trace_validate(x, sum_trace, rows, n, chunk));
    return launch_trace<TRACE_SUM>(x, nullptr, sum_trace, rows, n, chunk, stream);
}

static fa_status launch_output_trace(const float *x, const float *v, float *output_trace,
                                     int64_t rows, int64_t n, int64_t chunk, cudaStream_t stream)
{
    FA_TRY(online_output_trace_validate(x, v, output_trace, rows, n, chunk));
    return launch_trace<TRACE_OUTPUT>(x, v, output_trace, rows, n, chunk, stream);
}

extern "C" fa_status learner_online_max_trace(const float *x, float *max_trace, int64_t rows,
                                              int64_t n, int64_t chunk, cudaStream_t stream)
{
    FA_TODO("M13 running max");
    return launch_max_trace(x, max_trace, rows, n, chunk, stream);
}

extern "C" fa_status learner_online_correction_trace(const float *x, float *correction_trace,
                                                     int64_t rows, int64_t n, int64_t chunk,
                                                     cudaStream_t stream)
{
    FA_TODO("M14 correction factor");
    return launch_correction_trace(x, correction_trace, rows, n, chunk, stream);
}

extern "C" fa_status learner_online_sum_trace(const float *x, float *sum_trace, int64_t rows,
                                              int64_t n, int64_t chunk, cudaStream_t stream)
{
    FA_TODO("M15 update running sum");
    return launch_sum_trace(x, sum_trace, rows, n, chunk, stream);
}

extern "C" fa_status learner_online_output_trace(const float *x, const float *v,
                                                 float *output_trace, int64_t rows, int64_t n,
                                                 int64_t chunk, cudaStream_t stream)
{
    FA_TODO("M16 rescale output");
    return launch_output_trace(x, v, output_trace, rows, n, chunk, stream);
}

/* ---- M15: one-pass softmax ----------------------------------------------------------------- */

/*
 * TODO(M15): merge the states of groups of `lanes` lanes (a power of two
 * <= 32) so that every lane ends with its group's state: for offset = lanes/2,
 * lanes/4, ..., 1, fetch the partner's max and sum with
 * __shfl_xor_sync(FA_FULL_WARP_MASK, value, offset) and online_merge() them in.
 */
[[maybe_unused]] static __device__ __forceinline__ online_state merge_lanes(online_state state,
                                                                            int lanes)
{
    (void)lanes;
    return state;
}

/*
 * TODO(M15): one block per row (blockIdx.x), blockDim.x threads.
 *
 * Pass 1, one read of the row: thread t folds the entries
 *   base + t + i * blockDim.x, i < SOFTMAX_ONLINE_CHUNK,  base = t, t + stride, ...
 *   (stride = blockDim.x * SOFTMAX_ONLINE_CHUNK; an index >= n reads as -inf)
 * into its own state, one update per chunk: chunk max, online_running_max,
 * online_correction, the chunk's sum of online_weight, online_update_sum.
 * Merge: merge_lanes(state, 32) inside each warp; lane 0 of each warp writes
 * its state to shared memory (__shared__ online_state
 * warp_states[SOFTMAX_MAX_WARPS]); after __syncthreads(), warp 0 merges the
 * blockDim.x / 32 states (lanes beyond them take online_state_empty()) and
 * lane 0 stores the row's state in shared memory and, if lse is not NULL,
 * lse[row] = online_lse(state). __syncthreads() again.
 * Pass 2, the second read: p[row * n + j] = online_normalise(online_weight(x_j, m), l).
 * Offsets in int64_t: rows * n may exceed 2^31.
 */
static __global__ void __launch_bounds__(SOFTMAX_ONLINE_MAX_THREADS)
softmax_rows_online_kernel(const float *x, float *p, float *lse, int64_t n)
{
    (void)x;
    (void)p;
    (void)lse;
    (void)n;
}

static fa_status launch_softmax(const float *x, float *p, float *lse, int64_t rows, int64_t n,
                                cudaStream_t stream)
{
    FA_TRY(softmax_rows_online_validate(x, p, lse, rows, n));
    if (rows == 0 || (n == 0 && lse == nullptr))
        return FA_OK;
    const int threads = softmax_rows_online_threads(n);
    const int64_t blocks = rows; /* one block per row */
    softmax_rows_online_kernel<<<(unsigned)blocks, threads, 0, stream>>>(x, p, lse, n);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

extern "C" fa_status learner_softmax_rows_online(const float *x, float *p, float *lse,
                                                 int64_t rows, int64_t n, cudaStream_t stream)
{
    FA_TODO("M15 update running sum (softmax_rows_online)");
    return launch_softmax(x, p, lse, rows, n, stream);
}

/* ---- M16: online attention, one query row per warp ----------------------------------------- */

/** Max over the warp, every lane gets it (given: the row max of stage 01). */
[[maybe_unused]] static __device__ __forceinline__ float warp_max(float value)
{
    for (int offset = FA_WARP_THREADS / 2; offset > 0; offset /= 2)
        value = fmaxf(value, __shfl_xor_sync(FA_FULL_WARP_MASK, value, offset));
    return value;
}

/** Sum over the warp by an xor butterfly, every lane gets the same bits (given). */
[[maybe_unused]] static __device__ __forceinline__ float warp_sum(float value)
{
    for (int offset = FA_WARP_THREADS / 2; offset > 0; offset /= 2)
        value += __shfl_xor_sync(FA_FULL_WARP_MASK, value, offset);
    return value;
}

/*
 * TODO(M16): warp w of the block computes query row
 *   i = (blockIdx.x % row_blocks) * ATTN_ONLINE_WARPS + w   of head
 *   head_index = blockIdx.x / row_blocks   (= b * heads_q + h),
 *   row_blocks = fa_ceil_div(nq, ATTN_ONLINE_WARPS); the warp returns if i >= nq.
 * Key/value head: b * heads_kv + h / (heads_q / heads_kv). Layouts are
 * [B][H][N][D] contiguous; offsets in int64_t.
 *
 * Copy q into shared memory (every lane needs all of it), __syncwarp():
 *   __shared__ float q_rows[ATTN_ONLINE_WARPS][ATTN_ONLINE_MAX_HEAD_DIM], row q_rows[w].
 * The allowed keys are j < attn_online_key_end(mask, i, nq, nk). For each
 * chunk of args.chunk keys from 0:
 *   scores:  lane l scores keys l and l + 32 of the chunk (KEYS_PER_LANE):
 *            dot = fmaf chain over d in order, score = __fmul_rn(scale, dot);
 *            a lane past the chunk holds -inf
 *   state:   chunk max by warp_max, then M13, M14; each lane's weights,
 *            their sum by warp_sum, then M15
 *   output:  for each key j of the chunk (in order), broadcast its weight
 *            with __shfl_sync(FA_FULL_WARP_MASK, weight[j / 32], j % 32); every lane
 *            accumulates chunk_out[c] = fmaf(w, v[j][col], chunk_out[c]) for
 *            its columns col = lane + 32 c < head_dim; then M16 on each column.
 * At the end: o[col] = online_normalise(out[c], l); lane 0 writes
 * lse = online_lse(state) when args.lse is not NULL.
 */
template <int COLS_PER_LANE>
static __global__ void __launch_bounds__(ATTN_ONLINE_WARPS * FA_WARP_THREADS)
attn_rows_online_kernel(attn_online_args args)
{
    (void)args;
}

template <int COLS_PER_LANE>
static fa_status launch_attn(const attn_online_args *args, int64_t blocks, cudaStream_t stream)
{
    attn_rows_online_kernel<COLS_PER_LANE>
        <<<(unsigned)blocks, ATTN_ONLINE_WARPS * FA_WARP_THREADS, 0, stream>>>(*args);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

static fa_status launch_attention(const attn_online_args *args, cudaStream_t stream)
{
    FA_TRY(attn_rows_online_validate(args));
    const int64_t heads = args->batch * args->heads_q;
    if (heads == 0 || args->nq == 0)
        return FA_OK;
    const int64_t blocks = heads * fa_ceil_div(args->nq, ATTN_ONLINE_WARPS);
    const int64_t cols_per_lane = fa_ceil_div(args->head_dim, FA_WARP_THREADS);
    if (cols_per_lane <= 1)
        return launch_attn<1>(args, blocks, stream);
    if (cols_per_lane <= 2)
        return launch_attn<2>(args, blocks, stream);
    if (cols_per_lane <= 4)
        return launch_attn<4>(args, blocks, stream);
    return launch_attn<ATTN_ONLINE_MAX_HEAD_DIM / FA_WARP_THREADS>(args, blocks, stream);
}

extern "C" fa_status learner_attn_rows_online(const attn_online_args *args, cudaStream_t stream)
{
    FA_TODO("M16 rescale output (attn_rows_online)");
    return launch_attention(args, stream);
}
