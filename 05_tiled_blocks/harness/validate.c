/**
 * @file validate.c
 * @brief Argument checks of the stage-05 traces (plain C, no CUDA): the
 *        reference's and the learner's launchers call tile_trace_validate()
 *        first, so a bad argument gets one status and one message from both,
 *        and the checks are tested on machines without a GPU.
 */
#include "tiles.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fa_bytes.h"
#include "fa_index.h"

static const char *const OP = "tile_trace";


/** An array of the trace: its name, pointer, elements and element size. */
typedef struct trace_array {
    const char *name;
    const void *data;
    int64_t count;
    int64_t element_bytes;
    int64_t alignment; /**< bytes its address must be a multiple of */
    bool optional;     /**< may be NULL even when it has elements (lse) */
} trace_array;

/** heads * rows * cols elements, or -1 when the product overflows a 64-bit byte offset. */
static int64_t elements(int64_t heads, int64_t rows, int64_t cols, int64_t element_bytes)
{
    const int64_t most = fa_max_elements(element_bytes);
    const int64_t head_rows = fa_mul_within(heads, rows, most);
    return head_rows < 0 ? -1 : fa_mul_within(head_rows, cols, most);
}

static fa_status check_version(int milestone, int version, const tile_problem *p)
{
    if (milestone < 17 || milestone > 22)
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "%s: milestone = %d, expected 17..22", OP,
                       milestone);
    if (version != 1 && version != 2)
        return fa_fail(FA_ERR_INVALID_ARGUMENT,
                       "%s: version = %d, expected 1 (CUDA cores) or 2 (tensor cores)", OP,
                       version);
    const bool dtype_ok = version == 1 ? (p->dtype == FA_F32 || p->dtype == FA_BF16 ||
                                          p->dtype == FA_F16)
                                       : (p->dtype == FA_BF16 || p->dtype == FA_F16);
    if (!dtype_ok)
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "%s: dtype = %d, expected %s for version %d", OP,
                       (int)p->dtype, version == 1 ? "fp32, bf16 or fp16" : "bf16 or fp16",
                       version);
    return FA_OK;
}

static fa_status check_head_dim(int version, int64_t d)
{
    if (version == 1 && (d < 1 || d > TILE1_MAX_D))
        return fa_fail(FA_ERR_UNSUPPORTED, "%s: d = %lld, version 1 takes 1..%d", OP,
                       (long long)d, TILE1_MAX_D);
    if (version == 2 && (d < TILE2_D_MULTIPLE || d > TILE2_MAX_D || d % TILE2_D_MULTIPLE != 0))
        return fa_fail(FA_ERR_UNSUPPORTED,
                       "%s: d = %lld, version 2 takes multiples of %d from %d to %d (16-byte rows)",
                       OP, (long long)d, TILE2_D_MULTIPLE, TILE2_D_MULTIPLE, TILE2_MAX_D);
    return FA_OK;
}

/** Presence, alignment and disjointness of every array the milestone touches. */
static fa_status check_arrays(const trace_array *arrays, int count)
{
    for (int i = 0; i < count; ++i) {
        const trace_array *a = &arrays[i];
        if (a->count < 0)
            return fa_fail(FA_ERR_OVERFLOW, "%s: %s would hold more than %lld elements (64-bit "
                                            "byte offsets)",
                           OP, a->name, (long long)fa_max_elements(a->element_bytes));
        if (a->optional && a->data == NULL)
            continue;
        FA_TRY(fa_require_array(OP, a->name, a->data, a->count, (size_t)a->alignment));
    }
    /* Arrays 0..2 are the inputs; every later one is an output that must not overlap any other. */
    for (int i = 3; i < count; ++i)
        for (int j = 0; j < i; ++j)
            FA_TRY(fa_require_disjoint(OP, arrays[i].name, arrays[i].data,
                                       arrays[i].count * arrays[i].element_bytes, arrays[j].name,
                                       arrays[j].data, arrays[j].count * arrays[j].element_bytes));
    return FA_OK;
}

