/**
 * @file online.cu
 * @brief Stage 04 reference kernels: online softmax, from the per-chunk
 *        traces of M13-M16 to a one-pass softmax and online attention.
 *
 * | version | kernel                     | milestone | idea                                       |
 * |---------|----------------------------|-----------|--------------------------------------------|
 * | 1       | online_trace_kernel        | M13-M16   | a thread per row, chunk by chunk           |
 * | 2       | softmax_rows_online_kernel | M15       | thread states merged; a second read, p     |
 * | 3       | attn_rows_online_kernel    | M16       | a warp per query row; S, P stay registers  |
 *
 * The state updates themselves live in online_state.cuh; this file only
 * arranges threads around them. Every launcher validates, returns at once for
 * zero-size work, computes its grid with an explicit ceil-div, launches and
 * checks the launch.
 */
#include "online.h"

#include <math.h>

#include "fa_device.h"
#include "online_state.cuh"

/** All 32 lanes take part in every shuffle of this file. */
static constexpr unsigned FULL_WARP = 0xFFFFFFFFu;
static constexpr int KEYS_PER_LANE = ATTN_ONLINE_MAX_CHUNK / ONLINE_WARP_THREADS;
static constexpr int SOFTMAX_MAX_WARPS = SOFTMAX_ONLINE_MAX_THREADS / ONLINE_WARP_THREADS;

static_assert(ATTN_ONLINE_MAX_CHUNK % ONLINE_WARP_THREADS == 0,
              "a chunk is scored by whole warps: KEYS_PER_LANE keys per lane");
static_assert(ATTN_ONLINE_MAX_HEAD_DIM % ONLINE_WARP_THREADS == 0,
              "each lane owns head_dim / 32 output columns");
static_assert((SOFTMAX_ONLINE_MIN_THREADS & (SOFTMAX_ONLINE_MIN_THREADS - 1)) == 0 &&
                  (SOFTMAX_ONLINE_MAX_THREADS & (SOFTMAX_ONLINE_MAX_THREADS - 1)) == 0,
              "the merge butterfly pairs threads by xor: power-of-two counts");
static_assert(SOFTMAX_ONLINE_MIN_THREADS >= ONLINE_WARP_THREADS &&
                  SOFTMAX_MAX_WARPS <= ONLINE_WARP_THREADS,
              "whole warps per row, and one warp merges the warps' states");

/** ceil(a / b) for a >= 0, b > 0. */
static __host__ __device__ int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/* ---- M13-M16: the traces ---------------------------------------------------------------- */

/** Which part of the state a trace records after each chunk. */
enum online_trace_kind { TRACE_MAX, TRACE_CORRECTION, TRACE_SUM, TRACE_OUTPUT };

/**
 * One thread per row: walk the row chunk by chunk, update the state, and
 * write trace[row][t] after chunk t. Slow on purpose (a thread reads its row
 * alone): it shows the updates one at a time, and the checks compare every
 * intermediate state with the invariants.
 */
template <online_trace_kind TRACE>
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
            chunk_max = fmaxf(chunk_max, x_row[j]);
        const float max_new = online_running_max(state.max, chunk_max);
        const float alpha = online_correction(state.max, max_new);

        /* The chunk's weights are taken against the new max, so they need no
         * correction; only what was summed before this chunk does. */
        float chunk_sum = 0.0f, chunk_out = 0.0f;
        for (int64_t j = start; j < end; ++j) {
            const float weight = online_weight(x_row[j], max_new);
            chunk_sum += weight;
            if (TRACE == TRACE_OUTPUT && x_row[j] != -INFINITY) /* a masked value is never read */
                chunk_out = fmaf(weight, v[row * n + j], chunk_out);
        }
        state.sum = online_update_sum(state.sum, alpha, chunk_sum);
        out = online_rescale_output(out, alpha, chunk_out);
        state.max = max_new;

        switch (TRACE) {
        case TRACE_MAX: trace_row[t] = state.max; break;
        case TRACE_CORRECTION: trace_row[t] = alpha; break;
        case TRACE_SUM: trace_row[t] = state.sum; break;
        case TRACE_OUTPUT: trace_row[t] = out; break;
        }
    }
}

/** The launch shared by the four trace launchers (arguments already validated). */
template <online_trace_kind TRACE>
static fa_status launch_trace(const float *x, const float *v, float *trace, int64_t rows,
                              int64_t n, int64_t chunk, cudaStream_t stream)
{
    if (rows == 0 || n == 0)
        return FA_OK;
    const int64_t blocks = ceil_div(rows, ONLINE_TRACE_THREADS);
    online_trace_kernel<TRACE><<<(unsigned)blocks, ONLINE_TRACE_THREADS, 0, stream>>>(
        x, v, trace, rows, n, chunk, online_chunk_count(n, chunk));
    FA_LAUNCH_CHECK();
    return FA_OK;
}

