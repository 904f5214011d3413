/**
 * @file fixtures.c
 * @brief Host attention calls of stage 06: spans, the grid of shapes, random
 *        cases and the hand-computed fixtures (fixtures.h).
 */
#include "fixtures.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fa_check.h"
#include "fa_index.h"
#include "fa_reference.h"
#include "flash.h"

fa_attention_params flash_params(int64_t batch, int64_t heads_q, int64_t heads_kv, int64_t nq,
                                 int64_t nk, int64_t head_dim, fa_dtype dtype)
{
    fa_attention_params p = {0};
    p.dtype = dtype;
    p.batch = batch;
    p.heads_q = heads_q;
    p.heads_kv = heads_kv;
    p.nq = nq;
    p.nk = nk;
    p.head_dim = head_dim;
    p.q_strides = p.o_strides = fa_attention_strides_bnhd(nq, heads_q, head_dim);
    p.k_strides = p.v_strides = fa_attention_strides_bnhd(nk, heads_kv, head_dim);
    p.mask = FA_MASK_NONE;
    p.variant = FA_VARIANT_AUTO;
    return p;
}

int64_t flash_span(const fa_strides *strides, int64_t batch, int64_t rows, int64_t heads,
                   int64_t head_dim)
{
    if (batch <= 0 || rows <= 0 || heads <= 0 || head_dim <= 0)
        return 0;
    return (batch - 1) * strides->batch + (rows - 1) * strides->row + (heads - 1) * strides->head +
           head_dim;
}

int64_t flash_o_bytes(const fa_attention_params *p)
{
    return flash_span(&p->o_strides, flash_batch_entries(p), p->nq, p->heads_q, p->head_dim) *
           fa_dtype_size(flash_o_dtype(p));
}

int64_t flash_lse_count(const fa_attention_params *p)
{
    return flash_batch_entries(p) * p->heads_q * p->nq;
}

const char *flash_layout_name(flash_layout layout)
{
    return layout == FLASH_BNHD ? "bnhd" : "bhnd";
}

const char *flash_heads_kind(const flash_spec *s)
{
    if (s->heads_q == s->heads_kv)
        return "mha";
    return s->heads_kv == 1 ? "mqa" : "gqa";
}

static const char *const SCORE_NAMES[FLASH_SCORE_KINDS] = {"", " bias", " late-max", " rising"};

const char *flash_spec_describe(const flash_spec *s, char *buf, size_t cap)
{
    char scale[32] = "", mask[48] = "";
    if (s->scale != 0.0f)
        snprintf(scale, sizeof scale, " scale=%.3g", (double)s->scale);
    if (s->mask == FA_MASK_CAUSAL_TOP_LEFT || s->mask == FA_MASK_CAUSAL_BOTTOM_RIGHT)
        snprintf(mask, sizeof mask, " causal-%s", s->mask == FA_MASK_CAUSAL_TOP_LEFT ? "tl" : "br");
    else if (s->mask == FA_MASK_WINDOW)
        snprintf(mask, sizeof mask, " window=%lld,%lld", (long long)s->window_left,
                 (long long)s->window_right);
    snprintf(buf, cap, "nq=%lld nk=%lld d=%lld %s %s %s%s%s%s%s%s%s", (long long)s->nq,
             (long long)s->nk, (long long)s->head_dim, fa_dtype_name(s->dtype),
             flash_layout_name(s->layout), flash_heads_kind(s), s->o_fp32 ? " o=fp32" : "", scale,
             s->padded ? " padded" : "", s->lse ? "" : " no-lse", SCORE_NAMES[s->scores], mask);
    return buf;
}

/* ---- the grid --------------------------------------------------------------------------------- */

static const struct {
    int64_t nq, nk;
} GRID_SHAPES[] = {
    {113, 203},   {128, 217},   {113, 211},   {108, 256}, {256, 512}, {512, 256},
    {1024, 1024}, {1023, 1024}, {1024, 1023}, {1, 239},   {3, 799},   {127, 512},
    {127, 513},   {239, 1},     {799, 3},     {1, 1},
};
static const int64_t V1_DIMS[] = {32, 40, 59, 64, 96, 111, 128, 160, 192, 224, 256};
static const int64_t TENSOR_CORE_DIMS[] = {32, 64, 96, 128, 160, 192, 224, 256}; /* v2 and v3 */

