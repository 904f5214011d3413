/**
 * @file flash_3_hopper.cuh
 * @brief M23, version 3: the fused forward kernel on Hopper's asynchronous
 *        machinery (sm_90a): TMA copies on mbarrier pipelines, wgmma, and a
 *        producer warpgroup beside two or three consumer warpgroups.
 *
 * The grid is persistent: a block per SM walks work items, each two query
 * tiles of one head (flash3_item_tile()), with warpgroups of 128 threads:
 *
 *   warpgroup 0, the producer: one thread issues every TMA copy, per query
 *     tile Q into one of flash3_q_buffers() buffers (once the consumers are
 *     done with the tile that had it before), then K_t and V_t into a ring
 *     of flash3_stages() stages, each stage waiting on its "empty" barrier
 *     until every consumer is done with it, in the order the consumers use
 *     them (from D = 128, K_{t+1} before V_t); so the next tile's copies run
 *     while the consumers end this one;
 *   the consumers, flash3_consumers() (two or three), 64 rows each, so a
 *     query tile is 128 or 192 rows (flash3_br()). Per key tile of
 *     flash3_bc() keys (128, or 64 past D = 128), wait on K_t's "full"
 *     barrier, S = Q K_t^T by wgmma (m64n128k16 or m64n64k16 steps, both
 *     from shared memory), release K_t, the online softmax on S's
 *     accumulators, P rounded to T in registers, wait on V_t, O += P V_t by
 *     wgmma (P from registers), release V_t. From D = 128 each tile's P V is
 *     issued after the next tile's S and runs while the softmax of that S
 *     does (overlap), and the two consumers take turns to issue their
 *     products (ping-pong), so one's softmax also overlaps the other's; and
 *     at the end of a tile each warp stages its rows of O in its rows of
 *     Q's buffer and stores them in 16-byte chunks (flash3_stage_o()).
 *
 * The producer gives its registers back (setmaxnreg) so that the consumers,
 * which hold S (bc / 2 floats), P (bc / 4 registers) and O (D / 2 floats) a
 * thread, can have more (flash3_consumer_registers()). An item pairs a tile from the
 * end with one from the start: under a causal mask every item sees about as
 * many keys, so the blocks, taking items in turn, end together.
 * Tiles are stored as TMA writes them: column blocks of 64 elements (128
 * bytes), 128-byte swizzled, which is the layout wgmma's descriptors read.
 * The key tiles are M25's (\ref stage07): the producer loads and the
 * consumers score only the tiles a query tile's rows see, and the consumers
 * mask the scores of the tiles that are not full. TMA fills rows past nq or
 * nk with zeros; a tail tile is masked as past nk, so it needs nothing else.
 * It fills columns past the head dim d too: rows hold D, d rounded up to
 * whole column blocks (flash3_row_elements()), and O's columns past d,
 * zeros, are not stored. In a packed batch (PACKED, \ref stage07) a query
 * tile is one sequence's: past its last key lie the next sequence's, masked,
 * and its last V tile's rows past them are zeroed (flash3_zero_v_tail()).
 * Every mask; bf16 or fp16, d a multiple of 8 up to 256 (D = 64, 128, 192
 * or 256), O in the input type (fa_attention_supported() refuses the rest,
 * naming why).
 */
#ifndef FLASH_3_HOPPER_CUH
#define FLASH_3_HOPPER_CUH

#include "fa_kernel.cuh"
#include "flash.h"
#include "flash_store.cuh"
#include "hopper.cuh"
#include "key_tiles.cuh"
#include "sequence.cuh"
#include "tiles_2_tensor_cores.cuh"

/**
 * The TMA copies of one tile of @p ROWS rows from row @p row0 (of head
 * @p head, batch entry @p batch): its BLOCKS column blocks of 64, each in
 * boxes of @p BOX rows, into @p tile laid out [BLOCKS][ROWS][64], all
 * completing on @p bar.
 */
template <int BLOCKS, int ROWS, int BOX, typename T>
static __device__ __forceinline__ void flash3_load_tile(T *tile, const CUtensorMap *map, int head,
                                                        int row0, int batch, uint64_t *bar)
{
    for (int c = 0; c < BLOCKS; ++c)
        for (int box = 0; box < ROWS / BOX; ++box)
            tma_load(tile + (c * ROWS + box * BOX) * FLASH3_COLUMNS, map, c * FLASH3_COLUMNS, head,
                     row0 + box * BOX, batch, bar);
}

/**
 * A packed sequence's last V tile, @p keep of whose flash3_bc(D) rows are its
 * own: the rest, the next sequence's values, become zeros. P is 0 there, but
 * 0 times an infinity is NaN, so values of another sequence must not reach
 * P V at all. The consumer threads (this is @p thread of them) clear whole
 * rows of every column block (the swizzle only permutes a row's chunks),
 * fence their writes for wgmma's async proxy, and wait for each other on
 * named barrier FLASH3_TAIL_BARRIER.
 */
