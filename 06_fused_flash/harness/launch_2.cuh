/**
 * @file launch_2.cuh
 * @brief The launcher of version 2 of the fused kernel, written once: shared
 *        memory and the instance for the dtype, output type and head
 *        dimension, for a call fa_attention_supported() has validated.
 *
 * Included by stage 06's launch.cu, over the kernel set on the include path
 * (flash2_kernel<T, TO, D_PAD, MT, BC>: the reference's or the learner's).
 * Which instance runs is a template argument, Kernels: flash2_plain below,
 * or flash2_packed (packed_2.cuh of \ref stage07) for a packed batch.
 */
#ifndef FLASH_LAUNCH_2_CUH
#define FLASH_LAUNCH_2_CUH

#include "launch_1.cuh"
#include "flash_2_tensor_cores.cuh"

/** Version 2's instances for a batch of sequences of one length (the reference's or the learner's). */
struct flash2_plain {
    template <typename T, typename TO, int D_PAD, int MT, int BC>
    static constexpr auto kernel = flash2_kernel<T, TO, D_PAD, MT, BC>;
};

template <typename Kernels, typename T, typename TO, int D_PAD>
static fa_status launch2(const fa_attention_params *p, float scale, cudaStream_t stream)
{
    constexpr int MT = flash2_mt(D_PAD), BC = flash2_bc(D_PAD);
    static_assert(flash2_br(D_PAD) <= 2 * BC || sizeof(TO) == 2,
                  "an fp32 O tile is staged in the Q, K and V tiles' shared memory");
    const size_t bytes = flash2_shared_bytes(D_PAD);
    const auto kernel = Kernels::template kernel<T, TO, D_PAD, MT, BC>;
    FA_TRY(fa_shared_memory_opt_in(kernel, bytes, "fa_attention: v2"));
    kernel<<<grid_of(p, flash2_br(D_PAD)), FLASH2_THREADS, bytes, stream>>>(*p, scale);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

/** Version 2: rows of d_pad elements, d rounded up to a multiple of 32 (tile2_row_elements()). */
template <typename Kernels, typename T, typename TO>
static fa_status launch2_head_dim(const fa_attention_params *p, float scale, cudaStream_t stream)
{
    switch (tile2_row_elements((int)p->head_dim)) {
    case 32: return launch2<Kernels, T, TO, 32>(p, scale, stream);
    case 64: return launch2<Kernels, T, TO, 64>(p, scale, stream);
    case 96: return launch2<Kernels, T, TO, 96>(p, scale, stream);
    case 128: return launch2<Kernels, T, TO, 128>(p, scale, stream);
    case 160: return launch2<Kernels, T, TO, 160>(p, scale, stream);
    case 192: return launch2<Kernels, T, TO, 192>(p, scale, stream);
    case 224: return launch2<Kernels, T, TO, 224>(p, scale, stream);
    default: return launch2<Kernels, T, TO, FLASH2_MAX_D>(p, scale, stream);
    }
}

/** The output type: the input type, or fp32 when asked. */
template <typename Kernels, typename T>
static fa_status launch2_output(const fa_attention_params *p, float scale, cudaStream_t stream)
{
    return p->o_fp32 ? launch2_head_dim<Kernels, T, float>(p, scale, stream)
                     : launch2_head_dim<Kernels, T, T>(p, scale, stream);
}

/** Version 2 on @p p (bf16 or fp16, validated). */
template <typename Kernels = flash2_plain>
static fa_status flash2_launch(const fa_attention_params *p, cudaStream_t stream)
{
    const float scale = fa_attention_scale(p);
    return p->dtype == FA_F16 ? launch2_output<Kernels, __half>(p, scale, stream)
                              : launch2_output<Kernels, __nv_bfloat16>(p, scale, stream);
}

#endif /* FLASH_LAUNCH_2_CUH */
