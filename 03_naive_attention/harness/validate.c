/**
 * @file validate.c
 * @brief Argument checks of the stage 03 launchers (plain C, run before any CUDA call).
 *
 * The launchers of both the reference and the learner call these first, so a
 * bad argument gets the same status and message from both, and the checks are
 * tested on machines without a GPU. Nothing here dereferences a pointer.
 * Checks run in a fixed order (sizes, limits, enums and values, NULL,
 * alignment, overlap) so that a call with several faults always reports the
 * first one, and tests can name the status they expect.
 */
#include "attention.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fa_attention_ref.h"
#include "fa_bytes.h"

/** Element counts of the tensors of one problem (0 where the op does not read them). */
typedef struct attn_extents {
    int64_t q;      /**< q and o: batch * heads * nq * head_dim */
    int64_t kv;     /**< k and v: batch * heads * nk * head_dim */
    int64_t scores; /**< s and p: batch * heads * nq * nk */
    int64_t rows;   /**< lse: batch * heads * nq */
} attn_extents;

/** The widest element of the stage: counts times this must fit in int64 bytes. */
enum { WIDEST_ELEMENT_BYTES = 4, FLOAT_BYTES = 4, KEY_LENGTH_BYTES = 8 };
_Static_assert(WIDEST_ELEMENT_BYTES == sizeof(float) && FLOAT_BYTES == sizeof(float),
               "fp32 is the widest element");
_Static_assert(KEY_LENGTH_BYTES == sizeof(int64_t), "key_length holds int64");

/**
 * a * b * c * d for sizes >= 0, or -1 when that many fp32 elements have more
 * bytes than a signed 64-bit offset holds (fa_max_elements()). A zero size
 * makes the tensor empty, however large the others.
 */
static int64_t checked_count(int64_t a, int64_t b, int64_t c, int64_t d)
{
    if (a == 0 || b == 0 || c == 0 || d == 0)
        return 0;
    const int64_t most = fa_max_elements(WIDEST_ELEMENT_BYTES);
    int64_t count = fa_mul_within(a, b, most);
    if (count >= 0)
        count = fa_mul_within(count, c, most);
    if (count >= 0)
        count = fa_mul_within(count, d, most);
    return count;
}

/** The extents of @p d, or FA_ERR_OVERFLOW (sizes first, see naive_attn_dims_validate()). */
static fa_status extents_of(const char *op, naive_attn_dims d, bool reads_head_dim,
                            attn_extents *ext)
{
    FA_TRY(naive_attn_dims_validate(op, d, reads_head_dim));
    ext->scores = checked_count(d.batch, d.heads, d.nq, d.nk);
    ext->rows = checked_count(d.batch, d.heads, d.nq, 1);
    ext->q = reads_head_dim ? checked_count(d.batch, d.heads, d.nq, d.head_dim) : 0;
    ext->kv = reads_head_dim ? checked_count(d.batch, d.heads, d.nk, d.head_dim) : 0;
    return FA_OK;
}

fa_status naive_attn_dims_validate(const char *op, naive_attn_dims d, bool reads_head_dim)
{
    FA_TRY(fa_require_size(op, "dims.batch", d.batch));
    FA_TRY(fa_require_size(op, "dims.heads", d.heads));
    FA_TRY(fa_require_size(op, "dims.nq", d.nq));
    FA_TRY(fa_require_size(op, "dims.nk", d.nk));
    if (reads_head_dim && (d.head_dim < 1 || d.head_dim > NAIVE_ATTN_MAX_HEAD_DIM))
        return fa_fail(FA_ERR_UNSUPPORTED, "%s: dims.head_dim = %lld, supported head dims: 1 .. %d",
                       op, (long long)d.head_dim, NAIVE_ATTN_MAX_HEAD_DIM);
    const bool q_overflows =
        reads_head_dim && checked_count(d.batch, d.heads, d.nq, d.head_dim) < 0;
    const bool kv_overflows =
        reads_head_dim && checked_count(d.batch, d.heads, d.nk, d.head_dim) < 0;
    if (checked_count(d.batch, d.heads, d.nq, d.nk) < 0 ||
        checked_count(d.batch, d.heads, d.nq, 1) < 0 || q_overflows || kv_overflows)
        return fa_fail(FA_ERR_OVERFLOW,
                       "%s: dims = {batch %lld, heads %lld, nq %lld, nk %lld, head_dim %lld}: "
                       "an element count overflows 64-bit byte offsets (at most %lld elements "
                       "per tensor)",
                       op, (long long)d.batch, (long long)d.heads, (long long)d.nq,
                       (long long)d.nk, (long long)d.head_dim,
                       (long long)fa_max_elements(WIDEST_ELEMENT_BYTES));
    return FA_OK;
}

static fa_status check_dtype(const char *op, fa_dtype dtype)
{
    if (dtype != FA_F32 && dtype != FA_BF16 && dtype != FA_F16)
        return fa_fail(FA_ERR_INVALID_ARGUMENT,
                       "%s: dtype = %d, expected FA_F32, FA_BF16 or FA_F16", op, (int)dtype);
    return FA_OK;
}

