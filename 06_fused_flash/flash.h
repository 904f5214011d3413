/**
 * @file flash.h
 * @brief Stage 06 inside the library: the fused kernels' tile shapes and the
 *        per-version launchers that the API (flashattn.h) dispatches to.
 */
#ifndef FLASH_H
#define FLASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fa_bytes.h"
#include "fa_math.h"
#include "flashattn.h"
#include "tiles.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Version 2: four warps per block. */
enum { FLASH2_WARPS = 4, FLASH2_THREADS = FLASH2_WARPS * 32, FLASH2_MAX_D = 256 };

/** Version 2's m16 fragments per warp for rows of @p d_pad elements: 2 up to 128, then 1. */
static inline FA_CONSTEXPR FA_HOST_DEVICE int flash2_mt(int d_pad)
{
    return d_pad <= 128 ? 2 : 1;
}

/** Version 2's keys per tile: 128 for d_pad <= 64, else 64. */
static inline FA_CONSTEXPR FA_HOST_DEVICE int flash2_bc(int d_pad)
{
    return d_pad <= 64 ? 128 : 64;
}

/** Version 2's query rows per tile: warps x 16 x flash2_mt(). */
static inline FA_CONSTEXPR FA_HOST_DEVICE int flash2_br(int d_pad)
{
    return FLASH2_WARPS * TILE2_WARP_ROWS * flash2_mt(d_pad);
}

/** Version 3 (sm_90a): its tiles, its K/V ring and its warpgroups. */
enum {
    FLASH3_WARPGROUP = 128,      /**< threads of a warpgroup, wgmma's unit */
    FLASH3_BOX_ROWS = 64,        /**< rows of Q per TMA box: one consumer's (wgmma's m) */
    FLASH3_COLUMNS = 64,         /**< elements per column block of a tile: 128 bytes, the swizzle's span */
    FLASH3_ALIGN = 1024,         /**< bytes: the 128-byte swizzle repeats every 8 rows of 128 bytes */
    FLASH3_SHARED_LIMIT = 227 * 1024, /**< bytes of shared memory a block of sm_90 may have */
    FLASH3_PRODUCER_REGS = 24,   /**< registers a producer thread keeps (setmaxnreg) */
    FLASH3_TURN_BARRIER = 1,     /**< named barriers 1 and 2: the consumers' turns (0 is __syncthreads()) */
    FLASH3_TAIL_BARRIER = 3,     /**< named barrier 3: a packed sequence's last V tile zeroed past its keys */
    FLASH3_AUTO_MIN_D = 40,      /**< FA_VARIANT_AUTO's smallest head dim for v3: up to 32, v2's rows of
                                      32 elements beat v3's of 64 (\ref stage06, measured) */
    FLASH3_CAUSAL_THREE_ROWS = 2048 /**< query rows from which three consumers run a causal mask at D = 64 */
};

/**
 * Version 3's rows of Q, K and V hold D = d rounded up to whole column blocks
 * of FLASH3_COLUMNS: 64, 128, 192 or 256 (d a multiple of 8 up to
 * FLASH2_MAX_D). TMA fills the columns past d with zeros, which add nothing
 * to Q K^T and make O's columns past d zeros, never stored.
 */
static inline FA_CONSTEXPR FA_HOST_DEVICE int flash3_row_elements(int d)
{
    return (int)fa_ceil_div(d, FLASH3_COLUMNS) * FLASH3_COLUMNS;
}

/**
 * Version 3's consumer warpgroups, beside one producer, for head dim @p d,
 * mask @p mask and @p rows query rows (a packed batch's longest sequence):
 * a box of FLASH3_BOX_ROWS query rows each. Three at D = 64 (d up to 64,
 * flash3_row_elements()), where a softmax takes as long as the products it
 * follows and the other two keep the tensor cores busy meanwhile; but under
 * a causal mask only from FLASH3_CAUSAL_THREE_ROWS rows, and never under a
 * window: a diagonal tile of 192 rows scores more keys beyond its rows'
 * reach than one of 128, a cost that weighs most where a row sees few tiles
 * (\ref stage06, measured). Two from D = 128, where three would not have
 * the registers (flash3_consumer_registers()).
 */
static inline FA_CONSTEXPR FA_HOST_DEVICE int flash3_consumers(int d, fa_mask mask, int64_t rows)
{
    const bool many_rows = mask != FA_MASK_WINDOW && rows >= FLASH3_CAUSAL_THREE_ROWS;
    return flash3_row_elements(d) == 64 && (mask == FA_MASK_NONE || many_rows) ? 3 : 2;
}

