/*
 * Stage 04 — YOUR KERNELS (the exercise). Lesson: 04_online_softmax/README.md.
 *
 * Work through the milestones in order. For each one:
 *   1. write the state function(s) and the kernel code marked TODO(Mn) below
 *      (the signatures are given);
 *   2. delete the milestone's FA_TODO(n); line;
 *   3. build and check:   cmake --build build -t stage04
 *                          build/04_online_softmax/stage04 --impl learner --milestone N
 * The driver runs your kernels on hand-computed fixtures and random rows
 * (rising, falling, masked, extreme, ...), names the first case and
 * coordinate that is wrong, and prints the command that reruns that one case.
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
 * This file holds only kernels and the state functions they call. Write your
 * own state functions here: do not include online_state.cuh, it is the
 * solution. The launch code (validation, grid, launch, error check) is the
 * reference's own, 04_online_softmax/harness/launch.cu, compiled against this
 * file: it needs the three kernels below under these names and signatures.
 * `[[maybe_unused]]` only keeps the compiler quiet while a function is not
 * called yet, and the `(void)arg;` lines silence "unused parameter": delete
 * them as you go.
 */
#include <math.h>
#include <stdint.h>

#include <cuda_runtime.h>

#include "fa_index.h"
#include "fa_kernel.cuh"
#include "fa_launch.cuh"
#include "fa_mask.h"
#include "fa_math.h"
#include "online.h"

/* ---- the state of one row ---------------------------------------------------------------- */

/** The running max and sum of one row; output columns live with the caller. */
typedef struct online_state {
    float max; /* m: the largest entry seen; -inf while none is allowed */
    float sum; /* l = sum_j exp(x_j - m) over the entries seen */
} online_state;

/** The state before any entry. Given: m = -inf (nothing seen), l = 0. */
[[maybe_unused]] static __device__ __forceinline__ online_state online_state_empty(void)
{
    const online_state empty = {-INFINITY, 0.0f};
    return empty;
}

/* ---- M13 running max --------------------------------------------------------------------- */

FA_TODO(13); /* delete this line when your M13 is written */

/*
 * TODO(M13): the running max after a chunk whose largest entry is chunk_max.
 * One line. Use fa_max_nan(a, b) (common/fa_math.h), the course's max: it
 * returns NaN when either side is NaN, so a NaN entry shows in m. `fmaxf`
 * returns the other operand and would hide it.
 */
[[maybe_unused]] static __device__ __forceinline__ float online_running_max(float max_old,
                                                                            float chunk_max)
{
    (void)max_old;
    (void)chunk_max;
    return 0.0f;
}

/* ---- M14 correction factor --------------------------------------------------------------- */

FA_TODO(14); /* delete this line when your M14 is written */

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

/* ---- M15 update running sum -------------------------------------------------------------- */

FA_TODO(15); /* delete this line when your M15 (the sum trace and the softmax) is written */

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

/* ---- M16 rescale output ------------------------------------------------------------------ */

FA_TODO(16); /* delete this line when your M16 (the output trace and attention) is written */

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

/* ---- M13-M16: the traces ----------------------------------------------------------------- */

