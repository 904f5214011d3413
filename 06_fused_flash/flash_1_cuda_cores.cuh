/**
 * @file flash_1_cuda_cores.cuh
 * @brief M23 version 1: the fused forward kernel on CUDA cores, the level-1
 *        blocks of \ref stage05 composed into one loop. The teaching version:
 *        read it top to bottom beside tiles_1_cuda_cores.cuh.
 *
 * One block of TILE1_THREADS threads per (query tile of TILE1_BR rows, head,
 * batch). It loads its Q tile once (M17), then for every key tile of
 * TILE1_BC keys its rows see: loads K and V (M17), scores (M18) and masks
 * them where the tile is not wholly visible (M25 of \ref stage07; with no
 * mask, only a tail past nk), raises the row maxima (M19), forms the weights and
 * the correction (M20), updates the row sums (M21) and rescales and
 * accumulates O (M22). At the end it divides by l and
 * writes O (in the output type) and lse. S and P live in registers and in the
 * shared P tile, never in global memory: the kernel reads Q, K and V and
 * writes O, nothing else.
 */
#ifndef FLASH_1_CUDA_CORES_CUH
#define FLASH_1_CUDA_CORES_CUH

#include "flash.h"
#include "flash_store.cuh"
#include "key_tiles.cuh"
#include "sequence.cuh"
#include "tiles_1_cuda_cores.cuh"

/* PACKED: blockIdx.z is a sequence of a packed batch (sequence.cuh, \ref stage07). */
template <typename T, typename TO, int D_MAX, bool PACKED = false>
static __global__ void __launch_bounds__(TILE1_THREADS)
flash1_kernel(fa_attention_params p, float scale, bool vector_loads)
{
    extern __shared__ float flash1_shared[];
    const int stride = tile1_stride(D_MAX), d = (int)p.head_dim;
    float *q_tile = flash1_shared;
    float *k_tile = q_tile + TILE1_BR * stride;
    float *v_tile = k_tile + TILE1_BC * stride;
    float *p_tile = v_tile + TILE1_BC * stride;

    const int ty = threadIdx.x / TILE1_THREAD_COLS, tx = threadIdx.x % TILE1_THREAD_COLS;
    const int64_t b = blockIdx.z, h = blockIdx.y, row0 = (int64_t)blockIdx.x * TILE1_BR;
    const flash_sequence seq = flash_sequence_of<PACKED>(p, b);
    if (PACKED && row0 >= seq.nq)
        return; /* a sequence shorter than the longest: the whole block, before any barrier */
    const int64_t h_kv = h / (p.heads_q / p.heads_kv);
    const T *q = static_cast<const T *>(p.q) + seq.q + h * p.q_strides.head +
                 row0 * p.q_strides.row;
    const T *k = static_cast<const T *>(p.k) + seq.k + h_kv * p.k_strides.head;
    const T *v = static_cast<const T *>(p.v) + seq.v + h_kv * p.v_strides.head;
    const float c = scale * FA_LOG2E_F;
    const int rows_valid = fa_tile_rows(seq.nq, row0, TILE1_BR);
    const fa_key_window band = flash_sequence_band(p, seq);
    const causal_tiles tiles = causal_key_tiles(band, row0, row0 + rows_valid, seq.nk, TILE1_BC);

    tile1_load(q_tile, stride, q, p.q_strides.row, rows_valid, TILE1_BR, d, vector_loads);

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

    for (int64_t t = tiles.begin; t < tiles.end; ++t) {
        const int64_t key0 = t * TILE1_BC;
        const int valid = fa_tile_rows(seq.nk, key0, TILE1_BC);
        __syncthreads(); /* the previous tile's K, V and P are no longer read */
        tile1_load(k_tile, stride, k + key0 * p.k_strides.row, p.k_strides.row, valid, TILE1_BC,
                   d, vector_loads);
        tile1_load(v_tile, stride, v + key0 * p.v_strides.row, p.v_strides.row, valid, TILE1_BC,
                   d, vector_loads);
        __syncthreads();

        float s[TILE1_ROWS_PER_THREAD][TILE1_KEYS_PER_THREAD];
        float m_new[TILE1_ROWS_PER_THREAD], alpha[TILE1_ROWS_PER_THREAD];
        tile1_scores(s, q_tile, k_tile, stride, d, key0, seq.nk);
        if (causal_tile_masked(tiles, t))
            causal1_mask(s, band, row0, key0, seq.nk);
        tile1_rowmax(s, m, m_new);
        tile1_exp(s, m, m_new, c, alpha);
        tile1_rowsum(l, alpha, s);
        tile1_accumulate_pv<D_MAX>(o, alpha, s, p_tile, v_tile, stride, d);
#pragma unroll
        for (int r = 0; r < TILE1_ROWS_PER_THREAD; ++r)
            m[r] = m_new[r];
    }

    float lse[TILE1_ROWS_PER_THREAD];
    tile1_normalise<D_MAX>(o, m, l, scale, lse);
    const flash_outputs outputs = flash_outputs_of<PACKED>(p, b, h);
    TO *out = static_cast<TO *>(p.o) + outputs.o + h * p.o_strides.head;
    for (int r = 0; r < TILE1_ROWS_PER_THREAD; ++r) {
        const int64_t row = row0 + ty * TILE1_ROWS_PER_THREAD + r;
        if (row >= seq.nq)
            continue;
#pragma unroll
        for (int col = 0; col < D_MAX / TILE1_THREAD_COLS; ++col)
            if (tx + col * TILE1_THREAD_COLS < d)
                flash1_store(out + row * p.o_strides.row + tx + col * TILE1_THREAD_COLS, o[r][col]);
        if (tx == 0 && p.lse != nullptr)
            p.lse[outputs.lse + row] = lse[r];
    }
}

#endif /* FLASH_1_CUDA_CORES_CUH */