/** Version 3's query rows per tile (a block walks many) with @p consumers consumers: a box each. */
static inline FA_CONSTEXPR FA_HOST_DEVICE int flash3_br(int consumers)
{
    return consumers * FLASH3_BOX_ROWS;
}

/** Version 3's threads per block with @p consumers consumers: theirs and the producer's warpgroup. */
static inline FA_CONSTEXPR FA_HOST_DEVICE int flash3_threads(int consumers)
{
    return FLASH3_WARPGROUP * (1 + consumers);
}

/**
 * Version 3's keys per tile for rows of @p d_pad elements
 * (flash3_row_elements()): 128 up to D = 128, else 64. Past 128 a consumer
 * thread's S (bc / 2 floats) and P (bc / 4 registers) must fit beside a
 * larger O (D / 2 floats, flash3_consumer_registers()), and a K and V stage
 * (2 bc D elements) beside larger Q tiles in shared memory.
 */
static inline FA_CONSTEXPR FA_HOST_DEVICE int flash3_bc(int d_pad)
{
    return d_pad <= 128 ? 128 : 64;
}

/**
 * Version 3's K and V tiles in the ring for rows of @p d_pad elements with
 * @p consumers consumers beside @p q_buffers Q tiles: as many as a block's
 * shared memory (FLASH3_SHARED_LIMIT) holds beside them, room to align them
 * and the barriers (FLASH3_ALIGN bytes each).
 */
static inline FA_CONSTEXPR FA_HOST_DEVICE int flash3_stages_beside(int d_pad, int consumers, int q_buffers)
{
    return (int)((FLASH3_SHARED_LIMIT - 2 * FLASH3_ALIGN -
                  (size_t)q_buffers * (size_t)flash3_br(consumers) * (size_t)d_pad * 2) /
                 ((size_t)2 * (size_t)flash3_bc(d_pad) * (size_t)d_pad * 2));
}

/**
 * Version 3's Q tiles in shared memory for rows of @p d_pad elements with
 * @p consumers consumers: two, so that the next query tile's Q lands while
 * this one runs, where they leave room for two K/V stages (D up to 192);
 * else one (D = 256), which the producer refills once the consumers are done
 * with the tile before.
 */
static inline FA_CONSTEXPR FA_HOST_DEVICE int flash3_q_buffers(int d_pad, int consumers)
{
    return flash3_stages_beside(d_pad, consumers, 2) >= 2 ? 2 : 1;
}

/**
 * Version 3's K and V tiles in the ring beside its Q tiles
 * (flash3_q_buffers()): 5 or 6 at D = 64, 2 from D = 128 to 256.
 */
static inline FA_CONSTEXPR FA_HOST_DEVICE int flash3_stages(int d_pad, int consumers)
{
    return flash3_stages_beside(d_pad, consumers, flash3_q_buffers(d_pad, consumers));
}

/** Version 3's dynamic shared memory for rows of @p d_pad elements: Q's buffers, K and V per stage, and room to align them. */
static inline FA_CONSTEXPR FA_HOST_DEVICE size_t flash3_shared_bytes(int d_pad, int consumers)
{
    return (size_t)(flash3_q_buffers(d_pad, consumers) * flash3_br(consumers) +
                    2 * flash3_stages(d_pad, consumers) * flash3_bc(d_pad)) *
               (size_t)d_pad * 2 +
           FLASH3_ALIGN;
}

/**
 * The registers a thread of version 3's block of @p consumers consumers has
 * at launch: the register file (64 K) over the block's threads, in the
 * allocation's steps of 8. The producer gives some back and the consumers
 * take them (setmaxnreg).
 */
static inline FA_CONSTEXPR FA_HOST_DEVICE int flash3_launch_registers(int consumers)
{
    return 64 * 1024 / flash3_threads(consumers) / 8 * 8;
}

/**
 * The registers a consumer thread takes (setmaxnreg), of @p consumers: S
 * (bc / 2 floats, flash3_bc()), P (bc / 4) and O (D / 2 floats), 160 of them
 * at D = 128 and 176 at 256 (keys of 64), and what the softmax needs beside.
 * The producer's FLASH3_PRODUCER_REGS and the consumers' fill what the
 * launch gives: 24 + 2 x 240 = 3 x 168 with two, 24 + 3 x 160 <= 4 x 128
 * with three (O of D = 64).
 */
static inline FA_CONSTEXPR FA_HOST_DEVICE int flash3_consumer_registers(int consumers)
{
    return consumers == 3 ? 160 : 240;
}

/**
 * Whether version 3's consumers with rows of @p d_pad elements stage O in
 * shared memory and store it in 16-byte chunks (flash3_stage_o()) rather
 * than store their fragments: from D = 128, where at 128 that was 8 to 15%
 * faster up to N = 1024; at D = 64, 5 to 9% slower under a causal mask
 * (\ref stage06, measured).
 */
