/**
 * @file launch_1.cuh
 * @brief The launcher of version 1 of the fused kernel, written once: grid,
 *        shared memory and the instance for the dtype, output type and head
 *        dimension, for a call fa_attention_supported() has validated.
 *
 * Included by stage 06's launch.cu, and by stage 07's, which compiles the
 * reference version 1 kernel against the learner's M25 (key_tiles.cuh): the
 * kernel is found by include path, flash1_kernel<T, TO, D_MAX>. Which
 * instance of it runs is a template argument, Kernels: flash1_plain below,
 * or flash1_packed (packed_1.cuh of \ref stage07) for a packed batch.
 */
#ifndef FLASH_LAUNCH_1_CUH
#define FLASH_LAUNCH_1_CUH

#include <stdint.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "fa_bytes.h"
#include "fa_device.h"
#include "fa_index.h"
#include "fa_launch.cuh"
#include "flash.h"
#include "flash_1_cuda_cores.cuh"

/**
 * One block per (query tile, head, sequence): grid x, y, z. A packed batch
 * has the query tiles of its longest sequence (flash_grid_rows()); the
 * blocks past a shorter one's rows return at once.
 */
static dim3 grid_of(const fa_attention_params *p, int rows_per_block)
{
    return dim3((unsigned)fa_ceil_div(flash_grid_rows(p), rows_per_block), (unsigned)p->heads_q,
                (unsigned)p->batch);
}

/** Version 1's instances for a batch of sequences of one length (the reference's or the learner's). */
struct flash1_plain {
    template <typename T, typename TO, int D_MAX>
    static constexpr auto kernel = flash1_kernel<T, TO, D_MAX>;
};

template <typename Kernels, typename T, typename TO, int D_MAX>
static fa_status launch1(const fa_attention_params *p, float scale, cudaStream_t stream)
{
    /* 16-byte loads need whole 16-byte rows, each starting on 16 bytes. */
    const int64_t element_bytes = (int64_t)sizeof(T);
    const fa_strides q = flash_strides_used(p, p->q_strides), k = flash_strides_used(p, p->k_strides),
                     v = flash_strides_used(p, p->v_strides);
    const bool vector_loads = p->head_dim % (16 / element_bytes) == 0 &&
                              flash_rows_16_aligned(p->q, &q, element_bytes) &&
                              flash_rows_16_aligned(p->k, &k, element_bytes) &&
                              flash_rows_16_aligned(p->v, &v, element_bytes);
    const size_t bytes = tile1_shared_bytes(D_MAX);
    const auto kernel = Kernels::template kernel<T, TO, D_MAX>;
    FA_TRY(fa_shared_memory_opt_in(kernel, bytes, "fa_attention: v1"));
    kernel<<<grid_of(p, TILE1_BR), TILE1_THREADS, bytes, stream>>>(*p, scale, vector_loads);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

template <typename Kernels, typename T, typename TO>
static fa_status launch1_head_dim(const fa_attention_params *p, float scale, cudaStream_t stream)
{
    if (p->head_dim <= 64)
        return launch1<Kernels, T, TO, 64>(p, scale, stream);
    if (p->head_dim <= 128)
        return launch1<Kernels, T, TO, 128>(p, scale, stream);
    return launch1<Kernels, T, TO, TILE1_MAX_D>(p, scale, stream);
}

/** The output type: the input type, or fp32 when asked. */
template <typename Kernels, typename T>
static fa_status launch1_output(const fa_attention_params *p, float scale, cudaStream_t stream)
{
    return p->o_fp32 ? launch1_head_dim<Kernels, T, float>(p, scale, stream)
                     : launch1_head_dim<Kernels, T, T>(p, scale, stream);
}

/** Version 1 on @p p: every dtype (fp32 inputs give an fp32 output either way). */
template <typename Kernels = flash1_plain>
static fa_status flash1_launch(const fa_attention_params *p, cudaStream_t stream)
{
    const float scale = fa_attention_scale(p);
    switch (p->dtype) {
    case FA_BF16: return launch1_output<Kernels, __nv_bfloat16>(p, scale, stream);
    case FA_F16: return launch1_output<Kernels, __half>(p, scale, stream);
    case FA_F32: break;
    }
    return launch1_head_dim<Kernels, float, float>(p, scale, stream);
}

#endif /* FLASH_LAUNCH_1_CUH */
