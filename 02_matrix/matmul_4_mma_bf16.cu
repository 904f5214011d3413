/**
 * @file matmul_4_mma_bf16.cu
 * @brief M7 matmul, version 4: tensor cores, bf16 in, fp32 out (reference kernel).
 *
 * | version | kernel                   | idea                                                                                                                       | block tile (M x N x K) | threads                   | outputs per thread |
 * |---------|--------------------------|----------------------------------------------------------------------------------------------------------------------------|------------------------|---------------------------|--------------------|
 * | 4       | `matmul_mma_bf16_kernel` | tensor cores: mma.sync m16n8k16 bf16, ldmatrix, cp.async 4-stage pipeline, XOR-swizzled shared memory, addresses set up once | 128 x 128 x 32         | 128 (4 warps of 64 x 64) | 128                |
 *
 * The instructions are the wrappers of tensor_core.cuh; this file is the
 * tiling, the fragment addressing and the pipeline around them. B is read
 * row-major ([K][N], "NN") or transposed ([N][K], "NT", C = A * B^T): the
 * layout is a template parameter. ALIGNED (every row of A and B starts on
 * 16 bytes) selects the cp.async tile loads; otherwise the tiles are loaded
 * with 2-byte loads and bound checks, the same tiles more slowly.
 *
 * The tensor cores' internal order and rounding (truncation) differ from an
 * FMA chain, so this version is judged with the tensor-core bound of the page
 * "How outputs are judged" (\ref numerics), not bit for bit.
 *
 * Only the kernel and its device helpers live here: harness/launch.cu
 * validates, chooses ALIGNED and the float2 epilogue (c_pairs), sizes the
 * grid of MATMUL_MMA_BLOCK_M x MATMUL_MMA_BLOCK_N tiles, and gives each block
 * MATMUL_MMA_THREADS threads and MATMUL_MMA_SMEM_BYTES of dynamic shared
 * memory (matrix.h).
 */
#include <stdint.h>

#include <cuda_runtime.h>

#include "fa_index.h"
#include "matrix.h"
#include "tensor_core.cuh"

constexpr int MMA_BLOCK_M = MATMUL_MMA_BLOCK_M, MMA_BLOCK_N = MATMUL_MMA_BLOCK_N;
constexpr int MMA_BLOCK_K = MATMUL_MMA_BLOCK_K;
constexpr int MMA_THREADS = MATMUL_MMA_THREADS;
constexpr int MMA_STAGES = MATMUL_MMA_STAGES;    /**< tiles in flight: compute one, load three */
constexpr int MMA_CHUNK = MATMUL_MMA_CHUNK;      /**< bf16 per 16-byte chunk */
constexpr int MMA_WARP_M = 64, MMA_WARP_N = 64;  /**< the tile of C one warp owns */
constexpr int MMA_WARPS_N = MMA_BLOCK_N / MMA_WARP_N;
constexpr int MMA_M = 16, MMA_N = 8, MMA_K = 16; /**< the instruction's shape */
constexpr int MMA_TILES_M = MMA_WARP_M / MMA_M;  /* 4 */
constexpr int MMA_TILES_N = MMA_WARP_N / MMA_N;  /* 8 */
constexpr int MMA_K_STEPS = MMA_BLOCK_K / MMA_K; /* 2 */
constexpr int MMA_A_TILE = MMA_BLOCK_M * MMA_BLOCK_K;
constexpr int MMA_B_TILE = MMA_BLOCK_K * MMA_BLOCK_N;
constexpr int MMA_A_TILE_BYTES = MMA_A_TILE * 2;
constexpr int MMA_STAGE_BYTES = (MMA_A_TILE + MMA_B_TILE) * 2; /**< A tile, then B tile */
constexpr int MMA_K_CHUNKS = MMA_BLOCK_K / MMA_CHUNK; /**< chunks per row of a [.][BLOCK_K] tile */
constexpr int MMA_N_CHUNKS = MMA_BLOCK_N / MMA_CHUNK; /**< chunks per row of a [BLOCK_K][BLOCK_N] tile */
constexpr int MMA_SWIZZLE_ROWS = 8; /**< a 128-byte line holds 8 chunks: 8 rows to spread */
constexpr int MMA_COPY_PASSES = MMA_A_TILE / MMA_CHUNK / MMA_THREADS; /**< chunks per thread per operand tile */
constexpr int MMA_GROUP_M = 8; /**< block rows that walk C together (see the kernel) */
static_assert(MMA_THREADS == FA_WARP_THREADS * (MMA_BLOCK_M / MMA_WARP_M) * MMA_WARPS_N,
              "one warp per 64 x 64 warp tile of the block tile");