template <int D, int C, typename T>
static __device__ __forceinline__ void flash3_zero_v_tail(T *v_tile, int keep, int thread)
{
    constexpr int BLOCKS = D / FLASH3_COLUMNS;
    constexpr int CONSUMER_THREADS = C * FLASH3_WARPGROUP;
    constexpr int CHUNKS = FLASH3_COLUMNS * (int)sizeof(T) / 16; /* 16-byte chunks of a row */
    constexpr int BC = flash3_bc(D);
    const int rows = BC - keep;
    for (int i = thread; i < BLOCKS * rows * CHUNKS; i += CONSUMER_THREADS) {
        const int block = i / (rows * CHUNKS), row = keep + i / CHUNKS % rows, chunk = i % CHUNKS;
        *reinterpret_cast<uint4 *>(v_tile + (block * BC + row) * FLASH3_COLUMNS +
                                   chunk * (16 / (int)sizeof(T))) = make_uint4(0, 0, 0, 0);
    }
    fence_proxy_async();
    named_barrier_sync<CONSUMER_THREADS>(FLASH3_TAIL_BARRIER);
}

/** Version 3's shared memory: Q, the ring of K and V tiles, and the barriers that guard them. */
template <typename T>
struct flash3_shared {
    T *q;                         /**< [flash3_q_buffers()][BLOCKS][BR][64] */
    T *k, *v;                     /**< [STAGES][BLOCKS][BC][64] each */
    uint64_t *q_full, *q_empty;   /**< per Q buffer: Q has landed; every consumer is done with it */
    uint64_t *k_full, *v_full;    /**< per stage: the tile has landed */
    uint64_t *k_empty, *v_empty;  /**< per stage: every consumer is done with it */
};

/** A query tile of the schedule: whose rows, from which row, and the key tiles they see. */
struct flash3_tile {
    int b, h;           /**< batch entry (of a packed batch: sequence) and query head */
    int row0;           /**< the tile's first row in its sequence */
    flash_sequence seq; /**< the sequence's rows, keys and offsets */
    causal_tiles keys;  /**< M25's key tiles of the rows */
};

/**
 * Tile @p end (0 or 1) of work item @p item (flash3_item_tile()) of @p p,
 * whose sequences have @p q_tiles query tiles (the longest's, when packed).
 * False when there is none: end 1 of an odd count's middle item, which is one
 * tile, or a tile past a packed sequence shorter than the longest.
 */
template <int D, int C, bool PACKED>
static __device__ __forceinline__ bool flash3_tile_of(const fa_attention_params &p, int q_tiles,
                                                      int64_t item, int end, flash3_tile *tile)
{
    const int pairs = flash3_pairs(q_tiles);
    const int q_tile = flash3_item_tile(q_tiles, (int)(item % pairs), end);
    if (q_tile < 0)
        return false;
    const int64_t unit = item / pairs; /* batch entry major, query head minor */
    tile->b = (int)(unit / p.heads_q);
    tile->h = (int)(unit % p.heads_q);
    tile->row0 = q_tile * flash3_br(C);
    tile->seq = flash_sequence_of<PACKED>(p, tile->b);
    if (PACKED && tile->row0 >= tile->seq.nq)
        return false;
    tile->keys = causal_key_tiles(flash_sequence_band(p, tile->seq), tile->row0,
                                  tile->row0 + fa_tile_rows(tile->seq.nq, tile->row0, flash3_br(C)),
                                  tile->seq.nk, flash3_bc(D));
    return true;
}

/**
 * Calls @p visit_tile(tile, q_round, visit) for each query tile of the
 * block's work items (blockIdx.x, blockIdx.x + gridDim.x, ... of the
 * @p items of flash3_items()), in order, with the counts of the query tiles
 * (Q's rounds) and of the key tiles (the ring's positions) that went before
 * it. The producer and the consumers both walk through here, so they agree
 * on every tile's Q buffer, ring stages and barrier phases.
 */
template <int D, int C, bool PACKED, typename F>
static __device__ __forceinline__ void flash3_walk(const fa_attention_params &p, int q_tiles, int64_t items,
                                                   F visit_tile)
{
    int q_round = 0;
    uint64_t visit = 0;
    for (int64_t item = blockIdx.x; item < items; item += gridDim.x)
        for (int end = 0; end < 2; ++end) {
            flash3_tile tile;
            if (!flash3_tile_of<D, C, PACKED>(p, q_tiles, item, end, &tile))
                continue;
            visit_tile(tile, q_round++, visit);
            visit += (uint64_t)(tile.keys.end - tile.keys.begin);
        }
}

/**
 * A ring of @p SLOTS buffers filled in turn: the slot the @p use-th fill
 * (from 0) goes to, and the parity of the phase of that slot's barriers it
 * completes. The K/V ring and Q's buffers are both such rings.
 */
template <int SLOTS, typename U>
static __device__ __forceinline__ int ring_slot(U use)
{
    return (int)(use % SLOTS);
}
template <int SLOTS, typename U>
static __device__ __forceinline__ uint32_t ring_parity(U use)
{
    return (uint32_t)(use / SLOTS) & 1;
}

/** The K/V ring's stage (of flash3_stages(D, C)) that the @p visit-th key tile a block loads goes to. */
template <int D, int C>
static __device__ __forceinline__ int flash3_stage(uint64_t visit)
{
    return ring_slot<flash3_stages(D, C)>(visit);
}
/** The parity of the phase of its stage's barriers that the @p visit-th key tile completes. */
template <int D, int C>
static __device__ __forceinline__ uint32_t flash3_parity(uint64_t visit)
{
    return ring_parity<flash3_stages(D, C)>(visit);
}

