/**
 * @file validate.c
 * @brief Argument checks of the stage 03 launchers (plain C, run before any CUDA call).
 *
 * Checks run in a fixed order (sizes, limits, enums and values, NULL,
 * alignment, overlap) so that a call with several faults always reports the
 * first one, and tests can name the status they expect.
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attention.h"

/** Element counts of the tensors of one problem (-1 where not computed). */
typedef struct attn_extents {
    int64_t q;      /**< q and o: batch * heads * nq * head_dim */
    int64_t kv;     /**< k and v: batch * heads * nk * head_dim */
    int64_t scores; /**< s and p: batch * heads * nq * nk */
    int64_t rows;   /**< lse: batch * heads * nq */
} attn_extents;

/** The widest element of the stage: counts times this must fit in int64 bytes. */
enum { WIDEST_ELEMENT_BYTES = 4, KEY_LENGTH_BYTES = 8 };
_Static_assert(WIDEST_ELEMENT_BYTES == sizeof(float), "fp32 is the widest element");
_Static_assert(KEY_LENGTH_BYTES == sizeof(int64_t), "key_length holds int64");

/** a * b * c * d for sizes >= 0, or -1 when the bytes of that many fp32 overflow int64. */
static int64_t checked_count(int64_t a, int64_t b, int64_t c, int64_t d)
{
    const int64_t factors[] = {a, b, c, d};
    for (int i = 0; i < 4; ++i)
        if (factors[i] == 0)
            return 0; /* an empty tensor, however large its other sizes */
    int64_t count = 1;
    for (int i = 0; i < 4; ++i) {
        if (count > INT64_MAX / WIDEST_ELEMENT_BYTES / factors[i])
            return -1;
        count *= factors[i];
    }
    return count;
}

static bool is_aligned(const void *p, uintptr_t alignment)
{
    return (uintptr_t)p % alignment == 0;
}

/** True when byte ranges [p, p + p_bytes) and [q, q + q_bytes) share a byte. */
static bool ranges_overlap(const void *p, int64_t p_bytes, const void *q, int64_t q_bytes)
{
    if (p == NULL || q == NULL || p_bytes <= 0 || q_bytes <= 0)
        return false;
    const uintptr_t p0 = (uintptr_t)p, q0 = (uintptr_t)q;
    return p0 < q0 + (uintptr_t)q_bytes && q0 < p0 + (uintptr_t)p_bytes;
}

/**
 * Sizes first: none negative, head_dim in range when the op reads it, and
 * every count small enough that its byte offsets fit in int64.
 */