static inline FA_CONSTEXPR FA_HOST_DEVICE bool flash3_o_staged(int d_pad)
{
    return d_pad >= 128;
}

/**
 * Whether version 3's consumers with rows of @p d_pad elements take turns to
 * issue their products (ping-pong, flash3_kernel): from D = 128; at D = 64
 * the products are too short to hide a softmax behind.
 */
static inline FA_CONSTEXPR FA_HOST_DEVICE bool flash3_ping_pong(int d_pad)
{
    return d_pad >= 128;
}

/**
 * Version 3's work items per batch entry and head, of @p q_tiles query tiles:
 * each item is two tiles, one from each end (flash3_item_tile()).
 */
static inline FA_CONSTEXPR FA_HOST_DEVICE int flash3_pairs(int q_tiles)
{
    return (q_tiles + 1) / 2;
}

/**
 * Query tile @p end (0 or 1) of item @p pair of a batch entry and head with
 * @p q_tiles tiles: tile q_tiles - 1 - pair, then tile pair; -1 for the
 * second of the middle item of an odd count, which is one tile. Under a
 * causal mask the later tile sees more keys by as much as the earlier sees
 * fewer, so every item costs about as much, and a block per SM taking items
 * in turn ends with the others (a grid of single tiles leaves that to the
 * hardware's block scheduler; a persistent grid must do it itself).
 */
static inline FA_CONSTEXPR FA_HOST_DEVICE int flash3_item_tile(int q_tiles, int pair, int end)
{
    return end == 0 ? q_tiles - 1 - pair : pair < q_tiles - 1 - pair ? pair : -1;
}

/** Version 3's work items: flash3_pairs() per batch entry (of a packed batch: sequence) and head. */
static inline FA_CONSTEXPR FA_HOST_DEVICE int64_t flash3_items(int64_t batch, int64_t heads, int q_tiles)
{
    return batch * heads * flash3_pairs(q_tiles);
}

