/** @file runners.c @brief The stage-02 launches: on host data through canaries, and for timing. */
#include "runners.h"

#include <stdlib.h>
#include <string.h>

#include "fa_check.h"
#include "fa_device.h"

const char *const matmul_version_names[MATMUL_VERSIONS] = {"naive", "smem_tiled",
                                                            "register_blocked", "mma_bf16"};
const char *const transpose_version_names[TRANSPOSE_VERSIONS] = {"naive", "smem_tiled"};

/** The launchers of each version, indexed [version - 1][fa_impl]. */
typedef fa_status (*matmul_fp32_launcher)(const float *, const float *, float *, int64_t, int64_t,
                                          int64_t, fa_b_layout, cudaStream_t);
typedef fa_status (*transpose_launcher)(const float *, float *, int64_t, int64_t, cudaStream_t);

static const matmul_fp32_launcher matmul_fp32_launchers[MATMUL_VERSIONS - 1][2] = {
    {ref_matmul_naive, learner_matmul_naive},
    {ref_matmul_smem_tiled, learner_matmul_smem_tiled},
    {ref_matmul_register_blocked, learner_matmul_register_blocked},
};
static const transpose_launcher transpose_launchers[TRANSPOSE_VERSIONS][2] = {
    {ref_transpose_naive, learner_transpose_naive},
    {ref_transpose_smem_tiled, learner_transpose_smem_tiled},
};

const char *matmul_launcher_name(int version)
{
    static const char *const names[MATMUL_VERSIONS] = {"matmul_naive", "matmul_smem_tiled",
                                                       "matmul_register_blocked",
                                                       "matmul_mma_bf16"};
    return version >= 1 && version <= MATMUL_VERSIONS ? names[version - 1] : "matmul_unknown";
}

const char *transpose_launcher_name(int version)
{
    static const char *const names[TRANSPOSE_VERSIONS] = {"transpose_naive",
                                                          "transpose_smem_tiled"};
    return version >= 1 && version <= TRANSPOSE_VERSIONS ? names[version - 1]
                                                         : "transpose_unknown";
}

bool matmul_version_is_bf16(int version)
{
    return version == MATMUL_VERSIONS;
}

fa_status dot_launch(fa_impl impl, const void *x, const void *y, fa_dtype dtype, int64_t n,
                     float *partials, float *result, cudaStream_t stream)
{
    return (impl == FA_IMPL_LEARNER ? learner_dot_product : ref_dot_product)(x, y, dtype, n,
                                                                            partials, result,
                                                                            stream);
}

fa_status matmul_launch(int version, fa_impl impl, const void *a, const void *b, float *c,
                        int64_t m, int64_t n, int64_t k, fa_b_layout layout,
                        cudaStream_t stream)
{
    if (version < 1 || version > MATMUL_VERSIONS)
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "stage02: matmul version %d, expected 1..%d",
                       version, MATMUL_VERSIONS);
    if (matmul_version_is_bf16(version))
        return (impl == FA_IMPL_LEARNER ? learner_matmul_mma_bf16 : ref_matmul_mma_bf16)(
            a, b, c, m, n, k, layout, stream);
    return matmul_fp32_launchers[version - 1][impl](a, b, c, m, n, k, layout, stream);
}

fa_status transpose_launch(int version, fa_impl impl, const float *in, float *out, int64_t rows,
                           int64_t cols, cudaStream_t stream)
{
    if (version < 1 || version > TRANSPOSE_VERSIONS)
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "stage02: transpose version %d, expected 1..%d",
                       version, TRANSPOSE_VERSIONS);
    return transpose_launchers[version - 1][impl](in, out, rows, cols, stream);
}

/**
 * Uploads @p bytes from @p host @p offset bytes into a fresh device buffer
 * (*base, freed by the caller), followed by the canaries; *data is where the
 * bytes start. The @p offset bytes before them hold the poison too, so a
 * kernel that reads before the start of an input also turns outputs NaN.
 */
static fa_status upload_at(void **base, void **data, const void *host, size_t bytes,
                           size_t offset)
{
    *base = *data = NULL;
    if (offset == 0) {
        FA_TRY(fa_canary_input(base, host, bytes));
        *data = *base;
        return FA_OK;
    }
    unsigned char *staged = malloc(offset + bytes);
    if (staged == NULL)
        return fa_fail(FA_ERR_OUT_OF_MEMORY, "stage02: no host memory for %zu bytes",
                       offset + bytes);
    fa_poison_host(staged, offset);
    if (bytes > 0)
        memcpy(staged + offset, host, bytes);
    const fa_status status = fa_canary_input(base, staged, offset + bytes);
    free(staged);
    *data = (unsigned char *)*base + offset;
    return status;
}