/** Batch and heads of MHA, GQA and MQA cases: 4, 4 and 6 query heads in all. */
static const struct {
    int64_t batch, heads_q, heads_kv;
} GRID_HEADS[] = {{2, 2, 2}, {1, 4, 2}, {2, 3, 1}};

static const double SPREADS[] = {0.3, 1.0, 3.0, 8.0};

/** The explicit scale of the cases that do not take the default: 0.75 / sqrt(d). */
static float explicit_scale(int64_t head_dim)
{
    return 0.75f / sqrtf((float)head_dim);
}

int flash_grid_head_dims(int version, const int64_t **dims)
{
    if (version == 1) {
        *dims = V1_DIMS;
        return FA_COUNT_OF(V1_DIMS);
    }
    *dims = TENSOR_CORE_DIMS;
    return FA_COUNT_OF(TENSOR_CORE_DIMS);
}

/** True when pair @p pair (shape-major: shape * dims + dim) is run with @p quick. */
static bool pair_runs(int pair, int dims, bool quick)
{
    const int s = pair / dims;
    return !quick ||
           (pair % 5 == 0 && GRID_SHAPES[s].nq * GRID_SHAPES[s].nk <= FLASH_QUICK_MAX_PAIRS);
}

int flash_grid_count(int version, bool quick)
{
    const int64_t *dims;
    const int d = flash_grid_head_dims(version, &dims);
    int count = 0;
    for (int pair = 0; pair < FA_COUNT_OF(GRID_SHAPES) * d; ++pair)
        count += pair_runs(pair, d, quick);
    return count;
}

flash_spec flash_grid_spec(int version, bool quick, int index)
{
    const int64_t *dims;
    const int d = flash_grid_head_dims(version, &dims);
    int pair = 0;
    for (int seen = -1; pair < FA_COUNT_OF(GRID_SHAPES) * d; ++pair)
        if (pair_runs(pair, d, quick) && ++seen == index)
            break;
    const int s = pair / d, k = pair % d;
    static const fa_dtype V1_DTYPES[] = {FA_F32, FA_BF16, FA_F16};
    static const fa_dtype V2_DTYPES[] = {FA_BF16, FA_F16};
    const int heads = (2 * s + k) % FA_COUNT_OF(GRID_HEADS);
    flash_spec spec = {
        .batch = GRID_HEADS[heads].batch,
        .heads_q = GRID_HEADS[heads].heads_q,
        .heads_kv = GRID_HEADS[heads].heads_kv,
        .nq = GRID_SHAPES[s].nq,
        .nk = GRID_SHAPES[s].nk,
        .head_dim = dims[k],
        .dtype = version == 1 ? V1_DTYPES[(s + 2 * k) % 3] : V2_DTYPES[(s / 2 + k) % 2],
        .layout = (flash_layout)((s + k) % 2),
        .padded = (3 * s + k) % 4 == 1,
        .o_fp32 = version != 3 && (s / 2 + k / 2) % 2 == 1, /* v3 writes o in the input dtype */
        .lse = (s + 3 * k) % 5 != 4,
        .scale = (s + k) % 7 == 3 ? explicit_scale(dims[k]) : 0.0f,
        .scores = (flash_scores)((s / 2 + k) % FLASH_SCORE_KINDS),
        .spread = SPREADS[(s + 2 * k) % FA_COUNT_OF(SPREADS)],
    };
    return spec;
}

fa_status flash_spec_refusal(const flash_spec *s, int version)
{
    fa_attention_params p =
        flash_params(s->batch, s->heads_q, s->heads_kv, s->nq, s->nk, s->head_dim, s->dtype);
    p.o_fp32 = s->o_fp32;
    p.scale = s->scale;
    p.mask = s->mask;
    p.window_left = s->window_left;
    p.window_right = s->window_right;
    p.variant = (fa_variant)version;
    /* A call of NULL tensors is refused for those first, and otherwise for its first NULL
     * tensor, which is no refusal here. */
    const fa_status status = fa_attention_supported(&p, NULL);
    return status == FA_ERR_NULL_POINTER ? FA_OK : status;
}

