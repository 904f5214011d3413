/**
 * @file traces.cuh
 * @brief The trace kernels of stage 05: they run the blocks of one version
 *        over every query tile and key tile of a problem, in the order the
 *        fused kernel of stage 06 runs them, and write what milestone
 *        MILESTONE's block produced (tiles.h, ::tile_trace).
 *
 * One block per (query tile, head). Template MILESTONE (17..22) decides what
 * is written and how far the loop goes: M18 stops after the scores, M19
 * after the maxima, and so on; M22 runs everything and writes the output.
 * These kernels are the harness of the stage: they are compiled against the
 * reference blocks and against the learner's (harness/launch.cu).
 */
#ifndef TILES_TRACES_CUH
#define TILES_TRACES_CUH

#include <math.h>
#include <stdint.h>

#include "fa_index.h"
#include "fa_math.h"
#include "tensor_core.cuh"
#include "tiles.h"

/** Accumulator fragments of 16 x 8 scores per warp and key tile of version 2's traces. */
static constexpr int TILE2_NT = TILE2_BC / 8;

static_assert(TILE2_BC % 16 == 0, "P V consumes the keys 16 at a time (k of m16n8k16)");

/* ---- version 1 --------------------------------------------------------------------------- */

/**
 * M17 of version 1: every tile loaded as the fused loop loads it, then copied
 * back from shared memory row by row, rows past the end included. The Q tile
 * of every block; the K and V tiles by the blocks of query tile 0 only.
 */
template <typename T, int D_MAX>
static __device__ void trace1_tiles(const tile_problem &p, const tile_trace &out, bool vector_loads,
                                    float *q_tile, float *k_tile, float *v_tile)
{
    const int stride = tile1_stride(D_MAX), d = (int)p.d;
    const int64_t head = blockIdx.y, row0 = (int64_t)blockIdx.x * TILE1_BR;
    const T *q = static_cast<const T *>(p.q) + head * p.nq * p.d;
    tile1_load(q_tile, stride, q + row0 * p.d, p.d, fa_tile_rows(p.nq, row0, TILE1_BR), TILE1_BR,
               d, vector_loads);
    __syncthreads();
    float *q_out = static_cast<float *>(out.q_tiles) +
                   (head * tile_query_tiles(1, p.nq) * TILE1_BR + row0) * p.d;
    for (int i = threadIdx.x; i < TILE1_BR * d; i += TILE1_THREADS)
        q_out[i] = q_tile[(i / d) * stride + i % d];
    if (blockIdx.x != 0)
        return;
    const int64_t key_tiles = tile_key_tiles(1, p.nk);
    const T *k = static_cast<const T *>(p.k) + head * p.nk * p.d;
    const T *v = static_cast<const T *>(p.v) + head * p.nk * p.d;
    for (int64_t t = 0; t < key_tiles; ++t) {
        const int64_t key0 = t * TILE1_BC;
        const int valid = fa_tile_rows(p.nk, key0, TILE1_BC);
        __syncthreads(); /* the previous tiles are copied out */
        tile1_load(k_tile, stride, k + key0 * p.d, p.d, valid, TILE1_BC, d, vector_loads);
        tile1_load(v_tile, stride, v + key0 * p.d, p.d, valid, TILE1_BC, d, vector_loads);
        __syncthreads();
        const int64_t base = (head * key_tiles * TILE1_BC + key0) * p.d;
        for (int i = threadIdx.x; i < TILE1_BC * d; i += TILE1_THREADS) {
            static_cast<float *>(out.k_tiles)[base + i] = k_tile[(i / d) * stride + i % d];
            static_cast<float *>(out.v_tiles)[base + i] = v_tile[(i / d) * stride + i % d];
        }
    }
}

