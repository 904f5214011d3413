/**
 * @file online.cu
 * @brief Stage 04 reference kernels: online softmax, from the per-chunk
 *        traces of M13-M16 to a one-pass softmax and online attention.
 *
 * | version | kernel                     | milestone | idea                                       |
 * |---------|----------------------------|-----------|--------------------------------------------|
 * | 1       | online_trace_kernel        | M13-M16   | a thread per row, chunk by chunk           |
 * | 2       | softmax_rows_online_kernel | M15       | thread states merged; a second read, p     |
 * | 3       | attn_rows_online_kernel    | M16       | a warp per query row; S, P stay registers; |
 * |         |                            |           | the block shares each chunk of K, V (smem) |
 *
 * Only kernels live here: harness/launch.cu validates, computes the grid and
 * launches them, for these kernels and for the learner's alike. The state
 * updates themselves are the one-line functions of online_state.cuh; this
 * file arranges threads around them. The warp-wide max and sum of the
 * attention kernel are fa_lanes_max() and fa_lanes_sum() of
 * common/fa_kernel.cuh.
 */
#include <math.h>
#include <stdint.h>

#include <cuda_runtime.h>

#include "fa_index.h"
#include "fa_kernel.cuh"
#include "fa_mask.h"
#include "fa_math.h"
#include "online.h"
#include "online_state.cuh"

static_assert(ATTN_ONLINE_MAX_CHUNK % FA_WARP_THREADS == 0,
              "a chunk is scored by whole warps: ATTN_ONLINE_KEYS_PER_LANE keys per lane");
static_assert(ATTN_ONLINE_MAX_HEAD_DIM % FA_WARP_THREADS == 0,
              "each lane owns head_dim / 32 output columns");
static_assert((SOFTMAX_ONLINE_MIN_THREADS & (SOFTMAX_ONLINE_MIN_THREADS - 1)) == 0 &&
                  (SOFTMAX_ONLINE_MAX_THREADS & (SOFTMAX_ONLINE_MAX_THREADS - 1)) == 0,
              "the merge butterfly pairs threads by xor: power-of-two counts");
static_assert(SOFTMAX_ONLINE_MIN_THREADS >= FA_WARP_THREADS &&
                  SOFTMAX_ONLINE_MAX_WARPS <= FA_WARP_THREADS,
              "whole warps per row, and one warp merges the warps' states");
static_assert(sizeof(float4) == ATTN_ONLINE_VECTOR_FLOATS * sizeof(float),
              "the shared tiles are rows of float4s");

/* ---- M13-M16: the traces ---------------------------------------------------------------- */

/**
 * One thread per row: walk the row chunk by chunk, update the state, and
 * write trace[row][t] after chunk t. Slow on purpose (a thread reads its row
 * alone): it shows the updates one at a time, and the checks compare every
 * intermediate state with the invariants.
 */
template <online_trace_op TRACE>
static __global__ void __launch_bounds__(ONLINE_TRACE_THREADS)
online_trace_kernel(const float *x, const float *v, float *trace, int64_t rows, int64_t n,
                    int64_t chunk, int64_t chunks)
{
    const int64_t row = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows)
        return;
    const float *x_row = x + row * n;
    float *trace_row = trace + row * chunks;

    online_state state = online_state_empty();
    float out = 0.0f; /* o: the weighted sum of the values, M16 only */
    for (int64_t t = 0; t < chunks; ++t) {
        const int64_t start = t * chunk;
        const int64_t end = start + chunk < n ? start + chunk : n;

        float chunk_max = -INFINITY;
        for (int64_t j = start; j < end; ++j)
            chunk_max = fa_max_nan(chunk_max, x_row[j]);
        const float max_new = online_running_max(state.max, chunk_max);
        const float alpha = online_correction(state.max, max_new);

        /* The chunk's weights are taken against the new max, so they need no
         * correction; only what was summed before this chunk does. */
        float chunk_sum = 0.0f, chunk_out = 0.0f;
        for (int64_t j = start; j < end; ++j) {
            const float weight = online_weight(x_row[j], max_new);
            chunk_sum += weight;
            if (TRACE == ONLINE_TRACE_OUTPUT && x_row[j] != -INFINITY) /* a masked value is never read */
                chunk_out = fmaf(weight, v[row * n + j], chunk_out);
        }
        state.sum = online_update_sum(state.sum, alpha, chunk_sum);
        out = online_rescale_output(out, alpha, chunk_out);
        state.max = max_new;

        switch (TRACE) {
        case ONLINE_TRACE_MAX: trace_row[t] = state.max; break;
        case ONLINE_TRACE_CORRECTION: trace_row[t] = alpha; break;
        case ONLINE_TRACE_SUM: trace_row[t] = state.sum; break;
        case ONLINE_TRACE_OUTPUT: trace_row[t] = out; break;
        }
    }
}