/* ---- cases ------------------------------------------------------------------------------------- */

void flash_case_free(flash_case *c)
{
    fa_case_free(&c->inputs);
    for (int i = 0; i < 3; ++i)
        free(c->plain[i]);
    free(c->o);
    free(c->lse);
    *c = (flash_case){0};
}

void flash_case_poison(flash_case *c)
{
    fa_poison_host(c->o, (size_t)flash_o_bytes(&c->call.params));
    if (c->lse != NULL)
        fa_poison_host(c->lse, (size_t)flash_lse_count(&c->call.params) * sizeof(float));
}

/** Strides of a view as fa_attention_params takes them. */
static fa_strides strides_of(const fa_tensor_view *view)
{
    const fa_strides s = {view->stride_batch, view->stride_row, view->stride_head};
    return s;
}

/** Strides of o: the layout's, with FLASH_O_GAP elements after every row when padded. */
static fa_strides o_strides(const flash_spec *s)
{
    const int64_t gap = s->padded ? FLASH_O_GAP : 0;
    if (s->layout == FLASH_BNHD) {
        const int64_t row = s->heads_q * s->head_dim + gap;
        const fa_strides o = {s->nq * row, row, s->head_dim};
        return o;
    }
    const int64_t row = s->head_dim + gap;
    const fa_strides o = {s->heads_q * s->nq * row, row, s->nq * row};
    return o;
}

/**
 * q, k, v of a head dimension too small for fa_attn_case's control
 * dimensions: plain zeroed buffers in the layout, viewed by @p problem.
 */
static fa_status plain_inputs(flash_case *c, const flash_spec *s, fa_attn_problem *problem)
{
    if (s->batch < 0 || s->heads_q < 0 || s->heads_kv <= 0 || s->heads_q % s->heads_kv != 0 ||
        s->nq < 0 || s->nk < 0 || s->head_dim < 1)
        return fa_fail(FA_ERR_INVALID_SIZE,
                       "flash case: batch %lld, heads %lld/%lld, nq %lld, nk %lld, head_dim %lld "
                       "(heads_q a multiple of heads_kv > 0, head_dim >= 1)",
                       (long long)s->batch, (long long)s->heads_q, (long long)s->heads_kv,
                       (long long)s->nq, (long long)s->nk, (long long)s->head_dim);
    const int64_t rows[3] = {s->nq, s->nk, s->nk}, heads[3] = {s->heads_q, s->heads_kv, s->heads_kv};
    fa_tensor_view *views[3] = {&problem->q, &problem->k, &problem->v};
    for (int i = 0; i < 3; ++i) {
        const int64_t factors[4] = {s->batch, heads[i], rows[i], s->head_dim};
        int64_t count = 0;
        FA_TRY(fa_ref_elements("flash case", "batch * heads * rows * head_dim", factors, 4,
                               fa_dtype_size(s->dtype), &count));
        c->plain[i] = calloc((size_t)count + 1, (size_t)fa_dtype_size(s->dtype));
        if (c->plain[i] == NULL)
            return fa_fail(FA_ERR_OUT_OF_MEMORY, "flash case: no host memory for %lld elements",
                           (long long)count);
        *views[i] = (s->layout == FLASH_BNHD ? fa_view_bnhd : fa_view_bhnd)(
            c->plain[i], s->dtype, heads[i], rows[i], s->head_dim);
    }
    *problem = (fa_attn_problem){.batch = s->batch, .heads_q = s->heads_q, .heads_kv = s->heads_kv,
                                 .nq = s->nq, .nk = s->nk, .head_dim = s->head_dim,
                                 .q = problem->q, .k = problem->k, .v = problem->v};
    return FA_OK;
}

