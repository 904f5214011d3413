/**
 * @file battery.c
 * @brief The battery of M24: calls with one field edited and what the
 *        launcher must answer (battery.h).
 */
#include "battery.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fa_bytes.h"
#include "fixtures.h"

/* ---- addresses --------------------------------------------------------------------------------- */

/** Address @p i of the base call: 64 GiB apart, so that no span of it reaches the next one. */
static void *slot(int i)
{
    return (void *)((uintptr_t)(i + 1) << 36);
}

enum { Q_SLOT = 0, K_SLOT = 1, V_SLOT = 2, O_SLOT = 3, LSE_SLOT = 4, CU_Q_SLOT = 5, CU_K_SLOT = 6 };

/** @p base plus @p bytes (never dereferenced). */
static void *offset(const void *base, uintptr_t bytes)
{
    return (void *)((uintptr_t)base + bytes);
}

/**
 * Addresses for arrays of up to 2^63 bytes: the array at LOW spans at most
 * up to 2^63 + 2^12, the others sit above it, at 2^63 plus a few MiB, and o
 * of the lse boundary at 2^63 + 2^62 (never dereferenced).
 */
static const uintptr_t LOW = (uintptr_t)1 << 12, ABOVE = (uintptr_t)1 << 63;

static void *above(int i)
{
    return (void *)(ABOVE + ((uintptr_t)1 << 62) + ((uintptr_t)(i + 1) << 20));
}

/* ---- the calls ------------------------------------------------------------------------------- */

/** A valid call of @p batch x @p heads_q (over @p heads_kv) x nq x nk x d in [B,N,H,D], with lse. */
static fa_attention_params call_of(int64_t batch, int64_t heads_q, int64_t heads_kv, int64_t nq,
                                   int64_t nk, int64_t head_dim, fa_dtype dtype)
{
    fa_attention_params p = flash_params(batch, heads_q, heads_kv, nq, nk, head_dim, dtype);
    p.q = slot(Q_SLOT);
    p.k = slot(K_SLOT);
    p.v = slot(V_SLOT);
    p.o = slot(O_SLOT);
    p.lse = slot(LSE_SLOT);
    return p;
}

/** The base call: batch 2, 4 query heads over 2 key/value heads (GQA), nq 3, nk 5, d 64, bf16. */
static fa_attention_params base(void)
{
    return call_of(2, 4, 2, 3, 5, 64, FA_BF16);
}

/** The base call in [B,H,N,D]. */
static fa_attention_params base_bhnd(void)
{
    fa_attention_params p = base();
    p.q_strides = p.o_strides = fa_attention_strides_bhnd(p.nq, p.heads_q, p.head_dim);
    p.k_strides = p.v_strides = fa_attention_strides_bhnd(p.nk, p.heads_kv, p.head_dim);
    return p;
}

/** The base call with every pointer NULL: a valid call once a size is made 0. */
static fa_attention_params empty(void)
{
    fa_attention_params p = base();
    p.q = p.k = p.v = p.o = NULL;
    p.lse = NULL;
    return p;
}

/**
 * The base call as a packed batch: 2 sequences of 3 rows and 5 keys in all
 * (the longest 2 and 5), q and o [3][4][64], k and v [5][2][64], lse [4][3].
 */
static fa_attention_params packed(void)
{
    fa_attention_params p = base();
    p.cu_seqlens_q = slot(CU_Q_SLOT);
    p.cu_seqlens_k = slot(CU_K_SLOT);
    p.max_seqlen_q = 2;
    p.max_seqlen_k = 5;
    return p;
}

/**
 * A call at the stride boundary of q (bf16, 2 rows of 8) or, with
 * @p k_tensor, of k (fp32, 2 rows of 4): that tensor at LOW with rows
 * @p row_stride apart, spanning up to 2^63 bytes; the others above it.
 */
