/**
 * @file launch.cu
 * @brief M25's launcher: the reference's version 1 fused kernel of
 *        \ref stage06, compiled against one implementation of key_tiles.cuh.
 *
 * Compiled twice (common/stage.cmake): with the reference key_tiles.cuh,
 * giving ref_causal_forward(), and with the learner's (found first on the
 * include path, and included here before the kernel so that the kernel's own
 * include of it is the learner's), giving learner_causal_forward(). The
 * kernel, its launch (launch_1.cuh) and the validation are stage 06's; a
 * packed batch runs its packed instances (packed_1.cuh).
 */
#include "key_tiles.cuh"
#include "launch_1.cuh"
#include "packed_1.cuh"

#include "causal.h"

fa_status FA_LAUNCHER(causal_forward)(int version, const fa_attention_params *p,
                                      cudaStream_t stream)
{
    FA_TRY(fa_todo_status<25>());
    if (version != 1)
        return fa_fail(FA_ERR_UNSUPPORTED, "M25 runs version 1 (the learner's key tiles in the "
                                           "reference's v1 kernel), not version %d", version);
    if (p->batch == 0 || p->heads_q == 0 || flash_grid_rows(p) == 0)
        return FA_OK; /* no query row, or a packed batch of empty sequences */
    return p->cu_seqlens_q != NULL ? flash1_launch<flash1_packed>(p, stream) : flash1_launch(p, stream);
}