static fa_status check_dims(const char *op, naive_attn_dims d, bool reads_head_dim,
                            attn_extents *ext)
{
    const struct {
        const char *name;
        int64_t value;
    } sizes[] = {{"batch", d.batch}, {"heads", d.heads}, {"nq", d.nq}, {"nk", d.nk}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i)
        if (sizes[i].value < 0)
            return fa_fail(FA_ERR_INVALID_SIZE, "%s: dims.%s = %lld, expected a size >= 0", op,
                           sizes[i].name, (long long)sizes[i].value);
    if (reads_head_dim && (d.head_dim < 1 || d.head_dim > NAIVE_ATTN_MAX_HEAD_DIM))
        return fa_fail(FA_ERR_UNSUPPORTED, "%s: dims.head_dim = %lld, supported head dims: 1 .. %d",
                       op, (long long)d.head_dim, NAIVE_ATTN_MAX_HEAD_DIM);

    ext->scores = checked_count(d.batch, d.heads, d.nq, d.nk);
    ext->rows = checked_count(d.batch, d.heads, d.nq, 1);
    ext->q = reads_head_dim ? checked_count(d.batch, d.heads, d.nq, d.head_dim) : -1;
    ext->kv = reads_head_dim ? checked_count(d.batch, d.heads, d.nk, d.head_dim) : -1;
    if (ext->scores < 0 || ext->rows < 0 || (reads_head_dim && (ext->q < 0 || ext->kv < 0)))
        return fa_fail(FA_ERR_OVERFLOW,
                       "%s: dims = {batch %lld, heads %lld, nq %lld, nk %lld, head_dim %lld}: "
                       "an element count overflows 64-bit byte offsets",
                       op, (long long)d.batch, (long long)d.heads, (long long)d.nq,
                       (long long)d.nk, (long long)d.head_dim);
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

static fa_status check_mask(const char *op, fa_mask mask)
{
    if (mask != FA_MASK_NONE && mask != FA_MASK_CAUSAL_TOP_LEFT &&
        mask != FA_MASK_CAUSAL_BOTTOM_RIGHT)
        return fa_fail(FA_ERR_INVALID_ARGUMENT,
                       "%s: mask = %d, expected FA_MASK_NONE, FA_MASK_CAUSAL_TOP_LEFT or "
                       "FA_MASK_CAUSAL_BOTTOM_RIGHT", op, (int)mask);
    return FA_OK;
}

/**
 * Bottom-right causal aligns the last query row to key nk - 1 (fa_mask_allows);
 * FlashAttention's variable-length attention aligns it to each sequence's last
 * key, key_length[b] - 1. The two differ on every padded batch, so the pair is
 * refused rather than given a meaning its users would not expect.
 */
static fa_status check_mask_with_padding(const char *op, fa_mask mask, const int64_t *key_length)
{
    if (mask == FA_MASK_CAUSAL_BOTTOM_RIGHT && key_length != NULL)
        return fa_fail(FA_ERR_UNSUPPORTED,
                       "%s: mask = FA_MASK_CAUSAL_BOTTOM_RIGHT with key_length = %p: bottom-right "
                       "would align to nk, not to each batch's key_length[b] as variable-length "
                       "FlashAttention does; use FA_MASK_CAUSAL_TOP_LEFT or no key_length",
                       op, (const void *)key_length);
    return FA_OK;
}

/** A required array: non-NULL when it has elements (@p shape names its layout). */
static fa_status check_present(const char *op, const char *name, const void *p, int64_t count,
                               const char *shape)
{
    if (p == NULL && count > 0)
        return fa_fail(FA_ERR_NULL_POINTER,
                       "%s: %s = NULL, expected a device array of %lld elements %s", op, name,
                       (long long)count, shape);
    return FA_OK;
}

static fa_status check_alignment(const char *op, const char *name, const void *p, int bytes)
{
    if (!is_aligned(p, (uintptr_t)bytes))
        return fa_fail(FA_ERR_MISALIGNED, "%s: %s = %p, expected %d-byte alignment (its element)",
                       op, name, p, bytes);
    return FA_OK;
}

/** An output must share no byte with an input. */
static fa_status check_disjoint(const char *op, const char *out_name, const void *out,
                                int64_t out_bytes, const char *in_name, const void *in,
                                int64_t in_bytes)
{
    if (ranges_overlap(out, out_bytes, in, in_bytes))
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "%s: %s = %p overlaps %s = %p", op, out_name, out,
                       in_name, in);
    return FA_OK;
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
    FA_TRY(check_dims(op, dims, true, &ext));
    FA_TRY(check_dtype(op, dtype));
    FA_TRY(check_scale(op, scale));
    /* An empty score matrix reads nothing: q and k may then be NULL too. */
    const int64_t q_count = ext.scores > 0 ? ext.q : 0;
    const int64_t k_count = ext.scores > 0 ? ext.kv : 0;
    FA_TRY(check_present(op, "q", q, q_count, Q_SHAPE));
    FA_TRY(check_present(op, "k", k, k_count, KV_SHAPE));
    FA_TRY(check_present(op, "s", s, ext.scores, S_SHAPE));
    const int size = fa_dtype_size(dtype);
    FA_TRY(check_alignment(op, "q", q, size));
    FA_TRY(check_alignment(op, "k", k, size));
    FA_TRY(check_alignment(op, "s", s, (int)sizeof(float)));
    const int64_t s_bytes = ext.scores * (int64_t)sizeof(float);
    FA_TRY(check_disjoint(op, "s", s, s_bytes, "q", q, q_count * size));
    FA_TRY(check_disjoint(op, "s", s, s_bytes, "k", k, k_count * size));
    return FA_OK;
}

fa_status softmax_rows_validate(const float *s, const float *p, const float *lse,
                                naive_attn_dims dims, fa_mask mask, const int64_t *key_length)
{
    const char *op = "softmax_rows";
    attn_extents ext;
    FA_TRY(check_dims(op, dims, false, &ext));
    FA_TRY(check_mask(op, mask));
    FA_TRY(check_mask_with_padding(op, mask, key_length));
    FA_TRY(check_present(op, "s", s, ext.scores, S_SHAPE));
    FA_TRY(check_present(op, "p", p, ext.scores, S_SHAPE));
    FA_TRY(check_alignment(op, "s", s, (int)sizeof(float)));
    FA_TRY(check_alignment(op, "p", p, (int)sizeof(float)));
    FA_TRY(check_alignment(op, "lse", lse, (int)sizeof(float)));
    FA_TRY(check_alignment(op, "key_length", key_length, KEY_LENGTH_BYTES));
    const int64_t s_bytes = ext.scores * (int64_t)sizeof(float);
    const int64_t lse_bytes = lse != NULL ? ext.rows * (int64_t)sizeof(float) : 0;
    if (p != s)
        FA_TRY(check_disjoint(op, "p", p, s_bytes, "s", s, s_bytes));
    FA_TRY(check_disjoint(op, "lse", lse, lse_bytes, "s", s, s_bytes));
    FA_TRY(check_disjoint(op, "lse", lse, lse_bytes, "p", p, s_bytes));
    return FA_OK;
}

