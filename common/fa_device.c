/** @file fa_device.c @brief CUDA error conversion, GPU detection and device buffers. */
#include "fa_device.h"

#include <stdio.h>
#include <stdlib.h>

#include "fa_check.h"
#include "fa_rng.h"
#include "fa_test.h"

fa_status fa_cuda_fail(cudaError_t error, const char *expr, const char *file, int line)
{
    fa_status status = FA_ERR_CUDA;
    if (error == cudaErrorMemoryAllocation)
        status = FA_ERR_OUT_OF_MEMORY;
    else if (error == cudaErrorNoDevice || error == cudaErrorInsufficientDriver)
        status = FA_ERR_NO_DEVICE;
    return fa_fail(status, "%s failed at %s:%d: %s (%s)", expr, file, line,
                   cudaGetErrorString(error), cudaGetErrorName(error));
}

fa_gpu_state fa_gpu_classify(cudaError_t count_error, int count, cudaError_t context_error,
                             int driver_version, int runtime_version, char *why, size_t cap)
{
    char scratch[8];
    if (why == NULL || cap == 0) {
        why = scratch;
        cap = sizeof scratch;
    }
    if (driver_version == 0) {
        snprintf(why, cap, "no NVIDIA driver");
        return FA_GPU_ABSENT;
    }
    if (count_error == cudaErrorInsufficientDriver) {
        snprintf(why, cap,
                 "driver too old: it supports CUDA %d.%d, this build needs CUDA %d.%d or a "
                 "driver with its compatibility",
                 driver_version / 1000, driver_version % 1000 / 10, runtime_version / 1000,
                 runtime_version % 1000 / 10);
        return FA_GPU_ABSENT;
    }
    if (count_error == cudaErrorNoDevice || (count_error == cudaSuccess && count == 0)) {
        snprintf(why, cap, "no device");
        return FA_GPU_ABSENT;
    }
    const cudaError_t error = count_error != cudaSuccess ? count_error : context_error;
    if (error == cudaSuccess)
        return FA_GPU_USABLE;
    snprintf(why, cap, "%s (%s)", cudaGetErrorString(error), cudaGetErrorName(error));
    return FA_GPU_BROKEN;
}

fa_gpu_state fa_gpu_state_of(char *why, size_t cap)
{
    int count = 0, driver_version = 0, runtime_version = 0;
    cudaDriverGetVersion(&driver_version);
    cudaRuntimeGetVersion(&runtime_version);
    const cudaError_t count_error = cudaGetDeviceCount(&count);
    /* A device is listed; make sure a context can really be created on it. */
    const cudaError_t context_error =
        count_error == cudaSuccess && count > 0 ? cudaFree(NULL) : cudaSuccess;
    cudaGetLastError(); /* the answers above are read; none may linger as the last error */
    return fa_gpu_classify(count_error, count, context_error, driver_version, runtime_version,
                           why, cap);
}

int fa_gpu_gate(const char *program)
{
    char why[256] = "";
    switch (fa_gpu_state_of(why, sizeof why)) {
    case FA_GPU_USABLE: return 0;
    case FA_GPU_ABSENT: printf("%s: skipped, %s\n", program, why); return FA_EXIT_SKIP;
    case FA_GPU_BROKEN: break;
    }
    printf("%s: FAILED, the GPU cannot be used: %s\n", program, why);
    return 1;
}

fa_status fa_device_alloc(void **ptr, size_t bytes)
{
    if (ptr == NULL)
        return fa_fail(FA_ERR_NULL_POINTER, "fa_device_alloc: ptr is NULL");
    *ptr = NULL;
    if (bytes == 0)
        return FA_OK;
    cudaError_t error = cudaMalloc(ptr, bytes);
    if (error != cudaSuccess) {
        *ptr = NULL;
        /* A failed allocation is not sticky, but it stays the "last error":
         * clear it so the next launch check does not report it again. */
        cudaGetLastError();
        fa_status status = fa_cuda_fail(error, "cudaMalloc", __FILE__, __LINE__);
        return fa_fail(status, "cudaMalloc of %zu bytes failed: %s", bytes,
                       cudaGetErrorString(error));
    }
    return FA_OK;
}

void fa_device_free(void *ptr)
{
    if (ptr != NULL)
        cudaFree(ptr);
}

