/**
 * @file fa_launch.cuh
 * @brief How one launch code serves two kernel sets: the reference's and the
 *        learner's.
 *
 * A stage's launchers (validation, grid, launch, error check) are written once,
 * in `harness/launch.cu`, against kernel names. The build compiles that file
 * twice: once with the reference kernels (`NN_stage/<file>.cu`) on the include
 * path, once with the learner's (`learner/<file>.cu`, same names), so the
 * learner's kernels always run under exactly the reference's launch. The two
 * objects differ in the prefix of their launchers, set by FA_LAUNCHER():
 * `ref_vector_add` and `learner_vector_add`.
 *
 * A kernel the learner has not written yet is marked in the learner's file by
 * one line at file scope, `FA_TODO(1);` (or `FA_TODO_VERSION(7, 2);` for one
 * version of a milestone with several). The launchers of that milestone start
 * with `FA_TRY(fa_todo_status<1>());`, which returns ::FA_ERR_NOT_IMPLEMENTED
 * while the marker is there, before touching an argument or the GPU: the
 * harness tells "not started" from "wrong" even without a GPU. The reference
 * kernels carry no marker, and there the check compiles to nothing.
 */
#ifndef FA_LAUNCH_CUH
#define FA_LAUNCH_CUH

#include <stddef.h>

#include <cuda_runtime.h>

#include "fa_device.h"
#include "fa_launch.h"
#include "fa_milestones.h"
#include "fa_status.h"

/**
 * Milestone @p MILESTONE (version @p VERSION, 0 when it has one) is written
 * unless the kernel set specialises this with FA_TODO(); `file` names where.
 */
template <int MILESTONE, int VERSION = 0>
struct fa_todo {
    static constexpr const char *file = nullptr;
};

/** Marks version @p v of milestone @p m as not written yet. */
#define FA_TODO_VERSION(m, v)                               \
    template <>                                             \
    struct fa_todo<m, v> {                                  \
        static constexpr const char *file = __FILE__;       \
    }

/** Marks milestone @p m as not written yet; the learner deletes the line when it is. */
#define FA_TODO(m) FA_TODO_VERSION(m, 0)

/** FA_OK when the milestone is written, else ::FA_ERR_NOT_IMPLEMENTED with where to write it. */
template <int MILESTONE, int VERSION = 0>
FA_MUST_CHECK static inline fa_status fa_todo_status(void)
{
    if (fa_todo<MILESTONE, VERSION>::file == nullptr)
        return FA_OK;
    return fa_todo_fail(MILESTONE, VERSION, fa_todo<MILESTONE, VERSION>::file);
}

/**
 * Opts @p kernel into @p bytes of dynamic shared memory per block (past the
 * 48 KiB a block gets unasked), or fails with ::FA_ERR_UNSUPPORTED naming
 * @p what when the device offers fewer.
 */
template <typename Kernel>
FA_MUST_CHECK static fa_status fa_shared_memory_opt_in(Kernel kernel, size_t bytes,
                                                       const char *what)
{
    int device = 0, optin = 0;
    FA_CUDA_TRY(cudaGetDevice(&device));
    FA_CUDA_TRY(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    if (bytes > (size_t)optin)
        return fa_fail(FA_ERR_UNSUPPORTED,
                       "%s needs %zu bytes of shared memory per block, this GPU allows at most %d",
                       what, bytes, optin);
    FA_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     (int)bytes));
    return FA_OK;
}

#endif /* FA_LAUNCH_CUH */