fa_status attn_pv_validate(const float *p, const void *v, const float *o, fa_dtype dtype,
                           naive_attn_dims dims)
{
    const char *op = "attn_pv";
    attn_extents ext;
    FA_TRY(check_dims(op, dims, true, &ext));
    FA_TRY(check_dtype(op, dtype));
    /* With no query row nothing is read; with nk = 0 the sum is empty and o = 0. */
    const int64_t v_count = ext.q > 0 ? ext.kv : 0;
    FA_TRY(check_present(op, "p", p, ext.scores, S_SHAPE));
    FA_TRY(check_present(op, "v", v, v_count, KV_SHAPE));
    FA_TRY(check_present(op, "o", o, ext.q, Q_SHAPE));
    const int size = fa_dtype_size(dtype);
    FA_TRY(check_alignment(op, "p", p, (int)sizeof(float)));
    FA_TRY(check_alignment(op, "v", v, size));
    FA_TRY(check_alignment(op, "o", o, (int)sizeof(float)));
    const int64_t o_bytes = ext.q * (int64_t)sizeof(float);
    FA_TRY(check_disjoint(op, "o", o, o_bytes, "p", p, ext.scores * (int64_t)sizeof(float)));
    FA_TRY(check_disjoint(op, "o", o, o_bytes, "v", v, v_count * size));
    return FA_OK;
}

fa_status attn_naive_validate(const void *q, const void *k, const void *v, const float *o,
                              const float *lse, fa_dtype dtype, naive_attn_dims dims,
                              float scale, fa_mask mask, const int64_t *key_length)
{
    const char *op = "attn_naive";
    attn_extents ext;
    FA_TRY(check_dims(op, dims, true, &ext));
    FA_TRY(check_dtype(op, dtype));
    FA_TRY(check_scale(op, scale));
    FA_TRY(check_mask(op, mask));
    FA_TRY(check_mask_with_padding(op, mask, key_length));
    const int64_t kv_count = ext.q > 0 ? ext.kv : 0;
    FA_TRY(check_present(op, "q", q, ext.q, Q_SHAPE));
    FA_TRY(check_present(op, "k", k, kv_count, KV_SHAPE));
    FA_TRY(check_present(op, "v", v, kv_count, KV_SHAPE));
    FA_TRY(check_present(op, "o", o, ext.q, Q_SHAPE));
    const int size = fa_dtype_size(dtype);
    FA_TRY(check_alignment(op, "q", q, size));
    FA_TRY(check_alignment(op, "k", k, size));
    FA_TRY(check_alignment(op, "v", v, size));
    FA_TRY(check_alignment(op, "o", o, (int)sizeof(float)));
    FA_TRY(check_alignment(op, "lse", lse, (int)sizeof(float)));
    FA_TRY(check_alignment(op, "key_length", key_length, KEY_LENGTH_BYTES));
    const struct {
        const char *name;
        const void *data;
        int64_t bytes;
    } inputs[] = {{"q", q, ext.q * size}, {"k", k, kv_count * size}, {"v", v, kv_count * size}};
    const int64_t o_bytes = ext.q * (int64_t)sizeof(float);
    const int64_t lse_bytes = lse != NULL ? ext.rows * (int64_t)sizeof(float) : 0;
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; ++i) {
        FA_TRY(check_disjoint(op, "o", o, o_bytes, inputs[i].name, inputs[i].data,
                              inputs[i].bytes));
        FA_TRY(check_disjoint(op, "lse", lse, lse_bytes, inputs[i].name, inputs[i].data,
                              inputs[i].bytes));
    }
    FA_TRY(check_disjoint(op, "lse", lse, lse_bytes, "o", o, o_bytes));
    return FA_OK;
}

fa_status attn_naive_workspace_bytes(naive_attn_dims dims, size_t *bytes)
{
    if (bytes == NULL)
        return fa_fail(FA_ERR_NULL_POINTER, "attn_naive_workspace_bytes: bytes = NULL");
    *bytes = 0;
    attn_extents ext;
    FA_TRY(check_dims("attn_naive_workspace_bytes", dims, false, &ext));
    *bytes = (size_t)ext.scores * sizeof(float);
    return FA_OK;
}