static fa_status check_scale(const char *op, float scale)
{
    if (!isfinite(scale))
        return fa_fail(FA_ERR_INVALID_ARGUMENT,
                       "%s: scale = %g, expected a finite number (0 selects 1/sqrt(head_dim))",
                       op, (double)scale);
    return FA_OK;
}

/**
 * The mask and the padding: a known ::fa_mask; key_length's bytes (batch * 8)
 * within a 64-bit offset, checked here because batch alone may be huge when
 * another size is 0; and no bottom-right with padding. Bottom-right aligns the
 * last query row to key nk - 1 (fa_mask_key_range); FlashAttention's
 * variable-length attention aligns it to each sequence's last key,
 * key_length[b] - 1. The two differ on every padded batch, so the pair is
 * refused rather than given a meaning its users would not expect.
 */
static fa_status check_mask(const char *op, fa_mask mask, const int64_t *key_length,
                            int64_t batch)
{
    FA_TRY(fa_require_mask(op, mask, FA_MASK_CAUSAL_BOTTOM_RIGHT)); /* windows are stage 07's */
    if (key_length == NULL)
        return FA_OK;
    FA_TRY(fa_require_elements(op, "dims.batch (entries of key_length)", batch, KEY_LENGTH_BYTES));
    if (mask == FA_MASK_CAUSAL_BOTTOM_RIGHT)
        return fa_fail(FA_ERR_UNSUPPORTED,
                       "%s: mask = FA_MASK_CAUSAL_BOTTOM_RIGHT with key_length = %p: bottom-right "
                       "would align to nk, not to each batch's key_length[b] as variable-length "
                       "FlashAttention does; use FA_MASK_CAUSAL_TOP_LEFT or no key_length",
                       op, (const void *)key_length);
    return FA_OK;
}

/** A required array (@p shape names its layout): non-NULL when it has elements, aligned. */
static fa_status check_array(const char *op, const char *name, const void *p, int64_t count,
                             int element_bytes, const char *shape)
{
    if (p == NULL && count > 0)
        return fa_fail(FA_ERR_NULL_POINTER,
                       "%s: %s = NULL, expected a device array of %lld elements %s", op, name,
                       (long long)count, shape);
    return fa_require_array(op, name, p, count, (size_t)element_bytes);
}

/** An optional array (lse, key_length): NULL, or aligned to its element. */
static fa_status check_optional(const char *op, const char *name, const void *p,
                                int element_bytes)
{
    return fa_require_array(op, name, p, 0, (size_t)element_bytes);
}

/** The bytes of key_length (0 when there is none): an input every output must avoid. */
static int64_t key_length_bytes(const int64_t *key_length, int64_t batch)
{
    return key_length != NULL ? batch * KEY_LENGTH_BYTES : 0;
}

static const char Q_SHAPE[] = "([batch][heads][nq][head_dim])";
static const char KV_SHAPE[] = "([batch][heads][nk][head_dim])";
static const char S_SHAPE[] = "([batch][heads][nq][nk])";

float naive_attn_scale(float scale, int64_t head_dim)
{
    if (scale != 0.0f)
        return scale;
    return (float)(1.0 / sqrt((double)head_dim));
}

fa_status attn_scores_validate(const void *q, const void *k, const float *s, fa_dtype dtype,
                               naive_attn_dims dims, float scale)
{
    const char *op = "attn_scores";
    attn_extents ext;
    FA_TRY(extents_of(op, dims, true, &ext));
    FA_TRY(check_dtype(op, dtype));
    FA_TRY(check_scale(op, scale));
    /* An empty score matrix reads nothing: q and k may then be NULL too. */
    const int64_t q_count = ext.scores > 0 ? ext.q : 0;
    const int64_t k_count = ext.scores > 0 ? ext.kv : 0;
    const int size = fa_dtype_size(dtype);
    FA_TRY(check_array(op, "q", q, q_count, size, Q_SHAPE));
    FA_TRY(check_array(op, "k", k, k_count, size, KV_SHAPE));
    FA_TRY(check_array(op, "s", s, ext.scores, FLOAT_BYTES, S_SHAPE));
    const int64_t s_bytes = ext.scores * FLOAT_BYTES;
    FA_TRY(fa_require_disjoint(op, "s", s, s_bytes, "q", q, q_count * size));
    FA_TRY(fa_require_disjoint(op, "s", s, s_bytes, "k", k, k_count * size));
    return FA_OK;
}