static_assert(MMA_STAGES * MMA_STAGE_BYTES == MATMUL_MMA_SMEM_BYTES,
              "the stages fill exactly the dynamic shared memory the launch gives");
static_assert(MMA_A_TILE == MMA_B_TILE && MMA_A_TILE / MMA_CHUNK % MMA_THREADS == 0,
              "every thread copies MMA_COPY_PASSES chunks of A and as many of B per k-tile");
static_assert(MMA_BLOCK_K % MMA_K == 0 && MMA_WARP_M % MMA_M == 0 && MMA_WARP_N % (2 * MMA_N) == 0,
              "whole instructions; B fragments come in pairs of n8 tiles per ldmatrix.x4");
static_assert(MMA_STAGE_BYTES % 128 == 0 && MMA_A_TILE_BYTES % 128 == 0,
              "every tile starts on a 128-byte line, as the swizzle assumes");

/**
 * Element offset of 16-byte chunk @p chunk of row @p row in a tile whose rows
 * hold ROW_CHUNKS chunks, XOR-swizzled: the chunk's position inside its
 * 128-byte line is XORed with the line's index (mod 8). ldmatrix reads one
 * chunk column of 8 consecutive rows at once; unswizzled, those 8 chunks sit
 * a multiple of 64 or 256 bytes apart and land in the same 4 banks (a 4- or
 * 8-way conflict). Swizzled, they land in 8 different bank groups. Unlike
 * padding, the swizzle costs no shared memory, and it keeps chunks whole, so
 * cp.async can still write 16 bytes at a time.
 */
template <int ROW_CHUNKS>
static __host__ __device__ constexpr int swizzled(int row, int chunk)
{
    constexpr int LINE_CHUNKS = ROW_CHUNKS < MMA_SWIZZLE_ROWS ? MMA_SWIZZLE_ROWS : ROW_CHUNKS;
    const int linear = row * ROW_CHUNKS + chunk;
    return (linear ^ ((linear / LINE_CHUNKS) % MMA_SWIZZLE_ROWS)) * MMA_CHUNK;
}

/**
 * True when moving @p rows rows down a swizzled tile moves every chunk by the
 * same offset (the swizzle repeats every 8 lines): then one swizzled offset,
 * computed once, serves all those rows with a constant added, and the
 * constant folds into the instruction's immediate.
 */
template <int ROW_CHUNKS>
static __host__ __device__ constexpr bool swizzle_repeats_every(int rows)
{
    constexpr int LINE_CHUNKS = ROW_CHUNKS < MMA_SWIZZLE_ROWS ? MMA_SWIZZLE_ROWS : ROW_CHUNKS;
    return rows * ROW_CHUNKS % (LINE_CHUNKS * MMA_SWIZZLE_ROWS) == 0;
}

/**
 * One thread's share of the asynchronous copies of one operand (cp.async
 * path: 16-byte aligned rows, K a multiple of 8). The addresses are worked
 * out once, before the k loop; each k-tile then only issues the copies and
 * moves the pointers on by one k-tile, instead of recomputing 64-bit
 * addresses and bound checks for every chunk of every tile.
 */
