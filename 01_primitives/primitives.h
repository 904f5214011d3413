/**
 * @file primitives.h
 * @brief Stage 01 API: M1 vector add, M2 scale array, M3 elementwise exp,
 *        M4 row max and M5 row sum (the lesson is \ref stage01).
 *
 * Every kernel has two launchers with one signature: `ref_<op>` (the solution,
 * primitives.cu) and `learner_<op>` (the exercise, learner/primitives.cu).
 * Both call `<op>_validate()` before touching the GPU, return FA_OK at once
 * for zero-size work, and enqueue one kernel on the given stream without
 * waiting for it (a fault inside the kernel surfaces at the next
 * synchronising call). The validation functions are plain C, so bad input is
 * tested on machines without a GPU.
 *
 * Rules shared by every launcher:
 * - pointers are device pointers to fp32 arrays; NULL is accepted only where
 *   the array is empty;
 * - sizes are element counts of type int64_t, never negative; every offset is
 *   computed in 64 bits, so arrays beyond 2^31 elements work;
 * - elementwise kernels (M1-M3) move 16 bytes per load and store (`float4`),
 *   so each of their pointers must be 16-byte aligned (::FA_ERR_MISALIGNED
 *   otherwise); `cudaMalloc` returns 256-byte aligned memory, and an offset
 *   into it keeps the alignment when it is a multiple of 4 elements. The
 *   length n is arbitrary: the last n mod 4 elements take a scalar path;
 * - an elementwise output may be the very same array as an input (in place);
 *   any other overlap is rejected (::FA_ERR_INVALID_ARGUMENT), because a
 *   thread could then read an element another thread has already overwritten;
 * - row kernels (M4, M5) read scalars, so rows may start anywhere: x needs
 *   only the 4-byte alignment of a float, and the row stride ld is any value
 *   >= cols. Their output must not overlap x.
 *
 * A failing call returns a status and records a message that names the
 * argument, its value and what was expected (see fa_last_error()).
 */
#ifndef PRIMITIVES_H
#define PRIMITIVES_H

#include <stdint.h>

#include "fa_attention_ref.h"
#include "fa_index.h"
#include "fa_math.h"
#include "fa_status.h"

#if FA_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Launch shapes of the stage, shared by the kernels and the CPU model. */
enum {
    PRIMITIVES_ELEMENTWISE_THREADS = 256, /**< threads per block of the M1-M3 kernels */
    PRIMITIVES_VECTOR_FLOATS = 4,         /**< floats per 16-byte vector load or store */
    PRIMITIVES_VECTOR_BYTES = 16,         /**< the alignment the elementwise kernels require */
    PRIMITIVES_ROW_THREADS = 256,         /**< threads per block (one block per row) of M4, M5 */
    PRIMITIVES_WARP_THREADS = FA_WARP_THREADS          /**< lanes of a warp on every NVIDIA GPU */
};

/* ---- validation (plain C) ---------------------------------------------------------------- */

/**
 * Checks the arguments of ref_vector_add() and learner_vector_add() without
 * touching memory.
 * @return FA_OK (also for n = 0, whatever the pointers), or
 *         ::FA_ERR_INVALID_SIZE (n < 0), ::FA_ERR_NULL_POINTER (an array is
 *         NULL while n > 0), ::FA_ERR_OVERFLOW (n * 4 bytes overflows 64 bits),
 *         ::FA_ERR_MISALIGNED (a pointer is not 16-byte aligned) or
 *         ::FA_ERR_INVALID_ARGUMENT (out partially overlaps a or b).
 */
fa_status vector_add_validate(const float *a, const float *b, const float *out, int64_t n);

/**
 * Checks the arguments of ref_scale_array() and learner_scale_array(): as
 * vector_add_validate() for x and out, plus ::FA_ERR_INVALID_ARGUMENT when
 * @p alpha is NaN or infinite, even for n = 0 (a non-finite scale turns every
 * element into NaN or infinity, never what a caller wants from a scale).
 */
fa_status scale_array_validate(const float *x, float alpha, const float *out, int64_t n);

/** Name of the M3 launcher that uses @p method: "exp_accurate", "exp2_prescaled", "exp_fast" ("exp_unknown" otherwise). */
const char *exp_launcher_name(fa_exp_method method);

