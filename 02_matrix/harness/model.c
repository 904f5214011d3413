/**
 * @file model.c
 * @brief CPU models of the stage 02 kernels and their error bounds.
 *
 * Bitwise agreement with the GPU needs the same operations in the same order
 * with the same rounding: fmaf() is the correctly rounded fused multiply-add
 * the kernels use (__fmaf_rn), float additions round to nearest (C11 with
 * FLT_EVAL_METHOD 0, as on x86-64 and AArch64), and ISO C mode does not
 * contract a * b + c on its own.
 */
#include "model.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "fa_math.h"
#include "fa_model.h"
#include "matrix.h"

enum { WARPS = DOT_PRODUCT_THREADS / FA_WARP_THREADS };
_Static_assert((WARPS & (WARPS - 1)) == 0, "the warp totals are reduced by one butterfly");

/** Levels of a halving tree over @p width lanes (log2 width). */
static int tree_levels(int width)
{
    int levels = 0;
    while ((1 << levels) < width)
        ++levels;
    return levels;
}

/** fa_block_sum() of the dot kernels: a butterfly per warp, then one over the 8 warp totals. */
static float block_tree(const float values[DOT_PRODUCT_THREADS])
{
    return fa_model_block_reduce(FA_REDUCE_SUM, values, DOT_PRODUCT_THREADS);
}

/** How ref_dot_product() splits n > 0 elements of a dtype between its threads. */
typedef struct dot_partition {
    int64_t per_chunk; /**< elements in a 16-byte chunk */
    int64_t blocks;    /**< blocks of pass 1, one partial each */
    int64_t threads;   /**< threads of pass 1 */
    int64_t chunks;    /**< whole chunks, walked by the threads with a grid stride */
    int64_t tail;      /**< the n mod chunk elements after them, one per thread */
} dot_partition;

static dot_partition dot_partition_of(int64_t n, fa_dtype dtype)
{
    dot_partition p;
    p.per_chunk = dot_product_chunk_elements(dtype);
    p.blocks = dot_product_blocks(n, dtype);
    p.threads = p.blocks * DOT_PRODUCT_THREADS;
    p.chunks = n / p.per_chunk;
    p.tail = n - p.chunks * p.per_chunk;
    return p;
}

float model_dot_product(const void *x, const void *y, fa_dtype dtype, int64_t n)
{
    if (n <= 0)
        return 0.0f;
    const dot_partition part = dot_partition_of(n, dtype);
    const int64_t per_chunk = part.per_chunk, blocks = part.blocks, threads = part.threads;
    const int64_t chunks = part.chunks, tail = part.tail;
    float partials[DOT_PRODUCT_MAX_PARTIALS];
    float values[DOT_PRODUCT_THREADS];

    for (int64_t b = 0; b < blocks; ++b) {
        for (int t = 0; t < DOT_PRODUCT_THREADS; ++t) {
            const int64_t thread = b * DOT_PRODUCT_THREADS + t;
            float acc = 0.0f;
            for (int64_t c = thread; c < chunks; c += threads)
                for (int64_t e = 0; e < per_chunk; ++e) {
                    const int64_t i = c * per_chunk + e;
                    acc = fmaf(fa_load(x, dtype, i), fa_load(y, dtype, i), acc);
                }
            if (thread < tail) {
                const int64_t i = chunks * per_chunk + thread;
                acc = fmaf(fa_load(x, dtype, i), fa_load(y, dtype, i), acc);
            }
            values[t] = acc;
        }
        partials[b] = block_tree(values);
    }
    for (int t = 0; t < DOT_PRODUCT_THREADS; ++t) {
        float acc = 0.0f;
        for (int64_t p = t; p < blocks; p += DOT_PRODUCT_THREADS)
            acc = acc + partials[p];
        values[t] = acc;
    }
    return block_tree(values);
}

int64_t model_dot_product_depth(int64_t n, fa_dtype dtype)
{
    if (n <= 0)
        return 0;
    const dot_partition part = dot_partition_of(n, dtype);
    /* Pass 1: the longest FMA chain of a thread (each FMA rounds once). */
    const int64_t chain =
        fa_ceil_div(part.chunks, part.threads) * part.per_chunk + (part.tail > 0 ? 1 : 0);
    /* Each block tree: 5 levels in a warp, log2(8) over the warp totals. */
    const int64_t tree = tree_levels(FA_WARP_THREADS) + tree_levels(WARPS);
    /* Pass 2: each thread adds at most ceil(blocks / 256) partials, then the tree. */
    const int64_t finish = fa_ceil_div(part.blocks, DOT_PRODUCT_THREADS);
    return chain + tree + finish + tree;
}