typedef struct {
    const uint16_t *src[MMA_COPY_PASSES]; /**< its chunk of each pass, in the next k-tile to load */
    int64_t k_step;   /**< elements from one k-tile to the next: BLOCK_K along a row, or BLOCK_K rows */
    uint32_t dst;     /**< byte offset of its pass-0 chunk in the shared tile (swizzled) */
    int k_index;      /**< k of its pass-0 chunk inside the k-tile */
} operand_copy;

/**
 * Sets up the copies of TILE_ROWS x TILE_COLS tiles of a [rows][cols] bf16
 * matrix, the first at (r0, c0); the k dimension runs down the rows
 * (K_ALONG_ROWS, B in NN) or along them (A, and B in NT). Thread t copies
 * chunk t % ROW_CHUNKS of rows t / ROW_CHUNKS + j * ROWS_PER_PASS:
 * consecutive threads read consecutive 16-byte chunks of a row.
 *
 * Outside the matrix in m or n, a chunk is clamped onto the last row (A, B^T)
 * or the last chunk of a row (B): it then holds real but unrelated data,
 * which only ever reaches rows or columns of C that lie outside C and are
 * never stored. So the k loop needs no m or n bound checks at all. In k it
 * cannot clamp (those products would be summed into C): chunks past K are
 * zero-filled instead, which only the last k-tile can need.
 */
template <int TILE_ROWS, int TILE_COLS, bool K_ALONG_ROWS>
static __device__ __forceinline__ operand_copy operand_copy_setup(const uint16_t *matrix,
                                                                  int64_t rows, int64_t cols,
                                                                  int64_t r0, int64_t c0)
{
    constexpr int ROW_CHUNKS = TILE_COLS / MMA_CHUNK;
    constexpr int ROWS_PER_PASS = MMA_THREADS / ROW_CHUNKS;
    static_assert(MMA_THREADS % ROW_CHUNKS == 0 && TILE_ROWS == ROWS_PER_PASS * MMA_COPY_PASSES,
                  "the block copies ROWS_PER_PASS whole rows per pass");
    static_assert(swizzle_repeats_every<ROW_CHUNKS>(ROWS_PER_PASS),
                  "every pass has the swizzle of pass 0: its destination is pass 0's plus a constant");
    const int row = threadIdx.x / ROW_CHUNKS, chunk = threadIdx.x % ROW_CHUNKS;
    operand_copy copy;
#pragma unroll
    for (int j = 0; j < MMA_COPY_PASSES; ++j) {
        int64_t r = r0 + row + j * ROWS_PER_PASS;
        int64_t c = c0 + chunk * MMA_CHUNK;
        if constexpr (K_ALONG_ROWS)
            c = c < cols ? c : cols - MMA_CHUNK; /* cols % 8 == 0: a chunk is wholly in or out */
        else
            r = r < rows ? r : rows - 1;
        copy.src[j] = matrix + r * cols + c;
    }
    copy.k_step = K_ALONG_ROWS ? MMA_BLOCK_K * cols : MMA_BLOCK_K;
    copy.dst = (uint32_t)swizzled<ROW_CHUNKS>(row, chunk) * 2;
    copy.k_index = K_ALONG_ROWS ? row : chunk * MMA_CHUNK;
    return copy;
}

/**
 * Issues this thread's cp.async copies of the next k-tile of one operand
 * into the shared tile at @p tile, then steps to the k-tile after it.
 * CHECK_K (the last k-tile, when K % BLOCK_K != 0): a chunk at k >= @p k_left
 * (K minus the tile's first k) reads 0 bytes from the matrix base and is
 * zero-filled. Every other k-tile copies without a single test.
 */
template <int TILE_COLS, bool K_ALONG_ROWS, bool CHECK_K>
static __device__ __forceinline__ void operand_copy_issue(operand_copy *copy, uint32_t tile,
                                                          const uint16_t *matrix, int k_left)
{
    constexpr int ROWS_PER_PASS = MMA_THREADS / (TILE_COLS / MMA_CHUNK);
#pragma unroll
    for (int j = 0; j < MMA_COPY_PASSES; ++j) {
        const int k_index = copy->k_index + (K_ALONG_ROWS ? j * ROWS_PER_PASS : 0);
        const bool inside = !CHECK_K || k_index < k_left;
        cp_async_16(tile + copy->dst + j * ROWS_PER_PASS * TILE_COLS * 2,
                    inside ? copy->src[j] : matrix, inside ? 16 : 0);
        copy->src[j] += copy->k_step;
    }
}

