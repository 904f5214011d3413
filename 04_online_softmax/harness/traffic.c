/**
 * @file traffic.c
 * @brief Counted device-memory bytes of the benchmarked kernels (traffic.h).
 */
#include "traffic.h"

/** Bytes of one fp32 element. */
enum { FP32_BYTES = 4 };

/** Reads and writes of [n][dim] per head by online attention: Q, K, V, O. */
enum { ATTN_TENSORS = 4 };

/** Passes of S or P [n][n] through device memory added by naive attention. */
enum { NAIVE_SCORE_PASSES = 6 };

int64_t online_softmax_bytes(int64_t rows, int64_t n)
{
    return rows * n * ONLINE_SOFTMAX_BYTES_PER_ENTRY + rows * FP32_BYTES;
}

int64_t three_pass_softmax_bytes(int64_t rows, int64_t n)
{
    return rows * n * THREE_PASS_SOFTMAX_BYTES_PER_ENTRY + rows * FP32_BYTES;
}

int64_t online_attn_bytes(int64_t heads, int64_t n, int64_t dim)
{
    return heads * (ATTN_TENSORS * n * dim + n) * FP32_BYTES;
}

int64_t naive_attn_bytes(int64_t heads, int64_t n, int64_t dim)
{
    return online_attn_bytes(heads, n, dim) + heads * NAIVE_SCORE_PASSES * n * n * FP32_BYTES;
}
