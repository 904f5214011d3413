/**
 * @file launch.cu
 * @brief The launcher of stage 05's traces, written once: it validates the
 *        problem (validate.c), picks the trace kernel for the milestone,
 *        version, input dtype and head dimension, sets its shared memory
 *        and launches one block per query tile and head.
 *
 * Compiled twice (common/stage.cmake): against the reference blocks
 * (tiles_1_cuda_cores.cuh, tiles_2_tensor_cores.cuh), giving
 * ref_tile_trace(), and against the learner's files of the same names,
 * giving learner_tile_trace(). The trace kernels themselves are harness
 * (traces.cuh): they only arrange the blocks and write what they produced.
 */
#include <stdint.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "fa_bytes.h"
#include "fa_device.h"
#include "fa_index.h"
#include "fa_launch.cuh"
#include "tiles.h"

/* The kernel set: the reference's blocks or the learner's (include path). */
#include "tiles_1_cuda_cores.cuh"
#include "tiles_2_tensor_cores.cuh"

#include "traces.cuh"

/**
 * Milestone @p milestone of version @p VERSION needs its own block and those
 * of every milestone before it: the first one still marked FA_TODO says so.
 */
template <int VERSION>
static fa_status todo_up_to(int milestone)
{
    FA_TRY(fa_todo_status<17, VERSION>());
    if (milestone >= 18)
        FA_TRY(fa_todo_status<18, VERSION>());
    if (milestone >= 19)
        FA_TRY(fa_todo_status<19, VERSION>());
    if (milestone >= 20)
        FA_TRY(fa_todo_status<20, VERSION>());
    if (milestone >= 21)
        FA_TRY(fa_todo_status<21, VERSION>());
    if (milestone >= 22)
        FA_TRY(fa_todo_status<22, VERSION>());
    return FA_OK;
}

template <typename T, int D_MAX, int MILESTONE>
static fa_status launch1(const tile_problem *p, const tile_trace *out, cudaStream_t stream)
{
    /* 16-byte loads need whole chunks per row and a 16-byte aligned tensor. */
    const int vector = 16 / (int)sizeof(T);
    const bool vector_loads = p->d % vector == 0 && fa_is_aligned(p->q, 16) &&
                              fa_is_aligned(p->k, 16) && fa_is_aligned(p->v, 16);
    const size_t bytes = tile1_shared_bytes(D_MAX);
    FA_TRY(fa_shared_memory_opt_in(trace1_kernel<T, D_MAX, MILESTONE>, bytes,
                                   "tile_trace: version 1"));
    const dim3 grid((unsigned)tile_query_tiles(1, p->nq), (unsigned)p->heads);
    trace1_kernel<T, D_MAX, MILESTONE><<<grid, TILE1_THREADS, bytes, stream>>>(*p, *out,
                                                                               vector_loads);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

template <typename T, int D_PAD, int MILESTONE>
static fa_status launch2(const tile_problem *p, const tile_trace *out, cudaStream_t stream)
{
    const size_t bytes = tile2_shared_bytes(D_PAD);
    FA_TRY(fa_shared_memory_opt_in(trace2_kernel<T, D_PAD, MILESTONE>, bytes,
                                   "tile_trace: version 2"));
    const dim3 grid((unsigned)tile_query_tiles(2, p->nq), (unsigned)p->heads);
    trace2_kernel<T, D_PAD, MILESTONE><<<grid, TILE2_THREADS, bytes, stream>>>(*p, *out);
    FA_LAUNCH_CHECK();
    return FA_OK;
}

/** Version 1: the smallest of D_MAX = 64, 128, 256 that holds d. */
template <typename T, int MILESTONE>
static fa_status launch1_head_dim(const tile_problem *p, const tile_trace *out,
                                  cudaStream_t stream)
{
    if (p->d <= 64)
        return launch1<T, 64, MILESTONE>(p, out, stream);
    if (p->d <= 128)
        return launch1<T, 128, MILESTONE>(p, out, stream);
    return launch1<T, TILE1_MAX_D, MILESTONE>(p, out, stream);
}

/**
 * Version 2: rows of D_PAD = 64 or 128 elements, the smaller that holds d
 * (the stage's blocks at two widths; stage 06 compiles one per multiple of
 * 32, tile2_row_elements()).
 */
template <typename T, int MILESTONE>
static fa_status launch2_head_dim(const tile_problem *p, const tile_trace *out,
                                  cudaStream_t stream)
{
    if (p->d <= 64)
        return launch2<T, 64, MILESTONE>(p, out, stream);
    return launch2<T, TILE2_MAX_D, MILESTONE>(p, out, stream);
}

template <int MILESTONE>
static fa_status launch_milestone(int version, const tile_problem *p, const tile_trace *out,
                                  cudaStream_t stream)
{
    if (version == 1) {
        switch (p->dtype) {
        case FA_F32: return launch1_head_dim<float, MILESTONE>(p, out, stream);
        case FA_BF16: return launch1_head_dim<__nv_bfloat16, MILESTONE>(p, out, stream);
        case FA_F16: return launch1_head_dim<__half, MILESTONE>(p, out, stream);
        }
    } else {
        switch (p->dtype) {
        case FA_BF16: return launch2_head_dim<__nv_bfloat16, MILESTONE>(p, out, stream);
        case FA_F16: return launch2_head_dim<__half, MILESTONE>(p, out, stream);
        case FA_F32: break;
        }
    }
    return tile_trace_validate(MILESTONE, version, p, out); /* unreachable after validation */
}

fa_status FA_LAUNCHER(tile_trace)(int milestone, int version, const tile_problem *problem,
                                  const tile_trace *trace, cudaStream_t stream)
{
    if (version == 1 || version == 2)
        FA_TRY(version == 1 ? todo_up_to<1>(milestone) : todo_up_to<2>(milestone));
    FA_TRY(tile_trace_validate(milestone, version, problem, trace));
    if (problem->heads == 0 || problem->nq == 0)
        return FA_OK;
    switch (milestone) {
    case 17: return launch_milestone<17>(version, problem, trace, stream);
    case 18: return launch_milestone<18>(version, problem, trace, stream);
    case 19: return launch_milestone<19>(version, problem, trace, stream);
    case 20: return launch_milestone<20>(version, problem, trace, stream);
    case 21: return launch_milestone<21>(version, problem, trace, stream);
    default: return launch_milestone<22>(version, problem, trace, stream);
    }
}
