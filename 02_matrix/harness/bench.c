/**
 * @file bench.c
 * @brief Stage 02 benchmark: matmul against cuBLAS, dot product and transpose
 *        against the copy bandwidth, all measured in the same run.
 *
 * cuBLAS is column-major. A row-major [M][N] matrix is the column-major
 * [N][M] matrix of the same bytes, i.e. its transpose, so the row-major
 * C = A * B is computed as the column-major C^T = B^T * A^T: cuBLAS gets
 * (B, A) in that order with m = N, n = M. For NT, B is stored [N][K], which
 * column-major is B^T already, so cuBLAS is asked to transpose it back
 * (CUBLAS_OP_T). The fp32 baseline is cublasSgemm in the default math mode
 * (true fp32 FFMA; TF32 tensor cores are not enabled), the bf16 baseline
 * cublasGemmEx with bf16 inputs, fp32 output and CUBLAS_COMPUTE_32F.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "checks.h"
#include "fa_device.h"
#include "fa_half.h"
#include "fa_rng.h"
#include "fa_timing.h"
#include "matrix.h"
#include "runners.h"

/** Square matmul sizes of the table. */
static const int64_t bench_sizes[] = {1024, 2048, 4096};
enum { BENCH_SIZES = (int)(sizeof bench_sizes / sizeof bench_sizes[0]), BENCH_MAX_SIZE = 4096 };
/** Bytes copied to measure the copy bandwidth (and the memory-bound problem size). */
#define BENCH_COPY_BYTES ((size_t)256 << 20)
/** Target time spent timing one kernel at one size; the repeat count follows from it. */
#define BENCH_BUDGET_MS 1500.0
enum { BENCH_MIN_REPEATS = 5, BENCH_MAX_REPEATS = 50 };

static fa_status cublas_try(cublasStatus_t status, const char *what)
{
    if (status == CUBLAS_STATUS_SUCCESS)
        return FA_OK;
    return fa_fail(FA_ERR_CUDA, "%s failed with cuBLAS status %d", what, (int)status);
}

/**
 * What one timed matmul runs, the table's rows in order: cuBLAS SGEMM,
 * cuBLAS GemmEx bf16, then versions 1..MATMUL_VERSIONS of the reference.
 */
enum { CUBLAS_SGEMM, CUBLAS_BF16, CUBLAS_ROWS, CONTENDERS = CUBLAS_ROWS + MATMUL_VERSIONS };

/** The matmul version of row @p who (a row after the cuBLAS ones). */
static int contender_version(int who)
{
    return who - CUBLAS_ROWS + 1;
}

static const char *contender_name(int who)
{
    if (who == CUBLAS_SGEMM)
        return "cuBLAS SGEMM";
    if (who == CUBLAS_BF16)
        return "cuBLAS GemmEx bf16";
    return matmul_launcher_name(contender_version(who));
}

static bool contender_is_bf16(int who)
{
    return who == CUBLAS_BF16 ||
           (who >= CUBLAS_ROWS && matmul_version_is_bf16(contender_version(who)));
}

/** Context of one timed matmul. */
typedef struct matmul_run {
    int who;                   /**< the row: CUBLAS_SGEMM, CUBLAS_BF16, or a version of ours */
    cublasHandle_t handle;
    const float *a, *b;        /**< fp32 inputs */
    const uint16_t *a16, *b16; /**< bf16 inputs */
    float *c;
    int64_t size;
    fa_b_layout layout;
} matmul_run;

