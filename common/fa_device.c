/** @file fa_device.c @brief CUDA error conversion, GPU detection and device buffers. */
#include "fa_device.h"

#include <stdio.h>

#include "fa_check.h"

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

bool fa_gpu_usable(char *why, size_t cap)
{
    int count = 0;
    cudaError_t error = cudaGetDeviceCount(&count);
    if (error == cudaSuccess && count > 0) {
        /* A device is listed; make sure a context can really be created on it. */
        error = cudaFree(NULL);
        if (error == cudaSuccess)
            return true;
    }
    if (why != NULL && cap > 0) {
        if (error == cudaSuccess)
            snprintf(why, cap, "no CUDA device found");
        else
            snprintf(why, cap, "%s", cudaGetErrorString(error));
    }
    return false;
}

bool fa_gpu_skip(const char *program)
{
    char why[256] = "";
    if (fa_gpu_usable(why, sizeof why))
        return false;
    printf("%s: skipped, %s\n", program, why);
    return true;
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
