/**
 * @file forward_hopper.cu
 * @brief Version 3's launcher, compiled for sm_90a only: which calls it
 *        takes, the tensor maps of q, k and v, and the launch.
 *
 * fa_attention_supported() chooses version 3 where version 2 would run and
 * flash3_refusal() finds nothing against it; fa_attention_forward() then
 * calls flash3_launch().
 */
#include <cudaTypedefs.h>

#include "fa_device.h"
#include "fa_launch.cuh"
#include "flash.h"
#include "flash_3_hopper.cuh"

fa_status flash3_refusal(const fa_attention_params *p, char *why, size_t cap)
{
    if (p->head_dim != 64 && p->head_dim != 128) {
        snprintf(why, cap, "head_dim = %lld (v3 takes 64 and 128)", (long long)p->head_dim);
        return FA_ERR_UNSUPPORTED;
    }
    if (p->o_fp32 || p->mask != FA_MASK_NONE || p->cu_seqlens_q != NULL) {
        snprintf(why, cap, "%s (v3 takes o in the input dtype, mask none, one length per batch)",
                 p->o_fp32 ? "o_fp32" : p->mask != FA_MASK_NONE ? "a mask" : "a packed batch");
        return FA_ERR_UNSUPPORTED;
    }
    /* A tensor map has no dimension of 0, and 32-bit coordinates. */
    if (p->nk == 0 || p->nq > INT32_MAX || p->nk > INT32_MAX) {
        snprintf(why, cap, "nk = %lld, nq = %lld (v3 takes 1 to 2^31 - 1 of each)", (long long)p->nk,
                 (long long)p->nq);
        return FA_ERR_UNSUPPORTED;
    }
    /* A stride of 0 repeats rows, which a tensor map cannot. */
    const fa_strides *const strides[3] = {&p->q_strides, &p->k_strides, &p->v_strides};
    const int64_t heads[3] = {p->heads_q, p->heads_kv, p->heads_kv};
    const int64_t rows[3] = {p->nq, p->nk, p->nk};
    for (int i = 0; i < 3; ++i)
        if ((p->batch > 1 && strides[i]->batch == 0) || (rows[i] > 1 && strides[i]->row == 0) ||
            (heads[i] > 1 && strides[i]->head == 0)) {
            snprintf(why, cap, "a stride of 0 in %s (v3's tensor maps need distinct rows)",
                     i == 0 ? "q" : i == 1 ? "k" : "v");
            return FA_ERR_UNSUPPORTED;
        }
    int device = 0, major = 0, minor = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
        (void)cudaGetLastError(); /* no device: nothing sticky left behind */
        snprintf(why, cap, "no usable device (v3 runs on compute capability 9.0)");
        return FA_ERR_UNSUPPORTED;
    }
    if (major != 9 || minor != 0) {
        snprintf(why, cap, "compute capability %d.%d (v3 runs on 9.0)", major, minor);
        return FA_ERR_UNSUPPORTED;
    }
    return FA_OK;
}

/** cuTensorMapEncodeTiled, a driver function, through the runtime's entry point (no -lcuda). */
static fa_status encode_function(PFN_cuTensorMapEncodeTiled_v12000 *encode)
{
    void *function = NULL;
    cudaDriverEntryPointQueryResult found;
    FA_CUDA_TRY(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function, 12000,
                                                 cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || function == NULL)
        return fa_fail(FA_ERR_CUDA, "fa_attention: v3: the driver has no cuTensorMapEncodeTiled");
    *encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(function);
    return FA_OK;
}

/**
 * The tensor map of one input: dimensions (column, head, row, batch) with
 * the tensor's strides in bytes, boxes of 64 columns (128 bytes, the swizzle's
 * span) by @p box_rows rows. A dimension of extent 1 takes any stride; it is
 * given one TMA accepts (a multiple of 16 bytes).
 */
static fa_status tensor_map(CUtensorMap *map, PFN_cuTensorMapEncodeTiled_v12000 encode,
                            const char *name, const void *data, fa_dtype dtype, int64_t batch,
                            int64_t rows, int64_t heads, int64_t head_dim, fa_strides strides,
                            int box_rows)
{
    const cuuint64_t row_bytes = (cuuint64_t)head_dim * 2;
    const cuuint64_t dims[4] = {(cuuint64_t)head_dim, (cuuint64_t)heads, (cuuint64_t)rows,
                                (cuuint64_t)batch};
    const cuuint64_t bytes[3] = {heads > 1 ? (cuuint64_t)strides.head * 2 : row_bytes,
                                 rows > 1 ? (cuuint64_t)strides.row * 2 : row_bytes,
                                 batch > 1 ? (cuuint64_t)strides.batch * 2 : row_bytes};
    const cuuint32_t box[4] = {FLASH3_COLUMNS, 1, (cuuint32_t)box_rows, 1};
    const cuuint32_t element_strides[4] = {1, 1, 1, 1};
    const CUresult result = encode(
        map, dtype == FA_F16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4,
        const_cast<void *>(data), dims, bytes, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
        CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (result != CUDA_SUCCESS)
        return fa_fail(FA_ERR_CUDA, "fa_attention: v3: cuTensorMapEncodeTiled(%s) failed (CUresult %d)",
                       name, (int)result);
    return FA_OK;
}

template <typename T, int D>
static fa_status launch3(const fa_attention_params *p, const CUtensorMap maps[3], cudaStream_t stream)
{
    const size_t bytes = flash3_shared_bytes(D);
    FA_TRY(fa_shared_memory_opt_in(flash3_kernel<T, D>, bytes, "fa_attention: v3"));
    const dim3 grid((unsigned)fa_ceil_div(p->nq, FLASH3_BR), (unsigned)p->heads_q, (unsigned)p->batch);
    flash3_kernel<T, D><<<grid, FLASH3_THREADS, bytes, stream>>>(maps[0], maps[1], maps[2], *p,
                                                                fa_attention_scale(p));
    FA_LAUNCH_CHECK();
    return FA_OK;
}

fa_status flash3_launch(const fa_attention_params *p, cudaStream_t stream)
{
    if (p->batch == 0 || p->heads_q == 0 || p->nq == 0)
        return FA_OK;
    PFN_cuTensorMapEncodeTiled_v12000 encode = NULL;
    FA_TRY(encode_function(&encode));
    CUtensorMap maps[3];
    FA_TRY(tensor_map(&maps[0], encode, "q", p->q, p->dtype, p->batch, p->nq, p->heads_q,
                      p->head_dim, p->q_strides, FLASH3_BOX_ROWS));
    FA_TRY(tensor_map(&maps[1], encode, "k", p->k, p->dtype, p->batch, p->nk, p->heads_kv,
                      p->head_dim, p->k_strides, FLASH3_BC));
    FA_TRY(tensor_map(&maps[2], encode, "v", p->v, p->dtype, p->batch, p->nk, p->heads_kv,
                      p->head_dim, p->v_strides, FLASH3_BC));
    if (p->dtype == FA_F16)
        return p->head_dim == 64 ? launch3<__half, 64>(p, maps, stream)
                                 : launch3<__half, 128>(p, maps, stream);
    return p->head_dim == 64 ? launch3<__nv_bfloat16, 64>(p, maps, stream)
                             : launch3<__nv_bfloat16, 128>(p, maps, stream);
}
