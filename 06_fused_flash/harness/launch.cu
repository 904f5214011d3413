/**
 * @file launch.cu
 * @brief The launchers of stage 06's fused kernels, written once: grid,
 *        shared memory and the instance for the dtype, output type and head
 *        dimension, for arguments fa_attention_supported() has validated.
 *
 * Compiled twice (common/stage.cmake): against the reference kernels
 * (flash_1_cuda_cores.cuh, flash_2_tensor_cores.cuh), giving
 * ref_flash_forward(), which the library's fa_attention_forward() calls, and
 * against the learner's files of the same names, giving
 * learner_flash_forward(). The kernel set provides flash1_kernel<T, TO,
 * D_MAX> (launched by launch_1.cuh) and flash2_kernel<T, TO, D_PAD, MT, BC>.
 */

/* The kernel set: the reference's fused kernels or the learner's (include path). */
#include "launch_1.cuh"
#include "flash_2_tensor_cores.cuh"

template <typename T, typename TO, int D_PAD>
static fa_status launch2(const fa_attention_params *p, float scale, cudaStream_t stream)
{
    constexpr int MT = flash2_mt(D_PAD), BC = flash2_bc(D_PAD);
    static_assert(flash2_br(D_PAD) <= 2 * BC || sizeof(TO) == 2,
                  "an fp32 O tile is staged in the Q, K and V tiles' shared memory");
    const size_t bytes = flash2_shared_bytes(D_PAD);
    FA_TRY(fa_shared_memory_opt_in(flash2_kernel<T, TO, D_PAD, MT, BC>, bytes, "fa_attention: v2"));
    flash2_kernel<T, TO, D_PAD, MT, BC>
        <<<grid_of(p, flash2_br(D_PAD)), FLASH2_THREADS, bytes, stream>>>(*p, scale);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

/** Version 2: rows of d_pad = 64, 128, 192 or 256 elements (tile2_row_elements()). */
template <typename T, typename TO>
static fa_status launch2_head_dim(const fa_attention_params *p, float scale, cudaStream_t stream)
{
    switch (tile2_row_elements((int)p->head_dim)) {
    case 64: return launch2<T, TO, 64>(p, scale, stream);
    case 128: return launch2<T, TO, 128>(p, scale, stream);
    case 192: return launch2<T, TO, 192>(p, scale, stream);
    default: return launch2<T, TO, FLASH2_MAX_D>(p, scale, stream);
    }
}

/** Version 2 on @p p (bf16 or fp16, validated): the output type, the input type or fp32. */
template <typename T>
static fa_status launch2_output(const fa_attention_params *p, float scale, cudaStream_t stream)
{
    return p->o_fp32 ? launch2_head_dim<T, float>(p, scale, stream)
                     : launch2_head_dim<T, T>(p, scale, stream);
}

fa_status FA_LAUNCHER(flash_forward)(int version, const fa_attention_params *p,
                                     cudaStream_t stream)
{
    FA_TRY(version == 1 ? fa_todo_status<23, 1>() : fa_todo_status<23, 2>());
    if (p->batch == 0 || p->heads_q == 0 || p->nq == 0)
        return FA_OK;
    if (version == 1)
        return flash1_launch(p, stream);
    const float scale = fa_attention_scale(p);
    return p->dtype == FA_F16 ? launch2_output<__half>(p, scale, stream)
                              : launch2_output<__nv_bfloat16>(p, scale, stream);
}
