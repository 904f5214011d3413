/**
 * @file fa_index.h
 * @brief Index arithmetic and launch limits shared by host code and kernels.
 *
 * Element offsets are int64_t everywhere in the course: B·H·N·D passes 2^31
 * at realistic sizes (one 8k × 8k score matrix per head of 32 heads already
 * does), and an int offset would wrap silently.
 */
#ifndef FA_INDEX_H
#define FA_INDEX_H

#include <stdint.h>

#ifdef __CUDACC__
#define FA_HOST_DEVICE __host__ __device__
#else
#define FA_HOST_DEVICE
#endif

/* C++ (the kernels) may use these in constant expressions; C cannot. */
#ifdef __cplusplus
#define FA_CONSTEXPR constexpr
#else
#define FA_CONSTEXPR
#endif

/** Threads in a warp on every NVIDIA GPU the course targets. */
#define FA_WARP_THREADS 32

/** Every lane of a warp takes part in a shuffle or vote. */
#define FA_FULL_WARP_MASK 0xffffffffu

/** Largest gridDim.x of a launch (2^31 - 1). */
#define FA_MAX_GRID_X INT64_C(2147483647)

/** Largest gridDim.y and gridDim.z of a launch. */
#define FA_MAX_GRID_YZ INT64_C(65535)

/** The number of elements of a true array (not a pointer), as an int. */
#define FA_COUNT_OF(array) ((int)(sizeof(array) / sizeof((array)[0])))

/**
 * The rows (or keys) of a tile of @p tile starting at @p first that lie
 * before @p n: @p tile, or n - first for the last tile, which n cuts.
 */
static inline FA_CONSTEXPR FA_HOST_DEVICE int fa_tile_rows(int64_t n, int64_t first, int tile)
{
    return (int)(n - first < tile ? n - first : tile);
}

/** ceil(a / b) for a >= 0 and b > 0: the number of tiles (or blocks) of b that cover a. */
static inline FA_CONSTEXPR FA_HOST_DEVICE int64_t fa_ceil_div(int64_t a, int64_t b)
{
    return a / b + (a % b != 0);
}

#endif /* FA_INDEX_H */
