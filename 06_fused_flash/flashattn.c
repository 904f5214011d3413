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
#include <stdio.h>

#include "fa_status.h"
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
    case FA_VARIANT_HOPPER: return "v3 Hopper";
    }
    return "unknown";
}

size_t fa_attention_params_size(void)
{
    return sizeof(fa_attention_params);
}

/** Why version 3 cannot run @p p, a call version 2 can run (into @p why), or FA_OK. */
static fa_status hopper_refusal(const fa_attention_params *p, char *why, size_t cap)
{
#if FA_HAVE_CUDA
    return flash3_refusal(p, why, cap);
#else
    (void)p;
    snprintf(why, cap, "the library was built without CUDA");
    return FA_ERR_UNSUPPORTED;
#endif
}

/*
 * M24's validation (ref_attention_validate()) checks every field and chooses
 * v1 or v2 from the call alone. Version 3 depends on the device too; asked
 * for by name, it takes the calls v2 would run that flash3_refusal() finds
 * nothing against. (FA_VARIANT_AUTO does not choose it yet.)
 */
fa_status fa_attention_supported(const fa_attention_params *p, fa_variant *chosen)
{
    if (p != NULL && ((int)p->variant < 0 || (int)p->variant > FA_VARIANT_HOPPER))
        return fa_fail(FA_ERR_INVALID_ARGUMENT,
                       "fa_attention: variant = %d, expected FA_VARIANT_AUTO, FA_VARIANT_CUDA_CORES, "
                       "FA_VARIANT_TENSOR_CORES or FA_VARIANT_HOPPER",
                       (int)p->variant);
    if (p == NULL || p->variant != FA_VARIANT_HOPPER)
        return ref_attention_validate(p, chosen);
    fa_attention_params fields = *p; /* the fields checked as for any call */
    fields.variant = FA_VARIANT_AUTO;
    fa_variant variant = FA_VARIANT_AUTO;
    FA_TRY(ref_attention_validate(&fields, &variant));
    const bool empty = p->batch == 0 || p->heads_q == 0 || p->nq == 0;
    if (!empty && variant != FA_VARIANT_TENSOR_CORES)
        return fa_fail(FA_ERR_UNSUPPORTED,
                       "fa_attention: variant v3 Hopper cannot run this call: it takes what v2 takes "
                       "(bf16 or fp16, every row on 16 bytes); FA_VARIANT_AUTO can");
    char why[256] = "";
    const fa_status v3 = empty ? FA_OK : hopper_refusal(p, why, sizeof why);
    if (v3 != FA_OK)
        return fa_fail(v3, "fa_attention: variant v3 Hopper cannot run this call: %s; "
                           "FA_VARIANT_AUTO or FA_VARIANT_TENSOR_CORES can",
                       why);
    if (chosen != NULL)
        *chosen = FA_VARIANT_HOPPER;
    return FA_OK;
}

fa_status fa_attention_method(const fa_attention_params *p, fa_attn_method *method)
{
    fa_variant variant = FA_VARIANT_AUTO;
    FA_TRY(fa_attention_supported(p, &variant));
    const bool tensor_cores = variant != FA_VARIANT_CUDA_CORES && variant != FA_VARIANT_AUTO;
    fa_attn_method m = {0};
    m.input_dtype = p->dtype;
    m.accumulation = tensor_cores ? FA_ACCUM_TENSOR_CORE : FA_ACCUM_FP32;
    m.block_n = flash_block_n(tensor_cores ? (int)variant : 1, p->head_dim);
    m.p_dtype = tensor_cores ? p->dtype : FA_F32; /* v2 and v3 round P to the input type for P V */
    m.l_from_rounded_p = false;                   /* all sum l from the unrounded P */
    m.exp_method = FA_EXP_EXP2_PRESCALED;
    m.normalisation = FA_NORM_RECIPROCAL;
    m.output_dtype = flash_o_dtype(p);
    *method = m;
    return FA_OK;
}

/**
 * One array of offsets, @p name, of sequences of @p what (rows or keys):
 * non-decreasing from >= 0 to <= @p total, no step above @p longest.
 */
static fa_status check_offsets(const char *name, const char *what, const int32_t *cu,
                               int64_t batch, int64_t total, const char *total_name,
                               int64_t longest, const char *longest_name)
{
    if (cu[0] < 0)
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "fa_attention: %s[0] = %d, expected >= 0", name,
                       (int)cu[0]);
    for (int64_t b = 0; b < batch; ++b) {
        const int64_t length = (int64_t)cu[b + 1] - cu[b];
        if (length < 0)
            return fa_fail(FA_ERR_INVALID_ARGUMENT,
                           "fa_attention: %s[%lld] = %d < %s[%lld] = %d: offsets must not decrease",
                           name, (long long)(b + 1), (int)cu[b + 1], name, (long long)b, (int)cu[b]);
        if (length > longest)
            return fa_fail(FA_ERR_INVALID_ARGUMENT,
                           "fa_attention: sequence %lld has %lld %s (%s[%lld] - %s[%lld]), more "
                           "than %s = %lld",
                           (long long)b, (long long)length, what,
                           name, (long long)(b + 1), name, (long long)b, longest_name,
                           (long long)longest);
    }
    if (cu[batch] > total)
        return fa_fail(FA_ERR_INVALID_ARGUMENT,
                       "fa_attention: %s[%lld] = %d is past the tensors' %s = %lld", name,
                       (long long)batch, (int)cu[batch], total_name, (long long)total);
    return FA_OK;
}

fa_status flash_check_packed_offsets(const fa_attention_params *p, const int32_t *cu_q,
                                     const int32_t *cu_k)
{
    FA_TRY(check_offsets("cu_seqlens_q", "rows", cu_q, p->batch, p->nq, "nq", p->max_seqlen_q,
                         "max_seqlen_q"));
    return check_offsets("cu_seqlens_k", "keys", cu_k, p->batch, p->nk, "nk", p->max_seqlen_k,
                         "max_seqlen_k");
}
