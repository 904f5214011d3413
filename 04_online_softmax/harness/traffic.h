/**
 * @file traffic.h
 * @brief Device-memory bytes the benchmarked kernels of stage 04 move,
 *        counted from the algorithm (each read and write of an fp32 array
 *        once per pass), so that GB/s = counted bytes / measured time.
 */
#ifndef ONLINE_TRAFFIC_H
#define ONLINE_TRAFFIC_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Bytes per entry of x the softmax kernels move. */
enum {
    ONLINE_SOFTMAX_BYTES_PER_ENTRY = 12,    /**< one pass: x read twice, p written */
    THREE_PASS_SOFTMAX_BYTES_PER_ENTRY = 16 /**< three passes: x read three times, p written */
};

/**
 * Bytes softmax_rows_online moves for x [rows][n]: 12 per entry, plus one
 * fp32 lse per row. Sizes >= 0; the product must fit int64_t.
 */
int64_t online_softmax_bytes(int64_t rows, int64_t n);

/** Bytes stage 03's three-pass softmax moves for x [rows][n]: 16 per entry, plus lse. */
int64_t three_pass_softmax_bytes(int64_t rows, int64_t n);

/**
 * Bytes attn_rows_online moves for @p heads (batch * heads, one kv head per
 * query head) of n queries and n keys of @p dim: Q, K, V read once, O
 * written once (4 n dim floats per head), plus one fp32 lse per query row.
 */
int64_t online_attn_bytes(int64_t heads, int64_t n, int64_t dim);

/**
 * Bytes stage 03's naive attention moves for the same shape: online_attn_bytes()
 * plus 6 n^2 floats per head (S written, read three times and overwritten by P,
 * P read again by P V).
 */
int64_t naive_attn_bytes(int64_t heads, int64_t n, int64_t dim);

#ifdef __cplusplus
}
#endif

#endif /* ONLINE_TRAFFIC_H */
