/**
 * @file flashattn.c
 * @brief The library's host API around the launcher of M24: strides of the
 *        usual layouts, the scale, the variant names, and the method each
 *        kernel declares. The checks of every field are validate.c's
 *        (ref_attention_validate()); fa_attention_forward() (forward.cu) runs
 *        what they chose.
 */
#include "flashattn.h"

#include <math.h>

#include "flash.h"

fa_strides fa_attention_strides_bnhd(int64_t n, int64_t heads, int64_t head_dim)
{
    const fa_strides s = {n * heads * head_dim, heads * head_dim, head_dim};
    return s;
}

fa_strides fa_attention_strides_bhnd(int64_t n, int64_t heads, int64_t head_dim)
{
    const fa_strides s = {heads * n * head_dim, head_dim, n * head_dim};
    return s;
}

float fa_attention_scale(const fa_attention_params *p)
{
    return p->scale != 0.0f ? p->scale : 1.0f / sqrtf((float)p->head_dim);
}

const char *fa_attention_variant_name(fa_variant variant)
{
    switch (variant) {
    case FA_VARIANT_AUTO: return "auto";
    case FA_VARIANT_CUDA_CORES: return "v1 CUDA cores";
    case FA_VARIANT_TENSOR_CORES: return "v2 tensor cores";
    }
    return "unknown";
}

size_t fa_attention_params_size(void)
{
    return sizeof(fa_attention_params);
}

fa_status fa_attention_supported(const fa_attention_params *p, fa_variant *chosen)
{
    return ref_attention_validate(p, chosen);
}

fa_status fa_attention_method(const fa_attention_params *p, fa_attn_method *method)
{
    fa_variant variant = FA_VARIANT_AUTO;
    FA_TRY(fa_attention_supported(p, &variant));
    const bool tensor_cores = variant == FA_VARIANT_TENSOR_CORES;
    fa_attn_method m = {0};
    m.input_dtype = p->dtype;
    m.accumulation = tensor_cores ? FA_ACCUM_TENSOR_CORE : FA_ACCUM_FP32;
    m.block_n = flash_block_n(tensor_cores ? 2 : 1, p->head_dim);
    m.p_dtype = tensor_cores ? p->dtype : FA_F32; /* v2 rounds P to the input type for P V */
    m.l_from_rounded_p = false;                   /* both sum l from the unrounded P */
    m.exp_method = FA_EXP_EXP2_PRESCALED;
    m.normalisation = FA_NORM_RECIPROCAL;
    m.output_dtype = flash_o_dtype(p);
    *method = m;
    return FA_OK;
}
