/**
 * @file flash_2_tensor_cores.cuh
 * @brief M23 version 2: the fused forward kernel on the tensor cores, built
 *        from the level-2 blocks of \ref stage05 in FlashAttention-2's order.
 *
 * One block of FLASH2_WARPS warps per (query tile, head, batch). The block
 * loads its Q tile once, then walks the key tiles its rows see (M25 of
 * \ref stage07; every tile with no mask) from the last to the first, with
 * one K and one V tile in shared memory, overlapping each copy with the work
 * that does not need it:
 *
 *   wait K_t, barrier | start V_t | S = Q K_t^T, (mask)
 *   wait V_t, barrier | start K_(t-1) | rowmax, exp, rowsum, O = alpha O + P V_t
 *
 * so V_t arrives while the scores are computed, and K_(t-1) while the
 * softmax and P V_t are (FlashAttention-2's order). Walked from the last,
 * the only tile that may end before BC keys (at nk) is the first one copied,
 * so every later copy needs no row bound. S and P never leave the
 * registers. At the end O is divided by l, rounded to the output type and
 * written through shared memory with 16-byte stores, and lse = scale m + ln l.
 *
 * Tile shapes per head dimension (FLASH2_* in flash.h): D_PAD 32 and 64:
 * 128 x 128, 96 and 128: 128 x 64 (two m16 fragments per warp, each K and V
 * fragment used twice), 160 to 256: 64 x 64 (one m16 fragment: the O
 * accumulator of D_PAD / 8 fragments must fit the registers).
 */
#ifndef FLASH_2_TENSOR_CORES_CUH
#define FLASH_2_TENSOR_CORES_CUH

#include "flash.h"
#include "flash_store.cuh"
#include "key_tiles.cuh"
#include "sequence.cuh"
#include "tiles_2_tensor_cores.cuh"