/** Q's buffer (of flash3_q_buffers(D, C)) for the @p q_round-th query tile a block walks (from 0). */
template <int D, int C>
static __device__ __forceinline__ int flash3_q_buffer(int q_round)
{
    return ring_slot<flash3_q_buffers(D, C)>(q_round);
}
/** The parity of the phase of its buffer's barriers that the @p q_round-th Q completes. */
template <int D, int C>
static __device__ __forceinline__ uint32_t flash3_q_parity(int q_round)
{
    return ring_parity<flash3_q_buffers(D, C)>(q_round);
}
/** The Q tile (flash3_br(C) rows of D) of the @p q_round-th query tile. */
template <int D, int C, typename T>
static __device__ __forceinline__ T *flash3_q_tile(T *q, int q_round)
{
    return q + flash3_q_buffer<D, C>(q_round) * flash3_br(C) * D;
}

/**
 * The tile of a K or V @p ring (flash3_stages(D, C) tiles of flash3_bc(D)
 * rows of D) at ring position @p position.
 */
template <int D, int C, typename T>
static __device__ __forceinline__ T *flash3_ring_tile(T *ring, uint64_t position)
{
    return ring + flash3_stage<D, C>(position) * flash3_bc(D) * D;
}

/**
 * Whether each key tile's P V is issued after the next tile's S, to run
 * while the softmax of those scores does (flash3_consume()): from D = 128;
 * at D = 64 it cost 10 to 18 percent (measured on \ref stage06).
 */
template <int D>
static __device__ __forceinline__ constexpr bool flash3_overlap()
{
    return D >= 128;
}

/**
 * The producer's copies of one query tile: Q, once the consumers are done
 * with the tile's that had its buffer before (@p q_round: the tiles before
 * this one), then K_t and V_t of each key tile into the ring, from position
 * @p visit on. A copy waits for its stage, so the order matters: with the
 * overlap, K_{t+1} goes first, as it is used first, and starts while V_t's
 * stage still holds V_{t-2} (\ref stage06, measured).
 */
template <int D, int C, bool PACKED, typename T>
static __device__ __forceinline__ void flash3_produce(const flash3_shared<T> &sh,
                                                      const CUtensorMap *q_map, const CUtensorMap *k_map,
                                                      const CUtensorMap *v_map,
                                                      const fa_attention_params &p,
                                                      const flash3_tile &tile, int q_round,
                                                      uint64_t visit)
{
    constexpr int BLOCKS = D / FLASH3_COLUMNS;
    constexpr int BC = flash3_bc(D), KV_ELEMENTS = BC * D;
    /* The maps' coordinates: a packed sequence's rows among all rows, in batch entry 0. */
    const int batch = PACKED ? 0 : tile.b;
    const int h_kv = tile.h / (int)(p.heads_q / p.heads_kv);
    const int buffer = flash3_q_buffer<D, C>(q_round);
    /* The buffer's previous round must be released; the first round passes at once. */
    mbarrier_wait(&sh.q_empty[buffer], flash3_q_parity<D, C>(q_round) ^ 1);
    mbarrier_arrive_expect(&sh.q_full[buffer], flash3_br(C) * D * sizeof(T));
    flash3_load_tile<BLOCKS, flash3_br(C), FLASH3_BOX_ROWS>(flash3_q_tile<D, C>(sh.q, q_round), q_map,
                                                         tile.h, (int)tile.seq.first_row + tile.row0,
                                                         batch, &sh.q_full[buffer]);
    /* A key tile's K or V (@p ring, its barriers) into the ring at position @p at. */
    const auto load = [&](T *ring, const CUtensorMap *map, uint64_t *full, uint64_t *empty, int64_t t,
                          uint64_t at) {
        const int st = flash3_stage<D, C>(at);
        /* The stage's previous round must be released; the first round passes at once. */
        mbarrier_wait(&empty[st], flash3_parity<D, C>(at) ^ 1);
        mbarrier_arrive_expect(&full[st], KV_ELEMENTS * sizeof(T));
        flash3_load_tile<BLOCKS, BC, BC>(flash3_ring_tile<D, C>(ring, at), map, h_kv,
                                         (int)(tile.seq.first_key + t * BC), batch, &full[st]);
    };
    /* In the consumers' order: with the overlap (D >= 128) a tile's P V follows the next one's S. */
    constexpr int64_t V_LAG = flash3_overlap<D>() ? 1 : 0;
    /* Kept rolled: unrolled (by four at D = 64), the loop keeps several ring positions' shared
     * addresses live, more than FLASH3_PRODUCER_REGS registers hold, and spills (\ref stage06). */
#pragma unroll 1
    for (int64_t t = tile.keys.begin; t < tile.keys.end + V_LAG; ++t) {
        const uint64_t at = visit + (uint64_t)(t - tile.keys.begin);
        if (t < tile.keys.end)
            load(sh.k, k_map, sh.k_full, sh.k_empty, t, at);
        if (t - V_LAG >= tile.keys.begin)
            load(sh.v, v_map, sh.v_full, sh.v_empty, t - V_LAG, at - V_LAG);
    }
}

