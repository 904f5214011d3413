/**
 * @file packed_1.cuh
 * @brief Version 1's instances for packed batches (sequence.cuh): the
 *        Kernels argument of stage 06's flash1_launch() (launch_1.cuh) that
 *        picks flash1_kernel<..., PACKED = true>.
 *
 * Only the reference's kernels have the PACKED parameter: the library's
 * fa_attention_forward() (forward.cu) and M25's launcher (harness/launch.cu,
 * the reference's version 1 over the learner's key tiles) include this file;
 * stage 06's learner kernels never meet it. packed_2.cuh is version 2's.
 */
#ifndef PACKED_1_CUH
#define PACKED_1_CUH

#include "flash_1_cuda_cores.cuh"

/** Version 1's packed instances: blockIdx.z is a sequence of cu_seqlens_q and cu_seqlens_k. */
struct flash1_packed {
    template <typename T, typename TO, int D_MAX>
    static constexpr auto kernel = flash1_kernel<T, TO, D_MAX, true>;
};

#endif /* PACKED_1_CUH */
