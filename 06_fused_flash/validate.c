/**
 * @file validate.c
 * @brief M24, the launcher: every field of an attention call checked before
 *        any launch, and the choice of the kernel that runs it (plain C, so
 *        every bad input is tested without a GPU).
 *
 * fa_attention_supported() (flashattn.c) is this function of the reference
 * build; the learner writes its twin, learner/validate.c. The rules, in
 * the order they are checked: the dtype, the scale, the mask (with a window's
 * extents), the variant and a packed batch's offsets set both or neither; the
 * sizes (with a packed batch's longest sequences; zero-size work is a valid
 * no-op and stops there); the grid's limits; each tensor (strides
 * non-negative, offsets within 64 bits, present and element-aligned, an
 * output whose elements do not share an address); outputs apart from the
 * inputs and each other; a packed batch's offset arrays; then the kernel: v2
 * when the call allows it (bf16 or fp16, head_dim a multiple of 8 up to 256,
 * every row 16-byte aligned), else v1, or the variant asked for, refused with
 * the reason when it cannot.
 */
#include "flash.h"

#include <math.h>
#include <stdio.h>

#include "fa_bytes.h"
#include "fa_index.h"
#include "fa_launch.h"

static const char *const API = "fa_attention";

/** One tensor of the call: its name, pointer, strides and extents. */
typedef struct tensor {
    const char *name;
    const void *data;
    fa_strides strides;
    int64_t rows, heads, element_bytes;
    int64_t span_bytes; /**< filled by check_tensor(): bytes from data to its last element + 1 */
} tensor;

/**
 * Strides non-negative, offsets within 64 bits, the pointer present and
 * element-aligned; for an output (@p output) also no two elements at the
 * same address: sorted by stride, each dimension's stride must pass the span
 * of all the smaller ones (a layout with gaps is fine, one that folds onto
 * itself is not: threads would race on one address).
 */
static fa_status check_tensor(tensor *t, int64_t batch, int64_t d, bool output)
{
    const int64_t strides[3] = {t->strides.batch, t->strides.row, t->strides.head};
    const int64_t extents[3] = {batch, t->rows, t->heads};
    const char *const names[3] = {"batch", "row", "head"};
    const int64_t most = fa_max_elements(t->element_bytes);
    int64_t last = d - 1; /* offset of the last element, in elements */
    for (int i = 0; i < 3; ++i) {
        if (strides[i] < 0)
            return fa_fail(FA_ERR_BAD_STRIDE, "%s: %s_strides.%s = %lld, expected >= 0", API,
                           t->name, names[i], (long long)strides[i]);
        const int64_t reach = fa_mul_within(strides[i], extents[i] - 1, most);
        /* The end of the tensor, one past its last element, must be a byte offset too. */
        if (reach < 0 || last >= most - reach)
            return fa_fail(FA_ERR_OVERFLOW,
                           "%s: %s spans more than %lld elements (64-bit byte offsets): "
                           "%s_strides.%s = %lld over %lld %s positions",
                           API, t->name, (long long)most, t->name, names[i],
                           (long long)strides[i], (long long)extents[i], names[i]);
        last += reach;
    }
    t->span_bytes = (last + 1) * t->element_bytes;
    FA_TRY(fa_require_array(API, t->name, t->data, last + 1, (size_t)t->element_bytes));
    if (!output)
        return FA_OK; /* inputs may repeat elements (a broadcast head has stride 0) */
    /* Sort the three dimensions by stride (insertion sort of 3) and check each passes the rest. */
    int order[3] = {0, 1, 2};
    for (int i = 1; i < 3; ++i)
        for (int j = i; j > 0 && strides[order[j]] < strides[order[j - 1]]; --j) {
            const int swap = order[j];
            order[j] = order[j - 1];
            order[j - 1] = swap;
        }
    int64_t span = d; /* elements covered by the dimensions below, the contiguous d first */
    for (int i = 0; i < 3; ++i) {
        const int dim = order[i];
        if (extents[dim] <= 1)
            continue;
        if (strides[dim] < span)
            return fa_fail(FA_ERR_BAD_STRIDE,
                           "%s: %s_strides.%s = %lld makes elements of the output share an "
                           "address (the smaller dimensions span %lld elements); expected a "
                           "stride >= %lld",
                           API, t->name, names[dim], (long long)strides[dim], (long long)span,
                           (long long)span);
        span = strides[dim] * (extents[dim] - 1) + span;
    }
    return FA_OK;
}