/* ---- M15: one-pass softmax --------------------------------------------------------------- */

/**
 * Merges the states of groups of @p lanes lanes (a power of two <= 32) by an
 * xor butterfly: afterwards every lane holds its group's merged state. Lane i
 * computes merge(s_i, s_partner) and its partner merge(s_partner, s_i), the
 * same bits because online_merge() is commutative bit for bit, so the group
 * agrees without a broadcast.
 */
static __device__ __forceinline__ online_state merge_lanes(online_state state, int lanes)
{
    for (int offset = lanes / 2; offset > 0; offset /= 2) {
        online_state other;
        other.max = __shfl_xor_sync(FA_FULL_WARP_MASK, state.max, offset);
        other.sum = __shfl_xor_sync(FA_FULL_WARP_MASK, state.sum, offset);
        float alpha_mine, alpha_other; /* no output to rescale here */
        state = online_merge(state, other, &alpha_mine, &alpha_other);
    }
    return state;
}

/**
 * One block per row. Pass 1 reads the row once: thread t owns the entries
 * base + t + i * threads (coalesced), SOFTMAX_ONLINE_CHUNK of them per update,
 * and keeps its own (m, l). The block merges the states: butterfly inside each
 * warp, then warp 0 merges the warps' states. Pass 2 reads the row again and
 * writes p = exp(x - m) / l with the row's final m and l.
 */
static __global__ void __launch_bounds__(SOFTMAX_ONLINE_MAX_THREADS)
softmax_rows_online_kernel(const float *x, float *p, float *lse, int64_t n)
{
    __shared__ online_state warp_states[SOFTMAX_ONLINE_MAX_WARPS];
    __shared__ online_state row_state;
    const int64_t row = blockIdx.x;
    const int threads = blockDim.x;
    const int lane = threadIdx.x % FA_WARP_THREADS;
    const int warp = threadIdx.x / FA_WARP_THREADS;
    const float *x_row = x + row * n;

    online_state state = online_state_empty();
    const int64_t stride = (int64_t)threads * SOFTMAX_ONLINE_CHUNK;
    for (int64_t base = threadIdx.x; base < n; base += stride) {
        float entries[SOFTMAX_ONLINE_CHUNK];
        float chunk_max = -INFINITY;
#pragma unroll
        for (int i = 0; i < SOFTMAX_ONLINE_CHUNK; ++i) {
            const int64_t j = base + (int64_t)i * threads;
            entries[i] = j < n ? x_row[j] : -INFINITY; /* past the end: weight exactly 0 */
            chunk_max = fa_max_nan(chunk_max, entries[i]);
        }
        const float max_new = online_running_max(state.max, chunk_max);
        const float alpha = online_correction(state.max, max_new);
        float chunk_sum = 0.0f;
#pragma unroll
        for (int i = 0; i < SOFTMAX_ONLINE_CHUNK; ++i)
            chunk_sum += online_weight(entries[i], max_new);
        state.sum = online_update_sum(state.sum, alpha, chunk_sum);
        state.max = max_new;
    }

    state = merge_lanes(state, FA_WARP_THREADS);
    if (lane == 0)
        warp_states[warp] = state;
    __syncthreads();
    if (warp == 0) {
        const int warps = threads / FA_WARP_THREADS;
        state = lane < warps ? warp_states[lane] : online_state_empty();
        state = merge_lanes(state, warps);
        if (lane == 0) {
            row_state = state;
            if (lse != nullptr)
                lse[row] = online_lse(state);
        }
    }
    __syncthreads();

    /* Pass 2: the probabilities need the final m and l, so they wait for the
     * whole row; the weight is recomputed rather than stored. */
    const online_state final_state = row_state;
    float *p_row = p + row * n;
    for (int64_t j = threadIdx.x; j < n; j += threads)
        p_row[j] = online_normalise(online_weight(x_row[j], final_state.max), final_state.sum);
}

/* ---- M16: online attention, one query row per warp, K and V shared by the block ---------- */

/**
 * Copies @p rows consecutive rows of @p dim floats from @p src (row-major,
 * contiguous) into @p tile (row stride @p stride4 float4s). The threads of the
 * block take the float4s in order, so consecutive threads read consecutive
 * addresses (coalesced). With @p vector (dim a multiple of 4, src 16-byte
 * aligned) each float4 is one load; otherwise four scalar loads, and the
 * columns from dim to the next multiple of 4 are written as zeros so that
 * every row can be read as whole float4s.
 */