/**
 * The fallback for rows that do not start on 16 bytes (K or N not a multiple
 * of 8, or an unaligned base): copies the TILE_ROWS x TILE_COLS tile at
 * (r0, c0) of a [rows][cols] matrix with 2-byte loads and a bound check per
 * element (zeros outside), then one 16-byte shared store per chunk;
 * synchronous, but the same tile as the cp.async path.
 */
template <int TILE_ROWS, int TILE_COLS>
static __device__ __forceinline__ void load_tile_checked(uint16_t *tile, const uint16_t *src,
                                                         int64_t rows, int64_t cols, int64_t r0,
                                                         int64_t c0)
{
    constexpr int ROW_CHUNKS = TILE_COLS / MMA_CHUNK;
    constexpr int ROWS_PER_PASS = MMA_THREADS / ROW_CHUNKS;
    const int chunk = threadIdx.x % ROW_CHUNKS;
    const int64_t c = c0 + (int64_t)chunk * MMA_CHUNK;
#pragma unroll
    for (int j = 0; j < TILE_ROWS / ROWS_PER_PASS; ++j) {
        const int row = threadIdx.x / ROW_CHUNKS + j * ROWS_PER_PASS;
        const int64_t r = r0 + row;
        uint32_t packed[MMA_CHUNK / 2];
#pragma unroll
        for (int e = 0; e < MMA_CHUNK; e += 2) {
            const uint32_t lo = (r < rows && c + e < cols) ? src[r * cols + c + e] : 0u;
            const uint32_t hi = (r < rows && c + e + 1 < cols) ? src[r * cols + c + e + 1] : 0u;
            packed[e / 2] = lo | (hi << 16);
        }
        *reinterpret_cast<uint4 *>(tile + swizzled<ROW_CHUNKS>(row, chunk)) =
            make_uint4(packed[0], packed[1], packed[2], packed[3]);
    }
}

/** What a block loads: its matrices, sizes and corner, and the cp.async state of both operands. */
typedef struct {
    const uint16_t *a, *b;
    int64_t m, n, k, row0, col0;
    operand_copy a_copy, b_copy; /**< used by the ALIGNED kernels only */
} mma_operands;

/**
 * Starts loading k-tile @p tile of A and B into its pipeline stage, tile %
 * STAGES, of the shared buffer at @p smem (@p smem_address: the same, as a
 * shared-memory address).
 */
template <fa_b_layout LAYOUT, bool ALIGNED>
static __device__ __forceinline__ void load_stage(mma_operands *op, uint16_t *smem,
                                                  uint32_t smem_address, int tile)
{
    constexpr bool NN = LAYOUT == FA_B_ROW_MAJOR;
    const int stage = tile % MMA_STAGES;
    const int64_t k0 = (int64_t)tile * MMA_BLOCK_K;
    if constexpr (ALIGNED) {
        constexpr int B_COLS = NN ? MMA_BLOCK_N : MMA_BLOCK_K;
        const uint32_t a_tile = smem_address + stage * MMA_STAGE_BYTES;
        const uint32_t b_tile = a_tile + MMA_A_TILE_BYTES;
        if (k0 + MMA_BLOCK_K <= op->k) {
            operand_copy_issue<MMA_BLOCK_K, false, false>(&op->a_copy, a_tile, op->a, 0);
            operand_copy_issue<B_COLS, NN, false>(&op->b_copy, b_tile, op->b, 0);
        } else {
            const int k_left = (int)(op->k - k0);
            operand_copy_issue<MMA_BLOCK_K, false, true>(&op->a_copy, a_tile, op->a, k_left);
            operand_copy_issue<B_COLS, NN, true>(&op->b_copy, b_tile, op->b, k_left);
        }
    } else {
        uint16_t *a_tile = smem + stage * (MMA_STAGE_BYTES / 2);
        uint16_t *b_tile = a_tile + MMA_A_TILE;
        load_tile_checked<MMA_BLOCK_M, MMA_BLOCK_K>(a_tile, op->a, op->m, op->k, op->row0, k0);
        if constexpr (NN)
            load_tile_checked<MMA_BLOCK_K, MMA_BLOCK_N>(b_tile, op->b, op->k, op->n, k0, op->col0);
        else
            load_tile_checked<MMA_BLOCK_N, MMA_BLOCK_K>(b_tile, op->b, op->n, op->k, op->col0, k0);
    }
}