/**
 * A consumer thread's S of a key tile at rows of D, stage 05's fragments
 * with MT = 1: the n8 fragments across a row of flash3_bc(D) keys.
 */
template <int D>
using flash3_s = float[1][flash3_bc(D) / 8][4];
/** Its P rounded to T, as wgmma's A operand: one k16 step's four registers per two fragments. */
template <int D>
using flash3_p = uint32_t[flash3_bc(D) / 16][4];

/**
 * S = Q K^T for a consumer's 64 rows of Q (@p q_rows) by wgmma, both operands
 * from shared memory: m64nNk16 steps, N the tile's flash3_bc(D) keys.
 */
template <int D, int C, typename T>
static __device__ __forceinline__ void flash3_issue_s(const T *q_rows, const T *k_tile, flash3_s<D> &s)
{
#pragma unroll
    for (int ks = 0; ks < D / 16; ++ks) { /* 16 columns: 32 bytes along a swizzled row */
        const int block = ks / 4, step = 2 * (ks % 4);
        wgmma_scores(T(), reinterpret_cast<float(&)[flash3_bc(D) / 2]>(s),
                     wgmma_descriptor(q_rows + block * flash3_br(C) * FLASH3_COLUMNS, 1, 64) + step,
                     wgmma_descriptor(k_tile + block * flash3_bc(D) * FLASH3_COLUMNS, 1, 64) + step, ks);
    }
    wgmma_commit();
}

/** O += P V_t by wgmma, P (wgmma's A operand) from registers, V_t from shared memory. */
template <int D, typename T>
static __device__ __forceinline__ void flash3_issue_pv(const T *v_tile, flash3_p<D> &pa,
                                                       float (&o)[1][D / 8][4])
{
#pragma unroll
    for (int kk = 0; kk < flash3_bc(D) / 16; ++kk)
#pragma unroll
        for (int block = 0; block < D / FLASH3_COLUMNS; ++block)
            wgmma_pv(T(), reinterpret_cast<float(&)[32]>(o[0][8 * block]), pa[kk],
                     wgmma_descriptor(v_tile + (block * flash3_bc(D) + 16 * kk) * FLASH3_COLUMNS, 1, 64), 1);
    wgmma_commit();
}

/** wgmma_pin() of O and P, the registers a P V wgmma reads or writes. */
template <int D>
static __device__ __forceinline__ void flash3_pin_o_p(float (&o)[1][D / 8][4], flash3_p<D> &pa)
{
    wgmma_pin(reinterpret_cast<float(&)[D / 2]>(o));
    wgmma_pin(reinterpret_cast<uint32_t(&)[flash3_bc(D) / 4]>(pa));
}

/**
 * V_t ready for wgmma, at ring position @p position: its full barrier, and a
 * packed sequence's last tile zeroed past its @p nk keys (never inside a
 * turn: the zeroing waits for every consumer).
 */
template <int D, int C, bool PACKED, typename T>
static __device__ __forceinline__ void flash3_await_v(const flash3_shared<T> &sh, uint64_t position,
                                                      int64_t t, int64_t nk)
{
    mbarrier_wait(&sh.v_full[flash3_stage<D, C>(position)], flash3_parity<D, C>(position));
    const int64_t key0 = t * flash3_bc(D);
    if (PACKED && key0 + flash3_bc(D) > nk)
        flash3_zero_v_tail<D, C>(flash3_ring_tile<D, C>(sh.v, position),
                                               (int)(nk - key0), threadIdx.x - FLASH3_WARPGROUP);
}

/**
 * M25's mask (on a tile that is not full) and M19-M21 on S of key tile @p t
 * of @p tile, for the 16 rows from @p warp_row0; @p alpha rescales O once
 * the P V before it is done.
 */
template <int D>
static __device__ __forceinline__ void flash3_softmax(flash3_s<D> &s, float (&m)[1][2], float (&l)[1][2],
                                                      float (&alpha)[1][2], float c,
                                                      const fa_attention_params &p,
                                                      const flash3_tile &tile, int64_t t,
                                                      int64_t warp_row0)
{
    constexpr int FRAGMENTS = flash3_bc(D) / 8;
    if (causal_tile_masked(tile.keys, t)) /* also a tail tile: its keys past nk are TMA's zeros */
        causal2_mask<1, FRAGMENTS>(s, flash_sequence_band(p, tile.seq), warp_row0, t * flash3_bc(D),
                                   tile.seq.nk);
    float m_new[1][2];
    tile2_rowmax<1, FRAGMENTS>(s, m, m_new);
    tile2_exp<1, FRAGMENTS>(s, m, m_new, c, alpha);
    tile2_rowsum<1, FRAGMENTS>(l, alpha, s);
#pragma unroll
    for (int hh = 0; hh < 2; ++hh)
        m[0][hh] = m_new[0][hh];
}

/** P rounded to T as wgmma's A operand, all of it before the first P V wgmma (\ref stage06, pitfalls). */
template <int D, typename T>
static __device__ __forceinline__ void flash3_round_p(flash3_s<D> &s, flash3_p<D> &pa)
{
#pragma unroll
    for (int kk = 0; kk < flash3_bc(D) / 16; ++kk)
        tile2_p_fragment<T>(s[0][2 * kk], s[0][2 * kk + 1], pa[kk]);
}