static fa_status case_alloc(flash_case *c, const flash_spec *s)
{
    fa_attn_problem problem = {0};
    if (s->head_dim >= FA_CASE_MIN_HEAD_DIM) {
        const fa_case_shape shape = {s->batch,     s->heads_q,          s->heads_kv,
                                     s->nq,        s->nk,               s->head_dim,
                                     s->mask,      s->dtype,            s->layout == FLASH_BNHD,
                                     false,        s->padded ? FLASH_PAD_ROWS : 0};
        FA_TRY(fa_case_create(&c->inputs, &shape));
        problem = c->inputs.problem;
    } else {
        FA_TRY(plain_inputs(c, s, &problem));
    }
    fa_attention_params *p = &c->call.params;
    *p = flash_params(s->batch, s->heads_q, s->heads_kv, s->nq, s->nk, s->head_dim, s->dtype);
    p->q = problem.q.data;
    p->k = problem.k.data;
    p->v = problem.v.data;
    p->o_fp32 = s->o_fp32;
    p->q_strides = strides_of(&problem.q);
    p->k_strides = strides_of(&problem.k);
    p->v_strides = strides_of(&problem.v);
    p->o_strides = o_strides(s);
    p->scale = s->scale;
    p->mask = problem.mask = s->mask;
    p->window_left = problem.window_left = s->window_left;
    p->window_right = problem.window_right = s->window_right;
    /* The generators design scores through the problem's scale: it must be the kernels'. */
    problem.scale = (double)fa_attention_scale(p);
    c->inputs.problem.scale = problem.scale;
    c->call.problem = problem;

    const int64_t o_bytes = flash_o_bytes(p);
    c->o = malloc((size_t)(o_bytes > 0 ? o_bytes : 1));
    if (s->lse)
        c->lse = malloc((size_t)(flash_lse_count(p) > 0 ? flash_lse_count(p) : 1) * sizeof(float));
    if (c->o == NULL || (s->lse && c->lse == NULL))
        return fa_fail(FA_ERR_OUT_OF_MEMORY, "flash case: no host memory for o (%lld bytes) and lse",
                       (long long)o_bytes);
    p->o = c->o;
    p->lse = c->lse;
    flash_case_poison(c);
    return FA_OK;
}

fa_status flash_case_alloc(flash_case *c, const flash_spec *s)
{
    *c = (flash_case){0};
    const fa_status status = case_alloc(c, s);
    if (status != FA_OK)
        flash_case_free(c);
    return status;
}

/** Plain normal q and k whose scaled scores have standard deviation @p spread; v normal(0, 1). */
static void fill_plain(flash_case *c, double spread, fa_rng *rng)
{
    const fa_attn_problem *p = &c->call.problem;
    /* s = scale q.k over d dimensions of normal(0, sigma^2): standard deviation
     * scale sqrt(d) sigma^2. */
    const double sigma = sqrt(spread / (p->scale * sqrt((double)p->head_dim)));
    const fa_tensor_view *views[3] = {&p->q, &p->k, &p->v};
    void *data[3] = {c->plain[0], c->plain[1], c->plain[2]};
    const int64_t rows[3] = {p->nq, p->nk, p->nk}, heads[3] = {p->heads_q, p->heads_kv, p->heads_kv};
    for (int t = 0; t < 3; ++t)
        for (int64_t b = 0; b < p->batch; ++b)
            for (int64_t h = 0; h < heads[t]; ++h)
                for (int64_t n = 0; n < rows[t]; ++n)
                    for (int64_t d = 0; d < p->head_dim; ++d) {
                        const int64_t at = b * views[t]->stride_batch + h * views[t]->stride_head +
                                           n * views[t]->stride_row + d;
                        fa_store(data[t], p->q.dtype, at,
                                 (float)((t < 2 ? sigma : 1.0) * fa_rng_normal(rng)));
                    }
}

fa_status flash_case_random(flash_case *c, const flash_spec *s, int version, fa_rng *rng)
{
    FA_TRY(flash_case_alloc(c, s));
    if (s->head_dim < FA_CASE_MIN_HEAD_DIM) {
        fill_plain(c, s->spread, rng);
        return FA_OK;
    }
    fa_attn_case *in = &c->inputs;
    const int64_t block_n = flash_block_n(version, s->head_dim);
    const bool from_last = flash_keys_from_last(version);
    fa_case_fill_scores(in, s->spread, rng);
    switch (s->scores) {
    case FLASH_SCORES_ROW_BIAS: fa_case_set_row_bias(in, FLASH_ROW_BIAS); break;
    case FLASH_SCORES_LATE_MAX:
        fa_case_place_max(in, block_n, from_last ? FA_MAX_IN_FIRST_BLOCK : FA_MAX_IN_LAST_BLOCK, 4.0);
        break;
    case FLASH_SCORES_RISING:
        fa_case_place_max(in, block_n, from_last ? FA_MAX_FALLS_EVERY_BLOCK : FA_MAX_RISES_EVERY_BLOCK,
                          1.0);
        break;
    case FLASH_SCORES_SPREAD:
    case FLASH_SCORE_KINDS: break;
    }
    fa_case_fill_values(in, 0.0, rng);
    if (s->padded)
        fa_case_fill_canaries(in);
    return FA_OK;
}

