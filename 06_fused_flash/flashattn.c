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

/* TMA addresses a tensor by 32-bit coordinates and byte strides below 2^40 (v3: 2-byte elements). */
#define HOPPER_MAX_STRIDE_BYTES ((int64_t)1 << 40)

/**
 * Why version 3 cannot run the non-empty call @p p for what it asks (the
 * device aside): a message naming the field, or NULL. Its tensor maps need
 * rows that differ (no stride of 0 on an extent above 1) and strides TMA
 * takes.
 */
static const char *hopper_call_refusal(const fa_attention_params *p, char *why, size_t cap)
{
    if (p->o_fp32) {
        snprintf(why, cap, "o_fp32 (v3 writes o in the input dtype)");
        return why;
    }
    if (p->nk == 0 || p->nq > INT32_MAX || p->nk > INT32_MAX) {
        snprintf(why, cap, "nq = %lld, nk = %lld (v3 takes 1 to 2^31 - 1 keys, at most 2^31 - 1 rows)",
                 (long long)p->nq, (long long)p->nk);
        return why;
    }
    const struct {
        const char *name;
        fa_strides strides;
        int64_t rows, heads;
    } inputs[3] = {{"q", p->q_strides, p->nq, p->heads_q},
                   {"k", p->k_strides, p->nk, p->heads_kv},
                   {"v", p->v_strides, p->nk, p->heads_kv}};
    for (int i = 0; i < 3; ++i) {
        const int64_t extent[3] = {flash_batch_entries(p), inputs[i].rows, inputs[i].heads};
        const int64_t stride[3] = {inputs[i].strides.batch, inputs[i].strides.row,
                                   inputs[i].strides.head};
        static const char *const which[3] = {"batch", "row", "head"};
        for (int j = 0; j < 3; ++j)
            if (extent[j] > 1 && (stride[j] == 0 || stride[j] >= HOPPER_MAX_STRIDE_BYTES / 2)) {
                snprintf(why, cap, "%s_strides.%s = %lld (v3's tensor maps take 1 to 2^39 - 1)",
                         inputs[i].name, which[j], (long long)stride[j]);
                return why;
            }
    }
    return NULL;
}

/** FA_OK when the current device runs version 3, else its status and message. */
static fa_status hopper_device_check(void)
{
#if FA_HAVE_CUDA
    return flash3_device_check();
#else
    return fa_fail(FA_ERR_UNSUPPORTED, "the library was built without CUDA");
#endif
}

/*
 * M24's validation (ref_attention_validate()) checks every field and chooses
 * v1 or v2 from the call alone. Version 3 depends on the device too: it runs
 * a call v2 can run, of the shapes hopper_call_refusal() accepts, on a
 * device of compute capability 9.0. FA_VARIANT_AUTO takes it there from head
 * dim FLASH3_AUTO_MIN_D up, and v2's choice elsewhere; asked for by name, it
 * runs or is refused, naming why.
 */
fa_status fa_attention_supported(const fa_attention_params *p, fa_variant *chosen)
{
    /* M24 knows the course's three values; the library adds FA_VARIANT_HOPPER. */
    if (p != NULL && ((int)p->variant < 0 || (int)p->variant > FA_VARIANT_HOPPER))
        return fa_fail(FA_ERR_INVALID_ARGUMENT,
                       "fa_attention: variant = %d, expected FA_VARIANT_AUTO, FA_VARIANT_CUDA_CORES, "
                       "FA_VARIANT_TENSOR_CORES or FA_VARIANT_HOPPER",
                       (int)p->variant);
    if (p == NULL || (p->variant != FA_VARIANT_AUTO && p->variant != FA_VARIANT_HOPPER))
        return ref_attention_validate(p, chosen);
    fa_attention_params as = *p; /* every field checked as for any call, and v2's choice */
    as.variant = FA_VARIANT_AUTO;
    fa_variant choice = FA_VARIANT_AUTO;
    FA_TRY(ref_attention_validate(&as, &choice));
    const bool empty = flash_call_empty(p); /* a no-op for every version */
    char why[256];
    if (p->variant == FA_VARIANT_AUTO) {
        if (!empty && choice == FA_VARIANT_TENSOR_CORES && p->head_dim >= FLASH3_AUTO_MIN_D &&
            hopper_call_refusal(p, why, sizeof why) == NULL) {
            const fa_status device = hopper_device_check();
            if (device != FA_OK && device != FA_ERR_UNSUPPORTED && device != FA_ERR_NO_DEVICE)
                return device; /* a failing CUDA call, not another device */
            if (device == FA_OK)
                choice = FA_VARIANT_HOPPER;
            fa_clear_error(); /* another device is no error of the call */
        }
        if (chosen != NULL)
            *chosen = choice;
        return FA_OK;
    }
    if (!empty) {
        if (hopper_call_refusal(p, why, sizeof why) != NULL)
            return fa_fail(FA_ERR_UNSUPPORTED,
                           "fa_attention: variant v3 Hopper cannot run this call: %s; "
                           "FA_VARIANT_AUTO or FA_VARIANT_TENSOR_CORES can",
                           why);
        as.variant = FA_VARIANT_TENSOR_CORES; /* v3 needs what v2 needs, refused as v2 is */
        const fa_status v2 = ref_attention_validate(&as, NULL);
        if (v2 != FA_OK) {
            snprintf(why, sizeof why, "%s", fa_last_error()); /* fa_fail() rewrites it */
            return fa_fail(v2, "fa_attention: variant v3 Hopper needs what v2 needs: %s", why);
        }
        const fa_status device = hopper_device_check();
        if (device != FA_OK) {
            snprintf(why, sizeof why, "%s", fa_last_error());
            return fa_fail(device, "fa_attention: variant v3 Hopper cannot run here: %s", why);
        }
    }
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