/** The trace kernel of version 1 (one block of TILE1_THREADS per query tile and head). */
template <typename T, int D_MAX, int MILESTONE>
static __global__ void __launch_bounds__(TILE1_THREADS)
trace1_kernel(tile_problem p, tile_trace out, bool vector_loads)
{
    extern __shared__ float shared1[];
    const int stride = tile1_stride(D_MAX), d = (int)p.d;
    float *q_tile = shared1;
    float *k_tile = q_tile + TILE1_BR * stride;
    float *v_tile = k_tile + TILE1_BC * stride;
    float *p_tile = v_tile + TILE1_BC * stride;
    if (MILESTONE == 17) {
        trace1_tiles<T, D_MAX>(p, out, vector_loads, q_tile, k_tile, v_tile);
        return;
    }

    const int ty = threadIdx.x / TILE1_THREAD_COLS, tx = threadIdx.x % TILE1_THREAD_COLS;
    const int64_t head = blockIdx.y, row0 = (int64_t)blockIdx.x * TILE1_BR;
    const int64_t key_tiles = tile_key_tiles(1, p.nk);
    const T *q = static_cast<const T *>(p.q) + head * p.nq * p.d;
    const T *k = static_cast<const T *>(p.k) + head * p.nk * p.d;
    const T *v = static_cast<const T *>(p.v) + head * p.nk * p.d;
    const float c = p.scale * FA_LOG2E_F;
    tile1_load(q_tile, stride, q + row0 * p.d, p.d, fa_tile_rows(p.nq, row0, TILE1_BR), TILE1_BR,
               d, vector_loads);

    float m[TILE1_ROWS_PER_THREAD], l[TILE1_ROWS_PER_THREAD];
    float o[TILE1_ROWS_PER_THREAD][D_MAX / TILE1_THREAD_COLS];
#pragma unroll
    for (int r = 0; r < TILE1_ROWS_PER_THREAD; ++r) {
        m[r] = -INFINITY;
        l[r] = 0.0f;
#pragma unroll
        for (int col = 0; col < D_MAX / TILE1_THREAD_COLS; ++col)
            o[r][col] = 0.0f;
    }

    for (int64_t t = 0; t < key_tiles; ++t) {
        const int64_t key0 = t * TILE1_BC;
        const int valid = fa_tile_rows(p.nk, key0, TILE1_BC);
        __syncthreads(); /* the previous tile's K, V and P are no longer read */
        tile1_load(k_tile, stride, k + key0 * p.d, p.d, valid, TILE1_BC, d, vector_loads);
        tile1_load(v_tile, stride, v + key0 * p.d, p.d, valid, TILE1_BC, d, vector_loads);
        __syncthreads();

        float s[TILE1_ROWS_PER_THREAD][TILE1_KEYS_PER_THREAD];
        tile1_scores(s, q_tile, k_tile, stride, d, key0, p.nk);
        float m_new[TILE1_ROWS_PER_THREAD], alpha[TILE1_ROWS_PER_THREAD];
        if (MILESTONE >= 19)
            tile1_rowmax(s, m, m_new);
        if (MILESTONE >= 20)
            tile1_exp(s, m, m_new, c, alpha);
        if (MILESTONE == 18 || MILESTONE == 20) {
            float *dst = MILESTONE == 18 ? out.scores : out.weights;
            for (int r = 0; r < TILE1_ROWS_PER_THREAD; ++r) {
                const int64_t row = row0 + ty * TILE1_ROWS_PER_THREAD + r;
                for (int kc = 0; kc < TILE1_KEYS_PER_THREAD && row < p.nq; ++kc)
                    dst[(head * p.nq + row) * key_tiles * TILE1_BC + key0 + tx +
                        kc * TILE1_THREAD_COLS] = s[r][kc];
            }
        }
        if (MILESTONE >= 21)
            tile1_rowsum(l, alpha, s);
        if (MILESTONE == 22)
            tile1_accumulate_pv<D_MAX>(o, alpha, s, p_tile, v_tile, stride, d);
        if (MILESTONE >= 19) {
            for (int r = 0; r < TILE1_ROWS_PER_THREAD; ++r) {
                const int64_t row = row0 + ty * TILE1_ROWS_PER_THREAD + r;
                const int64_t at = (head * p.nq + row) * key_tiles + t;
                if (row < p.nq && tx == 0 && MILESTONE == 19)
                    out.max[at] = m_new[r];
                if (row < p.nq && tx == 0 && MILESTONE == 20)
                    out.correction[at] = alpha[r];
                if (row < p.nq && tx == 0 && MILESTONE == 21)
                    out.sum[at] = l[r];
                m[r] = m_new[r];
            }
        }
    }

    if (MILESTONE != 22)
        return;
    float lse[TILE1_ROWS_PER_THREAD];
    tile1_normalise<D_MAX>(o, m, l, p.scale, lse);
    for (int r = 0; r < TILE1_ROWS_PER_THREAD; ++r) {
        const int64_t row = row0 + ty * TILE1_ROWS_PER_THREAD + r;
        if (row >= p.nq)
            continue;
        for (int col = 0; col < D_MAX / TILE1_THREAD_COLS; ++col)
            if (tx + col * TILE1_THREAD_COLS < d)
                out.o[(head * p.nq + row) * p.d + tx + col * TILE1_THREAD_COLS] = o[r][col];
        if (tx == 0 && out.lse != nullptr)
            out.lse[head * p.nq + row] = lse[r];
    }
}

