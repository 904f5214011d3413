/** @file method.c @brief The numerical method each version of the blocks declares (tile_method()). */
#include "tiles.h"

fa_attn_method tile_method(int version, fa_dtype dtype)
{
    fa_attn_method method = {0};
    method.input_dtype = dtype;
    method.accumulation = version == 2 ? FA_ACCUM_TENSOR_CORE : FA_ACCUM_FP32;
    method.block_n = tile_keys(version);
    method.p_dtype = version == 2 ? dtype : FA_F32;
    method.l_from_rounded_p = false;
    method.exp_method = FA_EXP_EXP2_PRESCALED;
    method.normalisation = FA_NORM_RECIPROCAL;
    method.output_dtype = FA_F32;
    return method;
}