double model_dot_product_bound(int64_t n, fa_dtype dtype, double abs_sum)
{
    return fa_gamma((double)model_dot_product_depth(n, dtype), MODEL_U_FP32) * abs_sum;
}

/** B[kk][j] whichever way B is stored. */
static float b_at(const float *b, fa_b_layout layout, int64_t kk, int64_t j, int64_t n, int64_t k)
{
    return layout == FA_B_ROW_MAJOR ? b[kk * n + j] : b[j * k + kk];
}

void model_matmul_fp32(const float *a, const float *b, fa_b_layout layout, int64_t m, int64_t n,
                       int64_t k, float *c)
{
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            float acc = 0.0f;
            for (int64_t kk = 0; kk < k; ++kk)
                acc = fmaf(a[i * k + kk], b_at(b, layout, kk, j, n, k), acc);
            c[i * n + j] = acc;
        }
}

/** @p s rounded toward zero to fp32 (the tensor cores' final normalisation). */
static float round_toward_zero(double s)
{
    float f = (float)s;
    if (fabs((double)f) > fabs(s))
        f = nextafterf(f, 0.0f);
    return f;
}

/** @p x truncated toward zero to a multiple of @p quantum (a power of two). */
static double truncate_to(double x, double quantum)
{
    return trunc(x / quantum) * quantum;
}

/**
 * One block of the emulated tensor-core sum: acc + sum of @p count exact
 * products, every term aligned to the largest and truncated. With the
 * largest magnitude in [2^(e-1), 2^e), the quantum 2^(e-24) keeps 24
 * significant bits of it; the at most 9 truncated terms are integer
 * multiples of the quantum below 2^28 of them, so their double sum is exact.
 */
static float tensor_core_block(float acc, const double *products, int count)
{
    double largest = fabs((double)acc);
    for (int p = 0; p < count; ++p)
        largest = fa_max_nan_double(largest, fabs(products[p]));
    if (largest == 0.0)
        return acc;
    int exponent;
    frexp(largest, &exponent);
    const double quantum = ldexp(1.0, exponent - 24);
    double sum = truncate_to((double)acc, quantum);
    for (int p = 0; p < count; ++p)
        sum += truncate_to(products[p], quantum);
    return round_toward_zero(sum);
}

void model_matmul_tensor_core(const float *a, const float *b, fa_b_layout layout, int64_t m,
                              int64_t n, int64_t k, float *c)
{
    double products[MODEL_TENSOR_CORE_BLOCK];
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            float acc = 0.0f;
            for (int64_t k0 = 0; k0 < k; k0 += MODEL_TENSOR_CORE_BLOCK) {
                int count = 0;
                for (int64_t kk = k0; kk < k && kk < k0 + MODEL_TENSOR_CORE_BLOCK; ++kk)
                    products[count++] = (double)a[i * k + kk] * (double)b_at(b, layout, kk, j, n, k);
                acc = tensor_core_block(acc, products, count);
            }
            c[i * n + j] = acc;
        }
}

void model_matmul_bf16_accumulate(const float *a, const float *b, fa_b_layout layout, int64_t m,
                                  int64_t n, int64_t k, float *c)
{
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            float acc = 0.0f;
            for (int64_t kk = 0; kk < k; ++kk)
                acc = fa_round_to(FA_BF16, fmaf(a[i * k + kk], b_at(b, layout, kk, j, n, k), acc));
            c[i * n + j] = acc;
        }
}

double model_matmul_fp32_bound(int64_t k, double abs_c)
{
    return fa_gamma((double)k, MODEL_U_FP32) * abs_c;
}

double model_matmul_tensor_core_bound(int64_t k, double abs_c)
{
    const double effective_k = (double)k * (1.0 + 2.0 / MODEL_TENSOR_CORE_BLOCK);
    return fa_gamma(effective_k, MODEL_U_TENSOR_CORE) * abs_c + (double)k * FLT_MIN;
}