/** The P V wgmma is done: O and P are this thread's again, V's stage (@p v_empty) the producer's. */
template <int D>
static __device__ __forceinline__ void flash3_finish_pv(float (&o)[1][D / 8][4], flash3_p<D> &pa,
                                                        uint64_t *v_empty)
{
    wgmma_wait<0>();
    flash3_pin_o_p<D>(o, pa);
    mbarrier_arrive(v_empty);
}

/** P V_t at ring position @p position, issued and waited for at once. */
template <int D, int C, bool PACKED, typename T>
static __device__ __forceinline__ void flash3_pv_now(const flash3_shared<T> &sh, uint64_t position,
                                                     int64_t t, int64_t nk, flash3_p<D> &pa,
                                                     float (&o)[1][D / 8][4])
{
    flash3_await_v<D, C, PACKED>(sh, position, t, nk);
    flash3_pin_o_p<D>(o, pa);
    wgmma_fence();
    flash3_issue_pv<D>(flash3_ring_tile<D, C>(sh.v, position), pa, o);
    flash3_finish_pv<D>(o, pa, &sh.v_empty[flash3_stage<D, C>(position)]);
}

/** 16-byte chunks of O each lane copies out: the warp's 16 rows of D, 32 lanes. */
template <int D>
__host__ __device__ constexpr int flash3_o_chunks()
{
    static_assert(16 * D / TILE2_CHUNK % 32 == 0, "the lanes share the rows' chunks evenly");
    return 16 * D / TILE2_CHUNK / 32;
}

/**
 * The first half of a warp's O epilogue, as version 2 writes O
 * (flash_store.cuh): its 16 rows of O, normalised, are staged in shared
 * memory rounded to T, and read back as 16-byte chunks of whole rows, lane
 * i taking chunks i, i + 32, ... into @p chunks. Stored from the fragments
 * themselves, each warp instruction would write 8 rows of 16 bytes, half a
 * 32-byte sector each. The stage is the warp's own rows of its tile's Q
 * buffer (@p q_rows, in column block 0), which no wgmma reads any more: per
 * column block of 64 a [16][64] tile of tile2_offset().
 */
template <int D, int C, typename T>
static __device__ __forceinline__ void flash3_stage_o(T *q_rows, const float (&o)[1][D / 8][4],
                                                      uint4 (&chunks)[flash3_o_chunks<D>()])
{
    constexpr int BLOCK = flash3_br(C) * FLASH3_COLUMNS; /* elements from a column block to the next */
    constexpr int CHUNKS = D / TILE2_CHUNK;              /* 16-byte chunks of a row */
    const int lane = threadIdx.x % 32, g = lane / 4, quad = lane % 4;
#pragma unroll
    for (int n = 0; n < D / 8; ++n)
#pragma unroll
        for (int hh = 0; hh < 2; ++hh)
            flash2_stage_pair(q_rows + n / 8 * BLOCK, g + 8 * hh, 8 * (n % 8) + 2 * quad, FLASH3_COLUMNS,
                              o[0][n][2 * hh], o[0][n][2 * hh + 1]);
    __syncwarp();
#pragma unroll
    for (int j = 0; j < flash3_o_chunks<D>(); ++j) {
        const int row = (lane + 32 * j) / CHUNKS, chunk = (lane + 32 * j) % CHUNKS;
        chunks[j] = *reinterpret_cast<const uint4 *>(q_rows + chunk / 8 * BLOCK +
                                                     flash2_chunk_offset<T>(row, chunk % 8, FLASH3_COLUMNS));
    }
}

/** lse of the warp's rows from @p warp_row0 of @p tile that lie below nq, by each quad's first lane. */
static __device__ __forceinline__ void flash3_write_lse(const float (&lse)[1][2], const fa_attention_params &p,
                                                        const flash_outputs &outputs, const flash3_tile &tile,
                                                        int64_t warp_row0)
{
    const int lane = threadIdx.x % 32;
    if (p.lse == nullptr || lane % 4 != 0)
        return;
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
        const int64_t row = warp_row0 + lane / 4 + 8 * hh;
        if (row < tile.seq.nq)
            p.lse[outputs.lse + row] = lse[0][hh];
    }
}

/**
 * The second half: the chunks flash3_stage_o() read back go to O's rows from
 * @p warp_row0 of @p tile, those below nq, and their columns below d (D is d
 * rounded up, flash3_row_elements(); d is a multiple of 8, a chunk's), and
 * lse to its rows.
 */
template <int D, bool PACKED, typename T>
static __device__ __forceinline__ void flash3_write_o(const uint4 (&chunks)[flash3_o_chunks<D>()],
                                                      const float (&lse)[1][2],
                                                      const fa_attention_params &p,
                                                      const flash3_tile &tile, int64_t warp_row0)
{
    constexpr int CHUNKS = D / TILE2_CHUNK;
    const int lane = threadIdx.x % 32;
    const int64_t rows = tile.seq.nq - warp_row0; /* may be past 16, or none */
    const flash_outputs outputs = flash_outputs_of<PACKED>(p, tile.b, tile.h);
    T *const out = static_cast<T *>(p.o) + outputs.o + tile.h * p.o_strides.head +
                   warp_row0 * p.o_strides.row;
#pragma unroll
    for (int j = 0; j < flash3_o_chunks<D>(); ++j) {
        const int row = (lane + 32 * j) / CHUNKS, chunk = (lane + 32 * j) % CHUNKS;
        if (row < rows && chunk * TILE2_CHUNK < p.head_dim)
            store_global_16(out + row * p.o_strides.row + chunk * TILE2_CHUNK, chunks[j]);
    }
    flash3_write_lse(lse, p, outputs, tile, warp_row0);
}

