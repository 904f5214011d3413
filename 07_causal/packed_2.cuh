/**
 * @file packed_2.cuh
 * @brief Version 2's instances for packed batches (sequence.cuh): the
 *        Kernels argument of stage 06's flash2_launch() (launch_2.cuh) that
 *        picks flash2_kernel<..., PACKED = true>. The reference's only, as
 *        packed_1.cuh: the library's fa_attention_forward() includes it.
 */
#ifndef PACKED_2_CUH
#define PACKED_2_CUH

#include "flash_2_tensor_cores.cuh"

/** Version 2's packed instances: blockIdx.z is a sequence of cu_seqlens_q and cu_seqlens_k. */
struct flash2_packed {
    template <typename T, typename TO, int D_PAD, int MT, int BC>
    static constexpr auto kernel = flash2_kernel<T, TO, D_PAD, MT, BC, true>;
};

#endif /* PACKED_2_CUH */