/*
 * TODO(M13-M16): one thread per row walks its row chunk by chunk and writes,
 * after chunk t, trace[row * chunks + t] = the part of the state TRACE names
 * (ONLINE_TRACE_MAX, _CORRECTION, _SUM or _OUTPUT, online.h).
 *
 *   row = blockIdx.x * blockDim.x + threadIdx.x (as int64_t); return if >= rows
 *   state = online_state_empty(); out = 0
 *   for t in 0 .. chunks-1, entries start = t * chunk .. min(start + chunk, n) - 1:
 *     chunk_max   = fa_max_nan over the chunk's entries, from -INFINITY
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
template <online_trace_op TRACE>
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
 * TODO(M15): one block per row (blockIdx.x), blockDim.x threads (the launch
 * picks softmax_rows_online_threads(n): 32 to 256).
 *
 * Pass 1, one read of the row: thread t folds the entries
 *   base + t + i * blockDim.x, i < SOFTMAX_ONLINE_CHUNK,  base = t, t + stride, ...
 *   (stride = blockDim.x * SOFTMAX_ONLINE_CHUNK; an index >= n reads as -inf)
 * into its own state, one update per chunk: chunk max (fa_max_nan),
 * online_running_max, online_correction, the chunk's sum of online_weight,
 * online_update_sum.
 * Merge: merge_lanes(state, 32) inside each warp; lane 0 of each warp writes
 * its state to shared memory (__shared__ online_state
 * warp_states[SOFTMAX_ONLINE_MAX_WARPS]); after __syncthreads(), warp 0
 * merges the blockDim.x / 32 states (lanes beyond them take
 * online_state_empty()) and lane 0 stores the row's state in shared memory
 * and, if lse is not NULL, lse[row] = online_lse(state). __syncthreads() again.
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

/* ---- M16: online attention, one query row per warp ----------------------------------------- */

/*
 * TODO(M16): the launch runs ATTN_ONLINE_THREADS threads per block (8 warps)
 * with attn_shared_bytes(head_dim, chunk) bytes of dynamic shared memory:
 *   extern __shared__ float4 attn_tiles[];
 * room for 8 rows of q, then a chunk of K and one of V, every row
 * stride4 = attn_tile_stride4(head_dim) float4s (online.h).
 *
 * Warp w of the block computes query row
 *   i = (blockIdx.x % row_blocks) * ATTN_ONLINE_WARPS + w   of head
 *   head_index = blockIdx.x / row_blocks   (= b * heads_q + h),
 *   row_blocks = fa_ceil_div(nq, ATTN_ONLINE_WARPS); the warp returns if i >= nq
 *   (only while the kernel has no __syncthreads(): see the last step).
 * Key/value head: b * heads_kv + h / (heads_q / heads_kv). Layouts are
 * [B][H][N][D] contiguous; offsets in int64_t.
 *
 * Copy q into the warp's row of the tiles (every lane needs all of it):
 *   float *q_row = (float *)(attn_tiles + w * stride4); then __syncwarp().
 * The allowed keys are j < fa_mask_key_range(args.mask, i, nq, nk).end
 * (common/fa_mask.h). For each chunk of args.chunk keys from 0:
 *   scores:  lane l scores keys l and l + 32 of the chunk (ATTN_ONLINE_KEYS_PER_LANE):
 *            dot = fmaf chain over d in order, score = __fmul_rn(args.scale, dot);
 *            a lane past the chunk holds -inf
 *   state:   chunk max: fa_max_nan over the lane's scores, then fa_lanes_max()
 *            across the warp (common/fa_kernel.cuh); M13, M14; each lane's
 *            weights, their sum by fa_lanes_sum(), then M15
 *   output:  for each key j of the chunk (in order), broadcast its weight
 *            with __shfl_sync(FA_FULL_WARP_MASK, weight[j / 32], j % 32); every lane
 *            accumulates chunk_out[c] = fmaf(w, v[j][col], chunk_out[c]) for
 *            its columns col = lane + 32 c < head_dim; then M16 on each column.
 * At the end: o[col] = online_normalise(out[c], l); lane 0 writes
 * lse = online_lse(state) when args.lse is not NULL.
 *
 * That version reads K and V from global memory, each warp on its own: it is
 * correct and the checks accept it. The optional last step shares each chunk
 * of K and V: the whole block copies it into the K and V tiles once
 * (vector_loads says float4 loads are safe: head_dim % 4 == 0 and q, k, v
 * 16-byte aligned), __syncthreads(), every warp scores from the tiles,
 * __syncthreads() again before the next copy. A warp without a row (i >= nq)
 * or whose keys have ended must then stay, copy and meet the barriers, and
 * skip only the update. The results of a row do not change by a bit.
 */
template <int COLS_PER_LANE>
static __global__ void __launch_bounds__(ATTN_ONLINE_THREADS)
attn_rows_online_kernel(attn_online_args args, bool vector_loads)
{
    (void)args;
    (void)vector_loads;
}