fa_status fa_device_poison(void *ptr, size_t bytes)
{
    if (bytes == 0)
        return FA_OK;
    FA_CUDA_TRY(cudaMemset(ptr, FA_POISON_BYTE, bytes));
    return FA_OK;
}

fa_status fa_upload(void *device_dst, const void *host_src, size_t bytes)
{
    if (bytes == 0)
        return FA_OK;
    FA_CUDA_TRY(cudaMemcpy(device_dst, host_src, bytes, cudaMemcpyHostToDevice));
    return FA_OK;
}

fa_status fa_download(void *host_dst, const void *device_src, size_t bytes)
{
    /* Synchronise first so a fault of the kernel that wrote the buffer is
     * reported here, at the copy, rather than at some later call. */
    FA_CUDA_TRY(cudaDeviceSynchronize());
    if (bytes == 0)
        return FA_OK;
    FA_CUDA_TRY(cudaMemcpy(host_dst, device_src, bytes, cudaMemcpyDeviceToHost));
    return FA_OK;
}

fa_status fa_device_copy_of(void **device_dst, const void *host_src, size_t bytes)
{
    FA_TRY(fa_device_alloc(device_dst, bytes));
    fa_status status = fa_upload(*device_dst, host_src, bytes);
    if (status != FA_OK) {
        fa_device_free(*device_dst);
        *device_dst = NULL;
    }
    return status;
}

/** Values of the pattern fa_device_fill_normal() repeats. */
enum { FILL_PATTERN_ELEMENTS = 1 << 20 };

fa_status fa_device_fill_normal(void *device, fa_dtype dtype, int64_t count, uint64_t seed)
{
    const size_t size = (size_t)fa_dtype_size(dtype);
    float *values = malloc(FILL_PATTERN_ELEMENTS * sizeof(float));
    void *pattern = malloc(FILL_PATTERN_ELEMENTS * size);
    fa_status status = FA_OK;
    if (values == NULL || pattern == NULL) {
        status = fa_fail(FA_ERR_OUT_OF_MEMORY, "fa_device_fill_normal: no host memory for %d "
                         "values", FILL_PATTERN_ELEMENTS);
    } else {
        fa_rng rng;
        fa_rng_seed(&rng, seed, 0);
        fa_fill(values, FILL_PATTERN_ELEMENTS, FA_FILL_GAUSSIAN, 1.0, &rng);
        for (int i = 0; i < FILL_PATTERN_ELEMENTS; ++i)
            fa_store(pattern, dtype, i, values[i]);
    }
    for (int64_t done = 0; done < count && status == FA_OK; done += FILL_PATTERN_ELEMENTS) {
        const int64_t part = count - done < FILL_PATTERN_ELEMENTS ? count - done
                                                                  : FILL_PATTERN_ELEMENTS;
        status = fa_upload((char *)device + (size_t)done * size, pattern, (size_t)part * size);
    }
    free(values);
    free(pattern);
    return status;
}

fa_status fa_canary_input(void **device, const void *host, size_t bytes)
{
    *device = NULL;
    if (bytes == 0 || host == NULL)
        return FA_OK;
    FA_TRY(fa_canary_output(device, bytes));
    const fa_status status = fa_upload(*device, host, bytes);
    if (status != FA_OK) {
        fa_device_free(*device);
        *device = NULL;
    }
    return status;
}

fa_status fa_canary_output(void **device, size_t bytes)
{
    FA_TRY(fa_device_alloc(device, bytes + FA_CANARY_BYTES));
    const fa_status status = fa_device_poison(*device, bytes + FA_CANARY_BYTES);
    if (status != FA_OK) {
        fa_device_free(*device);
        *device = NULL;
    }
    return status;
}

fa_status fa_canary_download(void *host, const void *device, size_t bytes, int64_t *overwritten)
{
    unsigned char canaries[FA_CANARY_BYTES];
    FA_TRY(fa_download(host, device, bytes));
    FA_TRY(fa_download(canaries, (const unsigned char *)device + bytes, sizeof canaries));
    for (int i = 0; i < FA_CANARY_BYTES; ++i)
        *overwritten += canaries[i] != FA_POISON_BYTE;
    return FA_OK;
}
