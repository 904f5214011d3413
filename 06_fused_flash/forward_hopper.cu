/**
 * @file forward_hopper.cu
 * @brief Version 3's launcher, compiled for sm_90a only: which calls it
 *        takes, the tensor maps of q, k and v, and the launch.
 *
 * fa_attention_supported() (flashattn.c) takes version 3, asked for by name
 * or by FA_VARIANT_AUTO, when the call is one it runs and
 * flash3_device_check() finds a device of compute capability 9.0;
 * fa_attention_forward() then calls flash3_launch().
 */
#include <cudaTypedefs.h>

#include "fa_device.h"
#include "fa_launch.cuh"
#include "flash.h"
#include "flash_3_hopper.cuh"

/** The current device's compute capability; a failing query's error taken off the runtime. */
static fa_status compute_capability(int *major, int *minor, int *device)
{
    FA_CUDA_TRY(cudaGetDevice(device));
    FA_CUDA_TRY(cudaDeviceGetAttribute(major, cudaDevAttrComputeCapabilityMajor, *device));
    FA_CUDA_TRY(cudaDeviceGetAttribute(minor, cudaDevAttrComputeCapabilityMinor, *device));
    return FA_OK;
}

fa_status flash3_device_check(void)
{
    int device = 0, major = 0, minor = 0;
    const fa_status status = compute_capability(&major, &minor, &device);
    if (status != FA_OK) {
        (void)cudaGetLastError(); /* the caller's next cudaGetLastError() is not about this */
        return status;
    }
    if (major != 9 || minor != 0)
        return fa_fail(FA_ERR_UNSUPPORTED, "device %d has compute capability %d.%d (v3 runs on 9.0)",
                       device, major, minor);
    return FA_OK;
}

/** cuTensorMapEncodeTiled, a driver function, through the runtime's entry point (no -lcuda). */
static fa_status encode_function(PFN_cuTensorMapEncodeTiled_v12000 *encode)
{
    static PFN_cuTensorMapEncodeTiled_v12000 found_before = NULL; /* the driver's, for good */
    if (found_before == NULL) {
        void *function = NULL;
        cudaDriverEntryPointQueryResult found;
#if CUDART_VERSION >= 12050
        FA_CUDA_TRY(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function, 12000,
                                                     cudaEnableDefault, &found));
#else
        FA_CUDA_TRY(cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &function, cudaEnableDefault,
                                            &found));
#endif
        if (found != cudaDriverEntryPointSuccess || function == NULL)
            return fa_fail(FA_ERR_CUDA, "fa_attention: v3: the driver has no cuTensorMapEncodeTiled");
        found_before = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(function);
    }
    *encode = found_before;
    return FA_OK;
}

/**
 * The tensor map of one input: dimensions (column, head, row, batch) with
 * the tensor's strides in bytes, boxes of 64 columns (128 bytes, the swizzle's
 * span) by @p box_rows rows; a box's columns past @p head_dim, like its rows
 * past @p rows, land as zeros. A dimension of extent 1 takes any stride; it is
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

/** At most this many blocks (0: one per SM): flash3_limit_blocks(). */
static int block_limit = 0;

void flash3_limit_blocks(int blocks)
{
    block_limit = blocks;
}

/**
 * The launch of flash3_kernel<T, D, C, PACKED>: persistent, about a block per
 * SM (flash3_grid_blocks()), or one per work item where there are fewer.
 */
template <typename T, int D, int C, bool PACKED>
static fa_status launch3(const fa_attention_params *p, const CUtensorMap maps[3], cudaStream_t stream)
{
    const size_t bytes = flash3_shared_bytes(D, C);
    FA_TRY(fa_shared_memory_opt_in(flash3_kernel<T, D, C, PACKED>, bytes, "fa_attention: v3"));
    int device = 0, sms = 0;
    FA_CUDA_TRY(cudaGetDevice(&device));
    FA_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    const int q_tiles = (int)fa_ceil_div(flash_grid_rows(p), flash3_br(C));
    const int64_t items = flash3_items(p->batch, p->heads_q, q_tiles);
    if (items == 0)
        return FA_OK; /* a packed batch whose longest sequence has no rows */
    const unsigned blocks = (unsigned)flash3_grid_blocks(items, q_tiles, sms, block_limit);
    flash3_kernel<T, D, C, PACKED><<<blocks, flash3_threads(C), bytes, stream>>>(
        maps[0], maps[1], maps[2], *p, fa_attention_scale(p), q_tiles);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

/** launch3() of rows of D elements with C consumers for the call's batch kind. */
template <typename T, int D, int C>
static fa_status launch3_packed_or_not(const fa_attention_params *p, const CUtensorMap maps[3],
                                       cudaStream_t stream)
{
    return p->cu_seqlens_q != NULL ? launch3<T, D, C, true>(p, maps, stream)
                                   : launch3<T, D, C, false>(p, maps, stream);
}

/** launch3() for the call's rows (flash3_row_elements()), consumers (flash3_consumers()) and batch kind. */
template <typename T>
static fa_status launch3_for(const fa_attention_params *p, const CUtensorMap maps[3], cudaStream_t stream)
{
    switch (flash3_row_elements((int)p->head_dim)) {
    case 64:
        return flash3_consumers((int)p->head_dim, p->mask, flash_grid_rows(p)) == 3
                   ? launch3_packed_or_not<T, 64, 3>(p, maps, stream)
                   : launch3_packed_or_not<T, 64, 2>(p, maps, stream);
    case 128: return launch3_packed_or_not<T, 128, 2>(p, maps, stream);
    case 192: return launch3_packed_or_not<T, 192, 2>(p, maps, stream);
    default: return launch3_packed_or_not<T, 256, 2>(p, maps, stream); /* 256, the widest */
    }
}

fa_status flash3_launch(const fa_attention_params *p, cudaStream_t stream)
{
    if (flash_call_empty(p))
        return FA_OK;
    PFN_cuTensorMapEncodeTiled_v12000 encode = NULL;
    FA_TRY(encode_function(&encode));
    CUtensorMap maps[3];
    const int bc = flash3_bc(flash3_row_elements((int)p->head_dim));
    const int64_t entries = flash_batch_entries(p); /* a packed batch: one entry of all rows */
    FA_TRY(tensor_map(&maps[0], encode, "q", p->q, p->dtype, entries, p->nq, p->heads_q,
                      p->head_dim, p->q_strides, FLASH3_BOX_ROWS));
    FA_TRY(tensor_map(&maps[1], encode, "k", p->k, p->dtype, entries, p->nk, p->heads_kv,
                      p->head_dim, p->k_strides, bc));
    FA_TRY(tensor_map(&maps[2], encode, "v", p->v, p->dtype, entries, p->nk, p->heads_kv,
                      p->head_dim, p->v_strides, bc));
    return p->dtype == FA_F16 ? launch3_for<__half>(p, maps, stream)
                              : launch3_for<__nv_bfloat16>(p, maps, stream);
}
