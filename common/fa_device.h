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

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "fa_half.h"
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

/** Whether kernels can run here. */
typedef enum fa_gpu_state {
    FA_GPU_USABLE = 0, /**< a device is there and a context was created on it */
    FA_GPU_ABSENT,     /**< no NVIDIA driver, a driver too old, or no device: GPU work is skipped */
    FA_GPU_BROKEN      /**< anything else (a device that fails): GPU work fails, never skips */
} fa_gpu_state;

/**
 * Classifies what the CUDA runtime answered: @p count_error and @p count from
 * cudaGetDeviceCount(), @p context_error from creating a context (only read
 * when a device was counted), @p driver_version from cudaDriverGetVersion()
 * (0: no driver installed) and @p runtime_version from
 * cudaRuntimeGetVersion(). Writes the reason into @p why (may be NULL):
 * "no NVIDIA driver", "driver too old (...)", "no device", or the error.
 * Pure, so it is tested without a GPU.
 */
fa_gpu_state fa_gpu_classify(cudaError_t count_error, int count, cudaError_t context_error,
                             int driver_version, int runtime_version, char *why, size_t cap);

/** Asks the runtime and classifies its answers (fa_gpu_classify()). */
fa_gpu_state fa_gpu_state_of(char *why, size_t cap);

/**
 * The gate of a GPU test program: 0 when the GPU is usable; otherwise prints
 * "<program>: skipped, <why>" and returns FA_EXIT_SKIP (77) when the GPU is
 * absent, or "<program>: FAILED, <why>" and returns 1 when it is broken.
 */
int fa_gpu_gate(const char *program);

/** cudaMalloc that reports the size on failure; *ptr is NULL for 0 bytes. */
FA_MUST_CHECK fa_status fa_device_alloc(void **ptr, size_t bytes);

/** cudaFree of a pointer from fa_device_alloc (NULL is a no-op). */
void fa_device_free(void *ptr);

/** Fills a device buffer with FA_POISON_BYTE (see fa_check.h). */
FA_MUST_CHECK fa_status fa_device_poison(void *ptr, size_t bytes);

/** Host to device copy, synchronous. */
FA_MUST_CHECK fa_status fa_upload(void *device_dst, const void *host_src, size_t bytes);

/** Device to host copy, synchronous (so it also reports a kernel's asynchronous fault). */
FA_MUST_CHECK fa_status fa_download(void *host_dst, const void *device_src, size_t bytes);

/** Allocates, then uploads @p bytes from @p host_src. */
FA_MUST_CHECK fa_status fa_device_copy_of(void **device_dst, const void *host_src, size_t bytes);

/**
 * Fills @p count elements of @p dtype at @p device with normal(0, 1) values
 * rounded to @p dtype, for the inputs of a timing: 2^20 values drawn from
 * @p seed, repeated (drawing gigabytes from the rng would take long, and
 * inputs of zeros can time faster than real data).
 */
FA_MUST_CHECK fa_status fa_device_fill_normal(void *device, fa_dtype dtype, int64_t count,
                                              uint64_t seed);

/**
 * Poisoned bytes after every device buffer a check allocates (inputs and
 * outputs alike). After an input they read as NaN (0xFFFFFFFF, 0xFFFF), so a
 * kernel that reads past the end of an input turns its output NaN; after an
 * output, a canary that lost the poison is a write out of bounds.
 */
enum { FA_CANARY_BYTES = 256 /**< bytes of poison after each device buffer of a check */ };

/**
 * A device copy of @p bytes bytes from @p host, followed by ::FA_CANARY_BYTES
 * of poison. *device is NULL for an empty input (0 bytes or @p host NULL),
 * which the launchers accept.
 */
FA_MUST_CHECK fa_status fa_canary_input(void **device, const void *host, size_t bytes);

/** A device output of @p bytes bytes plus the canaries, all poisoned (allocated even when empty). */
FA_MUST_CHECK fa_status fa_canary_output(void **device, size_t bytes);

/**
 * Downloads the @p bytes bytes of an output made by fa_canary_output() into
 * @p host and adds to *@p overwritten the number of canary bytes after it that
 * no longer hold the poison (0 unless the kernel wrote out of bounds).
 */
FA_MUST_CHECK fa_status fa_canary_download(void *host, const void *device, size_t bytes,
                                           int64_t *overwritten);

#ifdef __cplusplus
}
#endif

#endif /* FA_DEVICE_H */
