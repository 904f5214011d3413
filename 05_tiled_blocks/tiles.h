/**
 * @file tiles.h
 * @brief Stage 05 API: the six building blocks of a tiled attention kernel,
 *        M17 tile load, M18 tile scores, M19 tile rowmax, M20 tile exp,
 *        M21 tile rowsum and M22 accumulate PV (the lesson is \ref stage05).
 *
 * A thread block owns a tile of BR query rows and walks the keys in tiles of
 * BC. For each key tile it loads K and V into shared memory (M17), computes
 * the raw scores S = Q K^T of the tile (M18), raises the running row maxima
 * (M19), turns the scores into weights and the correction factor (M20),
 * updates the running row sums (M21) and rescales and accumulates the output
 * (M22). Every milestone exists at two levels, its two versions:
 *
 * | version | blocks | arithmetic | layout |
 * |---|---|---|---|
 * | 1 | tiles_1_cuda_cores.cuh | fp32 FMA on CUDA cores; fp32, bf16 or fp16 inputs widened | padded shared rows; each thread owns 4 rows x 2 keys of S and 4 rows x D/16 columns of O |
 * | 2 | tiles_2_tensor_cores.cuh | bf16 or fp16 mma.sync m16n8k16, fp32 accumulate | XOR-swizzled shared rows filled by cp.async, read by ldmatrix; S, P and O live in mma fragments |
 *
 * The blocks are `__device__` functions that stage 06 composes into the fused
 * kernel. Here, trace kernels (harness/traces.cuh) run them over every key
 * tile of a problem and write out what a block produced, so that each one is
 * judged on its own: ref_tile_trace() and learner_tile_trace().
 *
 * **The scale is folded into exp2.** The scores of the tiles are raw,
 * S = Q K^T; the softmax of scale * S is computed as
 *   p = exp2(S c - m c),  c = scale * log2(e),  m = max of the raw S,
 * one FFMA and one exp2 per weight (the lesson explains why). This needs
 * scale > 0: for a negative scale the largest raw score would be the
 * smallest scaled one, so validation refuses it.
 */
#ifndef TILES_H
#define TILES_H

#include <stddef.h>
#include <stdint.h>

#include "fa_attention_ref.h"
#include "fa_half.h"
#include "fa_index.h"
#include "fa_status.h"

#if FA_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Level 1: a 16 x 16 grid of threads; thread (ty, tx) owns rows 4 ty .. 4 ty + 3 of the tile. */
enum {
    TILE1_THREAD_ROWS = 16,     /**< ty = threadIdx.x / 16 */
    TILE1_THREAD_COLS = 16,     /**< tx = threadIdx.x % 16: the lanes that share a row */
    TILE1_THREADS = TILE1_THREAD_ROWS * TILE1_THREAD_COLS, /**< 256 threads of a level-1 block */
    TILE1_ROWS_PER_THREAD = 4,  /**< query rows a thread owns */
    TILE1_KEYS_PER_THREAD = 2,  /**< keys a thread scores per tile: tx and tx + 16 */
    TILE1_BR = TILE1_THREAD_ROWS * TILE1_ROWS_PER_THREAD, /**< 64 query rows per tile */
    TILE1_BC = TILE1_THREAD_COLS * TILE1_KEYS_PER_THREAD, /**< 32 keys per tile */
    TILE1_MAX_D = 256           /**< largest head dimension of level 1 */
};

/** Row stride, in floats, of the level-1 shared tiles for head dims up to @p d_max: d_max + 1. */
static inline FA_CONSTEXPR FA_HOST_DEVICE int tile1_stride(int d_max)
{
    return d_max + 1;
}

/** Row stride of the level-1 shared P tile: BC + 1 floats, for the same reason. */
enum { TILE1_P_STRIDE = TILE1_BC + 1 };

/** Shared memory of a level-1 block: Q, K and V tiles of stride tile1_stride(d_max), and P. */
static inline FA_CONSTEXPR FA_HOST_DEVICE size_t tile1_shared_bytes(int d_max)
{
    return ((size_t)(TILE1_BR + 2 * TILE1_BC) * (size_t)tile1_stride(d_max) +
            (size_t)TILE1_BR * TILE1_P_STRIDE) *
           sizeof(float);
}

/** Level 2: four warps, each owning 16 query rows (one m16 row of mma fragments). */
enum {
    TILE2_WARPS = 4,
    TILE2_THREADS = TILE2_WARPS * FA_WARP_THREADS,
    TILE2_WARP_ROWS = 16,                     /**< query rows per warp: the m of m16n8k16 */
    TILE2_BR = TILE2_WARPS * TILE2_WARP_ROWS, /**< 64 query rows per tile */
    TILE2_BC = 64,                            /**< keys per tile: 8 n8 fragments */
    TILE2_MAX_D = 128,                        /**< largest head dimension of level 2 here */
    TILE2_D_MULTIPLE = 8,                     /**< d a multiple of 8: rows are whole 16-byte chunks */
    TILE2_CHUNK = 8,                          /**< 16-bit elements per 16 bytes: cp.async's, ldmatrix's
                                                   and the swizzle's unit */
    TILE2_STAGES = 2                          /**< K/V tiles in flight: load tile t + 1 during tile t */
};