static fa_attention_params stride_boundary(bool k_tensor, int64_t row_stride)
{
    fa_attention_params p = k_tensor ? call_of(1, 1, 1, 1, 2, 4, FA_F32)
                                     : call_of(1, 1, 1, 2, 1, 8, FA_BF16);
    p.q = above(Q_SLOT);
    p.k = above(K_SLOT);
    p.v = above(V_SLOT);
    p.o = above(O_SLOT);
    p.lse = above(LSE_SLOT);
    const fa_strides strided = {0, row_stride, 0};
    if (k_tensor) {
        p.k = (const void *)LOW;
        p.k_strides = strided;
    } else {
        p.q = (const void *)LOW;
        p.q_strides = strided;
    }
    return p;
}

/**
 * The lse boundary: batch = heads_q = 2^15 (within the grid), head_dim 1,
 * inputs broadcast (strides 0), o [B,N,H,D]; lse holds 2^30 nq floats, at
 * LOW, o (2^30 nq bf16) at 2^63.
 */
static fa_attention_params lse_boundary(int64_t nq)
{
    const int64_t heads = (int64_t)1 << 15;
    fa_attention_params p = call_of(heads, heads, 1, nq, 1, 1, FA_BF16);
    const fa_strides broadcast = {0, 0, 0};
    p.q_strides = p.k_strides = p.v_strides = broadcast;
    p.q = above(Q_SLOT);
    p.k = above(K_SLOT);
    p.v = above(V_SLOT);
    p.o = (void *)ABOVE;
    p.lse = (float *)LOW;
    return p;
}

static void add(flash_battery_case *cases, int *count, const char *name, const fa_attention_params *p,
                fa_status expected, const char *needle, fa_variant chosen)
{
    if (*count >= FLASH_BATTERY_MAX)
        return; /* flash_battery() adds fewer; the test counts them */
    cases[(*count)++] = (flash_battery_case){name, false, *p, expected, needle, chosen};
}