/**
 * Checks the arguments of the M3 launchers of @p method: as
 * vector_add_validate() for x and out, plus ::FA_ERR_INVALID_ARGUMENT when
 * @p method is not one of the three ::fa_exp_method values, even for n = 0.
 */
fa_status exp_validate(fa_exp_method method, const float *x, const float *out, int64_t n);

/**
 * Checks the arguments of ref_row_max() and learner_row_max() without
 * touching memory.
 * @return FA_OK (also for rows = 0, whatever the pointers), or
 *         ::FA_ERR_INVALID_SIZE (rows or cols < 0), ::FA_ERR_BAD_STRIDE
 *         (ld < cols), ::FA_ERR_UNSUPPORTED (rows above 2^31 - 1, the grid
 *         limit of one block per row), ::FA_ERR_OVERFLOW (the extent of x
 *         overflows 64-bit byte offsets), ::FA_ERR_NULL_POINTER (x NULL while
 *         rows * cols > 0, or out NULL while rows > 0), ::FA_ERR_MISALIGNED
 *         (x or out not 4-byte aligned) or ::FA_ERR_INVALID_ARGUMENT (out
 *         overlaps the rows of x).
 */
fa_status row_max_validate(const float *x, int64_t rows, int64_t cols, int64_t ld,
                           const float *out);

/** Checks the arguments of ref_row_sum() and learner_row_sum(); as row_max_validate(). */
fa_status row_sum_validate(const float *x, int64_t rows, int64_t cols, int64_t ld,
                           const float *out);

#if FA_HAVE_CUDA
/* ---- launchers (CUDA) -------------------------------------------------------------------- */

/**
 * M1: out[i] = a[i] + b[i] for 0 <= i < n, fp32, correctly rounded (one IEEE
 * addition per element, so the result is known bit for bit).
 *
 * @param a       first input, n floats, 16-byte aligned
 * @param b       second input, n floats, 16-byte aligned
 * @param out     output, n floats, 16-byte aligned; may be a or b
 * @param n       any length >= 0 (0 is a no-op that touches nothing)
 * @param stream  the stream the kernel is enqueued on
 * @return as vector_add_validate(), or ::FA_ERR_CUDA / ::FA_ERR_NO_DEVICE when
 *         the launch fails; the learner's twin returns ::FA_ERR_NOT_IMPLEMENTED
 *         until its kernel is written.
 */
fa_status ref_vector_add(const float *a, const float *b, float *out, int64_t n,
                         cudaStream_t stream);
/** The learner's M1, same contract as ref_vector_add(). */
fa_status learner_vector_add(const float *a, const float *b, float *out, int64_t n,
                             cudaStream_t stream);

/**
 * M2: out[i] = alpha * x[i], fp32, correctly rounded.
 *
 * @param x       input, n floats, 16-byte aligned
 * @param alpha   a finite scale
 * @param out     output, n floats, 16-byte aligned; may be x
 * @param n       any length >= 0
 * @param stream  the stream the kernel is enqueued on
 * @return as scale_array_validate(), or a launch failure.
 */
fa_status ref_scale_array(const float *x, float alpha, float *out, int64_t n,
                          cudaStream_t stream);
/** The learner's M2, same contract as ref_scale_array(). */
fa_status learner_scale_array(const float *x, float alpha, float *out, int64_t n,
                              cudaStream_t stream);

/**
 * M3: out[i] = exp(x[i]) in fp32, in three ways that differ in accuracy:
 * - ref_exp_accurate():   `expf(x)`, 2 ulp;
 * - ref_exp2_prescaled(): `exp2f(x * FA_LOG2E_F)`, 2 ulp of exp2 plus the
 *   rounding of the product, a relative error that grows like |x| u;
 * - ref_exp_fast():       `__expf(x)`, 2 + floor(|1.173 x|) ulp. nvcc 13 compiles
 *   it to the same multiply and `ex2.approx` as the prescaled variant (see the
 *   PTX); under `-ftz=true` (part of `--use_fast_math`) results below 2^-126
 *   are flushed to zero.
 *
 * The budgets come from the CUDA C++ Programming Guide's accuracy tables;
 * \ref stage01 derives the bound each check uses. Every variant maps -inf to
 * 0, +inf to +inf, NaN to NaN, and x above ln(FLT_MAX) ~ 88.72 to +inf.
 *
 * @param x       input, n floats, 16-byte aligned
 * @param out     output, n floats, 16-byte aligned; may be x
 * @param n       any length >= 0
 * @param stream  the stream the kernel is enqueued on
 * @return as exp_validate(), or a launch failure.
 */