/**
 * Level-2 shared rows hold d_pad elements, d rounded up to a multiple of 32,
 * so that every row is a whole number of 4-chunk groups of 16 bytes, the
 * unit the XOR swizzle permutes (tile2_offset()).
 */
static inline FA_CONSTEXPR FA_HOST_DEVICE int tile2_row_elements(int d)
{
    return (int)fa_ceil_div(d, 32) * 32;
}

/**
 * Offset, in elements, of element (@p row, @p col) of a swizzled level-2 tile
 * whose rows hold @p d_pad elements (tile2_row_elements()). The 8 rows an
 * ldmatrix phase reads at one logical chunk must land in 8 different 16-byte
 * slots of a 128-byte line, 8 different groups of 4 banks (\ref stage05,
 * "The swizzle, by hand"):
 * - d_pad a multiple of 64: every row starts a line, so chunk col / 8 is
 *   stored at chunk (col / 8) ^ (row % 8);
 * - d_pad = 32, 96, 160 or 224: odd rows start half a line after even ones,
 *   which already separates them, so the XOR takes (row / 2) % 4, into the
 *   low 2 bits only.
 * Either way a chunk stays inside its aligned group of 8 (or 4) chunks, so
 * inside its row.
 */
static inline FA_CONSTEXPR FA_HOST_DEVICE int tile2_offset(int row, int col, int d_pad)
{
    const int pattern = d_pad % 64 == 0 ? row % 8 : (row / 2) % 4;
    const int chunk = (col / TILE2_CHUNK) ^ pattern;
    return row * d_pad + chunk * TILE2_CHUNK + col % TILE2_CHUNK;
}

/**
 * Chunks of a row that tile2_offset() permutes among themselves: 8 where
 * d_pad is a multiple of 64, else 4. A chunk stays in its aligned group, and
 * the pattern repeats every 8 rows, so tile2_offset(row + 8 a, (c + b G) 8)
 * = tile2_offset(row, c 8) + 8 a d_pad + b G 8 for c < G = this group: an
 * ldmatrix lane's addresses along a row are a few per-lane values plus
 * constants (tile2_lane_addresses()).
 */
static inline FA_CONSTEXPR FA_HOST_DEVICE int tile2_swizzle_group(int d_pad)
{
    return d_pad % 64 == 0 ? 8 : 4;
}

/** Chunk pairs (2 j, 2 j + 1) of a swizzle group: the per-lane addresses ldmatrix needs along a row. */
static inline FA_CONSTEXPR FA_HOST_DEVICE int tile2_swizzle_pairs(int d_pad)
{
    return tile2_swizzle_group(d_pad) / 2;
}

/**
 * Elements from chunk @p chunk mod G of a row to chunk @p chunk of the row
 * @p rows (a multiple of 8) below, where G = tile2_swizzle_group(), at any
 * column of the chunk: the constant a store of stage 06's O staging adds
 * (flash2_stage_o()).
 */
static inline FA_CONSTEXPR FA_HOST_DEVICE int tile2_chunk_step(int chunk, int rows, int d_pad)
{
    return chunk / tile2_swizzle_group(d_pad) * tile2_swizzle_group(d_pad) * TILE2_CHUNK + rows * d_pad;
}

/**
 * Elements from chunk 2 (@p pair mod P) + h of a row to chunk 2 @p pair + h
 * of the row @p rows (a multiple of 8) below, for either h (0 or 1), where
 * P = tile2_swizzle_pairs(): the constant tile2_lane_address() adds.
 */
static inline FA_CONSTEXPR FA_HOST_DEVICE int tile2_pair_step(int pair, int rows, int d_pad)
{
    return tile2_chunk_step(2 * pair, rows, d_pad);
}

/** Shared memory of a level-2 block: the Q tile and TILE2_STAGES K and V tiles of 16-bit elements. */
static inline FA_CONSTEXPR FA_HOST_DEVICE size_t tile2_shared_bytes(int d_pad)
{
    return (size_t)(TILE2_BR + 2 * TILE2_STAGES * TILE2_BC) * (size_t)d_pad * 2;
}

/** The blocks' tile sizes of version @p version (1 or 2): query rows per tile. */
static inline FA_CONSTEXPR FA_HOST_DEVICE int tile_rows(int version)
{
    return version == 1 ? (int)TILE1_BR : (int)TILE2_BR;
}

/** Keys per tile of version @p version. */
static inline FA_CONSTEXPR FA_HOST_DEVICE int tile_keys(int version)
{
    return version == 1 ? (int)TILE1_BC : (int)TILE2_BC;
}

/**
 * One attention problem of contiguous tensors [heads][rows][d] (batch and
 * heads flattened into @p heads; every query head has its own K and V).
 */