int flash_battery(flash_battery_case *cases)
{
    const fa_variant V1 = FA_VARIANT_CUDA_CORES, V2 = FA_VARIANT_TENSOR_CORES;
    const fa_variant ANY = FA_VARIANT_AUTO; /* zero-size work: no kernel runs */
    const int64_t most2 = fa_max_elements(2), most4 = fa_max_elements(4);
    int n = 0;
    fa_attention_params p;
#define ACCEPT(name_, edit_, chosen_)                        \
    do {                                                     \
        p = base();                                          \
        edit_;                                               \
        add(cases, &n, name_, &p, FA_OK, "", chosen_);       \
    } while (0)
#define REFUSE(name_, edit_, status_, needle_)               \
    do {                                                     \
        p = base();                                          \
        edit_;                                               \
        add(cases, &n, name_, &p, status_, needle_, ANY);    \
    } while (0)

    /* Valid calls and the kernel they get. */
    ACCEPT("valid bf16 d 64 [B,N,H,D]", (void)0, V2);
    ACCEPT("valid fp16", p.dtype = FA_F16, V2);
    ACCEPT("valid fp32 (v1 only)", p.dtype = FA_F32, V1);
    ACCEPT("o in fp32", p.o_fp32 = true, V2);
    ACCEPT("fp32 with o_fp32", (p.dtype = FA_F32, p.o_fp32 = true), V1);
    ACCEPT("lse NULL (optional)", p.lse = NULL, V2);
    ACCEPT("layout [B,H,N,D]", p = base_bhnd(), V2);
    ACCEPT("o rows with gaps", (p.o_strides.row = 4 * 64 + 8, p.o_strides.batch = 3 * (4 * 64 + 8)),
           V2);
    ACCEPT("k and v broadcast over heads (stride 0)", p.k_strides.head = p.v_strides.head = 0, V2);
    ACCEPT("MHA (heads_kv = heads_q)", p = call_of(2, 4, 4, 3, 5, 64, FA_BF16), V2);
    ACCEPT("MQA (heads_kv = 1)", p = call_of(2, 4, 1, 3, 5, 64, FA_BF16), V2);
    ACCEPT("head_dim 256", p = call_of(2, 4, 2, 3, 5, 256, FA_BF16), V2);
    ACCEPT("head_dim 8", p = call_of(2, 4, 2, 3, 5, 8, FA_BF16), V2);
    ACCEPT("head_dim 40", p = call_of(2, 4, 2, 3, 5, 40, FA_BF16), V2);
    ACCEPT("head_dim 1 (v1)", p = call_of(2, 4, 2, 3, 5, 1, FA_BF16), V1);
    ACCEPT("head_dim 59 (v1)", p = call_of(2, 4, 2, 3, 5, 59, FA_F16), V1);
    ACCEPT("head_dim 60, not a multiple of 8 (v1)", p = call_of(2, 4, 2, 3, 5, 60, FA_BF16), V1);
    ACCEPT("head_dim 256 fp32 (v1)", p = call_of(2, 4, 2, 3, 5, 256, FA_F32), V1);
    ACCEPT("mask causal top-left", p.mask = FA_MASK_CAUSAL_TOP_LEFT, V2);
    ACCEPT("mask causal bottom-right", p.mask = FA_MASK_CAUSAL_BOTTOM_RIGHT, V2);
    ACCEPT("mask window (3, 0)", (p.mask = FA_MASK_WINDOW, p.window_left = 3), V2);
    ACCEPT("mask window (-1, -1): unbounded", (p.mask = FA_MASK_WINDOW, p.window_left = -1,
                                              p.window_right = -1), V2);
    ACCEPT("mask window (INT64_MAX, INT64_MAX): unbounded",
           (p.mask = FA_MASK_WINDOW, p.window_left = INT64_MAX, p.window_right = INT64_MAX), V2);
    ACCEPT("window_left -5 ignored without FA_MASK_WINDOW",
           (p.mask = FA_MASK_CAUSAL_TOP_LEFT, p.window_left = -5), V2);
    ACCEPT("scale 0: the default 1 / sqrt(head_dim)", p.scale = 0.0f, V2);
    ACCEPT("scale -0: the default", p.scale = -0.0f, V2);
    ACCEPT("scale 2", p.scale = 2.0f, V2);
    ACCEPT("variant v1 on bf16", p.variant = V1, V1);
    ACCEPT("variant v2 on bf16", p.variant = V2, V2);
    ACCEPT("variant v1 on fp32", (p.dtype = FA_F32, p.variant = V1), V1);
    ACCEPT("q 8-byte aligned (auto takes v1)", p.q = offset(p.q, 8), V1);
    ACCEPT("nk 0 with k and v NULL", (p.nk = 0, p.k = p.v = NULL), V2);
    ACCEPT("o at k's address with nk 0 (k is never read)", (p.nk = 0, p.o = (void *)p.k), V2);
    ACCEPT("o_strides.row 0 with nq 1", (p.nq = 1, p.o_strides.row = 0), V2);
    ACCEPT("heads_q 65535 (MQA, grid y)",
           p = call_of(1, 65535, 1, 1, 1, 8, FA_BF16), V2);
    ACCEPT("batch 65535 (grid z)", p = call_of(65535, 1, 1, 1, 1, 8, FA_BF16), V2);
    ACCEPT("batch 0, every pointer NULL", (p = empty(), p.batch = 0), ANY);
    ACCEPT("heads_q 0, every pointer NULL", (p = empty(), p.heads_q = 0, p.heads_kv = 0), ANY);
    ACCEPT("nq 0, every pointer NULL", (p = empty(), p.nq = 0), ANY);

    /* Pointers. */
    p = base();
    add(cases, &n, "params NULL", &p, FA_ERR_NULL_POINTER, "params", ANY);
    cases[n - 1].null_params = true;
    REFUSE("q NULL", p.q = NULL, FA_ERR_NULL_POINTER, "q = NULL");
    REFUSE("k NULL", p.k = NULL, FA_ERR_NULL_POINTER, "k = NULL");
    REFUSE("v NULL", p.v = NULL, FA_ERR_NULL_POINTER, "v = NULL");
    REFUSE("o NULL", p.o = NULL, FA_ERR_NULL_POINTER, "o = NULL");
    REFUSE("q at an odd address", p.q = offset(p.q, 1), FA_ERR_MISALIGNED, "q = ");
    REFUSE("fp32 k 2-byte aligned", (p.dtype = FA_F32, p.k = offset(p.k, 2)), FA_ERR_MISALIGNED,
           "k = ");
    REFUSE("o_fp32 with o 2-byte aligned", (p.o_fp32 = true, p.o = offset(p.o, 2)),
           FA_ERR_MISALIGNED, "o = ");
    REFUSE("lse 2-byte aligned", p.lse = offset(p.lse, 2), FA_ERR_MISALIGNED, "lse = ");

    /* The enums and the scale. */
    REFUSE("dtype 3", p.dtype = (fa_dtype)3, FA_ERR_INVALID_ARGUMENT, "dtype = 3");
    REFUSE("dtype -1", p.dtype = (fa_dtype)-1, FA_ERR_INVALID_ARGUMENT, "dtype = -1");
    REFUSE("scale NaN", p.scale = NAN, FA_ERR_INVALID_ARGUMENT, "scale = nan");
    REFUSE("scale +inf", p.scale = INFINITY, FA_ERR_INVALID_ARGUMENT, "scale = inf");
    REFUSE("scale -inf", p.scale = -INFINITY, FA_ERR_INVALID_ARGUMENT, "scale = -inf");
    REFUSE("scale -0.5", p.scale = -0.5f, FA_ERR_INVALID_ARGUMENT, "scale = -0.5");
    REFUSE("mask 7", p.mask = (fa_mask)7, FA_ERR_INVALID_ARGUMENT, "mask = 7");
    REFUSE("mask -1", p.mask = (fa_mask)-1, FA_ERR_INVALID_ARGUMENT, "mask = -1");
    REFUSE("window_left -2", (p.mask = FA_MASK_WINDOW, p.window_left = -2), FA_ERR_INVALID_ARGUMENT,
           "window_left = -2");
    REFUSE("window_right -2", (p.mask = FA_MASK_WINDOW, p.window_right = -2),
           FA_ERR_INVALID_ARGUMENT, "window_right = -2");
    REFUSE("variant 4", p.variant = (fa_variant)4, FA_ERR_INVALID_ARGUMENT, "variant = 4");
    REFUSE("variant -1", p.variant = (fa_variant)-1, FA_ERR_INVALID_ARGUMENT, "variant = -1");

    /* Sizes. */
    REFUSE("batch -1", p.batch = -1, FA_ERR_INVALID_SIZE, "batch = -1");
    REFUSE("heads_q -1", p.heads_q = -1, FA_ERR_INVALID_SIZE, "heads_q = -1");
    REFUSE("nq -1", p.nq = -1, FA_ERR_INVALID_SIZE, "nq = -1");
    REFUSE("nk -1", p.nk = -1, FA_ERR_INVALID_SIZE, "nk = -1");
    REFUSE("heads_kv 0", p.heads_kv = 0, FA_ERR_INVALID_SIZE, "heads_kv = 0");
    REFUSE("heads_kv -1", p.heads_kv = -1, FA_ERR_INVALID_SIZE, "heads_kv = -1");
    REFUSE("heads_q 3 over heads_kv 2", (p.heads_q = 3, p.heads_kv = 2), FA_ERR_INVALID_SIZE,
           "heads_q = 3 is not a multiple of heads_kv = 2");
    REFUSE("head_dim 0", p.head_dim = 0, FA_ERR_UNSUPPORTED, "head_dim = 0");
    REFUSE("head_dim 257", p = call_of(2, 4, 2, 3, 5, 257, FA_F32), FA_ERR_UNSUPPORTED,
           "head_dim = 257");
    REFUSE("head_dim -1", p.head_dim = -1, FA_ERR_UNSUPPORTED, "head_dim = -1");
    REFUSE("heads_q 65536 (grid y)", p = call_of(1, 65536, 1, 1, 1, 8, FA_BF16), FA_ERR_OVERFLOW,
           "heads_q = 65536");
    REFUSE("batch 65536 (grid z)", p = call_of(65536, 1, 1, 1, 1, 8, FA_BF16), FA_ERR_OVERFLOW,
           "batch = 65536");
    REFUSE("nq of more than 2^31 - 1 tiles of 64 rows (grid x)",
           p = call_of(1, 1, 1, FA_MAX_GRID_X * 64 + 1, 1, 8, FA_BF16), FA_ERR_OVERFLOW,
           "nq = 137438953409");
    REFUSE("batch 0 with dtype 3", (p = empty(), p.batch = 0, p.dtype = (fa_dtype)3),
           FA_ERR_INVALID_ARGUMENT, "dtype = 3");
    REFUSE("batch 0 with head_dim 0", (p = empty(), p.batch = 0, p.head_dim = 0),
           FA_ERR_UNSUPPORTED, "head_dim = 0");
    REFUSE("nq 0 with heads_q 3 over heads_kv 2", (p = empty(), p.nq = 0, p.heads_q = 3),
           FA_ERR_INVALID_SIZE, "heads_q = 3");

    /* Strides. */
    REFUSE("q_strides.row -1", p.q_strides.row = -1, FA_ERR_BAD_STRIDE, "q_strides.row = -1");
    REFUSE("k_strides.batch -1", p.k_strides.batch = -1, FA_ERR_BAD_STRIDE, "k_strides.batch = -1");
    REFUSE("v_strides.head -64", p.v_strides.head = -64, FA_ERR_BAD_STRIDE, "v_strides.head = -64");
    REFUSE("o_strides.batch -1", p.o_strides.batch = -1, FA_ERR_BAD_STRIDE, "o_strides.batch = -1");
    REFUSE("o_strides.row 0: rows onto one address", p.o_strides.row = 0, FA_ERR_BAD_STRIDE,
           "o_strides.row = 0");
    REFUSE("o_strides.head 32 < head_dim: heads overlap", p.o_strides.head = 32, FA_ERR_BAD_STRIDE,
           "o_strides.head = 32");
    REFUSE("o_strides.batch 0 with batch 2", p.o_strides.batch = 0, FA_ERR_BAD_STRIDE,
           "o_strides.batch = 0");

    /* Version 2 asked for where it cannot run. */
    REFUSE("variant v2 with fp32", (p.dtype = FA_F32, p.variant = V2), FA_ERR_UNSUPPORTED,
           "dtype fp32");
    REFUSE("variant v2 with head_dim 60", (p = call_of(2, 4, 2, 3, 5, 60, FA_BF16), p.variant = V2),
           FA_ERR_UNSUPPORTED, "head_dim = 60");
    REFUSE("variant v2 with q 8-byte aligned", (p.q = offset(p.q, 8), p.variant = V2),
           FA_ERR_MISALIGNED, "q is not 16-byte aligned");
    REFUSE("variant v2 with v 2-byte aligned", (p.v = offset(p.v, 2), p.variant = V2),
           FA_ERR_MISALIGNED, "v is not 16-byte aligned");
    REFUSE("variant v2 with k rows of 132 elements",
           (p.k_strides.row = 2 * 64 + 4, p.k_strides.batch = 5 * (2 * 64 + 4), p.variant = V2),
           FA_ERR_MISALIGNED, "k is not 16-byte aligned");
    REFUSE("variant v2 with o_strides.batch off by 2",
           (p.o_strides.batch += 2, p.variant = V2), FA_ERR_MISALIGNED, "o is not 16-byte aligned");
    REFUSE("variant v2, o fp32 with rows of 258 floats",
           (p.o_fp32 = true, p.o_strides.row = 4 * 64 + 2, p.o_strides.batch = 3 * (4 * 64 + 2),
            p.variant = V2),
           FA_ERR_MISALIGNED, "o is not 16-byte aligned");
    ACCEPT("k rows of 132 elements (auto takes v1)",
           (p.k_strides.row = 2 * 64 + 4, p.k_strides.batch = 5 * (2 * 64 + 4)), V1);

    /* Outputs apart from the inputs and from each other. */
    REFUSE("o overlapping q", p.o = offset(p.q, 128), FA_ERR_INVALID_ARGUMENT, "overlaps q");
    REFUSE("o overlapping k", p.o = offset(p.k, 16), FA_ERR_INVALID_ARGUMENT, "overlaps k");
    REFUSE("o overlapping v", p.o = (void *)p.v, FA_ERR_INVALID_ARGUMENT, "overlaps v");
    REFUSE("lse overlapping q", p.lse = offset(p.q, 64), FA_ERR_INVALID_ARGUMENT, "lse = ");
    REFUSE("lse overlapping v", p.lse = offset(p.v, 256), FA_ERR_INVALID_ARGUMENT, "lse = ");
    REFUSE("lse overlapping o", p.lse = offset(p.o, 16), FA_ERR_INVALID_ARGUMENT, "lse = ");

    /* 64-bit offsets at the boundary: a tensor's end, one past its last element, must be a
     * byte offset. q bf16 with 2 rows of 8: the last element at offset 7 + row stride, at most
     * INT64_MAX / 2 - 1 (so its end, 2 (INT64_MAX / 2) bytes, fits). k fp32 with 2 rows of 4:
     * 3 + row stride, at most INT64_MAX / 4 - 1. lse: batch x heads_q x nq floats, at most
     * INT64_MAX / 4 = 2^61 - 1, so with batch = heads_q = 2^15, nq at most 2^31 - 1. */
    ACCEPT("q's last element at offset INT64_MAX / 2 - 1 (the largest; an odd stride: v1)",
           p = stride_boundary(false, most2 - 8), V1);
    REFUSE("q's last element at INT64_MAX / 2: its end is past 64 bits",
           p = stride_boundary(false, most2 - 7), FA_ERR_OVERFLOW, "q_strides.row");
    ACCEPT("fp32 k's last element at offset INT64_MAX / 4 - 1 (the largest)",
           p = stride_boundary(true, most4 - 4), V1);
    REFUSE("fp32 k's last element at INT64_MAX / 4: its end is past 64 bits",
           p = stride_boundary(true, most4 - 3), FA_ERR_OVERFLOW, "k_strides.row");
    ACCEPT("lse of 2^15 x 2^15 x (2^31 - 1) floats (the largest nq)",
           p = lse_boundary(((int64_t)1 << 31) - 1), V1);
    REFUSE("lse of 2^15 x 2^15 x 2^31 floats", p = lse_boundary((int64_t)1 << 31), FA_ERR_OVERFLOW,
           "lse");

    /* Packed batches: the batch strides unused, one [rows][heads][d] tensor each, lse [heads][nq]. */
    ACCEPT("packed batch", p = packed(), V2);
    ACCEPT("packed, batch strides -1 (unused)",
           (p = packed(), p.q_strides.batch = p.k_strides.batch = p.o_strides.batch = -1), V2);
    ACCEPT("packed, o_strides.batch 0 (unused: no overlap)", (p = packed(), p.o_strides.batch = 0),
           V2);
    ACCEPT("packed, o_strides.batch odd (unused: v2 still runs)",
           (p = packed(), p.o_strides.batch = 3), V2);
    ACCEPT("packed, o right after q's 3 rows (768 elements)",
           (p = packed(), p.o = offset(p.q, 768 * 2)), V2);
    ACCEPT("packed, o right after lse's 4 x 3 floats", (p = packed(), p.o = offset(p.lse, 48)),
           V2);
    ACCEPT("packed, longest sequences 0 (no row, no key)",
           (p = packed(), p.max_seqlen_q = p.max_seqlen_k = 0), V2);
    ACCEPT("packed, batch 0 with every tensor NULL",
           (p = packed(), p.batch = 0, p.q = p.k = p.v = p.o = NULL, p.lse = NULL), ANY);
    ACCEPT("max_seqlen_q -1 ignored when not packed", p.max_seqlen_q = -1, V2);
    REFUSE("cu_seqlens_q without cu_seqlens_k", (p = packed(), p.cu_seqlens_k = NULL),
           FA_ERR_INVALID_ARGUMENT, "a packed batch sets both");
    REFUSE("cu_seqlens_k without cu_seqlens_q", (p = packed(), p.cu_seqlens_q = NULL),
           FA_ERR_INVALID_ARGUMENT, "a packed batch sets both");
    REFUSE("packed, max_seqlen_q -1", (p = packed(), p.max_seqlen_q = -1), FA_ERR_INVALID_SIZE,
           "max_seqlen_q = -1");
    REFUSE("packed, max_seqlen_k -1", (p = packed(), p.max_seqlen_k = -1), FA_ERR_INVALID_SIZE,
           "max_seqlen_k = -1");
    ACCEPT("packed, max_seqlen_q past nq (a bound: the grid takes nq)",
           (p = packed(), p.max_seqlen_q = 4096), V2);
    ACCEPT("packed, max_seqlen_k past nk", (p = packed(), p.max_seqlen_k = INT64_MAX), V2);
    REFUSE("packed, cu_seqlens_k 2-byte aligned",
           (p = packed(), p.cu_seqlens_k = offset(p.cu_seqlens_k, 2)), FA_ERR_MISALIGNED,
           "cu_seqlens_k = ");
    REFUSE("packed, o overlapping cu_seqlens_q", (p = packed(), p.o = (void *)p.cu_seqlens_q),
           FA_ERR_INVALID_ARGUMENT, "overlaps cu_seqlens_q");
    REFUSE("packed, lse overlapping cu_seqlens_k",
           (p = packed(), p.lse = (float *)offset(p.cu_seqlens_k, 8)), FA_ERR_INVALID_ARGUMENT,
           "overlaps cu_seqlens_k");
    REFUSE("packed, o_strides.row 0", (p = packed(), p.o_strides.row = 0), FA_ERR_BAD_STRIDE,
           "o_strides.row = 0");
#undef ACCEPT
#undef REFUSE
    return n;
}