/**
 * Byte offsets, inside a stage's tiles, of the 16-byte row this lane names
 * to ldmatrix; worked out once, since the swizzle makes them costly. The
 * other fragments of the warp tile are a constant away (see mma_k_tile()).
 */
typedef struct {
    uint32_t a[MMA_K_STEPS];     /**< A fragment of m-tile 0, per k16 step */
    uint32_t b[MMA_TILES_N / 2]; /**< NN: B fragments of n8 pair p, k16 step 0; NT: pair 0, per k16 step */
} fragment_offsets;

/*
 * ldmatrix addressing (lane l, each lane names one 16-byte row of an 8x8 matrix):
 *   A [m][k] tile: matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7,
 *   k 8-15), (rows 8-15, k 8-15) = a[0..3] of the fragment: lane l names row
 *   l % 16 at k chunk l / 16.
 *   B^T [n][k] tile (NT): matrices (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15,
 *   k 0-7), (n 8-15, k 8-15) = b[0], b[1] of two n8 tiles: lane l names row n
 *   = l % 8 + 8 (l / 16) at k chunk (l / 8) % 2.
 *   B [k][n] tile (NN): the same four matrices stored k-major, read with
 *   .trans: lane l names row k = l % 8 + 8 ((l / 8) % 2) at n chunk l / 16.
 * Moving 16 rows down keeps the swizzle (asserted below), so the next m16
 * tile of A, the next n8 pair of B^T and the next k16 step of B are a
 * constant away; the n8 pairs of B (NN) differ in the swizzled chunk and
 * get an offset each.
 */
template <fa_b_layout LAYOUT>
static __device__ __forceinline__ fragment_offsets fragment_offsets_of(int warp_row, int warp_col,
                                                                      int lane)
{
    static_assert(swizzle_repeats_every<MMA_K_CHUNKS>(MMA_M) &&
                      swizzle_repeats_every<MMA_K_CHUNKS>(2 * MMA_N) &&
                      swizzle_repeats_every<MMA_N_CHUNKS>(MMA_K),
                  "16 rows down a tile keep the swizzle");
    constexpr int STEP_CHUNKS = MMA_K / MMA_CHUNK;
    fragment_offsets f;
#pragma unroll
    for (int s = 0; s < MMA_K_STEPS; ++s)
        f.a[s] = 2 * swizzled<MMA_K_CHUNKS>(warp_row + lane % 16, s * STEP_CHUNKS + lane / 16);
    if constexpr (LAYOUT == FA_B_TRANSPOSED) {
#pragma unroll
        for (int s = 0; s < MMA_K_STEPS; ++s)
            f.b[s] = 2 * swizzled<MMA_K_CHUNKS>(warp_col + lane % 8 + 8 * (lane / 16),
                                                s * STEP_CHUNKS + (lane / 8) % 2);
    } else {
#pragma unroll
        for (int p = 0; p < MMA_TILES_N / 2; ++p)
            f.b[p] = 2 * swizzled<MMA_N_CHUNKS>(lane % 8 + 8 * ((lane / 8) % 2),
                                                (warp_col + 2 * p * MMA_N) / MMA_CHUNK + lane / 16);
    }
    return f;
}