fa_status ref_exp_accurate(const float *x, float *out, int64_t n, cudaStream_t stream);
/** M3 with `exp2f(x * FA_LOG2E_F)`; contract of ref_exp_accurate(). */
fa_status ref_exp2_prescaled(const float *x, float *out, int64_t n, cudaStream_t stream);
/** M3 with `__expf(x)`; contract of ref_exp_accurate(). */
fa_status ref_exp_fast(const float *x, float *out, int64_t n, cudaStream_t stream);
/** The learner's M3 with `expf`; contract of ref_exp_accurate(). */
fa_status learner_exp_accurate(const float *x, float *out, int64_t n, cudaStream_t stream);
/** The learner's M3 with `exp2f` and a prescaled log2(e); contract of ref_exp_accurate(). */
fa_status learner_exp2_prescaled(const float *x, float *out, int64_t n, cudaStream_t stream);
/** The learner's M3 with `__expf`; contract of ref_exp_accurate(). */
fa_status learner_exp_fast(const float *x, float *out, int64_t n, cudaStream_t stream);

/**
 * M4: out[r] = max over c < cols of x[r * ld + c], one block per row.
 *
 * Edges, chosen to match the double reference (fa_ref_row_max()):
 * - an empty row (cols = 0) and a row of -inf give -inf, the identity of max;
 * - a row holding a NaN gives NaN (unlike `fmaxf`, which drops NaN: a NaN
 *   score must not vanish silently); the other rows are unaffected;
 * - the maximum is exact (max never rounds); a zero maximum may come back as
 *   +0 or -0.
 *
 * @param x       [rows][ld] row-major; the first cols of each row are read
 * @param rows    >= 0, at most 2^31 - 1
 * @param cols    >= 0, any length
 * @param ld      row stride in elements, >= cols
 * @param out     [rows]
 * @param stream  the stream the kernel is enqueued on
 * @return as row_max_validate(), or a launch failure.
 */
fa_status ref_row_max(const float *x, int64_t rows, int64_t cols, int64_t ld, float *out,
                      cudaStream_t stream);
/** The learner's M4, same contract as ref_row_max(). */
fa_status learner_row_max(const float *x, int64_t rows, int64_t cols, int64_t ld, float *out,
                          cudaStream_t stream);

/**
 * M5: out[r] = sum over c < cols of x[r * ld + c] in fp32, one block per row,
 * summed by the reduction tree of \ref stage01 (each of the 256 threads adds
 * its strided slice of the row in order, then each warp and finally the
 * block combine their partial sums pairwise).
 *
 * Error: |out[r] - sum| <= gamma_d * sum |x| with d = ceil(cols / 256) - 1 + 8
 * the depth of that tree (row_sum_depth() in model.h). An empty row gives 0;
 * NaN and infinities follow IEEE arithmetic (a NaN, or +inf together with
 * -inf, gives NaN; +inf alone gives +inf); a finite row whose sum exceeds
 * FLT_MAX overflows to infinity.
 *
 * @param x       [rows][ld] row-major; the first cols of each row are read
 * @param rows    >= 0, at most 2^31 - 1
 * @param cols    >= 0, any length
 * @param ld      row stride in elements, >= cols
 * @param out     [rows]
 * @param stream  the stream the kernel is enqueued on
 * @return as row_sum_validate(), or a launch failure.
 */
fa_status ref_row_sum(const float *x, int64_t rows, int64_t cols, int64_t ld, float *out,
                      cudaStream_t stream);
/** The learner's M5, same contract as ref_row_sum(). */
fa_status learner_row_sum(const float *x, int64_t rows, int64_t cols, int64_t ld, float *out,
                          cudaStream_t stream);
#endif /* FA_HAVE_CUDA */

#ifdef __cplusplus
}
#endif

#endif /* PRIMITIVES_H */