/* ---- judging a validator ------------------------------------------------------------------------ */

bool flash_battery_call(flash_validator validate, const flash_battery_case *c, fa_status *status,
                        char *why, size_t cap)
{
    fa_variant chosen = FA_VARIANT_AUTO;
    fa_clear_error();
    *status = validate(c->null_params ? NULL : &c->params, &chosen);
    why[0] = '\0';
    if (*status != c->expected) {
        snprintf(why, cap, "returned %s (\"%s\"), expected %s%s%s", fa_status_name(*status),
                 *status == FA_OK ? "" : fa_last_error(), fa_status_name(c->expected),
                 c->expected == FA_OK ? "" : " naming ", c->needle);
        return false;
    }
    if (c->expected != FA_OK && strstr(fa_last_error(), c->needle) == NULL) {
        snprintf(why, cap, "returned %s as expected, but its message \"%s\" does not name \"%s\"",
                 fa_status_name(*status), fa_last_error(), c->needle);
        return false;
    }
    if (c->expected == FA_OK && c->chosen != FA_VARIANT_AUTO && chosen != c->chosen) {
        snprintf(why, cap, "accepted the call but chose %s, expected %s",
                 fa_attention_variant_name(chosen), fa_attention_variant_name(c->chosen));
        return false;
    }
    return true;
}

void flash_battery_check(flash_validator validate, const fa_run_options *options,
                         fa_result *result)
{
    flash_battery_case cases[FLASH_BATTERY_MAX];
    const int count = flash_battery(cases);
    int refused = 0;
    for (int i = 0; i < count; ++i) {
        char name[FA_CASE_NAME];
        snprintf(name, sizeof name, "validate '%s'", cases[i].name);
        if (!fa_case_begin(result, options, name))
            continue;
        fa_status status = FA_OK;
        char why[FA_RESULT_DETAIL];
        const bool ok = flash_battery_call(validate, &cases[i], &status, why, sizeof why);
        if (status == FA_ERR_NOT_IMPLEMENTED) {
            fa_result_status(result, name, status);
            return;
        }
        if (!ok) {
            fa_result_fail(result, name, "%s", why);
            return;
        }
        refused += cases[i].expected != FA_OK;
    }
    fa_result_pass(result,
                   "%d calls: %d refused with their status and the field named, %d accepted with "
                   "the kernel expected",
                   result->cases, refused, result->cases - refused);
}
