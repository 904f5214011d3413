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
 * D_MAX> and flash2_kernel<T, TO, D_PAD, MT, BC>.
 */
#include <stdint.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "fa_bytes.h"
#include "fa_device.h"
#include "fa_index.h"
#include "fa_launch.cuh"
#include "flash.h"

/* The kernel set: the reference's fused kernels or the learner's (include path). */
#include "flash_1_cuda_cores.cuh"
#include "flash_2_tensor_cores.cuh"

/** One block per (query tile, head, batch): grid x, y, z. */
static dim3 grid_of(const fa_attention_params *p, int rows_per_block)
{
    return dim3((unsigned)fa_ceil_div(p->nq, rows_per_block), (unsigned)p->heads_q,
                (unsigned)p->batch);
}

template <typename T, typename TO, int D_MAX>
static fa_status launch1(const fa_attention_params *p, float scale, cudaStream_t stream)
{
    /* 16-byte loads need whole 16-byte rows, each starting on 16 bytes. */
    const int64_t element_bytes = (int64_t)sizeof(T);
    const bool vector_loads = p->head_dim % (16 / element_bytes) == 0 &&
                              flash_rows_16_aligned(p->q, &p->q_strides, element_bytes) &&
                              flash_rows_16_aligned(p->k, &p->k_strides, element_bytes) &&
                              flash_rows_16_aligned(p->v, &p->v_strides, element_bytes);
    const size_t bytes = tile1_shared_bytes(D_MAX);
    FA_TRY(fa_shared_memory_opt_in(flash1_kernel<T, TO, D_MAX>, bytes, "fa_attention: v1"));
    flash1_kernel<T, TO, D_MAX><<<grid_of(p, TILE1_BR), TILE1_THREADS, bytes, stream>>>(
        *p, scale, vector_loads);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

template <typename T, typename TO>
static fa_status launch1_head_dim(const fa_attention_params *p, float scale, cudaStream_t stream)
{
    if (p->head_dim <= 64)
        return launch1<T, TO, 64>(p, scale, stream);
    if (p->head_dim <= 128)
        return launch1<T, TO, 128>(p, scale, stream);
    return launch1<T, TO, TILE1_MAX_D>(p, scale, stream);
}

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

/** The output type: the input type, or fp32 when asked. */
template <typename T>
static fa_status launch_version(int version, const fa_attention_params *p, float scale,
                                cudaStream_t stream)
{
    if (version == 1)
        return p->o_fp32 ? launch1_head_dim<T, float>(p, scale, stream)
                         : launch1_head_dim<T, T>(p, scale, stream);
    return p->o_fp32 ? launch2_head_dim<T, float>(p, scale, stream)
                     : launch2_head_dim<T, T>(p, scale, stream);
}

fa_status FA_LAUNCHER(flash_forward)(int version, const fa_attention_params *p,
                                     cudaStream_t stream)
{
    FA_TRY(version == 1 ? fa_todo_status<23, 1>() : fa_todo_status<23, 2>());
    if (p->batch == 0 || p->heads_q == 0 || p->nq == 0)
        return FA_OK;
    const float scale = fa_attention_scale(p);
    switch (p->dtype) {
    case FA_BF16: return launch_version<__nv_bfloat16>(version, p, scale, stream);
    case FA_F16: return launch_version<__half>(version, p, scale, stream);
    case FA_F32: break;
    }
    /* fp32 runs on version 1 only (validated): its output is fp32 either way. */
    return launch1_head_dim<float, float>(p, scale, stream);
}