fa_status dot_run_on_host(fa_impl impl, const void *x, const void *y, fa_dtype dtype, int64_t n,
                          float results[2], int64_t *overwritten)
{
    const size_t bytes = (size_t)n * (size_t)fa_dtype_size(dtype);
    const size_t partial_bytes = DOT_PRODUCT_MAX_PARTIALS * sizeof(float);
    void *d_x = NULL, *d_y = NULL, *partials = NULL, *result = NULL;
    float ignored[DOT_PRODUCT_MAX_PARTIALS];
    fa_status status = fa_canary_input(&d_x, x, bytes);
    if (status == FA_OK)
        status = fa_canary_input(&d_y, y, bytes);
    if (status == FA_OK)
        status = fa_canary_output(&partials, partial_bytes);
    if (status == FA_OK)
        status = fa_canary_output(&result, sizeof(float));
    for (int run = 0; run < 2 && status == FA_OK; ++run) {
        status = dot_launch(impl, d_x, d_y, dtype, n, partials, result, 0);
        if (status == FA_OK)
            status = fa_canary_download(&results[run], result, sizeof(float), overwritten);
    }
    if (status == FA_OK) /* the partials themselves are workspace: only their canaries count */
        status = fa_canary_download(ignored, partials, partial_bytes, overwritten);
    fa_device_free(d_x);
    fa_device_free(d_y);
    fa_device_free(partials);
    fa_device_free(result);
    return status;
}

fa_status matmul_run_on_host(int version, fa_impl impl, const void *a, const void *b,
                             size_t element_size, int64_t m, int64_t n, int64_t k,
                             fa_b_layout layout, int offset, float *c, int64_t *overwritten)
{
    const size_t shift = (size_t)offset * element_size;
    const size_t c_bytes = (size_t)(m * n) * sizeof(float);
    void *a_base = NULL, *b_base = NULL, *d_a = NULL, *d_b = NULL, *d_c = NULL;
    fa_status status = upload_at(&a_base, &d_a, a, (size_t)(m * k) * element_size, shift);
    if (status == FA_OK)
        status = upload_at(&b_base, &d_b, b, (size_t)(k * n) * element_size, shift);
    if (status == FA_OK)
        status = fa_canary_output(&d_c, c_bytes);
    if (status == FA_OK)
        status = matmul_launch(version, impl, d_a, d_b, m * n > 0 ? d_c : NULL, m, n, k, layout,
                               0);
    if (status == FA_OK)
        status = fa_canary_download(c, d_c, c_bytes, overwritten);
    fa_device_free(a_base);
    fa_device_free(b_base);
    fa_device_free(d_c);
    return status;
}

fa_status transpose_run_on_host(int version, fa_impl impl, const float *in, int64_t rows,
                                int64_t cols, float *out, int64_t *overwritten)
{
    const size_t bytes = (size_t)(rows * cols) * sizeof(float);
    void *d_in = NULL, *d_out = NULL;
    fa_status status = fa_canary_input(&d_in, in, bytes);
    if (status == FA_OK)
        status = fa_canary_output(&d_out, bytes);
    if (status == FA_OK)
        status = transpose_launch(version, impl, d_in, bytes > 0 ? d_out : NULL, rows, cols, 0);
    if (status == FA_OK)
        status = fa_canary_download(out, d_out, bytes, overwritten);
    fa_device_free(d_in);
    fa_device_free(d_out);
    return status;
}

fa_status timing_array(void **device, size_t bytes)
{
    FA_TRY(fa_device_alloc(device, bytes));
    const cudaError_t error = cudaMemset(*device, 0x3C, bytes);
    if (error != cudaSuccess) {
        fa_device_free(*device);
        *device = NULL;
        return fa_cuda_fail(error, "cudaMemset(timing array, 0x3C)", __FILE__, __LINE__);
    }
    return FA_OK;
}

fa_status matmul_timed(void *context, int rep, cudaStream_t stream)
{
    (void)rep; /* operands of MiBs to tens of MiBs, flushed from L2 between repetitions */
    const matmul_timed_run *r = context;
    return matmul_launch(r->version, r->impl, r->a, r->b, r->c, r->m, r->n, r->k, r->layout,
                         stream);
}

fa_status transpose_timed(void *context, int rep, cudaStream_t stream)
{
    (void)rep;
    const transpose_timed_run *r = context;
    return transpose_launch(r->version, r->impl, r->in, r->out, r->rows, r->cols, stream);
}

fa_status dot_timed(void *context, int rep, cudaStream_t stream)
{
    (void)rep;
    const dot_timed_run *r = context;
    return dot_launch(r->impl, r->x, r->y, r->dtype, r->n, r->partials, r->result, stream);
}
