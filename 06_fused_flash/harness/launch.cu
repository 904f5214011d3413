/**
 * @file launch.cu
 * @brief The launchers of stage 06's fused kernels (launch_1.cuh,
 *        launch_2.cuh: grid, shared memory and the instance for the dtype,
 *        output type and head dimension), for calls fa_attention_supported()
 *        has validated.
 *
 * Compiled twice (common/stage.cmake): against the reference kernels
 * (flash_1_cuda_cores.cuh, flash_2_tensor_cores.cuh), giving
 * ref_flash_forward(), which the library's fa_attention_forward() calls, and
 * against the learner's files of the same names, giving
 * learner_flash_forward(). The kernel set provides flash1_kernel<T, TO,
 * D_MAX> and flash2_kernel<T, TO, D_PAD, MT, BC>. Packed batches run the
 * reference's packed instances (forward.cu), not these.
 */

/* The kernel set: the reference's fused kernels or the learner's (include path). */
#include "launch_2.cuh"

fa_status FA_LAUNCHER(flash_forward)(int version, const fa_attention_params *p,
                                     cudaStream_t stream)
{
    FA_TRY(version == 1 ? fa_todo_status<23, 1>() : fa_todo_status<23, 2>());
    if (p->cu_seqlens_q != NULL)
        return fa_fail(FA_ERR_UNSUPPORTED,
                       "fa_attention: cu_seqlens_q = %p: stage 06's launcher runs plain batches; "
                       "a packed batch runs through fa_attention_forward()",
                       (const void *)p->cu_seqlens_q);
    if (flash_call_empty(p))
        return FA_OK;
    return version == 1 ? flash1_launch(p, stream) : flash2_launch(p, stream);
}
