/**
 * @file model.h
 * @brief CPU models of the stage 02 kernels, in the kernels' arithmetic order,
 *        and the error bounds the kernels are judged with.
 *
 * Where a kernel's order of operations is fully specified (the dot product,
 * the fp32 matmuls), the model reproduces it in fp32 and agrees with the GPU
 * bit for bit. Where it is not (the tensor cores), the model is an emulation
 * of the documented behaviour, used to test the bound itself. Two models are
 * deliberately wrong: they are the mutations the checks must reject.
 */
#ifndef FA_MATRIX_MODEL_H
#define FA_MATRIX_MODEL_H

#include <stdint.h>

#include "fa_half.h"
#include "fa_reference.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Unit roundoff of fp32 with round-to-nearest: 2^-24. */
#define MODEL_U_FP32 0x1p-24
/** Unit roundoff of the tensor cores' truncating accumulation: 2^-23 (docs/numerics.md). */
#define MODEL_U_TENSOR_CORE 0x1p-23
enum {
    MODEL_TENSOR_CORE_BLOCK = 8 /**< products the tensor cores align and add as one block (8 is the safe assumption) */
};

/**
 * ref_dot_product() on the CPU: the same partition into chunks, the same
 * per-thread FMA order, the same block trees (fa_block_sum() of
 * common/fa_kernel.cuh: a butterfly over each warp's 32 lanes, then over the
 * 8 warp totals), in fp32. x and y are host
 * arrays of @p n elements of @p dtype. Returns the bits the GPU returns.
 */
float model_dot_product(const void *x, const void *y, fa_dtype dtype, int64_t n);

/**
 * The most roundings any product x_i y_i goes through in ref_dot_product():
 * the FMAs after it in its thread's chain, plus the levels of the trees of
 * both passes. The error is at most gamma_depth * sum |x_i y_i| (each term is
 * multiplied by at most depth factors (1 + delta), |delta| <= u). For n large
 * this is n / 262144 elements per thread plus about 20, far below n. 0 for n = 0.
 */
int64_t model_dot_product_depth(int64_t n, fa_dtype dtype);

/** Bound on |dot - exact| for the result of ref_dot_product(): gamma_depth(2^-24) * abs_sum. */
double model_dot_product_bound(int64_t n, fa_dtype dtype, double abs_sum);

/**
 * Matmul versions 1-3 on the CPU: c[i][j] = one fp32 FMA chain over k in
 * increasing order, starting from +0. a is [m][k]; b is [k][n] (NN) or [n][k]
 * (NT); c is [m][n]; all row-major fp32.
 */
void model_matmul_fp32(const float *a, const float *b, fa_b_layout layout, int64_t m, int64_t n,
                       int64_t k, float *c);

/**
 * Tensor-core emulation (Fasi, Higham, Mikaitis, Pranesh 2021): per block of
 * ::MODEL_TENSOR_CORE_BLOCK products, the running sum and the exact products
 * are aligned to the largest magnitude among them, each truncated to 24
 * significant bits of that magnitude, added exactly, and the total truncated
 * to fp32. Inputs are bf16 values held in floats. Worst-case error per block:
 * 10 truncations of at most 2^-23 of the largest term, i.e. the effective
 * length K (1 + 2/8) of the bound.
 */
void model_matmul_tensor_core(const float *a, const float *b, fa_b_layout layout, int64_t m,
                              int64_t n, int64_t k, float *c);

/**
 * A broken kernel: the same products, but the accumulator is rounded to bf16
 * after every FMA (as if acc were a __nv_bfloat16). Its error is about
 * 2^-9 |partial sums|; the tensor-core bound must reject it.
 */
void model_matmul_bf16_accumulate(const float *a, const float *b, fa_b_layout layout, int64_t m,
                                  int64_t n, int64_t k, float *c);

/** Per-element bound of versions 1-3: gamma_K(2^-24) * sum_k |a_ik b_kj|. */
double model_matmul_fp32_bound(int64_t k, double abs_c);

/**
 * Per-element bound of version 4: gamma_{K (1 + 2/8)}(2^-23) * sum_k |a_ik b_kj|
 * plus K * 2^-126, in case the tensor cores flush subnormal partial sums.
 */
double model_matmul_tensor_core_bound(int64_t k, double abs_c);

#ifdef __cplusplus
}
#endif

#endif /* FA_MATRIX_MODEL_H */