/**
 * O's and lse's rows from @p warp_row0 of @p tile, those below nq, stored
 * from the fragments themselves where O is not staged (flash3_o_staged()):
 * each lane's pairs of columns, 4 bytes each, of the fragments (8 columns)
 * below d.
 */
template <int D, bool PACKED, typename T>
static __device__ __forceinline__ void flash3_write_o_fragments(const float (&o)[1][D / 8][4],
                                                                const float (&lse)[1][2],
                                                                const fa_attention_params &p,
                                                                const flash3_tile &tile,
                                                                int64_t warp_row0)
{
    const int lane = threadIdx.x % 32;
    const flash_outputs outputs = flash_outputs_of<PACKED>(p, tile.b, tile.h);
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
        const int64_t row = warp_row0 + lane / 4 + 8 * hh;
        if (row >= tile.seq.nq)
            continue;
        T *const out = static_cast<T *>(p.o) + outputs.o + row * p.o_strides.row +
                       tile.h * p.o_strides.head;
        const auto store = [&](int n) {
            *reinterpret_cast<uint32_t *>(out + 8 * n + 2 * (lane % 4)) =
                tile2_pack(T(), o[0][n][2 * hh], o[0][n][2 * hh + 1]);
        };
        /* Rows of d = D take the stores without a test each: with it, D = 64 ran 0.7 to 2.9%
         * slower (\ref stage06, measured). */
        if (p.head_dim == D) {
#pragma unroll
            for (int n = 0; n < D / 8; ++n)
                store(n);
        } else {
#pragma unroll
            for (int n = 0; n < D / 8; ++n)
                if (8 * n < p.head_dim)
                    store(n);
        }
    }
    flash3_write_lse(lse, p, outputs, tile, warp_row0);
}

/**
 * One consumer's 64 rows of one query tile: Q of round @p q_round, key tiles
 * from ring position @p visit on (key tile t at visit + t - keys.begin), O
 * and lse stored at the end.
 *
 * wgmma's accumulators are laid out per warp as mma.sync's: thread element
 * 4 n + e is fragment n's element e (row lane / 4 + 8 (e / 2), column
 * 8 n + 2 (lane % 4) + e % 2 of the warp's 16 rows), so S and O are stage
 * 05's fragment arrays with MT = 1: M25's mask, M19-M21 and M22's
 * normalisation run on them unchanged; wgmma takes the place of
 * tile2_scores() and tile2_accumulate_pv().
 */