/** The greatest common divisor of @p a and @p b, both positive. */
static inline FA_CONSTEXPR FA_HOST_DEVICE int64_t flash3_gcd(int64_t a, int64_t b)
{
    while (b != 0) {
        const int64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/**
 * Version 3's blocks for @p items work items of batch entries and heads of
 * @p q_tiles query tiles on @p sms SMs: a block per SM, or @p limit blocks
 * where 0 < limit < sms (flash3_limit_blocks()), and no more than there are
 * items. Block b takes items b, b + blocks, ...: where @p q_tiles is odd, a
 * head's last item is one tile, and a count of blocks sharing a factor with
 * the head's flash3_pairs() would hand those halves to the same blocks every
 * time (with 2 pairs and 132 blocks, the odd blocks would do half the work
 * of the even ones); so the count is the largest prime to it.
 */
static inline FA_CONSTEXPR FA_HOST_DEVICE int64_t flash3_grid_blocks(int64_t items, int q_tiles, int sms,
                                                                     int limit)
{
    int64_t blocks = limit > 0 && limit < sms ? limit : sms;
    if (items <= blocks)
        return items;
    while (q_tiles % 2 == 1 && flash3_gcd(blocks, flash3_pairs(q_tiles)) != 1)
        --blocks;
    return blocks;
}

/**
 * Whether version @p version walks its key tiles from the last to the first
 * (version 2, flash_2_tensor_cores.cuh) rather than from the first: the
 * harness places its score patterns in the order a kernel meets them.
 */
static inline FA_CONSTEXPR FA_HOST_DEVICE bool flash_keys_from_last(int version)
{
    return version == 2;
}

/**
 * The keys per tile of version @p version (1, 2 or 3) at head dimension
 * @p head_dim: the block_n fa_attention_method() declares, known before there
 * is a call (the harness places its score patterns by it).
 */
static inline FA_CONSTEXPR FA_HOST_DEVICE int64_t flash_block_n(int version, int64_t head_dim)
{
    return version == 1   ? TILE1_BC
           : version == 3 ? flash3_bc(flash3_row_elements((int)head_dim))
                          : flash2_bc(tile2_row_elements((int)head_dim));
}

/**
 * The query rows the grid covers: nq, or a packed batch's longest sequence,
 * max_seqlen_q, which need not be tight (at most nq rows can be a sequence's).
 */
static inline int64_t flash_grid_rows(const fa_attention_params *p)
{
    if (p->cu_seqlens_q == NULL)
        return p->nq;
    return p->max_seqlen_q < p->nq ? p->max_seqlen_q : p->nq;
}

/** Whether @p p has no work: no batch entry, head or query row (a packed batch: no row at all). */
static inline bool flash_call_empty(const fa_attention_params *p)
{
    return p->batch == 0 || p->heads_q == 0 || p->nq == 0;
}

/** Entries of the tensors' batch dimension: batch, or 1 for a packed batch (one tensor of all rows). */
static inline int64_t flash_batch_entries(const fa_attention_params *p)
{
    return p->cu_seqlens_q != NULL ? 1 : p->batch;
}

/** @p s as the kernels read it: a packed batch's batch stride is unused, taken as 0. */
static inline fa_strides flash_strides_used(const fa_attention_params *p, fa_strides s)
{
    if (p->cu_seqlens_q != NULL)
        s.batch = 0;
    return s;
}

/** The dtype of o: fp32 with o_fp32, else the inputs'. */
static inline fa_dtype flash_o_dtype(const fa_attention_params *p)
{
    return p->o_fp32 ? FA_F32 : p->dtype;
}

/**
 * Whether every row of a tensor at @p data with @p strides (in elements of
 * @p element_bytes: 2 or 4) starts on 16 bytes: the address and every stride
 * are multiples of 16 bytes. Version 2 needs it of q, k, v and o (cp.async
 * and the stores of O move 16 bytes); version 1's 16-byte loads use it.
 */
static inline bool flash_rows_16_aligned(const void *data, const fa_strides *strides,
                                         int64_t element_bytes)
{
    const int64_t per_chunk = 16 / element_bytes;
    return fa_is_aligned(data, 16) && strides->batch % per_chunk == 0 &&
           strides->row % per_chunk == 0 && strides->head % per_chunk == 0;
}

/** Version 2's shared memory: one Q, one K and one V tile of 16-bit elements. */
static inline FA_CONSTEXPR FA_HOST_DEVICE size_t flash2_shared_bytes(int d_pad)
{
    return (size_t)(flash2_br(d_pad) + 2 * flash2_bc(d_pad)) * (size_t)d_pad * 2;
}

/**
 * M24: validates every field of @p p and chooses the kernel (validate.c):
 * the contract of fa_attention_supported(), which calls the reference's.
 * The learner's twin returns ::FA_ERR_NOT_IMPLEMENTED until written.
 */
fa_status ref_attention_validate(const fa_attention_params *p, fa_variant *chosen);
/** The learner's M24, same contract as ref_attention_validate(). */
fa_status learner_attention_validate(const fa_attention_params *p, fa_variant *chosen);

/**
 * The contents of packed @p p's offsets (validated by fa_attention_supported()),
 * read back to the host: @p cu_q and @p cu_k, batch + 1 each. Both
 * non-decreasing from cu[0] >= 0 to cu[batch] <= nq (nk), no sequence longer
 * than max_seqlen_q (max_seqlen_k); else ::FA_ERR_INVALID_ARGUMENT naming the
 * first offset at fault.
 */
fa_status flash_check_packed_offsets(const fa_attention_params *p, const int32_t *cu_q,
                                     const int32_t *cu_k);

#if FA_HAVE_CUDA
/**
 * Launches the fused kernel of version @p version (1: CUDA cores, 2: tensor
 * cores) for @p p, validated beforehand by fa_attention_supported() for
 * that variant, at the scale fa_attention_scale() resolves. Enqueued on
 * @p stream; a call with no query row is a no-op; a packed batch is refused
 * (fa_attention_forward() runs it). The learner's twin
 * returns ::FA_ERR_NOT_IMPLEMENTED until its M23 version is written.
 */
fa_status ref_flash_forward(int version, const fa_attention_params *p, cudaStream_t stream);
/** The learner's M23 under the same launch; same contract as ref_flash_forward(). */
fa_status learner_flash_forward(int version, const fa_attention_params *p, cudaStream_t stream);

/**
 * FA_OK when the current device runs version 3 (compute capability 9.0:
 * forward_hopper.cu is built for sm_90a only); else ::FA_ERR_UNSUPPORTED for
 * another device, or the status of the failing CUDA call (::FA_ERR_NO_DEVICE
 * without one), with its message.
 */
fa_status flash3_device_check(void);
/**
 * Version 3 on @p p, which fa_attention_supported() accepted for it (a packed
 * batch's offsets checked too: fa_attention_forward()); enqueued on @p stream.
 */
fa_status flash3_launch(const fa_attention_params *p, cudaStream_t stream);
/**
 * For tests: at most @p blocks blocks in version 3's grid (0, the default:
 * one per SM), so that small problems also make each block walk several work
 * items. Not thread-safe: the setting is the process's.
 */
void flash3_limit_blocks(int blocks);
#endif

#ifdef __cplusplus
}
#endif

#endif /* FLASH_H */
