/**
 * @file forward.cu
 * @brief M24, the launcher's second half: fa_attention_forward() validates
 *        the call and runs the kernel fa_attention_supported() chose
 *        (version 3: forward_hopper.cu); a packed batch (\ref stage07) runs
 *        the reference's packed instances once its offsets are read back
 *        and checked.
 */
#include <stdlib.h>

#include "fa_device.h"
#include "launch_2.cuh"
#include "packed_1.cuh"
#include "packed_2.cuh"

/** The offsets of packed @p p copied into @p host (2 @p count) on @p stream, then checked. */
static fa_status read_and_check(const fa_attention_params *p, int32_t *host, size_t count,
                                cudaStream_t stream)
{
    const size_t bytes = count * sizeof(int32_t);
    FA_CUDA_TRY(cudaMemcpyAsync(host, p->cu_seqlens_q, bytes, cudaMemcpyDeviceToHost, stream));
    FA_CUDA_TRY(cudaMemcpyAsync(host + count, p->cu_seqlens_k, bytes, cudaMemcpyDeviceToHost, stream));
    FA_CUDA_TRY(cudaStreamSynchronize(stream)); /* the copies wait for the stream's work before */
    return flash_check_packed_offsets(p, host, host + count);
}

/** The 2 (batch + 1) offsets of packed @p p read back to the host and checked (one synchronisation). */
static fa_status check_packed(const fa_attention_params *p, cudaStream_t stream)
{
    const size_t count = (size_t)p->batch + 1;
    int32_t *host = static_cast<int32_t *>(malloc(2 * count * sizeof(int32_t)));
    if (host == NULL)
        return fa_fail(FA_ERR_OUT_OF_MEMORY, "fa_attention: %zu offsets of a packed batch on the host",
                       2 * count);
    const fa_status status = read_and_check(p, host, count, stream);
    free(host);
    return status;
}

fa_status fa_attention_forward(const fa_attention_params *p, cudaStream_t stream)
{
    fa_variant variant = FA_VARIANT_AUTO;
    FA_TRY(fa_attention_supported(p, &variant));
    const bool packed = p->cu_seqlens_q != NULL;
    if (packed) {
        if (flash_call_empty(p))
            return FA_OK;
        FA_TRY(check_packed(p, stream));
        if (flash_grid_rows(p) == 0)
            return FA_OK; /* every sequence empty (max_seqlen_q = 0): nothing to launch */
    }
    if (variant == FA_VARIANT_HOPPER)
        return flash3_launch(p, stream);
    if (!packed)
        return ref_flash_forward((int)variant, p, stream);
    return variant == FA_VARIANT_CUDA_CORES ? flash1_launch<flash1_packed>(p, stream)
                                            : flash2_launch<flash2_packed>(p, stream);
}