static __device__ void load_tile(float4 *tile, const float *src, int rows, int dim, int stride4,
                                 bool vector)
{
    const int float4s = (int)fa_ceil_div(dim, ATTN_ONLINE_VECTOR_FLOATS);
    for (int slot = threadIdx.x; slot < rows * float4s; slot += blockDim.x) {
        const int row = slot / float4s, column4 = slot % float4s;
        const float *from = src + (int64_t)row * dim + (int64_t)column4 * ATTN_ONLINE_VECTOR_FLOATS;
        float4 value;
        if (vector) {
            value = *reinterpret_cast<const float4 *>(from);
        } else {
            const int left = dim - column4 * ATTN_ONLINE_VECTOR_FLOATS; /* >= 1 columns here */
            value.x = from[0];
            value.y = left > 1 ? from[1] : 0.0f;
            value.z = left > 2 ? from[2] : 0.0f;
            value.w = left > 3 ? from[3] : 0.0f;
        }
        tile[row * stride4 + column4] = value;
    }
}

/**
 * q . k as one FMA chain over d = 0, 1, 2, ... in order, the model's chain.
 * The zero padding of the last float4 adds fmaf(0, 0, dot) = dot; the only
 * bit it can change is the sign of a zero dot, which nothing downstream sees
 * (the score meets only fa_max_nan() and a subtraction before expf).
 * Unrolled twice: enough loads in flight with several warps per scheduler,
 * and the kernel stays within 64 registers for head_dim 33..256 without
 * spilling.
 */
static __device__ __forceinline__ float dot_in_order(const float4 *q, const float4 *k, int float4s)
{
    float dot = 0.0f;
#pragma unroll 2
    for (int c = 0; c < float4s; ++c) {
        const float4 a = q[c], b = k[c];
        dot = fmaf(a.x, b.x, dot);
        dot = fmaf(a.y, b.y, dot);
        dot = fmaf(a.z, b.z, dot);
        dot = fmaf(a.w, b.w, dot);
    }
    return dot;
}

/**
 * The block takes ATTN_ONLINE_WARPS consecutive query rows of one (batch,
 * head), warp w row first_row + w. Per chunk of keys the block copies the
 * chunk of K and V into shared memory once, and every warp updates its own
 * row from there: K and V are read from L2 once per block instead of once per
 * row. The per-row update is the one-row-per-warp algorithm of the lesson:
 * - scores: lane j scores keys j and j + 32 of the chunk (one dot product
 *   over d in order, then the scale). Splitting the keys keeps all 32 lanes
 *   busy from a chunk of 32 keys on, and each score one FMA chain, the order
 *   the model replays; splitting d instead would cost a five-shuffle sum per
 *   key and change the order;
 * - state: the chunk max and the sum of the weights across the warp
 *   (fa_lanes_max(), fa_lanes_sum()), M13-M15;
 * - output: every weight is broadcast by a shuffle and lane c accumulates
 *   columns c, c + 32, ... of sum_j w_j v_j (consecutive lanes read
 *   consecutive floats of a V row), then M16.
 * S and P never leave registers. The rows' key ranges are prefixes that grow
 * with the row (fa_mask_key_range() begins at key 0 for every mask of the
 * course), so the block stops at its last row's end, and a warp whose row has ended, or that has no row (past nq), skips
 * the update but keeps loading tiles and meeting the barriers.
 * @p vector_loads: head_dim is a multiple of 4 and q, k, v are 16-byte
 * aligned, so the tiles are copied by float4 loads.
 */