typedef struct tile_problem {
    const void *q;    /**< [heads][nq][d] device array of @p dtype */
    const void *k;    /**< [heads][nk][d] */
    const void *v;    /**< [heads][nk][d] */
    fa_dtype dtype;   /**< version 1: fp32, bf16 or fp16; version 2: bf16 or fp16 */
    int64_t heads;    /**< >= 0 */
    int64_t nq;       /**< query rows, >= 0 */
    int64_t nk;       /**< keys, >= 0 */
    int64_t d;        /**< head dimension: 1..256 (version 1), 8..128 in steps of 8 (version 2) */
    float scale;      /**< > 0 and finite: s = scale * q.k */
} tile_problem;

/**
 * What a trace writes: each milestone fills its own arrays (device, fp32
 * unless said otherwise) and ignores the others, which may be NULL.
 * T = ceil(nk / BC) key tiles, Q = ceil(nq / BR) query tiles, of the version.
 */
typedef struct tile_trace {
    /** M17: every tile as it sat in shared memory, copied back row by row: [heads][Q BR][d]
     *  and [heads][T BC][d], rows past nq (nk) included (they must be 0). Version 1 writes
     *  fp32 (the tile widened on load), version 2 the input dtype. */
    void *q_tiles, *k_tiles, *v_tiles;
    float *scores;      /**< M18: [heads][nq][T BC]: raw q.k; -inf for the keys past nk */
    float *max;         /**< M19: [heads][nq][T]: the running max of the raw scores after each tile */
    float *weights;     /**< M20: [heads][nq][T BC]: p = exp2(S c - m c) of each tile, 0 past nk */
    float *correction;  /**< M20: [heads][nq][T]: alpha = exp2((m_old - m_new) c) of each tile */
    float *sum;         /**< M21: [heads][nq][T]: the running sum l after each tile */
    float *o;           /**< M22: [heads][nq][d]: the normalised output */
    float *lse;         /**< M22: [heads][nq]: scale m + ln l (natural log), -inf for nk = 0 */
} tile_trace;

/** Key tiles of a row of @p nk keys in version @p version. */
static inline FA_HOST_DEVICE int64_t tile_key_tiles(int version, int64_t nk)
{
    return fa_ceil_div(nk, tile_keys(version));
}

/** Query tiles of @p nq rows in version @p version. */
static inline FA_HOST_DEVICE int64_t tile_query_tiles(int version, int64_t nq)
{
    return fa_ceil_div(nq, tile_rows(version));
}

/**
 * The numerical method of version @p version's M22 for inputs of @p dtype:
 * online softmax over blocks of BC keys, the scale folded into exp2, P kept
 * fp32 (version 1) or rounded to the input dtype before P V with l summed
 * from the unrounded P (version 2, FlashAttention-2's choice), fp32 FMA or
 * tensor-core accumulation, o / l by a reciprocal and a multiply. The M22
 * check judges the trace's output by the bound of exactly this method.
 */
fa_attn_method tile_method(int version, fa_dtype dtype);

/**
 * Checks the arguments of a trace of milestone @p milestone (17..22),
 * version @p version (1 or 2), without touching memory.
 * @return FA_OK (also when heads * nq = 0, whatever the pointers), or
 *         ::FA_ERR_INVALID_ARGUMENT (milestone or version out of range, a
 *         dtype the version does not take, scale not finite or <= 0, an
 *         output overlapping an input or another output),
 *         ::FA_ERR_INVALID_SIZE (a size < 0), ::FA_ERR_UNSUPPORTED (d
 *         outside what the version takes, listed in the message),
 *         ::FA_ERR_NULL_POINTER (an input, or an output the milestone
 *         writes, NULL while it has elements), ::FA_ERR_MISALIGNED (an
 *         array not aligned to its element, or, in version 2, an input not
 *         16-byte aligned: cp.async moves 16 bytes) or ::FA_ERR_OVERFLOW (a
 *         tensor's byte size overflows 64 bits, or the grid exceeds its
 *         limits).
 */
fa_status tile_trace_validate(int milestone, int version, const tile_problem *problem,
                              const tile_trace *trace);

#if FA_HAVE_CUDA
/**
 * Runs milestone @p milestone (17..22) of version @p version (1 or 2) over
 * every query tile and key tile of @p problem and writes what that
 * milestone's block produced into @p trace (see ::tile_trace). A milestone
 * runs the blocks of the milestones before it too: M20 needs the maxima of
 * M19 and the scores of M18. Enqueued on @p stream.
 * @return as tile_trace_validate(), ::FA_ERR_UNSUPPORTED when the tiles
 *         exceed the device's shared memory per block, or a launch failure;
 *         the learner's twin returns ::FA_ERR_NOT_IMPLEMENTED until the
 *         milestone and those before it are written (its FA_TODO_VERSION
 *         markers are gone).
 */
fa_status ref_tile_trace(int milestone, int version, const tile_problem *problem,
                         const tile_trace *trace, cudaStream_t stream);
/** The learner's blocks under the same trace; same contract as ref_tile_trace(). */
fa_status learner_tile_trace(int milestone, int version, const tile_problem *problem,
                             const tile_trace *trace, cudaStream_t stream);
#endif /* FA_HAVE_CUDA */

#ifdef __cplusplus
}
#endif

#endif /* TILES_H */