/**
 * One k-tile on the tensor cores (@p a_tile, @p b_tile: shared addresses of
 * the stage's tiles): for each k16 step, the warp loads its A fragments (4
 * ldmatrix.x4: 64 rows x 16 k) and B fragments (4 ldmatrix.x4, each two n8
 * tiles x 16 k) and issues 4 x 8 mma.sync.
 */
template <fa_b_layout LAYOUT>
static __device__ __forceinline__ void mma_k_tile(uint32_t a_tile, uint32_t b_tile,
                                                  const fragment_offsets *f,
                                                  float acc[MMA_TILES_M][MMA_TILES_N][4])
{
    static_assert(MMA_K_STEPS <= MMA_TILES_N / 2, "fragment_offsets.b holds one per k16 step (NT)");
#pragma unroll
    for (int s = 0; s < MMA_K_STEPS; ++s) {
        uint32_t a_frag[MMA_TILES_M][4];
        uint32_t b_frag[MMA_TILES_N][2];
#pragma unroll
        for (int i = 0; i < MMA_TILES_M; ++i)
            ldmatrix_x4(a_frag[i], a_tile + f->a[s] + i * MMA_M * MMA_BLOCK_K * 2);
#pragma unroll
        for (int p = 0; p < MMA_TILES_N / 2; ++p) {
            uint32_t r[4];
            if constexpr (LAYOUT == FA_B_TRANSPOSED)
                ldmatrix_x4(r, b_tile + f->b[s] + p * 2 * MMA_N * MMA_BLOCK_K * 2);
            else
                ldmatrix_x4_trans(r, b_tile + f->b[p] + s * MMA_K * MMA_BLOCK_N * 2);
            b_frag[2 * p][0] = r[0];
            b_frag[2 * p][1] = r[1];
            b_frag[2 * p + 1][0] = r[2];
            b_frag[2 * p + 1][1] = r[3];
        }
#pragma unroll
        for (int i = 0; i < MMA_TILES_M; ++i)
#pragma unroll
            for (int j = 0; j < MMA_TILES_N; ++j)
                mma_m16n8k16_bf16(acc[i][j], a_frag[i], b_frag[j]);
    }
}

/** Stores (v0, v1) at (r, c), (r, c+1) of a [rows][cols] matrix, skipping what lies outside. */
static __device__ __forceinline__ void store_pair(float *p, int64_t rows, int64_t cols,
                                                  int64_t r, int64_t c, float v0, float v1,
                                                  bool pairs)
{
    if (r >= rows || c >= cols)
        return;
    if (pairs && c + 1 < cols) {
        *reinterpret_cast<float2 *>(p + r * cols + c) = make_float2(v0, v1);
        return;
    }
    p[r * cols + c] = v0;
    if (c + 1 < cols)
        p[r * cols + c + 1] = v1;
}

/**
 * A 128x128 block of C from 4 warps, each owning 64x64 (4 x 8 accumulator
 * tiles of 16x8: 128 fp32 registers per thread). K is walked in tiles of 32
 * through a 4-stage cp.async pipeline: while the tensor cores work on tile
 * kt, tiles kt+1 to kt+3 are on their way from global memory.
 *
 * Block order: consecutive blocks (which run at the same time) take a column
 * of MMA_GROUP_M block rows before moving right, rather than a whole row of
 * C. They then share B tiles as well as A tiles, so more of what they read
 * is already in L2.
 *
 * Per iteration: wait until tile kt has landed (this thread's copies), one
 * barrier (everyone's copies are visible, and everyone has finished tile
 * kt-1, whose stage is refilled next), start the copy of tile kt+3 into that
 * stage, compute tile kt. A group is committed every iteration, even an empty
 * one, so "all but the newest STAGES-2 groups" always means "up to tile kt".
 */