/* PACKED: blockIdx.z is a sequence of a packed batch (sequence.cuh, \ref stage07). */
template <typename T, typename TO, int D_PAD, int MT, int BC, bool PACKED = false>
static __global__ void __launch_bounds__(FLASH2_THREADS)
flash2_kernel(fa_attention_params p, float scale)
{
    constexpr int NT = BC / 8;
    constexpr int BR = FLASH2_WARPS * TILE2_WARP_ROWS * MT;
    extern __shared__ __align__(16) unsigned char flash2_shared[];
    T *q_tile = reinterpret_cast<T *>(flash2_shared);
    T *k_tile = q_tile + BR * D_PAD;
    T *v_tile = k_tile + BC * D_PAD;

    const int d = (int)p.head_dim;
    const int warp = threadIdx.x / FA_WARP_THREADS, lane = threadIdx.x % FA_WARP_THREADS;
    const int64_t b = blockIdx.z, h = blockIdx.y, row0 = (int64_t)blockIdx.x * BR;
    const flash_sequence seq = flash_sequence_of<PACKED>(p, b);
    if (PACKED && row0 >= seq.nq)
        return; /* a sequence shorter than the longest: the whole block, before any barrier */
    const int64_t h_kv = h / (p.heads_q / p.heads_kv);
    const T *q = static_cast<const T *>(p.q) + seq.q + h * p.q_strides.head +
                 row0 * p.q_strides.row;
    const T *k = static_cast<const T *>(p.k) + seq.k + h_kv * p.k_strides.head;
    const T *v = static_cast<const T *>(p.v) + seq.v + h_kv * p.v_strides.head;
    const float c = scale * FA_LOG2E_F;
    const int rows_valid = fa_tile_rows(seq.nq, row0, BR);
    const causal_tiles tiles =
        causal_key_tiles(flash_sequence_band(p, seq), row0, row0 + rows_valid, seq.nk, BC);

    tile2_load_async<D_PAD, FLASH2_THREADS>(q_tile, q, p.q_strides.row, rows_valid, BR, d);
    if (tiles.begin < tiles.end) {
        const int64_t last = (tiles.end - 1) * BC;
        tile2_load_async<D_PAD, FLASH2_THREADS>(k_tile, k + last * p.k_strides.row,
                                                p.k_strides.row, fa_tile_rows(seq.nk, last, BC),
                                                BC, d);
    }
    cp_async_commit();

    float m[MT][2], l[MT][2], o[MT][D_PAD / 8][4];
#pragma unroll
    for (int i = 0; i < MT; ++i) {
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
            m[i][hh] = -INFINITY;
            l[i][hh] = 0.0f;
        }
#pragma unroll
        for (int n = 0; n < D_PAD / 8; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e)
                o[i][n][e] = 0.0f;
    }
    const int warp_row0 = warp * TILE2_WARP_ROWS * MT;

    for (int64_t t = tiles.end - 1; t >= tiles.begin; --t) {
        const int64_t key0 = t * BC;
        cp_async_wait<0>();
        __syncthreads(); /* K_t (and Q) landed; every warp is done with V_(t+1) */
        if (t == tiles.end - 1) /* the one tile that may end at nk */
            tile2_load_async<D_PAD, FLASH2_THREADS>(v_tile, v + key0 * p.v_strides.row,
                                                    p.v_strides.row, fa_tile_rows(seq.nk, key0, BC),
                                                    BC, d);
        else
            tile2_load_async<D_PAD, FLASH2_THREADS, false>(v_tile, v + key0 * p.v_strides.row,
                                                           p.v_strides.row, BC, BC, d);
        cp_async_commit();

        float s[MT][NT][4], m_new[MT][2], alpha[MT][2];
        tile2_scores<D_PAD, MT, NT>(s, q_tile, k_tile, warp_row0);
        if (causal_tile_masked(tiles, t)) /* the band made again, not held in the loop */
            causal2_mask<MT, NT>(s, flash_sequence_band(p, seq), row0 + warp_row0, key0, seq.nk);

        cp_async_wait<0>();
        __syncthreads(); /* V_t landed; every warp is done with K_t */
        if (t > tiles.begin) {
            tile2_load_async<D_PAD, FLASH2_THREADS, false>(k_tile, k + (key0 - BC) * p.k_strides.row,
                                                           p.k_strides.row, BC, BC, d);
            cp_async_commit();
        }
        tile2_rowmax<MT, NT>(s, m, m_new);
        tile2_exp<MT, NT>(s, m, m_new, c, alpha);
        tile2_rowsum<MT, NT>(l, alpha, s);
        tile2_accumulate_pv<D_PAD, MT, NT>(o, alpha, s, v_tile);
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
            for (int hh = 0; hh < 2; ++hh)
                m[i][hh] = m_new[i][hh];
    }
    cp_async_wait<0>(); /* the Q copy, when there was no key tile */

    float lse[MT][2];
    tile2_normalise<D_PAD, MT>(o, m, l, scale, lse);

    /* O through shared memory: stage the fragments (rounded to TO), then 16-byte stores. */
    __syncthreads(); /* every warp is done with the Q, K and V tiles */
    TO *o_tile = reinterpret_cast<TO *>(flash2_shared);
    const int g = lane / 4, quad = lane % 4;
    flash2_stage_o<D_PAD, MT>(o_tile, o, warp_row0, lane);
    __syncthreads();
    constexpr int PER_CHUNK = 16 / (int)sizeof(TO);
    constexpr int ROW_CHUNKS = D_PAD / PER_CHUNK; /* a staged row: a constant divisor below */
    const int chunks = d / PER_CHUNK;             /* d is a multiple of 8: whole chunks */
    const flash_outputs outputs = flash_outputs_of<PACKED>(p, b, h);
    TO *out = static_cast<TO *>(p.o) + outputs.o + h * p.o_strides.head + row0 * p.o_strides.row;
    for (int i = threadIdx.x; i < rows_valid * ROW_CHUNKS; i += FLASH2_THREADS) {
        const int row = i / ROW_CHUNKS, chunk = i % ROW_CHUNKS;
        if (chunk < chunks) /* the padding columns past d are staged, never stored */
            *reinterpret_cast<uint4 *>(out + row * p.o_strides.row + chunk * PER_CHUNK) =
                *reinterpret_cast<const uint4 *>(o_tile + flash2_chunk_offset<TO>(row, chunk, D_PAD));
    }
    if (p.lse != nullptr && quad == 0)
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
            for (int hh = 0; hh < 2; ++hh) {
                const int64_t row = row0 + warp_row0 + 16 * i + g + 8 * hh;
                if (row < seq.nq)
                    p.lse[outputs.lse + row] = lse[i][hh];
            }
}

#endif /* FLASH_2_TENSOR_CORES_CUH */