fa_status softmax_rows_validate(const float *s, const float *p, const float *lse,
                                naive_attn_dims dims, fa_mask mask, const int64_t *key_length)
{
    const char *op = "softmax_rows";
    attn_extents ext;
    FA_TRY(extents_of(op, dims, false, &ext));
    FA_TRY(check_mask(op, mask, key_length, dims.batch));
    FA_TRY(check_array(op, "s", s, ext.scores, FLOAT_BYTES, S_SHAPE));
    FA_TRY(check_array(op, "p", p, ext.scores, FLOAT_BYTES, S_SHAPE));
    FA_TRY(check_optional(op, "lse", lse, FLOAT_BYTES));
    FA_TRY(check_optional(op, "key_length", key_length, KEY_LENGTH_BYTES));
    const int64_t s_bytes = ext.scores * FLOAT_BYTES;
    const int64_t lse_bytes = lse != NULL ? ext.rows * FLOAT_BYTES : 0;
    const int64_t length_bytes = key_length_bytes(key_length, dims.batch);
    if (p != s)
        FA_TRY(fa_require_disjoint(op, "p", p, s_bytes, "s", s, s_bytes));
    FA_TRY(fa_require_disjoint(op, "p", p, s_bytes, "key_length", key_length, length_bytes));
    FA_TRY(fa_require_disjoint(op, "lse", lse, lse_bytes, "s", s, s_bytes));
    FA_TRY(fa_require_disjoint(op, "lse", lse, lse_bytes, "p", p, s_bytes));
    FA_TRY(fa_require_disjoint(op, "lse", lse, lse_bytes, "key_length", key_length,
                               length_bytes));
    return FA_OK;
}

fa_status attn_pv_validate(const float *p, const void *v, const float *o, fa_dtype dtype,
                           naive_attn_dims dims)
{
    const char *op = "attn_pv";
    attn_extents ext;
    FA_TRY(extents_of(op, dims, true, &ext));
    FA_TRY(check_dtype(op, dtype));
    /* With no query row nothing is read; with nk = 0 the sum is empty and o = 0. */
    const int64_t v_count = ext.q > 0 ? ext.kv : 0;
    const int size = fa_dtype_size(dtype);
    FA_TRY(check_array(op, "p", p, ext.scores, FLOAT_BYTES, S_SHAPE));
    FA_TRY(check_array(op, "v", v, v_count, size, KV_SHAPE));
    FA_TRY(check_array(op, "o", o, ext.q, FLOAT_BYTES, Q_SHAPE));
    const int64_t o_bytes = ext.q * FLOAT_BYTES;
    FA_TRY(fa_require_disjoint(op, "o", o, o_bytes, "p", p, ext.scores * FLOAT_BYTES));
    FA_TRY(fa_require_disjoint(op, "o", o, o_bytes, "v", v, v_count * size));
    return FA_OK;
}

fa_status attn_naive_validate(const void *q, const void *k, const void *v, const float *o,
                              const float *lse, fa_dtype dtype, naive_attn_dims dims,
                              float scale, fa_mask mask, const int64_t *key_length)
{
    const char *op = "attn_naive";
    attn_extents ext;
    FA_TRY(extents_of(op, dims, true, &ext));
    FA_TRY(check_dtype(op, dtype));
    FA_TRY(check_scale(op, scale));
    FA_TRY(check_mask(op, mask, key_length, dims.batch));
    const int64_t kv_count = ext.q > 0 ? ext.kv : 0;
    const int size = fa_dtype_size(dtype);
    FA_TRY(check_array(op, "q", q, ext.q, size, Q_SHAPE));
    FA_TRY(check_array(op, "k", k, kv_count, size, KV_SHAPE));
    FA_TRY(check_array(op, "v", v, kv_count, size, KV_SHAPE));
    FA_TRY(check_array(op, "o", o, ext.q, FLOAT_BYTES, Q_SHAPE));
    FA_TRY(check_optional(op, "lse", lse, FLOAT_BYTES));
    FA_TRY(check_optional(op, "key_length", key_length, KEY_LENGTH_BYTES));
    const struct {
        const char *name;
        const void *data;
        int64_t bytes;
    } inputs[] = {{"q", q, ext.q * size},
                  {"k", k, kv_count * size},
                  {"v", v, kv_count * size},
                  {"key_length", key_length, key_length_bytes(key_length, dims.batch)}};
    const int64_t o_bytes = ext.q * FLOAT_BYTES;
    const int64_t lse_bytes = lse != NULL ? ext.rows * FLOAT_BYTES : 0;
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; ++i) {
        FA_TRY(fa_require_disjoint(op, "o", o, o_bytes, inputs[i].name, inputs[i].data,
                                   inputs[i].bytes));
        FA_TRY(fa_require_disjoint(op, "lse", lse, lse_bytes, inputs[i].name, inputs[i].data,
                                   inputs[i].bytes));
    }
    FA_TRY(fa_require_disjoint(op, "lse", lse, lse_bytes, "o", o, o_bytes));
    return FA_OK;
}

fa_status attn_naive_workspace_bytes(naive_attn_dims dims, size_t *bytes)
{
    if (bytes == NULL)
        return fa_fail(FA_ERR_NULL_POINTER, "attn_naive_workspace_bytes: bytes = NULL");
    *bytes = 0;
    attn_extents ext;
    FA_TRY(extents_of("attn_naive_workspace_bytes", dims, false, &ext));
    *bytes = (size_t)ext.scores * sizeof(float);
    return FA_OK;
}