template <typename T, int D, int C, bool PACKED>
static __device__ __forceinline__ void flash3_consume(const flash3_shared<T> &sh,
                                                      const fa_attention_params &p,
                                                      const flash3_tile &tile, int q_round,
                                                      uint64_t visit, float scale)
{
    const int consumer = threadIdx.x / FLASH3_WARPGROUP - 1, warp = (threadIdx.x % FLASH3_WARPGROUP) / 32;
    const T *const q_mine = flash3_q_tile<D, C>(sh.q, q_round) + consumer * FLASH3_BOX_ROWS * FLASH3_COLUMNS;
    const float c = scale * FA_LOG2E_F;
    const causal_tiles &tiles = tile.keys;
    float m[1][2] = {{-INFINITY, -INFINITY}}, l[1][2] = {{0.0f, 0.0f}}, o[1][D / 8][4];
#pragma unroll
    for (int n = 0; n < D / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e)
            o[0][n][e] = 0.0f;
    mbarrier_wait(&sh.q_full[flash3_q_buffer<D, C>(q_round)], flash3_q_parity<D, C>(q_round));

    /* Ping-pong (flash3_kernel): a consumer issues its products in its turn. */
    constexpr bool PING_PONG = flash3_ping_pong(D);
    static_assert(!PING_PONG || C == 2, "turns are taken by a pair of consumers");
    constexpr int PAIR = 2 * FLASH3_WARPGROUP;
    const int my_turn = FLASH3_TURN_BARRIER + consumer, their_turn = FLASH3_TURN_BARRIER + 1 - consumer;

    const int64_t warp_row0 = tile.row0 + FLASH3_BOX_ROWS * consumer + 16 * warp;
    /* Overlap (flash3_overlap()): each tile's P V is issued after the next tile's S = Q K^T, so
     * that the tensor cores run it while this warpgroup's softmax runs on those scores; the
     * first tile has no P V before it, the last one's comes after the loop. Without it each
     * tile's P V follows its softmax. */
    constexpr bool OVERLAP = flash3_overlap<D>();
    flash3_s<D> s;
    flash3_p<D> pa; /* P of the tile whose P V is still to issue */

    if (tiles.end > tiles.begin) { /* the first tile: S, its softmax (O is still zero), P */
        mbarrier_wait(&sh.k_full[flash3_stage<D, C>(visit)], flash3_parity<D, C>(visit));
        if (PING_PONG)
            named_barrier_sync<PAIR>(my_turn);
        wgmma_fence();
        flash3_issue_s<D, C>(q_mine, flash3_ring_tile<D, C>(sh.k, visit), s);
        if (PING_PONG)
            named_barrier_arrive<PAIR>(their_turn);
        wgmma_wait<0>();
        wgmma_pin(reinterpret_cast<float(&)[flash3_bc(D) / 2]>(s));
        mbarrier_arrive(&sh.k_empty[flash3_stage<D, C>(visit)]); /* S is in registers: K may be overwritten */
        float alpha[1][2];
        flash3_softmax<D>(s, m, l, alpha, c, p, tile, tiles.begin, warp_row0);
        flash3_round_p<D, T>(s, pa);
        if (!OVERLAP)
            flash3_pv_now<D, C, PACKED>(sh, visit, tiles.begin, tile.seq.nk, pa, o);
    }
    for (int64_t t = tiles.begin + 1; t < tiles.end; ++t) {
        /* The ring positions of key tile t and of t - 1, whose P V is still to issue. */
        const uint64_t at = visit + (uint64_t)(t - tiles.begin);
        const uint64_t before = visit + (uint64_t)(t - 1 - tiles.begin);
        mbarrier_wait(&sh.k_full[flash3_stage<D, C>(at)], flash3_parity<D, C>(at));
        if (OVERLAP)
            flash3_await_v<D, C, PACKED>(sh, before, t - 1, tile.seq.nk);
        if (PING_PONG)
            named_barrier_sync<PAIR>(my_turn);
        if (OVERLAP)
            flash3_pin_o_p<D>(o, pa);
        wgmma_fence();
        flash3_issue_s<D, C>(q_mine, flash3_ring_tile<D, C>(sh.k, at), s);
        if (OVERLAP)
            flash3_issue_pv<D>(flash3_ring_tile<D, C>(sh.v, before), pa, o);
        if (PING_PONG)
            named_barrier_arrive<PAIR>(their_turn);
        wgmma_wait<OVERLAP ? 1 : 0>(); /* S_t is done; P_{t-1} V_{t-1} may still run */
        wgmma_pin(reinterpret_cast<float(&)[flash3_bc(D) / 2]>(s));
        mbarrier_arrive(&sh.k_empty[flash3_stage<D, C>(at)]);
        float alpha[1][2];
        flash3_softmax<D>(s, m, l, alpha, c, p, tile, t, warp_row0);
        if (OVERLAP)
            flash3_finish_pv<D>(o, pa, &sh.v_empty[flash3_stage<D, C>(before)]);
        tile2_rescale<D, 1>(o, alpha);
        flash3_round_p<D, T>(s, pa);
        if (!OVERLAP)
            flash3_pv_now<D, C, PACKED>(sh, at, t, tile.seq.nk, pa, o);
    }
    /* Every S is done: unless O is staged in Q's rows, the producer may copy a later tile's Q
     * into this one's buffer. */
    if (!flash3_o_staged(D))
        mbarrier_arrive(&sh.q_empty[flash3_q_buffer<D, C>(q_round)]);
    if (OVERLAP && tiles.end > tiles.begin) /* the last tile's P V */
        flash3_pv_now<D, C, PACKED>(sh, visit + (uint64_t)(tiles.end - 1 - tiles.begin), tiles.end - 1,
                                 tile.seq.nk, pa, o);

    float lse[1][2];
    tile2_normalise<D, 1>(o, m, l, scale, lse);
    if (flash3_o_staged(D)) {
        uint4 chunks[flash3_o_chunks<D>()];
        flash3_stage_o<D, C>(flash3_q_tile<D, C>(sh.q, q_round) +
                                 (consumer * FLASH3_BOX_ROWS + 16 * warp) * FLASH3_COLUMNS,
                             o, chunks);
        /* O is back out of Q's buffer: the producer may copy a later tile's Q into it (TMA, the
         * async proxy, after these generic-proxy writes and reads). */
        fence_proxy_async();
        mbarrier_arrive(&sh.q_empty[flash3_q_buffer<D, C>(q_round)]);
        flash3_write_o<D, PACKED, T>(chunks, lse, p, tile, warp_row0);
    } else {
        flash3_write_o_fragments<D, PACKED, T>(o, lse, p, tile, warp_row0);
    }
}

/**
 * Version 3, persistent: at most a block per SM, each taking the work items
 * blockIdx.x, blockIdx.x + gridDim.x, ... of flash3_items() (with PACKED, of
 * a packed batch's sequences) and their query tiles in turn, @p q_tiles per
 * batch entry and head, with C consumer warpgroups (flash3_consumers(): 2,
 * or 3 at D = 64 without a mask or under a causal one of at least
 * FLASH3_CAUSAL_THREE_ROWS rows) and query tiles of flash3_br(C) rows.
 * @p q_map, @p k_map, @p v_map: tensor maps of q, k and v with coordinates
 * (column, head, row, batch), boxes of 64 columns by FLASH3_BOX_ROWS (Q) or
 * flash3_bc(D) (K, V) rows; a packed batch's maps have one batch entry.
 */