static fa_status matmul_run_work(void *context, int rep, cudaStream_t stream)
{
    (void)rep;
    const matmul_run *r = context;
    const int s = (int)r->size, m = s, n = s, k = s;
    const float one = 1.0f, zero = 0.0f;
    /* Column-major C^T [n x m] = B^T [n x k] * A^T [k x m]; lda = k, ldc = n. */
    const cublasOperation_t b_op = r->layout == FA_B_ROW_MAJOR ? CUBLAS_OP_N : CUBLAS_OP_T;
    const int ldb = r->layout == FA_B_ROW_MAJOR ? n : k;
    if (r->who == CUBLAS_SGEMM) {
        FA_TRY(cublas_try(cublasSetStream(r->handle, stream), "cublasSetStream"));
        return cublas_try(cublasSgemm(r->handle, b_op, CUBLAS_OP_N, n, m, k, &one, r->b, ldb, r->a,
                                      k, &zero, r->c, n),
                          "cublasSgemm");
    }
    if (r->who == CUBLAS_BF16) {
        FA_TRY(cublas_try(cublasSetStream(r->handle, stream), "cublasSetStream"));
        return cublas_try(cublasGemmEx(r->handle, b_op, CUBLAS_OP_N, n, m, k, &one, r->b16,
                                       CUDA_R_16BF, ldb, r->a16, CUDA_R_16BF, k, &zero, r->c,
                                       CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                          "cublasGemmEx");
    }
    const bool bf16 = contender_is_bf16(r->who);
    return matmul_launch(contender_version(r->who), FA_IMPL_REFERENCE,
                         bf16 ? (const void *)r->a16 : r->a,
                         bf16 ? (const void *)r->b16 : r->b, r->c, s, s, s, r->layout, stream);
}

/** Times @p work: one run to size the repeat count, then the measurement (L2 flushed). */
static fa_status time_budgeted(fa_gpu_work work, void *context, fa_stats *stats)
{
    fa_timing_options probe = fa_timing_defaults();
    probe.warmup = 1;
    probe.repeats = 1;
    FA_TRY(fa_time_gpu(work, context, &probe, stats));
    fa_timing_options options = fa_timing_defaults();
    int repeats = stats->median > 0.0 ? (int)(BENCH_BUDGET_MS / stats->median) : BENCH_MAX_REPEATS;
    repeats = repeats < BENCH_MIN_REPEATS ? BENCH_MIN_REPEATS : repeats;
    options.repeats = repeats > BENCH_MAX_REPEATS ? BENCH_MAX_REPEATS : repeats;
    options.warmup = options.repeats < options.warmup ? options.repeats : options.warmup;
    return fa_time_gpu(work, context, &options, stats);
}

/** The matmul table: every contender at every size, NN and NT. */
static fa_status bench_matmul(cublasHandle_t handle, const fa_run_options *options)
{
    const int64_t count = (int64_t)BENCH_MAX_SIZE * BENCH_MAX_SIZE;
    float *host = malloc((size_t)count * sizeof *host);
    uint16_t *host16 = malloc((size_t)count * sizeof *host16);
    void *a = NULL, *b = NULL, *a16 = NULL, *b16 = NULL, *c = NULL;
    fa_status status = host != NULL && host16 != NULL
                           ? FA_OK
                           : fa_fail(FA_ERR_OUT_OF_MEMORY, "host buffers for the matmul bench");
    fa_rng rng;
    fa_rng_seed(&rng, options->seed, 900);
    /* Random operands (constant ones would understate the tensor cores' power draw). */
    for (int operand = 0; operand < 2 && status == FA_OK; ++operand) {
        fa_fill(host, count, FA_FILL_UNIFORM, 1.0, &rng);
        for (int64_t i = 0; i < count; ++i)
            host16[i] = fa_float_to_bf16(host[i]);
        status = fa_device_copy_of(operand == 0 ? &a : &b, host, (size_t)count * sizeof *host);
        if (status == FA_OK)
            status = fa_device_copy_of(operand == 0 ? &a16 : &b16, host16,
                                       (size_t)count * sizeof *host16);
    }
    free(host);
    free(host16);
    if (status == FA_OK)
        status = fa_device_alloc(&c, (size_t)count * sizeof(float));

    if (status == FA_OK) {
        printf("\nM7 matmul, C[M][N] = A[M][K] * B, M = N = K; fp32 rows against cuBLAS SGEMM, "
               "bf16 -> fp32 rows against cuBLAS GemmEx (CUBLAS_COMPUTE_32F), same layout\n");
        printf("| size | B | kernel | inputs | median ms | spread | TFLOP/s | %% of cuBLAS |\n");
        printf("|---|---|---|---|---|---|---|---|\n");
    }
    for (int si = 0; si < BENCH_SIZES && status == FA_OK; ++si) {
        const int64_t s = bench_sizes[si];
        const double flops = 2.0 * (double)s * (double)s * (double)s;
        for (int l = 0; l < 2 && status == FA_OK; ++l) {
            const fa_b_layout layout = l == 0 ? FA_B_ROW_MAJOR : FA_B_TRANSPOSED;
            double baseline[2] = {0.0, 0.0}; /* [bf16?] TFLOP/s of cuBLAS */
            for (int who = 0; who < CONTENDERS && status == FA_OK; ++who) {
                matmul_run run = {who, handle, a, b, a16, b16, c, s, layout};
                fa_stats stats;
                status = time_budgeted(matmul_run_work, &run, &stats);
                if (status != FA_OK)
                    break;
                const bool bf16 = contender_is_bf16(who);
                const double tflops = flops / (stats.median * 1e-3) / 1e12;
                if (who < CUBLAS_ROWS)
                    baseline[bf16] = tflops;
                printf("| %lld^3 | %s | %s | %s | %.3f | %.1f%% | %.1f | %.1f%% |\n",
                       (long long)s, layout == FA_B_ROW_MAJOR ? "NN" : "NT",
                       contender_name(who), bf16 ? "bf16" : "fp32", stats.median,
                       100.0 * stats.spread, tflops, 100.0 * tflops / baseline[bf16]);
                fflush(stdout);
            }
        }
    }
    fa_device_free(a);
    fa_device_free(b);
    fa_device_free(a16);
    fa_device_free(b16);
    fa_device_free(c);
    return status;
}

/** Dot products and transposes of 256 MiB per operand, against the copy bandwidth. */
static fa_status bench_memory_bound(double copy_gbs)
{
    void *x = NULL, *y = NULL, *partials = NULL, *result = NULL;
    fa_status status = timing_array(&x, BENCH_COPY_BYTES);
    if (status == FA_OK)
        status = timing_array(&y, BENCH_COPY_BYTES);
    if (status == FA_OK)
        status = fa_device_alloc(&partials, DOT_PRODUCT_MAX_PARTIALS * sizeof(float));
    if (status == FA_OK)
        status = fa_device_alloc(&result, sizeof(float));

    if (status == FA_OK) {
        printf("\nM6 dot product (256 MiB per vector, bytes = both vectors read once) and "
               "M8 transpose (bytes = read + written), against the copy bandwidth\n");
        printf("| kernel | problem | median ms | spread | GB/s | %% of copy |\n");
        printf("|---|---|---|---|---|---|\n");
    }
    const fa_dtype dtypes[] = {FA_F32, FA_BF16, FA_F16};
    for (int d = 0; d < 3 && status == FA_OK; ++d) {
        const int64_t n = (int64_t)(BENCH_COPY_BYTES / (size_t)fa_dtype_size(dtypes[d]));
        dot_timed_run run = {FA_IMPL_REFERENCE, x, y, dtypes[d], n, partials, result};
        fa_stats stats;
        status = time_budgeted(dot_timed, &run, &stats);
        if (status == FA_OK) {
            const double gbs = 2.0 * (double)BENCH_COPY_BYTES / (stats.median * 1e-3) / 1e9;
            printf("| dot_product | %s n = %lld | %.3f | %.1f%% | %.0f | %.1f%% |\n",
                   fa_dtype_name(dtypes[d]), (long long)n, stats.median, 100.0 * stats.spread,
                   gbs, 100.0 * gbs / copy_gbs);
        }
    }
    /* Square, and odd sides that are multiples of nothing (same 256 MiB within 0.1%). */
    const int64_t shapes[][2] = {{8192, 8192}, {8191, 8193}, {1, 67108864 - 1}};
    for (int s = 0; s < 3 && status == FA_OK; ++s)
        for (int version = 1; version <= TRANSPOSE_VERSIONS && status == FA_OK; ++version) {
            const int64_t rows = shapes[s][0], cols = shapes[s][1];
            transpose_timed_run run = {version, FA_IMPL_REFERENCE, x, y, rows, cols};
            fa_stats stats;
            status = time_budgeted(transpose_timed, &run, &stats);
            if (status == FA_OK) {
                const double bytes = 2.0 * (double)rows * (double)cols * sizeof(float);
                const double gbs = bytes / (stats.median * 1e-3) / 1e9;
                printf("| %s | %lld x %lld fp32 | %.3f | %.1f%% | %.0f | %.1f%% |\n",
                       transpose_launcher_name(version), (long long)rows,
                       (long long)cols, stats.median, 100.0 * stats.spread, gbs,
                       100.0 * gbs / copy_gbs);
            }
        }
    fa_device_free(x);
    fa_device_free(y);
    fa_device_free(partials);
    fa_device_free(result);
    return status;
}

fa_status stage02_bench(const fa_run_options *options)
{
    double copy_gbs = 0.0;
    FA_TRY(fa_bench_begin(BENCH_COPY_BYTES, &copy_gbs));
    printf("timing: CUDA events, median of 5 to 50 repeats after warm-up, L2 flushed before "
           "each repeat; reference kernels\n");
    FA_TRY(bench_memory_bound(copy_gbs));
    cublasHandle_t handle = NULL;
    FA_TRY(cublas_try(cublasCreate(&handle), "cublasCreate"));
    fa_status status = cublas_try(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH),
                                  "cublasSetMathMode");
    if (status == FA_OK)
        status = bench_matmul(handle, options);
    cublasDestroy(handle);
    return status;
}