template <int COLS_PER_LANE>
static __global__ void __launch_bounds__(ATTN_ONLINE_THREADS)
attn_rows_online_kernel(attn_online_args args, bool vector_loads)
{
    extern __shared__ float4 attn_tiles[];
    const int lane = threadIdx.x % FA_WARP_THREADS;
    const int warp = threadIdx.x / FA_WARP_THREADS;
    const int dim = (int)args.head_dim;
    const int chunk = (int)args.chunk;
    const int stride4 = attn_tile_stride4(dim);
    const int float4s = (int)fa_ceil_div(dim, ATTN_ONLINE_VECTOR_FLOATS);
    float4 *q_tile = attn_tiles;                           /* [ATTN_ONLINE_WARPS][stride4] */
    float4 *k_tile = q_tile + ATTN_ONLINE_WARPS * stride4; /* [chunk][stride4] */
    float4 *v_tile = k_tile + chunk * stride4;             /* [chunk][stride4] */

    const int64_t row_blocks = fa_ceil_div(args.nq, ATTN_ONLINE_WARPS);
    const int64_t head_index = blockIdx.x / row_blocks; /* b * heads_q + h */
    const int64_t first_row = (int64_t)(blockIdx.x % row_blocks) * ATTN_ONLINE_WARPS;
    const int rows = (int)(args.nq - first_row < ATTN_ONLINE_WARPS ? args.nq - first_row
                                                                   : ATTN_ONLINE_WARPS);
    const int64_t i = first_row + warp;
    const bool has_row = warp < rows;

    const int64_t batch = head_index / args.heads_q;
    const int64_t kv_head = batch * args.heads_kv +
                            (head_index % args.heads_q) / (args.heads_q / args.heads_kv);
    const float *k = args.k + kv_head * args.nk * dim;
    const float *v = args.v + kv_head * args.nk * dim;
    const int64_t first_offset = (head_index * args.nq + first_row) * dim;
    load_tile(q_tile, args.q + first_offset, rows, dim, stride4, vector_loads);

    const int64_t block_key_end =
        fa_mask_key_range(args.mask, first_row + rows - 1, args.nq, args.nk).end;
    const int64_t key_end = has_row ? fa_mask_key_range(args.mask, i, args.nq, args.nk).end : 0;
    const float4 *q = q_tile + warp * stride4;
    online_state state = online_state_empty();
    float out[COLS_PER_LANE];
#pragma unroll
    for (int c = 0; c < COLS_PER_LANE; ++c)
        out[c] = 0.0f;

    for (int64_t start = 0; start < block_key_end; start += chunk) {
        const int tile_keys = (int)(block_key_end - start < chunk ? block_key_end - start : chunk);
        load_tile(k_tile, k + start * dim, tile_keys, dim, stride4, vector_loads);
        load_tile(v_tile, v + start * dim, tile_keys, dim, stride4, vector_loads);
        __syncthreads(); /* the tiles (and q, the first time) are complete */

        if (start < key_end) { /* the same for the whole warp: its shuffles stay warp-wide */
            const int length = (int)(key_end - start < chunk ? key_end - start : chunk);

            float score[ATTN_ONLINE_KEYS_PER_LANE];
            float chunk_max = -INFINITY;
#pragma unroll
            for (int r = 0; r < ATTN_ONLINE_KEYS_PER_LANE; ++r) {
                const int key = lane + r * FA_WARP_THREADS;
                score[r] = -INFINITY; /* lanes past the chunk hold a masked score */
                /* Rounded once here, so the max and the weight see the same score. */
                if (key < length)
                    score[r] =
                        __fmul_rn(args.scale, dot_in_order(q, k_tile + key * stride4, float4s));
                chunk_max = fa_max_nan(chunk_max, score[r]);
            }
            const float max_new = online_running_max(state.max, fa_lanes_max(chunk_max));
            const float alpha = online_correction(state.max, max_new);

            float weight[ATTN_ONLINE_KEYS_PER_LANE];
            float chunk_sum = 0.0f;
#pragma unroll
            for (int r = 0; r < ATTN_ONLINE_KEYS_PER_LANE; ++r) {
                weight[r] = online_weight(score[r], max_new);
                chunk_sum += weight[r];
            }
            state.sum = online_update_sum(state.sum, alpha, fa_lanes_sum(chunk_sum));
            state.max = max_new;

            float chunk_out[COLS_PER_LANE];
#pragma unroll
            for (int c = 0; c < COLS_PER_LANE; ++c)
                chunk_out[c] = 0.0f;
#pragma unroll
            for (int r = 0; r < ATTN_ONLINE_KEYS_PER_LANE; ++r) {
                for (int source = 0; source < FA_WARP_THREADS; ++source) {
                    const int key = r * FA_WARP_THREADS + source;
                    if (key >= length)
                        break; /* the same for every lane: the shuffle stays warp-wide */
                    const float w = __shfl_sync(FA_FULL_WARP_MASK, weight[r], source);
                    const float *v_row = reinterpret_cast<const float *>(v_tile + key * stride4);
#pragma unroll
                    for (int c = 0; c < COLS_PER_LANE; ++c) {
                        const int col = lane + c * FA_WARP_THREADS;
                        if (col < dim)
                            chunk_out[c] = fmaf(w, v_row[col], chunk_out[c]);
                    }
                }
            }
#pragma unroll
            for (int c = 0; c < COLS_PER_LANE; ++c)
                out[c] = online_rescale_output(out[c], alpha, chunk_out[c]);
        }
        __syncthreads(); /* every warp is done with these tiles before the next chunk's load */
    }

    if (!has_row)
        return;
    const int64_t row_offset = first_offset + (int64_t)warp * dim;
#pragma unroll
    for (int c = 0; c < COLS_PER_LANE; ++c) {
        const int col = lane + c * FA_WARP_THREADS;
        if (col < dim)
            args.o[row_offset + col] = online_normalise(out[c], state.sum);
    }
    if (args.lse != nullptr && lane == 0)
        args.lse[head_index * args.nq + i] = online_lse(state);
}