extern "C" fa_status ref_online_max_trace(const float *x, float *max_trace, int64_t rows,
                                          int64_t n, int64_t chunk, cudaStream_t stream)
{
    FA_TRY(online_max_trace_validate(x, max_trace, rows, n, chunk));
    return launch_trace<TRACE_MAX>(x, nullptr, max_trace, rows, n, chunk, stream);
}

extern "C" fa_status ref_online_correction_trace(const float *x, float *correction_trace,
                                                 int64_t rows, int64_t n, int64_t chunk,
                                                 cudaStream_t stream)
{
    FA_TRY(online_correction_trace_validate(x, correction_trace, rows, n, chunk));
    return launch_trace<TRACE_CORRECTION>(x, nullptr, correction_trace, rows, n, chunk, stream);
}

extern "C" fa_status ref_online_sum_trace(const float *x, float *sum_trace, int64_t rows,
                                          int64_t n, int64_t chunk, cudaStream_t stream)
{
    FA_TRY(online_sum_trace_validate(x, sum_trace, rows, n, chunk));
    return launch_trace<TRACE_SUM>(x, nullptr, sum_trace, rows, n, chunk, stream);
}

extern "C" fa_status ref_online_output_trace(const float *x, const float *v,
                                             float *output_trace, int64_t rows, int64_t n,
                                             int64_t chunk, cudaStream_t stream)
{
    FA_TRY(online_output_trace_validate(x, v, output_trace, rows, n, chunk));
    return launch_trace<TRACE_OUTPUT>(x, v, output_trace, rows, n, chunk, stream);
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
        other.max = __shfl_xor_sync(FULL_WARP, state.max, offset);
        other.sum = __shfl_xor_sync(FULL_WARP, state.sum, offset);
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
    __shared__ online_state warp_states[SOFTMAX_MAX_WARPS];
    __shared__ online_state row_state;
    const int64_t row = blockIdx.x;
    const int threads = blockDim.x;
    const int lane = threadIdx.x % ONLINE_WARP_THREADS;
    const int warp = threadIdx.x / ONLINE_WARP_THREADS;
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
            chunk_max = fmaxf(chunk_max, entries[i]);
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

    state = merge_lanes(state, ONLINE_WARP_THREADS);
    if (lane == 0)
        warp_states[warp] = state;
    __syncthreads();
    if (warp == 0) {
        const int warps = threads / ONLINE_WARP_THREADS;
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

extern "C" fa_status ref_softmax_rows_online(const float *x, float *p, float *lse, int64_t rows,
                                             int64_t n, cudaStream_t stream)
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

/* ---- M16: online attention, one query row per warp -------------------------------------- */

/** Max over the warp; every lane gets it. Exact, so the order does not matter. */
static __device__ __forceinline__ float warp_max(float value)
{
    for (int offset = ONLINE_WARP_THREADS / 2; offset > 0; offset /= 2)
        value = fmaxf(value, __shfl_xor_sync(FULL_WARP, value, offset));
    return value;
}

/** Sum over the warp by an xor butterfly; every lane gets the same bits (addition commutes). */
static __device__ __forceinline__ float warp_sum(float value)
{
    for (int offset = ONLINE_WARP_THREADS / 2; offset > 0; offset /= 2)
        value += __shfl_xor_sync(FULL_WARP, value, offset);
    return value;
}

/**
 * Warp w of the block takes query row i of one (batch, head). Per chunk of
 * keys: lane j scores keys j and j + 32 of the chunk (a dot product over d in
 * order), the warp finds the chunk max and updates (m, l); then every lane
 * adds weight * value for its columns c = lane + 32 k, k < COLS_PER_LANE,
 * key by key, and rescales its part of o. S and P never leave registers.
 */
template <int COLS_PER_LANE>
static __global__ void __launch_bounds__(ATTN_ONLINE_WARPS * ONLINE_WARP_THREADS)
attn_rows_online_kernel(attn_online_args args)
{
    __shared__ float q_rows[ATTN_ONLINE_WARPS][ATTN_ONLINE_MAX_HEAD_DIM];
    const int lane = threadIdx.x % ONLINE_WARP_THREADS;
    const int warp = threadIdx.x / ONLINE_WARP_THREADS;
    const int64_t row_blocks = ceil_div(args.nq, ATTN_ONLINE_WARPS);
    const int64_t head_index = blockIdx.x / row_blocks; /* b * heads_q + h */
    const int64_t i = (int64_t)(blockIdx.x % row_blocks) * ATTN_ONLINE_WARPS + warp;
    if (i >= args.nq)
        return; /* the whole warp leaves; no block-wide barrier follows */

    const int dim = (int)args.head_dim;
    const int64_t batch = head_index / args.heads_q;
    const int64_t kv_head = batch * args.heads_kv +
                            (head_index % args.heads_q) / (args.heads_q / args.heads_kv);
    const float *k = args.k + kv_head * args.nk * dim;
    const float *v = args.v + kv_head * args.nk * dim;
    const int64_t row_offset = (head_index * args.nq + i) * dim;

    /* Every lane reads all of q for its dot products: keep it in shared memory. */
    float *q = q_rows[warp];
    for (int d = lane; d < dim; d += ONLINE_WARP_THREADS)
        q[d] = args.q[row_offset + d];
    __syncwarp();

    const int64_t key_end = attn_online_key_end(args.mask, i, args.nq, args.nk);
    online_state state = online_state_empty();
    float out[COLS_PER_LANE];
#pragma unroll
    for (int c = 0; c < COLS_PER_LANE; ++c)
        out[c] = 0.0f;

    for (int64_t start = 0; start < key_end; start += args.chunk) {
        const int length = (int)(key_end - start < args.chunk ? key_end - start : args.chunk);

        float score[KEYS_PER_LANE];
        float chunk_max = -INFINITY;
#pragma unroll
        for (int r = 0; r < KEYS_PER_LANE; ++r) {
            const int key = lane + r * ONLINE_WARP_THREADS;
            score[r] = -INFINITY; /* lanes past the chunk hold a masked score */
            if (key < length) {
                const float *k_row = k + (start + key) * dim;
                float dot = 0.0f;
                for (int d = 0; d < dim; ++d)
                    dot = fmaf(q[d], k_row[d], dot);
                /* Rounded once here, so the max and the weight see the same score. */
                score[r] = __fmul_rn(args.scale, dot);
            }
            chunk_max = fmaxf(chunk_max, score[r]);
        }
        const float max_new = online_running_max(state.max, warp_max(chunk_max));
        const float alpha = online_correction(state.max, max_new);

        float weight[KEYS_PER_LANE];
        float chunk_sum = 0.0f;
#pragma unroll
        for (int r = 0; r < KEYS_PER_LANE; ++r) {
            weight[r] = online_weight(score[r], max_new);
            chunk_sum += weight[r];
        }
        state.sum = online_update_sum(state.sum, alpha, warp_sum(chunk_sum));
        state.max = max_new;

        float chunk_out[COLS_PER_LANE];
#pragma unroll
        for (int c = 0; c < COLS_PER_LANE; ++c)
            chunk_out[c] = 0.0f;
#pragma unroll
        for (int r = 0; r < KEYS_PER_LANE; ++r) {
            for (int source = 0; source < ONLINE_WARP_THREADS; ++source) {
                const int key = r * ONLINE_WARP_THREADS + source;
                if (key >= length)
                    break; /* the same for every lane: the shuffle stays warp-wide */
                const float w = __shfl_sync(FULL_WARP, weight[r], source);
                const float *v_row = v + (start + key) * dim;
#pragma unroll
                for (int c = 0; c < COLS_PER_LANE; ++c) {
                    const int col = lane + c * ONLINE_WARP_THREADS;
                    if (col < dim)
                        chunk_out[c] = fmaf(w, v_row[col], chunk_out[c]);
                }
            }
        }
#pragma unroll
        for (int c = 0; c < COLS_PER_LANE; ++c)
            out[c] = online_rescale_output(out[c], alpha, chunk_out[c]);
    }

#pragma unroll
    for (int c = 0; c < COLS_PER_LANE; ++c) {
        const int col = lane + c * ONLINE_WARP_THREADS;
        if (col < dim)
            args.o[row_offset + col] = online_normalise(out[c], state.sum);
    }
    if (args.lse != nullptr && lane == 0)
        args.lse[head_index * args.nq + i] = online_lse(state);
}

/** Instantiates the kernel with just enough columns per lane for head_dim. */
template <int COLS_PER_LANE>
static fa_status launch_attn(const attn_online_args *args, int64_t blocks, cudaStream_t stream)
{
    attn_rows_online_kernel<COLS_PER_LANE>
        <<<(unsigned)blocks, ATTN_ONLINE_WARPS * ONLINE_WARP_THREADS, 0, stream>>>(*args);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

extern "C" fa_status ref_attn_rows_online(const attn_online_args *args, cudaStream_t stream)
{
    FA_TRY(attn_rows_online_validate(args));
    const int64_t heads = args->batch * args->heads_q;
    if (heads == 0 || args->nq == 0)
        return FA_OK;
    const int64_t blocks = heads * ceil_div(args->nq, ATTN_ONLINE_WARPS);
    const int64_t cols_per_lane = ceil_div(args->head_dim, ONLINE_WARP_THREADS);
    if (cols_per_lane <= 1)
        return launch_attn<1>(args, blocks, stream);
    if (cols_per_lane <= 2)
        return launch_attn<2>(args, blocks, stream);
    if (cols_per_lane <= 4)
        return launch_attn<4>(args, blocks, stream);
    return launch_attn<ATTN_ONLINE_MAX_HEAD_DIM / ONLINE_WARP_THREADS>(args, blocks, stream);
}