template <typename T, int D, int C, bool PACKED>
__global__ void __launch_bounds__(flash3_threads(C), 1)
    flash3_kernel(const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap k_map,
                  const __grid_constant__ CUtensorMap v_map, const fa_attention_params p, float scale,
                  int q_tiles)
{
    static_assert(D % FLASH3_COLUMNS == 0, "rows are whole column blocks of 128 bytes");
    /* setmaxnreg moves registers between warpgroups within what the launch gave the block
     * (flash3_launch_registers() a thread): an increase beyond it waits forever. */
    constexpr int STAGES = flash3_stages(D, C), Q_BUFFERS = flash3_q_buffers(D, C);
    static_assert(STAGES >= 1, "the ring has a stage for K and one for V");
    static_assert(FLASH3_PRODUCER_REGS + C * flash3_consumer_registers(C) <=
                      (1 + C) * flash3_launch_registers(C),
                  "the warpgroups' registers fit what the launch gives the block");
    static_assert(flash3_shared_bytes(D, C) + sizeof(uint64_t) * (2 * Q_BUFFERS + 4 * STAGES) <=
                      FLASH3_SHARED_LIMIT,
                  "the tiles and the barriers fit a block's shared memory");
    constexpr int KV_ELEMENTS = flash3_bc(D) * D;
    extern __shared__ unsigned char flash3_bytes[];
    __shared__ uint64_t barriers[2 * Q_BUFFERS + 4 * STAGES];
    /* The 128-byte swizzle is a function of the address, repeating every FLASH3_ALIGN bytes. */
    const uint32_t misalignment = shared_address(flash3_bytes) % FLASH3_ALIGN;
    flash3_shared<T> sh;
    sh.q = reinterpret_cast<T *>(flash3_bytes + (FLASH3_ALIGN - misalignment) % FLASH3_ALIGN);
    sh.k = sh.q + Q_BUFFERS * flash3_br(C) * D;
    sh.v = sh.k + STAGES * KV_ELEMENTS;
    sh.q_full = &barriers[0];
    sh.q_empty = sh.q_full + Q_BUFFERS;
    sh.k_full = sh.q_empty + Q_BUFFERS;
    sh.v_full = sh.k_full + STAGES;
    sh.k_empty = sh.v_full + STAGES;
    sh.v_empty = sh.k_empty + STAGES;
    constexpr int CONSUMER_THREADS = C * FLASH3_WARPGROUP;
    if (threadIdx.x == 0) {
        for (int b = 0; b < Q_BUFFERS; ++b) {
            mbarrier_init(&sh.q_full[b], 1);
            mbarrier_init(&sh.q_empty[b], CONSUMER_THREADS);
        }
        for (int st = 0; st < STAGES; ++st) {
            mbarrier_init(&sh.k_full[st], 1);
            mbarrier_init(&sh.v_full[st], 1);
            mbarrier_init(&sh.k_empty[st], CONSUMER_THREADS);
            mbarrier_init(&sh.v_empty[st], CONSUMER_THREADS);
        }
        mbarrier_init_fence();
    }
    __syncthreads();

    const int64_t items = flash3_items(p.batch, p.heads_q, q_tiles);
    if (threadIdx.x / FLASH3_WARPGROUP == 0) { /* the producer: one thread issues every copy */
        registers_release<FLASH3_PRODUCER_REGS>();
        if (threadIdx.x != 0)
            return;
        flash3_walk<D, C, PACKED>(p, q_tiles, items,
                               [&](const flash3_tile &tile, int q_round, uint64_t visit) {
                                   flash3_produce<D, C, PACKED>(sh, &q_map, &k_map, &v_map, p, tile,
                                                                q_round, visit);
                               });
        return;
    }
    registers_claim<flash3_consumer_registers(C)>();

    /* Ping-pong: the consumers take turns to issue their products (S_t, then P_{t-1} V_{t-1};
     * the last tile's P V, after the loop, takes no turn), so that one's softmax runs while the
     * other's products have the tensor cores. A consumer waits for its turn on its named
     * barrier (all 256 consumer threads: its own sync, the other's arrive), issues, and gives
     * the other its turn. The turns run on across the block's tiles: consumer 1 gives consumer
     * 0 the first turn, and consumer 0 takes the turn consumer 1 gives after its last tile, so
     * that each barrier ends balanced. From D = 128: at D = 64 the products are too short to
     * hide a softmax behind, and the turns cost it about a tenth (measured on \ref stage06). */
    const int consumer = threadIdx.x / FLASH3_WARPGROUP - 1;
    if (flash3_ping_pong(D) && consumer == 1)
        named_barrier_arrive<CONSUMER_THREADS>(FLASH3_TURN_BARRIER);
    flash3_walk<D, C, PACKED>(p, q_tiles, items, [&](const flash3_tile &tile, int q_round, uint64_t visit) {
        flash3_consume<T, D, C, PACKED>(sh, p, tile, q_round, visit, scale);
    });
    if (flash3_ping_pong(D) && consumer == 0)
        named_barrier_sync<CONSUMER_THREADS>(FLASH3_TURN_BARRIER);
}

#endif /* FLASH_3_HOPPER_CUH */