static fa_status check_sizes(const fa_attention_params *p)
{
    FA_TRY(fa_require_size(API, "batch", p->batch));
    FA_TRY(fa_require_size(API, "heads_q", p->heads_q));
    FA_TRY(fa_require_size(API, "nq", p->nq));
    FA_TRY(fa_require_size(API, "nk", p->nk));
    if (p->heads_q > 0 && p->heads_kv < 1)
        return fa_fail(FA_ERR_INVALID_SIZE, "%s: heads_kv = %lld, expected >= 1", API,
                       (long long)p->heads_kv);
    if (p->heads_q > 0 && p->heads_q % p->heads_kv != 0)
        return fa_fail(FA_ERR_INVALID_SIZE,
                       "%s: heads_q = %lld is not a multiple of heads_kv = %lld (each key/value "
                       "head serves heads_q / heads_kv query heads)",
                       API, (long long)p->heads_q, (long long)p->heads_kv);
    if (p->head_dim < 1 || p->head_dim > TILE1_MAX_D)
        return fa_fail(FA_ERR_UNSUPPORTED,
                       "%s: head_dim = %lld, expected 1..%d (v1 takes any; v2 multiples of 8 "
                       "up to %d)",
                       API, (long long)p->head_dim, TILE1_MAX_D, FLASH2_MAX_D);
    if (p->cu_seqlens_q == NULL)
        return FA_OK;
    FA_TRY(fa_require_size(API, "max_seqlen_q", p->max_seqlen_q));
    return fa_require_size(API, "max_seqlen_k", p->max_seqlen_k);
}

static fa_status check_values(const fa_attention_params *p)
{
    if (p->dtype != FA_F32 && p->dtype != FA_BF16 && p->dtype != FA_F16)
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "%s: dtype = %d, expected FA_F32, FA_BF16 or FA_F16",
                       API, (int)p->dtype);
    if (p->scale != 0.0f && (!isfinite(p->scale) || p->scale < 0.0f))
        return fa_fail(FA_ERR_INVALID_ARGUMENT,
                       "%s: scale = %g, expected 0 (1 / sqrt(head_dim)) or a finite scale > 0 "
                       "(the kernels take the max of the raw scores and fold the scale into exp2)",
                       API, (double)p->scale);
    FA_TRY(fa_require_mask(API, p->mask, FA_MASK_WINDOW));
    FA_TRY(fa_require_window(API, p->mask, p->window_left, p->window_right));
    if (p->variant != FA_VARIANT_AUTO && p->variant != FA_VARIANT_CUDA_CORES &&
        p->variant != FA_VARIANT_TENSOR_CORES)
        return fa_fail(FA_ERR_INVALID_ARGUMENT,
                       "%s: variant = %d, expected FA_VARIANT_AUTO, FA_VARIANT_CUDA_CORES or "
                       "FA_VARIANT_TENSOR_CORES",
                       API, (int)p->variant);
    if ((p->cu_seqlens_q == NULL) != (p->cu_seqlens_k == NULL))
        return fa_fail(FA_ERR_INVALID_ARGUMENT,
                       "%s: cu_seqlens_q = %p, cu_seqlens_k = %p: a packed batch sets both, a "
                       "plain one neither",
                       API, (const void *)p->cu_seqlens_q, (const void *)p->cu_seqlens_k);
    return FA_OK;
}

/**
 * A packed batch's offset arrays: batch + 1 aligned int32 each, apart from
 * the outputs (every block reads them while others write).
 */
static fa_status check_offset_arrays(const fa_attention_params *p, const tensor *o,
                                     int64_t lse_bytes)
{
    const char *const names[2] = {"cu_seqlens_q", "cu_seqlens_k"};
    const int32_t *const arrays[2] = {p->cu_seqlens_q, p->cu_seqlens_k};
    const int64_t bytes = (p->batch + 1) * 4;
    for (int i = 0; i < 2; ++i) {
        FA_TRY(fa_require_array(API, names[i], arrays[i], p->batch + 1, 4));
        FA_TRY(fa_require_disjoint(API, "o", p->o, o->span_bytes, names[i], arrays[i], bytes));
        if (p->lse != NULL)
            FA_TRY(fa_require_disjoint(API, "lse", p->lse, lse_bytes, names[i], arrays[i], bytes));
    }
    return FA_OK;
}

/**
 * The four tensors and lse: present, in bounds, aligned, outputs apart from
 * inputs and each other; a packed batch's offset arrays.
 */
static fa_status check_tensors(const fa_attention_params *p)
{
    const int64_t in_bytes = fa_dtype_size(p->dtype);
    tensor t[4] = {
        {"q", p->q, flash_strides_used(p, p->q_strides), p->nq, p->heads_q, in_bytes, 0},
        {"k", p->k, flash_strides_used(p, p->k_strides), p->nk, p->heads_kv, in_bytes, 0},
        {"v", p->v, flash_strides_used(p, p->v_strides), p->nk, p->heads_kv, in_bytes, 0},
        {"o", p->o, flash_strides_used(p, p->o_strides), p->nq, p->heads_q,
         fa_dtype_size(flash_o_dtype(p)), 0},
    };
    /* A packed batch's sequences lie one after the other in one [rows][heads][d] tensor. */
    const int64_t entries = flash_batch_entries(p);
    const bool packed = p->cu_seqlens_q != NULL;
    for (int i = 0; i < 4; ++i) {
        if (i > 0 && i < 3 && p->nk == 0)
            continue; /* no key: k and v are never read */
        FA_TRY(check_tensor(&t[i], entries, p->head_dim, i == 3));
    }
    for (int i = 1; i < 3; ++i)
        if (p->nk > 0)
            FA_TRY(fa_require_disjoint(API, "o", p->o, t[3].span_bytes, t[i].name, t[i].data,
                                       t[i].span_bytes));
    FA_TRY(fa_require_disjoint(API, "o", p->o, t[3].span_bytes, "q", p->q, t[0].span_bytes));
    const int64_t rows = fa_mul_within(fa_mul_within(entries, p->heads_q, INT64_MAX), p->nq,
                                       fa_max_elements(4));
    if (p->lse != NULL) {
        if (rows < 0)
            return fa_fail(FA_ERR_OVERFLOW, "%s: lse of %s floats overflows 64-bit byte offsets",
                           API, packed ? "heads_q x nq" : "batch x heads_q x nq");
        FA_TRY(fa_require_array(API, "lse", p->lse, rows, 4));
        for (int i = 0; i < 4; ++i)
            if (i == 0 || i == 3 || p->nk > 0)
                FA_TRY(fa_require_disjoint(API, "lse", p->lse, rows * 4, t[i].name, t[i].data,
                                           t[i].span_bytes));
    }
    return packed ? check_offset_arrays(p, &t[3], rows * 4) : FA_OK;
}