template <fa_b_layout LAYOUT, bool ALIGNED>
static __global__ void __launch_bounds__(MMA_THREADS, 2)
    matmul_mma_bf16_kernel(const uint16_t *a, const uint16_t *b, float *c, int64_t m, int64_t n,
                           int64_t k, bool c_pairs)
{
    extern __shared__ __align__(128) uint16_t mma_smem[]; /* MMA_STAGES x (A tile, B tile) */
    const uint32_t smem_address = shared_address(mma_smem);
    const int lane = threadIdx.x % FA_WARP_THREADS, warp = threadIdx.x / FA_WARP_THREADS;
    const int warp_row = (warp / MMA_WARPS_N) * MMA_WARP_M;
    const int warp_col = (warp % MMA_WARPS_N) * MMA_WARP_N;

    /* The grid is ceil(n / BLOCK_N) x ceil(m / BLOCK_M); group g holds block rows
     * 8g .. 8g+7, and block l of a group sits at row l % rows_in_group, column
     * l / rows_in_group. 32-bit: a group has at most 8 x 2^24 blocks. */
    const unsigned group = blockIdx.y / MMA_GROUP_M;
    const unsigned first_row = group * MMA_GROUP_M;
    const unsigned rows_in_group = min(gridDim.y - first_row, (unsigned)MMA_GROUP_M);
    const unsigned in_group = (blockIdx.y - first_row) * gridDim.x + blockIdx.x;
    const int64_t row0 = (int64_t)(first_row + in_group % rows_in_group) * MMA_BLOCK_M;
    const int64_t col0 = (int64_t)(in_group / rows_in_group) * MMA_BLOCK_N;
    const int k_tiles = (int)fa_ceil_div(k, MMA_BLOCK_K);

    mma_operands op = {a, b, m, n, k, row0, col0, {}, {}};
    if constexpr (ALIGNED) {
        op.a_copy = operand_copy_setup<MMA_BLOCK_M, MMA_BLOCK_K, false>(a, m, k, row0, 0);
        if constexpr (LAYOUT == FA_B_ROW_MAJOR)
            op.b_copy = operand_copy_setup<MMA_BLOCK_K, MMA_BLOCK_N, true>(b, k, n, 0, col0);
        else
            op.b_copy = operand_copy_setup<MMA_BLOCK_N, MMA_BLOCK_K, false>(b, n, k, col0, 0);
    }
    const fragment_offsets frag = fragment_offsets_of<LAYOUT>(warp_row, warp_col, lane);

    float acc[MMA_TILES_M][MMA_TILES_N][4] = {};

#pragma unroll
    for (int s = 0; s < MMA_STAGES - 1; ++s) {
        if (s < k_tiles)
            load_stage<LAYOUT, ALIGNED>(&op, mma_smem, smem_address, s);
        cp_async_commit();
    }
    for (int kt = 0; kt < k_tiles; ++kt) {
        cp_async_wait<MMA_STAGES - 2>();
        __syncthreads();
        const int next = kt + MMA_STAGES - 1;
        if (next < k_tiles)
            load_stage<LAYOUT, ALIGNED>(&op, mma_smem, smem_address, next);
        cp_async_commit();
        const uint32_t a_tile = smem_address + (kt % MMA_STAGES) * MMA_STAGE_BYTES;
        mma_k_tile<LAYOUT>(a_tile, a_tile + MMA_A_TILE_BYTES, &frag, acc);
    }

    /* The C fragment: lane l holds rows l/4 and l/4 + 8, columns 2(l%4) and 2(l%4) + 1. */
    const int group_row = lane / 4, pair = 2 * (lane % 4);
#pragma unroll
    for (int i = 0; i < MMA_TILES_M; ++i)
#pragma unroll
        for (int j = 0; j < MMA_TILES_N; ++j) {
            const int64_t r = row0 + warp_row + i * MMA_M + group_row;
            const int64_t col = col0 + warp_col + j * MMA_N + pair;
            store_pair(c, m, n, r, col, acc[i][j][0], acc[i][j][1], c_pairs);
            store_pair(c, m, n, r + 8, col, acc[i][j][2], acc[i][j][3], c_pairs);
        }
}