/* ---- fixtures ---------------------------------------------------------------------------------- */

/*
 * "2-tile": batch 1, two query heads sharing one key/value head (GQA), two
 * query rows, nk = BC + 2 keys (one full key tile of BC = 2^b keys, the
 * kernel's block_n, then a partial tile of two), d = 8. With
 * scale = fp32(ln 2), c = scale log2(e) = 1: every weight 2^(s - m) is a
 * power of two and every sum below exact.
 *   k_j = e0 for j < BC (tile 0), e1 for j >= BC (tile 1);
 *   v_j = [1 in tile 0 | 0, 0 in tile 0 | 4, 0, 0, j, 0, 0, -(j mod 2)].
 * Row A, q = (b - 1) e1: scores 0 in tile 0, b - 1 in tile 1. The max rises
 *   in tile 1: after tile 0, m = 0 and l = BC; after tile 1, m = b - 1,
 *   alpha = 2^-(b - 1) = 2 / BC, l = BC 2 / BC + 2 = 4. Weights 2 / BC, then 1.
 *   o_0 = BC (2 / BC) / 4 = 1/2;   o_1 = 2 x 4 / 4 = 2;
 *   o_4 = ((2 / BC) BC (BC - 1) / 2 + BC + (BC + 1)) / 4 = 3 BC / 4;
 *   o_7 = -((2 / BC) (BC / 2) + 1) / 4 = -1/2  (key BC + 1 is odd);
 *   lse = scale (b - 1) + ln 4.
 * Row B, q = 2 e0 + e1: scores 2 in tile 0, 1 in tile 1: the max stays
 *   m = 2 (alpha = 1), weights 1, then 1/2: l = BC + 1.
 *   o_0 = BC / (BC + 1);   o_1 = (1/2 + 1/2) 4 / (BC + 1) = 4 / (BC + 1);
 *   o_4 = (BC (BC - 1) / 2 + (BC + BC + 1) / 2) / (BC + 1) = (BC^2 + BC + 1) / (2 (BC + 1));
 *   o_7 = -(BC / 2 + 1/2) / (BC + 1) = -1/2;   lse = 2 scale + ln(BC + 1).
 * Query head 0 holds rows A, B; head 1 rows B, A. The other columns are 0.
 * The inputs are integers up to BC + 1 <= 129: exact in bf16 and fp16.
 */
static const int64_t TWO_TILE_D = 8;

/** b = log2(BC) for a power of two BC. */
static int64_t log2_of(int64_t bc)
{
    int64_t b = 0;
    while (((int64_t)1 << b) < bc)
        ++b;
    return b;
}

/** The hand o (8 columns) and lse of row A (@p row_a) or B of the 2-tile fixture. */
static void two_tile_row(bool row_a, int64_t bc, double *o, double *lse)
{
    const double n = (double)bc;
    for (int c = 0; c < TWO_TILE_D; ++c)
        o[c] = 0.0;
    if (row_a) {
        o[0] = 0.5;
        o[1] = 2.0;
        o[4] = 3.0 * n / 4.0;
        o[7] = -0.5;
        *lse = FA_LN2_F * (double)(log2_of(bc) - 1) + log(4.0);
    } else {
        o[0] = n / (n + 1.0);
        o[1] = 4.0 / (n + 1.0);
        o[4] = (n * n + n + 1.0) / (2.0 * (n + 1.0));
        o[7] = -0.5;
        *lse = 2.0 * FA_LN2_F + log(n + 1.0);
    }
}

