/**
 * @file forward.cu
 * @brief M24, the launcher's second half: fa_attention_forward() validates,
 *        resolves the scale and runs the kernel fa_attention_supported() chose.
 */
#include "flash.h"

fa_status fa_attention_forward(const fa_attention_params *p, cudaStream_t stream)
{
    fa_variant variant = FA_VARIANT_AUTO;
    FA_TRY(fa_attention_supported(p, &variant));
    if (p->batch == 0 || p->heads_q == 0 || p->nq == 0)
        return FA_OK;
    return ref_flash_forward((int)variant, p, fa_attention_scale(p), stream);
}