/* ---- version 2 --------------------------------------------------------------------------- */

/** Copies a swizzled shared tile back to @p dst ([rows][d], row-major, in the input dtype). */
template <int D_PAD, typename T>
static __device__ void trace2_copy_out(T *dst, const T *tile, int rows, int d)
{
    for (int i = threadIdx.x; i < rows * d; i += TILE2_THREADS)
        dst[i] = tile[tile2_offset(i / d, i % d, D_PAD)];
}

/** The trace kernel of version 2 (one block of TILE2_THREADS per query tile and head). */
template <typename T, int D_PAD, int MILESTONE>
static __global__ void __launch_bounds__(TILE2_THREADS)
trace2_kernel(tile_problem p, tile_trace out)
{
    extern __shared__ __align__(16) unsigned char shared2[];
    T *q_tile = reinterpret_cast<T *>(shared2);
    T *k_tiles = q_tile + TILE2_BR * D_PAD;               /* [TILE2_STAGES][BC][D_PAD] */
    T *v_tiles = k_tiles + TILE2_STAGES * TILE2_BC * D_PAD;
    const int d = (int)p.d;
    const int warp = threadIdx.x / FA_WARP_THREADS, lane = threadIdx.x % FA_WARP_THREADS;
    const int64_t head = blockIdx.y, row0 = (int64_t)blockIdx.x * TILE2_BR;
    const int64_t key_tiles = tile_key_tiles(2, p.nk);
    const T *q = static_cast<const T *>(p.q) + head * p.nq * p.d;
    const T *k = static_cast<const T *>(p.k) + head * p.nk * p.d;
    const T *v = static_cast<const T *>(p.v) + head * p.nk * p.d;
    const float c = p.scale * FA_LOG2E_F;
    /* M17 copies the K and V tiles out once, from the blocks of query tile 0. */
    const bool keys_here = MILESTONE != 17 || blockIdx.x == 0;

    /* The Q tile and the first K, V tiles: one commit group; then one group per later tile. */
    tile2_load_async<D_PAD, TILE2_THREADS>(q_tile, q + row0 * p.d, p.d,
                                           fa_tile_rows(p.nq, row0, TILE2_BR), TILE2_BR, d);
    if (key_tiles > 0 && keys_here) {
        const int valid = fa_tile_rows(p.nk, 0, TILE2_BC);
        tile2_load_async<D_PAD, TILE2_THREADS>(k_tiles, k, p.d, valid, TILE2_BC, d);
        tile2_load_async<D_PAD, TILE2_THREADS>(v_tiles, v, p.d, valid, TILE2_BC, d);
    }
    cp_async_commit();

    /* One m16 fragment per warp (MT = 1): the warp's 16 rows. */
    float m[1][2] = {{-INFINITY, -INFINITY}}, l[1][2] = {{0.0f, 0.0f}};
    float o[1][D_PAD / 8][4];
#pragma unroll
    for (int n = 0; n < D_PAD / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e)
            o[0][n][e] = 0.0f;
    const int warp_row0 = warp * TILE2_WARP_ROWS;
    const int g = lane / 4, quad = lane % 4;

    for (int64_t t = 0; t < key_tiles && keys_here; ++t) {
        const int64_t key0 = t * TILE2_BC;
        const int stage = (int)(t % TILE2_STAGES);
        const T *k_tile = k_tiles + stage * TILE2_BC * D_PAD;
        const T *v_tile = v_tiles + stage * TILE2_BC * D_PAD;
        /* Start the next tile's copy into the other stage, then wait for this one. */
        if (t + 1 < key_tiles) {
            const int next = (int)((t + 1) % TILE2_STAGES);
            const int valid = fa_tile_rows(p.nk, key0 + TILE2_BC, TILE2_BC);
            tile2_load_async<D_PAD, TILE2_THREADS>(k_tiles + next * TILE2_BC * D_PAD,
                                                   k + (key0 + TILE2_BC) * p.d, p.d, valid, TILE2_BC, d);
            tile2_load_async<D_PAD, TILE2_THREADS>(v_tiles + next * TILE2_BC * D_PAD,
                                                   v + (key0 + TILE2_BC) * p.d, p.d, valid, TILE2_BC, d);
            cp_async_commit();
            cp_async_wait<1>(); /* all but the group just committed have landed */
        } else {
            cp_async_wait<0>();
        }
        __syncthreads(); /* every thread's copies of this tile are visible */

        if (MILESTONE == 17) {
            const int64_t base = (head * key_tiles * TILE2_BC + key0) * p.d;
            trace2_copy_out<D_PAD>(static_cast<T *>(out.k_tiles) + base, k_tile, TILE2_BC, d);
            trace2_copy_out<D_PAD>(static_cast<T *>(out.v_tiles) + base, v_tile, TILE2_BC, d);
        } else {
            float s[1][TILE2_NT][4];
            tile2_scores<D_PAD, 1, TILE2_NT>(s, q_tile, k_tile, warp_row0);
            tile2_mask_keys<1, TILE2_NT>(s, key0, p.nk);
            float m_new[1][2], alpha[1][2];
            if (MILESTONE >= 19)
                tile2_rowmax<1, TILE2_NT>(s, m, m_new);
            if (MILESTONE >= 20)
                tile2_exp<1, TILE2_NT>(s, m, m_new, c, alpha);
            if (MILESTONE == 18 || MILESTONE == 20) {
                float *dst = MILESTONE == 18 ? out.scores : out.weights;
                for (int e = 0; e < 4; ++e) {
                    const int64_t row = row0 + warp_row0 + g + 8 * (e / 2);
                    for (int n = 0; n < TILE2_NT && row < p.nq; ++n)
                        dst[(head * p.nq + row) * key_tiles * TILE2_BC + key0 + 8 * n +
                            2 * quad + e % 2] = s[0][n][e];
                }
            }
            if (MILESTONE >= 21)
                tile2_rowsum<1, TILE2_NT>(l, alpha, s);
            if (MILESTONE == 22)
                tile2_accumulate_pv<D_PAD, 1, TILE2_NT>(o, alpha, s, v_tile);
            if (MILESTONE >= 19) {
                float l_row[1][2];
                tile2_row_sums<1>(l, l_row); /* every lane of the quad: the shuffles are warp-wide */
                for (int h = 0; h < 2; ++h) {
                    const int64_t row = row0 + warp_row0 + g + 8 * h;
                    const int64_t at = (head * p.nq + row) * key_tiles + t;
                    if (row < p.nq && quad == 0 && MILESTONE == 19)
                        out.max[at] = m_new[0][h];
                    if (row < p.nq && quad == 0 && MILESTONE == 20)
                        out.correction[at] = alpha[0][h];
                    if (row < p.nq && quad == 0 && MILESTONE == 21)
                        out.sum[at] = l_row[0][h];
                    m[0][h] = m_new[0][h];
                }
            }
        }
        __syncthreads(); /* this stage is read by everyone before the next copy overwrites it */
    }
    cp_async_wait<0>(); /* no copy may still be landing when the block ends (no key tile: Q's) */

    if (MILESTONE == 17) {
        __syncthreads();
        T *q_out = static_cast<T *>(out.q_tiles) +
                   (head * tile_query_tiles(2, p.nq) * TILE2_BR + row0) * p.d;
        trace2_copy_out<D_PAD>(q_out, q_tile, TILE2_BR, d);
        return;
    }
    if (MILESTONE != 22)
        return;
    float lse[1][2];
    tile2_normalise<D_PAD, 1>(o, m, l, p.scale, lse);
    for (int h = 0; h < 2; ++h) {
        const int64_t row = row0 + warp_row0 + g + 8 * h;
        if (row >= p.nq)
            continue;
        for (int n = 0; n < D_PAD / 8; ++n)
            for (int e = 2 * h; e < 2 * h + 2; ++e) {
                const int col = 8 * n + 2 * quad + e % 2;
                if (col < d)
                    out.o[(head * p.nq + row) * p.d + col] = o[0][n][e];
            }
        if (quad == 0 && out.lse != nullptr)
            out.lse[head * p.nq + row] = lse[0][h];
    }
}

#endif /* TILES_TRACES_CUH */
