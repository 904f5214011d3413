/**
 * @file forward.cu
 * @brief M24, the launcher's second half: fa_attention_forward() validates
 *        the call and runs the kernel fa_attention_supported() chose.
 */
#include "flash.h"

fa_status fa_attention_forward(const fa_attention_params *p, cudaStream_t stream)
{
    fa_variant variant = FA_VARIANT_AUTO;
    FA_TRY(fa_attention_supported(p, &variant));
    return ref_flash_forward((int)variant, p, stream);
}