/** Why version 2 cannot run @p p (a message written into @p why), or FA_OK. */
static fa_status tensor_cores_refusal(const fa_attention_params *p, char *why, size_t cap)
{
    if (p->dtype == FA_F32) {
        snprintf(why, cap, "dtype fp32 (v2 takes bf16 and fp16)");
        return FA_ERR_UNSUPPORTED;
    }
    if (p->head_dim % TILE2_D_MULTIPLE != 0 || p->head_dim > FLASH2_MAX_D) {
        snprintf(why, cap, "head_dim = %lld (v2 takes multiples of %d up to %d)",
                 (long long)p->head_dim, TILE2_D_MULTIPLE, FLASH2_MAX_D);
        return FA_ERR_UNSUPPORTED;
    }
    /* cp.async and the 16-byte stores of O move 16 bytes: every row must start on 16 bytes. */
    const void *const data[4] = {p->q, p->k, p->v, p->o};
    const fa_strides strides[4] = {
        flash_strides_used(p, p->q_strides), flash_strides_used(p, p->k_strides),
        flash_strides_used(p, p->v_strides), flash_strides_used(p, p->o_strides)};
    const char *const names[4] = {"q", "k", "v", "o"};
    for (int i = 0; i < 4; ++i) {
        const int64_t bytes = fa_dtype_size(i == 3 ? flash_o_dtype(p) : p->dtype);
        if (!flash_rows_16_aligned(data[i], &strides[i], bytes)) {
            snprintf(why, cap, "%s is not 16-byte aligned at every row (v2 moves 16 bytes at a time)",
                     names[i]);
            return FA_ERR_MISALIGNED;
        }
    }
    return FA_OK;
}

fa_status FA_LAUNCHER(attention_validate)(const fa_attention_params *p, fa_variant *chosen)
{
    if (p == NULL)
        return fa_fail(FA_ERR_NULL_POINTER, "%s: params = NULL", API);
    FA_TRY(check_values(p));
    FA_TRY(check_sizes(p));
    if (p->batch > FA_MAX_GRID_YZ || p->heads_q > FA_MAX_GRID_YZ)
        return fa_fail(FA_ERR_OVERFLOW, "%s: batch = %lld, heads_q = %lld, expected at most %lld "
                                        "each (grid z and y)",
                       API, (long long)p->batch, (long long)p->heads_q, (long long)FA_MAX_GRID_YZ);
    /* The grid's x counts query tiles; the smallest tile (v2 at head dims above 128) is 64 rows. */
    if (fa_ceil_div(p->nq, flash2_br(FLASH2_MAX_D)) > FA_MAX_GRID_X)
        return fa_fail(FA_ERR_OVERFLOW, "%s: nq = %lld, expected at most %lld (grid x of tiles of %d rows)",
                       API, (long long)p->nq, (long long)(FA_MAX_GRID_X * flash2_br(FLASH2_MAX_D)),
                       flash2_br(FLASH2_MAX_D));
    if (flash_call_empty(p)) {
        if (chosen != NULL)
            *chosen = p->variant == FA_VARIANT_AUTO ? FA_VARIANT_CUDA_CORES : p->variant;
        return FA_OK; /* nothing to compute, nothing read or written */
    }
    FA_TRY(check_tensors(p));

    char why[256] = "";
    const fa_status v2 = tensor_cores_refusal(p, why, sizeof why);
    fa_variant variant = p->variant;
    if (variant == FA_VARIANT_AUTO)
        variant = v2 == FA_OK ? FA_VARIANT_TENSOR_CORES : FA_VARIANT_CUDA_CORES;
    if (variant == FA_VARIANT_TENSOR_CORES && v2 != FA_OK)
        return fa_fail(v2, "%s: variant v2 tensor cores cannot run this call: %s; "
                           "FA_VARIANT_AUTO or FA_VARIANT_CUDA_CORES can",
                       API, why);
    if (chosen != NULL)
        *chosen = variant;
    return FA_OK;
}
