/**
 * @file fa_device.h
 * @brief The CUDA part of common/: error checking, GPU detection, buffers.
 *
 * Host C code over the CUDA runtime. Every CUDA call in the course goes
 * through FA_CUDA_TRY, which turns a failure into an ::fa_status and a message
 * that names the failing expression, the file and the line; every launch is
 * followed by FA_LAUNCH_CHECK().
 */
#ifndef FA_DEVICE_H
#define FA_DEVICE_H

#include <stdbool.h>
#include <stddef.h>

#include <cuda_runtime_api.h>

#include "fa_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Converts a CUDA error into a status and records "expr failed at file:line:
 * message". Out-of-memory becomes FA_ERR_OUT_OF_MEMORY, "no device" and "driver
 * too old" become FA_ERR_NO_DEVICE, anything else FA_ERR_CUDA.
 */
fa_status fa_cuda_fail(cudaError_t error, const char *expr, const char *file, int line);

/** Returns from the enclosing function with a status when a CUDA call fails. */
#define FA_CUDA_TRY(expr)                                                   \
    do {                                                                    \
        cudaError_t fa_cuda_error_ = (expr);                                \
        if (fa_cuda_error_ != cudaSuccess)                                  \
            return fa_cuda_fail(fa_cuda_error_, #expr, __FILE__, __LINE__); \
    } while (0)

/** Checks the launch that just happened (bad configuration, no kernel image). */
#define FA_LAUNCH_CHECK() FA_CUDA_TRY(cudaGetLastError())

/**
 * True when a CUDA device can run kernels. Otherwise writes why into @p why
 * (may be NULL): no device and an insufficient driver both mean "skip".
 */
bool fa_gpu_usable(char *why, size_t cap);

/**
 * For GPU test programs: when no GPU is usable, prints "<program>: skipped,
 * <why>" and returns true (the program then exits FA_EXIT_SKIP).
 */
bool fa_gpu_skip(const char *program);

/** cudaMalloc that reports the size on failure; *ptr is NULL for 0 bytes. */
fa_status fa_device_alloc(void **ptr, size_t bytes);

/** cudaFree of a pointer from fa_device_alloc (NULL is a no-op). */
void fa_device_free(void *ptr);

/** Fills a device buffer with FA_POISON_BYTE (see fa_check.h). */
fa_status fa_device_poison(void *ptr, size_t bytes);

/** Host to device copy, synchronous. */
fa_status fa_upload(void *device_dst, const void *host_src, size_t bytes);

/** Device to host copy, synchronous (so it also reports a kernel's asynchronous fault). */
fa_status fa_download(void *host_dst, const void *device_src, size_t bytes);

/** Allocates, then uploads @p bytes from @p host_src. */
fa_status fa_device_copy_of(void **device_dst, const void *host_src, size_t bytes);

/** True when @p ptr is a multiple of @p alignment bytes. */
static inline bool fa_is_aligned(const void *ptr, size_t alignment)
{
    return ((size_t)ptr % alignment) == 0;
}

#ifdef __cplusplus
}
#endif

#endif /* FA_DEVICE_H */