static fa_status two_tile(int64_t bc, fa_dtype dtype, flash_fixture *x)
{
    if (bc < 4 || (bc & (bc - 1)) != 0)
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "fixture '2-tile': block_n = %lld, expected a power "
                                                "of two >= 4", (long long)bc);
    const flash_spec s = {1, 2, 1, 2, bc + 2, TWO_TILE_D, dtype, FLASH_BNHD, false, false, true,
                          FA_LN2_F, FLASH_SCORES_SPREAD, 1.0, FA_MASK_NONE, 0, 0};
    FA_TRY(flash_case_alloc(&x->c, &s));
    fa_attn_case *in = &x->c.inputs;
    const double b = (double)log2_of(bc);
    for (int64_t j = 0; j < s.nk; ++j) {
        const bool first = j < bc;
        fa_case_set(in, FA_CASE_K, 0, 0, j, first ? 0 : 1, 1.0);
        fa_case_set(in, FA_CASE_V, 0, 0, j, 0, first ? 1.0 : 0.0);
        fa_case_set(in, FA_CASE_V, 0, 0, j, 1, first ? 0.0 : 4.0);
        fa_case_set(in, FA_CASE_V, 0, 0, j, 4, (double)j);
        fa_case_set(in, FA_CASE_V, 0, 0, j, 7, -(double)(j % 2));
    }
    for (int64_t h = 0; h < 2; ++h)
        for (int64_t i = 0; i < 2; ++i) {
            const bool row_a = (h + i) % 2 == 0;
            if (row_a) {
                fa_case_set(in, FA_CASE_Q, 0, h, i, 1, b - 1.0);
            } else {
                fa_case_set(in, FA_CASE_Q, 0, h, i, 0, 2.0);
                fa_case_set(in, FA_CASE_Q, 0, h, i, 1, 1.0);
            }
            two_tile_row(row_a, bc, x->o + (h * 2 + i) * TWO_TILE_D, x->lse + h * 2 + i);
        }
    return FA_OK;
}

/*
 * "no-keys": batch 1, two query heads, one key/value head, nq = 3, nk = 0,
 * d = 8, q_i = (i + 1) e0. No key at all: o = 0 and lse = -inf (the log of an
 * empty sum), never NaN.
 */
static fa_status no_keys(fa_dtype dtype, flash_fixture *x)
{
    const flash_spec s = {1, 2, 1, 3, 0, 8, dtype, FLASH_BNHD, false, false, true,
                          FA_LN2_F, FLASH_SCORES_SPREAD, 1.0, FA_MASK_NONE, 0, 0};
    FA_TRY(flash_case_alloc(&x->c, &s));
    for (int64_t h = 0; h < 2; ++h)
        for (int64_t i = 0; i < 3; ++i) {
            fa_case_set(&x->c.inputs, FA_CASE_Q, 0, h, i, 0, (double)(i + 1));
            for (int64_t c = 0; c < 8; ++c)
                x->o[(h * 3 + i) * 8 + c] = 0.0;
            x->lse[h * 3 + i] = -INFINITY;
        }
    return FA_OK;
}

static const char *const FIXTURE_NAMES[] = {"2-tile", "no-keys"};
const int flash_fixture_count = FA_COUNT_OF(FIXTURE_NAMES);

const char *flash_fixture_name(int index)
{
    return index >= 0 && index < flash_fixture_count ? FIXTURE_NAMES[index] : "?";
}

void flash_fixture_free(flash_fixture *x)
{
    flash_case_free(&x->c);
    free(x->o);
    free(x->lse);
    *x = (flash_fixture){0};
}

fa_status flash_fixture_make(int index, int64_t block_n, fa_dtype dtype, flash_fixture *x)
{
    *x = (flash_fixture){0};
    /* Both fixtures have at most 2 x 3 rows of 8 columns. */
    x->o = calloc(6 * 8, sizeof(double));
    x->lse = calloc(6, sizeof(double));
    fa_status status = x->o && x->lse ? FA_OK
                                      : fa_fail(FA_ERR_OUT_OF_MEMORY, "fixture: no host memory");
    if (status == FA_OK)
        status = index == 0   ? two_tile(block_n, dtype, x)
                 : index == 1 ? no_keys(dtype, x)
                              : fa_fail(FA_ERR_INVALID_ARGUMENT, "fixture %d does not exist", index);
    if (status != FA_OK)
        flash_fixture_free(x);
    return status;
}