fa_status tile_trace_validate(int milestone, int version, const tile_problem *p,
                              const tile_trace *t)
{
    if (p == NULL || t == NULL)
        return fa_fail(FA_ERR_NULL_POINTER, "%s: problem = %p, trace = %p, expected both", OP,
                       (const void *)p, (const void *)t);
    FA_TRY(check_version(milestone, version, p));
    FA_TRY(fa_require_size(OP, "heads", p->heads));
    FA_TRY(fa_require_size(OP, "nq", p->nq));
    FA_TRY(fa_require_size(OP, "nk", p->nk));
    FA_TRY(check_head_dim(version, p->d));
    if (!isfinite(p->scale) || !(p->scale > 0.0f))
        return fa_fail(FA_ERR_INVALID_ARGUMENT,
                       "%s: scale = %g, expected a finite scale > 0 (the blocks fold it into "
                       "exp2 and take the max of the raw scores)",
                       OP, (double)p->scale);
    if (p->heads == 0 || p->nq == 0)
        return FA_OK;
    if (p->heads > FA_MAX_GRID_YZ)
        return fa_fail(FA_ERR_OVERFLOW, "%s: heads = %lld, expected at most %lld (grid y)", OP,
                       (long long)p->heads, (long long)FA_MAX_GRID_YZ);
    const int64_t query_tiles = tile_query_tiles(version, p->nq);
    if (query_tiles > FA_MAX_GRID_X)
        return fa_fail(FA_ERR_OVERFLOW, "%s: nq = %lld gives %lld query tiles, expected at most "
                                        "%lld (grid x)",
                       OP, (long long)p->nq, (long long)query_tiles, (long long)FA_MAX_GRID_X);

    const int64_t in_bytes = fa_dtype_size(p->dtype);
    const int64_t tile_bytes = version == 1 ? (int64_t)sizeof(float) : in_bytes;
    const int64_t key_tiles = tile_key_tiles(version, p->nk);
    const int64_t padded_q = query_tiles * tile_rows(version);
    const int64_t padded_k = key_tiles * tile_keys(version);
    const int64_t in_alignment = version == 2 ? 16 : in_bytes; /* cp.async moves 16 bytes */
    trace_array arrays[6] = {
        {"q", p->q, elements(p->heads, p->nq, p->d, in_bytes), in_bytes, in_alignment, false},
        {"k", p->k, elements(p->heads, p->nk, p->d, in_bytes), in_bytes, in_alignment, false},
        {"v", p->v, elements(p->heads, p->nk, p->d, in_bytes), in_bytes, in_alignment, false},
    };
    int count = 3;
    const int64_t f = (int64_t)sizeof(float);
    switch (milestone) {
    case 17:
        arrays[count++] = (trace_array){"q_tiles", t->q_tiles, elements(p->heads, padded_q, p->d, tile_bytes), tile_bytes, tile_bytes, false};
        arrays[count++] = (trace_array){"k_tiles", t->k_tiles, elements(p->heads, padded_k, p->d, tile_bytes), tile_bytes, tile_bytes, false};
        arrays[count++] = (trace_array){"v_tiles", t->v_tiles, elements(p->heads, padded_k, p->d, tile_bytes), tile_bytes, tile_bytes, false};
        break;
    case 18:
        arrays[count++] = (trace_array){"scores", t->scores, elements(p->heads, p->nq, padded_k, f), f, f, false};
        break;
    case 19:
        arrays[count++] = (trace_array){"max", t->max, elements(p->heads, p->nq, key_tiles, f), f, f, false};
        break;
    case 20:
        arrays[count++] = (trace_array){"weights", t->weights, elements(p->heads, p->nq, padded_k, f), f, f, false};
        arrays[count++] = (trace_array){"correction", t->correction, elements(p->heads, p->nq, key_tiles, f), f, f, false};
        break;
    case 21:
        arrays[count++] = (trace_array){"sum", t->sum, elements(p->heads, p->nq, key_tiles, f), f, f, false};
        break;
    default:
        arrays[count++] = (trace_array){"o", t->o, elements(p->heads, p->nq, p->d, f), f, f, false};
        arrays[count++] = (trace_array){"lse", t->lse, elements(p->heads, p->nq, 1, f), f, f, true};
        break;
    }
    return check_arrays(arrays, count);
}
