/**
 * @file checks.c
 * @brief The GPU checks of M13-M16 and their timings: the stage as its driver
 *        sees it.
 *
 * Every case has a name the failure line prints and `--case` takes
 * ("max trace random 3 n=16 chunk=3", `sum trace fixture "masked first
 * chunk"`), and seeds its own random stream from (seed, milestone, kernel,
 * case), so a case reruns alone with the same inputs. Fixture names are
 * quoted with double quotes, so the driver's rerun line, which quotes the
 * whole name with single quotes, pastes as it is. Inputs are followed by NaN
 * canaries, outputs are poisoned and followed by poisoned canaries
 * (runners.h).
 */
#include "checks.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fa_attention_ref.h"
#include "fa_check.h"
#include "fa_index.h"
#include "fa_problem.h"
#include "fa_rng.h"
#include "fixtures.h"
#include "online.h"
#include "reference.h"
#include "runners.h"

enum { CASE_NAME_CAP = FA_CASE_NAME };

/** The milestone of each part of the stage, for the random streams. */
enum { MILESTONE_SOFTMAX = 15, MILESTONE_ATTENTION = 16 };

/** The kernels of a milestone, for the random streams. */
enum { KERNEL_TRACE = 0, KERNEL_SOFTMAX = 1, KERNEL_ATTENTION = 2 };

/** The milestone of trace @p op: M13 max, M14 correction, M15 sum, M16 output. */
static int trace_milestone(online_trace_op op)
{
    return 13 + (int)op;
}

/** The random stream of case @p index of @p kernel in @p milestone. */
static void case_rng(fa_rng *rng, const fa_run_options *options, int milestone, int kernel,
                     int index)
{
    fa_rng_seed(rng, options->seed,
                ((uint64_t)milestone << 32) | ((uint64_t)kernel << 16) | (uint64_t)index);
}

/** malloc of @p count elements of @p size (at least one); an error of case @p name when it fails. */
static void *host_alloc(int64_t count, size_t size, const char *name, fa_result *result)
{
    void *p = malloc((size_t)(count > 0 ? count : 1) * size);
    if (p == NULL)
        fa_result_status(result, name,
                         fa_fail(FA_ERR_OUT_OF_MEMORY, "stage04: no host memory for %lld elements",
                                 (long long)count));
    return p;
}

/** Shape [rows][cols] with named axes, for failure coordinates. */
static fa_shape named_2d(int64_t rows, int64_t cols, const char *row_name, const char *col_name)
{
    fa_shape shape = fa_shape_2d(rows, cols);
    shape.names[0] = row_name;
    shape.names[1] = col_name;
    return shape;
}

/** Gaussian values (the v of the output trace, the q, k, v of attention). */
static void fill_normal(float *x, int64_t n, double spread, fa_rng *rng)
{
    for (int64_t i = 0; i < n; ++i)
        x[i] = (float)(spread * fa_rng_normal(rng));
}

/** Score spreads of \ref numerics, cycled through the random cases. */
static const double SPREADS[] = {0.3, 1.0, 3.0, 8.0};

/** The spread of the one case the problem flags make. */
static const double FLAGS_SPREAD = 1.0;

/* ---- problem flags ------------------------------------------------------------------------ */

/** Trace and softmax problems of the flags: --rows (one row per pattern), --n, --chunk. */
enum { FLAGS_ROWS = ONLINE_ROW_PATTERN_COUNT, FLAGS_N = 1000, FLAGS_CHUNK = 16 };

/** Attention problem of the flags: --batch --heads --heads-kv (= heads) --nq --nk --d --chunk. */
enum {
    FLAGS_BATCH = 1,
    FLAGS_HEADS = 4,
    FLAGS_NQ = 256,
    FLAGS_NK = 256,
    FLAGS_D = 64,
    FLAGS_ATTN_CHUNK = 64
};

static bool flags_given(const fa_run_options *options)
{
    return options->problem.given != 0;
}

/**
 * With problem flags, the trace case runs when --rows or --n is given, or
 * when no attention flag is (--chunk alone); the attention case runs when an
 * attention flag is given.
 */
static bool flags_want_trace(const fa_run_options *options)
{
    const unsigned given = options->problem.given;
    return (given & (FA_PROBLEM_ROWS | FA_PROBLEM_N)) != 0 || (given & FA_PROBLEM_ATTENTION) == 0;
}

static bool flags_want_attention(const fa_run_options *options)
{
    return (options->problem.given & FA_PROBLEM_ATTENTION) != 0;
}

/** A trace or softmax problem: rows x n, cut every chunk entries. */
typedef struct rows_problem {
    int64_t rows, n, chunk;
} rows_problem;

static rows_problem flags_rows_problem(const fa_run_options *options)
{
    const fa_problem *p = &options->problem;
    const rows_problem r = {fa_problem_get(p, FA_PROBLEM_ROWS, FLAGS_ROWS),
                            fa_problem_get(p, FA_PROBLEM_N, FLAGS_N),
                            fa_problem_get(p, FA_PROBLEM_CHUNK, FLAGS_CHUNK)};
    return r;
}

/* ---- M13-M16: the traces ------------------------------------------------------------------- */

/** Chunk sizes of the random trace cases, and the row lengths tried with each. */
static const int64_t TRACE_CHUNKS[] = {1, 3, 16, 64};
enum { TRACE_LENGTHS_PER_CHUNK = 5 };
static const rows_problem TRACE_LONG = {ONLINE_ROW_PATTERN_COUNT, 20011, 16};

static int64_t trace_length(int64_t chunk, int which)
{
    const int64_t lengths[TRACE_LENGTHS_PER_CHUNK] = {1, chunk - 1, chunk, chunk + 1,
                                                      5 * chunk + 3};
    return lengths[which] > 0 ? lengths[which] : 2;
}

/** The expected trace of fixture @p f for @p op (its written-out values). */
static const double *fixture_trace(const online_fixture *f, online_trace_op op)
{
    switch (op) {
    case ONLINE_TRACE_MAX: return f->max;
    case ONLINE_TRACE_CORRECTION: return f->correction;
    case ONLINE_TRACE_SUM: return f->sum;
    case ONLINE_TRACE_OUTPUT: return f->output;
    }
    return f->max;
}

/** Host arrays of one trace case: rows x n inputs, rows x chunks expectations. */
typedef struct trace_case {
    float *x, *v, *got;
    double *want, *bound;
} trace_case;

static void trace_case_free(trace_case *c)
{
    free(c->x);
    free(c->v);
    free(c->got);
    free(c->want);
    free(c->bound);
    *c = (trace_case){0};
}

static bool trace_case_alloc(trace_case *c, int64_t count, int64_t trace_count, const char *name,
                             fa_result *result)
{
    *c = (trace_case){0};
    const bool ok = (c->x = host_alloc(count, sizeof(float), name, result)) != NULL &&
                    (c->v = host_alloc(count, sizeof(float), name, result)) != NULL &&
                    (c->got = host_alloc(trace_count, sizeof(float), name, result)) != NULL &&
                    (c->want = host_alloc(trace_count, sizeof(double), name, result)) != NULL &&
                    (c->bound = host_alloc(trace_count, sizeof(double), name, result)) != NULL;
    if (!ok)
        trace_case_free(c);
    return ok;
}

/**
 * The reference of @p op for every row of @p c into c->want and c->bound
 * (NULL bound means exact: the max trace).
 */
static const double *trace_reference(online_trace_op op, trace_case *c, int64_t rows, int64_t n,
                                     int64_t chunk)
{
    const int64_t chunks = online_chunk_count(n, chunk);
    for (int64_t r = 0; r < rows; ++r) {
        const int64_t o = r * chunks;
        double *want = c->want + o, *bound = c->bound + o;
        online_trace_ref ref = {0};
        switch (op) {
        case ONLINE_TRACE_MAX: ref.max = want; break;
        case ONLINE_TRACE_CORRECTION:
            ref.correction = want;
            ref.correction_bound = bound;
            break;
        case ONLINE_TRACE_SUM:
            ref.sum = want;
            ref.sum_bound = bound;
            break;
        case ONLINE_TRACE_OUTPUT:
            ref.output = want;
            ref.output_bound = bound;
            break;
        }
        online_ref_trace_row(c->x + r * n, c->v + r * n, n, chunk, &ref);
    }
    return op == ONLINE_TRACE_MAX ? NULL : c->bound;
}

/** Runs and judges one trace case whose inputs are in @p c. */
static bool run_trace_case(online_trace_op op, fa_impl impl, const char *name, trace_case *c,
                           const rows_problem *shape, const double *want, const double *bound,
                           fa_result *result)
{
    int64_t overwritten = 0;
    if (!fa_result_status(result, name,
                          online_run_trace(impl, op, c->x, c->v, shape->rows, shape->n,
                                           shape->chunk, c->got, &overwritten)))
        return false;
    const fa_shape trace_shape =
        named_2d(shape->rows, online_chunk_count(shape->n, shape->chunk), "row", "chunk");
    return fa_result_canaries(result, name, "an output", overwritten) &&
           fa_result_judge(result, name, c->got, want, bound, &trace_shape);
}

/** The fixtures of fixtures.h on one trace: bit for bit where exact, else by the bound. */
static bool trace_fixtures(online_trace_op op, fa_impl impl, const fa_run_options *options,
                           fa_result *result)
{
    for (int f = 0; f < online_fixture_count; ++f) {
        const online_fixture *fx = &online_fixtures[f];
        char name[CASE_NAME_CAP];
        snprintf(name, sizeof name, "%s fixture \"%s\"", online_trace_name(op), fx->name);
        if (!fa_case_begin(result, options, name))
            continue;
        const rows_problem shape = {1, fx->n, fx->chunk};
        trace_case c;
        if (!trace_case_alloc(&c, fx->n, online_chunk_count(fx->n, fx->chunk), name, result))
            return false;
        memcpy(c.x, fx->x, sizeof fx->x[0] * (size_t)fx->n);
        memcpy(c.v, fx->v, sizeof fx->v[0] * (size_t)fx->n);
        const double *bound = trace_reference(op, &c, 1, fx->n, fx->chunk);
        const bool exact = op == ONLINE_TRACE_MAX || fx->exact;
        const bool ok = run_trace_case(op, impl, name, &c, &shape, fixture_trace(fx, op),
                                       exact ? NULL : bound, result);
        trace_case_free(&c);
        if (!ok)
            return false;
    }
    return true;
}

/**
 * One random case (case @p index of the trace's stream): row r of the rows
 * has pattern r mod ::ONLINE_ROW_PATTERN_COUNT, the values are gaussian.
 * @p kind is "random" or "flags".
 */
static bool trace_random_case(online_trace_op op, fa_impl impl, const fa_run_options *options,
                              const char *kind, int index, const rows_problem *shape,
                              double spread, fa_result *result)
{
    char name[CASE_NAME_CAP];
    if (flags_given(options))
        snprintf(name, sizeof name, "%s %s rows=%lld n=%lld chunk=%lld", online_trace_name(op),
                 kind, (long long)shape->rows, (long long)shape->n, (long long)shape->chunk);
    else
        snprintf(name, sizeof name, "%s %s %d n=%lld chunk=%lld", online_trace_name(op), kind,
                 index, (long long)shape->n, (long long)shape->chunk);
    if (!fa_case_begin(result, options, name))
        return true;
    const int64_t count = shape->rows * shape->n;
    trace_case c;
    if (!trace_case_alloc(&c, count, shape->rows * online_chunk_count(shape->n, shape->chunk),
                          name, result))
        return false;
    fa_rng rng;
    case_rng(&rng, options, trace_milestone(op), KERNEL_TRACE, index);
    for (int64_t r = 0; r < shape->rows; ++r)
        online_fill_row(c.x + r * shape->n, shape->n, shape->chunk,
                        (online_row_pattern)(r % ONLINE_ROW_PATTERN_COUNT), spread, &rng);
    fill_normal(c.v, count, 1.0, &rng);
    const double *bound = trace_reference(op, &c, shape->rows, shape->n, shape->chunk);
    const bool ok = run_trace_case(op, impl, name, &c, shape, c.want, bound, result);
    trace_case_free(&c);
    return ok;
}

/**
 * The cases of trace @p op: fixtures, then every chunk size with every
 * length, then one long row set; or the one case of the problem flags.
 * False on the first failure.
 */
static bool check_trace(online_trace_op op, fa_impl impl, const fa_run_options *options,
                        fa_result *result)
{
    if (flags_given(options)) {
        if (!flags_want_trace(options))
            return true;
        const rows_problem shape = flags_rows_problem(options);
        return trace_random_case(op, impl, options, "flags", 0, &shape, FLAGS_SPREAD, result);
    }
    if (!trace_fixtures(op, impl, options, result))
        return false;
    int index = 0;
    for (int k = 0; k < FA_COUNT_OF(TRACE_CHUNKS); ++k) {
        for (int which = 0; which < TRACE_LENGTHS_PER_CHUNK; ++which, ++index) {
            const rows_problem shape = {ONLINE_ROW_PATTERN_COUNT,
                                        trace_length(TRACE_CHUNKS[k], which), TRACE_CHUNKS[k]};
            if (!trace_random_case(op, impl, options, "random", index, &shape,
                                   SPREADS[index % FA_COUNT_OF(SPREADS)], result))
                return false;
        }
    }
    return options->quick || trace_random_case(op, impl, options, "random", index, &TRACE_LONG,
                                                SPREADS[index % FA_COUNT_OF(SPREADS)], result);
}

/* ---- M15: one-pass softmax ----------------------------------------------------------------- */

/** Row lengths of the random softmax cases: around one warp, one block chunk, and long rows. */
static const int64_t SOFTMAX_LENGTHS[] = {1, 2, 31, 32, 33, 127, 128, 129, 1023, 1024, 1025, 4099};
static const int64_t SOFTMAX_LONG_LENGTHS[] = {65537, 1000003};

/** Host arrays of one softmax case. */
typedef struct softmax_case {
    float *x, *p, *lse;
    double *p_want, *p_bound, *lse_want, *lse_bound;
} softmax_case;

static void softmax_case_free(softmax_case *c)
{
    free(c->x);
    free(c->p);
    free(c->lse);
    free(c->p_want);
    free(c->p_bound);
    free(c->lse_want);
    free(c->lse_bound);
    *c = (softmax_case){0};
}

static bool softmax_case_alloc(softmax_case *c, int64_t rows, int64_t n, const char *name,
                               fa_result *result)
{
    *c = (softmax_case){0};
    const int64_t count = rows * n;
    const bool ok = (c->x = host_alloc(count, sizeof(float), name, result)) != NULL &&
                    (c->p = host_alloc(count, sizeof(float), name, result)) != NULL &&
                    (c->lse = host_alloc(rows, sizeof(float), name, result)) != NULL &&
                    (c->p_want = host_alloc(count, sizeof(double), name, result)) != NULL &&
                    (c->p_bound = host_alloc(count, sizeof(double), name, result)) != NULL &&
                    (c->lse_want = host_alloc(rows, sizeof(double), name, result)) != NULL &&
                    (c->lse_bound = host_alloc(rows, sizeof(double), name, result)) != NULL;
    if (!ok)
        softmax_case_free(c);
    return ok;
}

/** Runs the case in @p c and judges p (against @p p_want, NULL bound = exact) and lse. */
static bool run_softmax_case(fa_impl impl, const char *name, softmax_case *c, int64_t rows,
                             int64_t n, const double *p_want, const double *p_bound,
                             fa_result *result)
{
    int64_t overwritten = 0;
    if (!fa_result_status(result, name,
                          online_run_softmax(impl, c->x, rows, n, c->p, c->lse, &overwritten)))
        return false;
    const fa_shape p_shape = named_2d(rows, n, "row", "col");
    fa_shape lse_shape = fa_shape_1d(rows);
    lse_shape.names[0] = "lse row";
    return fa_result_canaries(result, name, "an output", overwritten) &&
           fa_result_judge(result, name, c->p, p_want, p_bound, &p_shape) &&
           fa_result_judge(result, name, c->lse, c->lse_want, c->lse_bound, &lse_shape);
}

static bool softmax_fixtures(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    for (int f = 0; f < online_fixture_count; ++f) {
        const online_fixture *fx = &online_fixtures[f];
        char name[CASE_NAME_CAP];
        snprintf(name, sizeof name, "softmax_rows_online fixture \"%s\"", fx->name);
        if (!fa_case_begin(result, options, name))
            continue;
        softmax_case c;
        if (!softmax_case_alloc(&c, 1, fx->n, name, result))
            return false;
        memcpy(c.x, fx->x, sizeof fx->x[0] * (size_t)fx->n);
        bool ok = fa_result_status(result, name,
                                   online_ref_softmax_rows(c.x, 1, fx->n, c.p_want, c.p_bound,
                                                           c.lse_want, c.lse_bound));
        if (ok) {
            c.lse_want[0] = fx->lse; /* the written-out value, judged by the reference's bound */
            ok = run_softmax_case(impl, name, &c, 1, fx->n, fx->p, fx->exact ? NULL : c.p_bound,
                                  result);
        }
        softmax_case_free(&c);
        if (!ok)
            return false;
    }
    return true;
}

/**
 * One random softmax case: row r has pattern r mod ::ONLINE_ROW_PATTERN_COUNT,
 * its masked chunks where the kernel's chunks of a block are.
 */
static bool softmax_random_case(fa_impl impl, const fa_run_options *options, const char *kind,
                                int index, int64_t rows, int64_t n, double spread,
                                fa_result *result)
{
    char name[CASE_NAME_CAP];
    if (flags_given(options))
        snprintf(name, sizeof name, "softmax_rows_online %s rows=%lld n=%lld", kind,
                 (long long)rows, (long long)n);
    else
        snprintf(name, sizeof name, "softmax_rows_online %s %d n=%lld", kind, index, (long long)n);
    if (!fa_case_begin(result, options, name))
        return true;
    const int64_t block_chunk = (int64_t)softmax_rows_online_threads(n) * SOFTMAX_ONLINE_CHUNK;
    softmax_case c;
    if (!softmax_case_alloc(&c, rows, n, name, result))
        return false;
    fa_rng rng;
    case_rng(&rng, options, MILESTONE_SOFTMAX, KERNEL_SOFTMAX, index);
    for (int64_t r = 0; r < rows; ++r)
        online_fill_row(c.x + r * n, n, block_chunk,
                        (online_row_pattern)(r % ONLINE_ROW_PATTERN_COUNT), spread, &rng);
    const bool ok =
        fa_result_status(result, name,
                         online_ref_softmax_rows(c.x, rows, n, c.p_want, c.p_bound, c.lse_want,
                                                 c.lse_bound)) &&
        run_softmax_case(impl, name, &c, rows, n, c.p_want, c.p_bound, result);
    softmax_case_free(&c);
    return ok;
}

/** Fixtures, then every length, then the long rows; or the one case of the flags (rows x n). */
static bool check_softmax(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    if (flags_given(options)) {
        const rows_problem shape = flags_rows_problem(options);
        return softmax_random_case(impl, options, "flags", 0, shape.rows, shape.n, FLAGS_SPREAD,
                                   result);
    }
    if (!softmax_fixtures(impl, options, result))
        return false;
    const int64_t rows = ONLINE_ROW_PATTERN_COUNT;
    int index = 0;
    for (int k = 0; k < FA_COUNT_OF(SOFTMAX_LENGTHS); ++k, ++index)
        if (!softmax_random_case(impl, options, "random", index, rows, SOFTMAX_LENGTHS[k],
                                 SPREADS[index % FA_COUNT_OF(SPREADS)], result))
            return false;
    for (int k = 0; !options->quick && k < FA_COUNT_OF(SOFTMAX_LONG_LENGTHS); ++k, ++index)
        if (!softmax_random_case(impl, options, "random", index, rows, SOFTMAX_LONG_LENGTHS[k],
                                 SPREADS[index % FA_COUNT_OF(SPREADS)], result))
            return false;
    return true;
}

/* ---- M16: online attention ----------------------------------------------------------------- */

/** How the keys of a random attention case are made. */
typedef enum key_pattern {
    KEYS_GAUSSIAN, /**< q, k gaussian: scores of the case's spread */
    KEYS_RISING,   /**< scores rise with the key index: the max rises in every chunk */
    KEYS_FALLING   /**< scores fall: the max is in the first chunk */
} key_pattern;

/** One random attention problem. */
typedef struct attn_case {
    int64_t batch, heads_q, heads_kv, nq, nk, head_dim;
    fa_mask mask;
    int64_t chunk;
    double spread;
    key_pattern keys;
} attn_case;

static const attn_case ATTN_CASES[] = {
    {1, 1, 1, 1, 1, 1, FA_MASK_NONE, 1, 1.0, KEYS_GAUSSIAN},
    {1, 2, 1, 5, 31, 16, FA_MASK_NONE, 32, 1.0, KEYS_GAUSSIAN},
    {2, 2, 2, 9, 32, 32, FA_MASK_CAUSAL_TOP_LEFT, 32, 3.0, KEYS_GAUSSIAN},
    {1, 4, 2, 33, 33, 64, FA_MASK_CAUSAL_BOTTOM_RIGHT, 32, 3.0, KEYS_RISING},
    {1, 1, 1, 40, 23, 100, FA_MASK_CAUSAL_BOTTOM_RIGHT, 7, 8.0, KEYS_GAUSSIAN},
    {1, 3, 1, 17, 130, 128, FA_MASK_CAUSAL_TOP_LEFT, 64, 1.0, KEYS_FALLING},
    {1, 2, 2, 8, 200, 256, FA_MASK_NONE, 64, 0.3, KEYS_GAUSSIAN},
    {1, 1, 1, 3, 77, 5, FA_MASK_NONE, 1, 8.0, KEYS_RISING},
    {1, 2, 1, 6, 96, 33, FA_MASK_NONE, 48, 3.0, KEYS_FALLING},
};
static const attn_case ATTN_LONG_CASES[] = {
    {2, 4, 4, 130, 1000, 64, FA_MASK_NONE, 64, 1.0, KEYS_GAUSSIAN},
    {1, 2, 1, 129, 2051, 128, FA_MASK_CAUSAL_BOTTOM_RIGHT, 48, 3.0, KEYS_RISING},
};

/** The attention problem of the flags; heads_kv defaults to the heads (no grouping). */
static attn_case flags_attn_case(const fa_run_options *options)
{
    const fa_problem *p = &options->problem;
    const int64_t heads = fa_problem_get(p, FA_PROBLEM_HEADS, FLAGS_HEADS);
    const attn_case c = {fa_problem_get(p, FA_PROBLEM_BATCH, FLAGS_BATCH),
                         heads,
                         fa_problem_get(p, FA_PROBLEM_HEADS_KV, heads),
                         fa_problem_get(p, FA_PROBLEM_NQ, FLAGS_NQ),
                         fa_problem_get(p, FA_PROBLEM_NK, FLAGS_NK),
                         fa_problem_get(p, FA_PROBLEM_D, FLAGS_D),
                         p->mask,
                         fa_problem_get(p, FA_PROBLEM_CHUNK, FLAGS_ATTN_CHUNK),
                         FLAGS_SPREAD,
                         KEYS_GAUSSIAN};
    return c;
}

/** Host arrays of one attention problem, and the problem that points at them. */
typedef struct attn_host {
    float *q, *k, *v, *o, *lse;
    attn_online_args args;
} attn_host;

static void attn_host_free(attn_host *h)
{
    free(h->q);
    free(h->k);
    free(h->v);
    free(h->o);
    free(h->lse);
    *h = (attn_host){0};
}

static bool attn_host_alloc(attn_host *h, const attn_case *shape, float scale, const char *name,
                            fa_result *result)
{
    *h = (attn_host){0};
    attn_online_args *a = &h->args;
    a->batch = shape->batch;
    a->heads_q = shape->heads_q;
    a->heads_kv = shape->heads_kv;
    a->nq = shape->nq;
    a->nk = shape->nk;
    a->head_dim = shape->head_dim;
    a->scale = scale;
    a->mask = shape->mask;
    a->chunk = shape->chunk;
    const int64_t rows = a->batch * a->heads_q * a->nq;
    const int64_t kv = a->batch * a->heads_kv * a->nk * a->head_dim;
    const bool ok = (h->q = host_alloc(rows * a->head_dim, sizeof(float), name, result)) != NULL &&
                    (h->k = host_alloc(kv, sizeof(float), name, result)) != NULL &&
                    (h->v = host_alloc(kv, sizeof(float), name, result)) != NULL &&
                    (h->o = host_alloc(rows * a->head_dim, sizeof(float), name, result)) != NULL &&
                    (h->lse = host_alloc(rows, sizeof(float), name, result)) != NULL;
    if (!ok) {
        attn_host_free(h);
        return false;
    }
    a->q = h->q;
    a->k = h->k;
    a->v = h->v;
    a->o = h->o;
    a->lse = h->lse;
    return true;
}

/** Runs @p h; judges o and lse against the wanted values (NULL: the reference) by the bound. */
static bool run_attention_case(fa_impl impl, const char *name, attn_host *h, const double *o_want,
                               const double *lse_want, bool exact, fa_result *result)
{
    int64_t overwritten = 0;
    if (!fa_result_status(result, name, online_run_attention(impl, &h->args, &overwritten)))
        return false;
    if (!fa_result_canaries(result, name, "an output", overwritten))
        return false;
    const attn_online_args *a = &h->args;
    const fa_attn_problem problem = online_attn_problem(a);
    const fa_attn_method method = online_attn_method(a->chunk);
    fa_attn_reference ref;
    if (!fa_result_status(result, name, fa_attention_reference(&problem, &method, &ref)))
        return false;
    const fa_shape o_shape = fa_shape_4d(a->batch, a->heads_q, a->nq, a->head_dim);
    fa_shape lse_shape = fa_shape_4d(a->batch, a->heads_q, a->nq, 1);
    lse_shape.rank = 3;
    lse_shape.names[2] = "lse row";
    const bool ok = fa_result_judge(result, name, a->o, o_want ? o_want : ref.o,
                                    exact ? NULL : ref.o_bound, &o_shape) &&
                    fa_result_judge(result, name, a->lse, lse_want ? lse_want : ref.lse,
                                    ref.lse_bound, &lse_shape);
    fa_attn_reference_free(&ref);
    return ok;
}

static bool attention_fixtures(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    for (int f = 0; f < online_attn_fixture_count; ++f) {
        const online_attn_fixture *fx = &online_attn_fixtures[f];
        char name[CASE_NAME_CAP];
        snprintf(name, sizeof name, "attn_rows_online fixture \"%s\"", fx->name);
        if (!fa_case_begin(result, options, name))
            continue;
        const attn_case shape = {1,        1,         1,   fx->nq,       fx->nk, fx->head_dim,
                                 fx->mask, fx->chunk, 1.0, KEYS_GAUSSIAN};
        attn_host h;
        if (!attn_host_alloc(&h, &shape, fx->scale, name, result))
            return false;
        memcpy(h.q, fx->q, sizeof(float) * (size_t)(fx->nq * fx->head_dim));
        memcpy(h.k, fx->k, sizeof(float) * (size_t)(fx->nk * fx->head_dim));
        memcpy(h.v, fx->v, sizeof(float) * (size_t)(fx->nk * fx->head_dim));
        const bool ok = run_attention_case(impl, name, &h, fx->o, fx->lse, fx->exact, result);
        attn_host_free(&h);
        if (!ok)
            return false;
    }
    return true;
}

/**
 * Rising or falling scores: column 0 of q is 1 and column 0 of key j carries
 * a ramp over the keys (the other columns stay gaussian but small), so
 * s_j = scale q . k_j follows the ramp.
 */
static void apply_key_pattern(attn_host *h, key_pattern keys, double spread)
{
    if (keys == KEYS_GAUSSIAN)
        return;
    const attn_online_args *a = &h->args;
    float *q = h->q, *k = h->k;
    const int64_t dim = a->head_dim, rows = a->batch * a->heads_q * a->nq;
    const int64_t key_rows = a->batch * a->heads_kv * a->nk;
    const double ramp = spread / (double)a->scale;
    for (int64_t r = 0; r < rows * dim; ++r)
        q[r] = r % dim == 0 ? 1.0f : 0.01f * q[r];
    for (int64_t r = 0; r < key_rows; ++r) {
        const int64_t j = r % a->nk;
        const double position = a->nk > 1 ? (double)j / (double)(a->nk - 1) : 0.0;
        const double signed_position =
            keys == KEYS_RISING ? 2.0 * position - 1.0 : 1.0 - 2.0 * position;
        k[r * dim] = (float)(ramp * signed_position);
    }
}

/** One random attention case (or the flags' case, @p kind "flags"). */
static bool attention_random_case(fa_impl impl, const fa_run_options *options, const char *kind,
                                  int index, const attn_case *shape, fa_result *result)
{
    static const char *const key_names[] = {"gaussian", "rising", "falling"};
    char name[CASE_NAME_CAP];
    const int prefix = flags_given(options)
                           ? snprintf(name, sizeof name, "attn_rows_online %s ", kind)
                           : snprintf(name, sizeof name, "attn_rows_online %s %d %s keys ", kind,
                                      index, key_names[shape->keys]);
    const size_t used = prefix > 0 && (size_t)prefix < sizeof name ? (size_t)prefix : 0;
    snprintf(name + used, sizeof name - used,
             "b=%lld hq=%lld hkv=%lld nq=%lld nk=%lld d=%lld mask=%s chunk=%lld",
             (long long)shape->batch, (long long)shape->heads_q, (long long)shape->heads_kv,
             (long long)shape->nq, (long long)shape->nk, (long long)shape->head_dim,
             fa_mask_flag_name(shape->mask), (long long)shape->chunk);
    if (!fa_case_begin(result, options, name))
        return true;
    attn_host h;
    const float scale = (float)(1.0 / sqrt((double)shape->head_dim));
    if (!attn_host_alloc(&h, shape, scale, name, result))
        return false;
    fa_rng rng;
    case_rng(&rng, options, MILESTONE_ATTENTION, KERNEL_ATTENTION, index);
    const attn_online_args *a = &h.args;
    const int64_t q_count = a->batch * a->heads_q * a->nq * a->head_dim;
    const int64_t kv_count = a->batch * a->heads_kv * a->nk * a->head_dim;
    fill_normal(h.q, q_count, shape->spread, &rng);
    fill_normal(h.k, kv_count, 1.0, &rng);
    fill_normal(h.v, kv_count, 1.0, &rng);
    apply_key_pattern(&h, shape->keys, shape->spread);
    const bool ok = run_attention_case(impl, name, &h, NULL, NULL, false, result);
    attn_host_free(&h);
    return ok;
}

/** Fixtures, then the random problems, then the long ones; or the one case of the flags. */
static bool check_attention(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    if (flags_given(options)) {
        if (!flags_want_attention(options))
            return true;
        const attn_case shape = flags_attn_case(options);
        return attention_random_case(impl, options, "flags", 0, &shape, result);
    }
    if (!attention_fixtures(impl, options, result))
        return false;
    int index = 0;
    for (int k = 0; k < FA_COUNT_OF(ATTN_CASES); ++k, ++index)
        if (!attention_random_case(impl, options, "random", index, &ATTN_CASES[k], result))
            return false;
    for (int k = 0; !options->quick && k < FA_COUNT_OF(ATTN_LONG_CASES); ++k, ++index)
        if (!attention_random_case(impl, options, "random", index, &ATTN_LONG_CASES[k], result))
            return false;
    return true;
}

/* ---- the milestones ------------------------------------------------------------------------ */

static void check_m13(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    if (check_trace(ONLINE_TRACE_MAX, impl, options, result))
        fa_result_pass(result, "%d cases, the running max bit for bit", result->cases);
}

static void check_m14(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    if (check_trace(ONLINE_TRACE_CORRECTION, impl, options, result))
        fa_result_pass(result, "%d cases within the bound", result->cases);
}

static void check_m15(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    if (check_trace(ONLINE_TRACE_SUM, impl, options, result) &&
        check_softmax(impl, options, result))
        fa_result_pass(result, "%d cases: running sums and the one-pass softmax", result->cases);
}

static void check_m16(fa_impl impl, const fa_run_options *options, fa_result *result)
{
    if (check_trace(ONLINE_TRACE_OUTPUT, impl, options, result) &&
        check_attention(impl, options, result))
        fa_result_pass(result, "%d cases: output traces and online attention", result->cases);
}

/* ---- probes: is the implementation written? (no GPU) -------------------------------------- */

/** An empty problem: no GPU work, so the answer says only whether the launcher is written. */
static fa_status probe_trace(online_trace_op op, fa_impl impl)
{
    return online_launch_trace(impl, op, NULL, NULL, NULL, 0, 0, 1, 0);
}

static fa_status probe_m13(fa_impl impl, const fa_run_options *options)
{
    (void)options; /* one version */
    return probe_trace(ONLINE_TRACE_MAX, impl);
}

static fa_status probe_m14(fa_impl impl, const fa_run_options *options)
{
    (void)options; /* one version */
    return probe_trace(ONLINE_TRACE_CORRECTION, impl);
}

static fa_status probe_m15(fa_impl impl, const fa_run_options *options)
{
    (void)options; /* one version */
    FA_TRY(probe_trace(ONLINE_TRACE_SUM, impl));
    return online_launch_softmax(impl, NULL, NULL, NULL, 0, 0, 0);
}

static fa_status probe_m16(fa_impl impl, const fa_run_options *options)
{
    (void)options; /* one version */
    FA_TRY(probe_trace(ONLINE_TRACE_OUTPUT, impl));
    const attn_online_args empty = {.heads_kv = 1, .head_dim = 1, .scale = 1.0f, .chunk = 1};
    return online_launch_attention(impl, &empty, 0);
}

/* ---- timings ------------------------------------------------------------------------------- */

/** The softmax timed without flags: 4096 rows of 4096 (64 MiB of x). */
static const rows_problem TIMED_SOFTMAX = {4096, 4096, 0};

/** The attention timed without flags: B 1, H 16, N 1024, D 64, chunks of 32. */
static const attn_case TIMED_ATTENTION = {1, 16, 16, 1024, 1024, 64, FA_MASK_NONE, 32, 1.0,
                                          KEYS_GAUSSIAN};

static fa_status time_m15(fa_impl impl, const fa_run_options *options, double *milliseconds,
                          char *label, size_t cap)
{
    const rows_problem shape = flags_given(options) ? flags_rows_problem(options) : TIMED_SOFTMAX;
    online_timed_softmax t;
    FA_TRY(online_timed_softmax_alloc(&t, impl, shape.rows, shape.n, options->seed));
    const fa_status status = online_median_ms(online_softmax_work, &t, milliseconds);
    online_timed_softmax_free(&t);
    snprintf(label, cap, "softmax %lld x %lld", (long long)shape.rows, (long long)shape.n);
    return status;
}

/** The output trace of the flags' rows problem (M16 with --rows, --n or --chunk only). */
static fa_status time_output_trace(fa_impl impl, const fa_run_options *options,
                                   double *milliseconds, char *label, size_t cap)
{
    const rows_problem shape = flags_rows_problem(options);
    online_timed_trace t;
    FA_TRY(online_timed_trace_alloc(&t, impl, ONLINE_TRACE_OUTPUT, shape.rows, shape.n,
                                    shape.chunk, options->seed));
    const fa_status status = online_median_ms(online_trace_work, &t, milliseconds);
    online_timed_trace_free(&t);
    snprintf(label, cap, "output trace %lld x %lld chunk %lld", (long long)shape.rows,
             (long long)shape.n, (long long)shape.chunk);
    return status;
}

static fa_status time_m16(fa_impl impl, const fa_run_options *options, double *milliseconds,
                          char *label, size_t cap)
{
    if (flags_given(options) && !flags_want_attention(options))
        return time_output_trace(impl, options, milliseconds, label, cap);
    const attn_case shape = flags_given(options) ? flags_attn_case(options) : TIMED_ATTENTION;
    const attn_online_args args = {.batch = shape.batch,
                                   .heads_q = shape.heads_q,
                                   .heads_kv = shape.heads_kv,
                                   .nq = shape.nq,
                                   .nk = shape.nk,
                                   .head_dim = shape.head_dim,
                                   .scale = (float)(1.0 / sqrt((double)shape.head_dim)),
                                   .mask = shape.mask,
                                   .chunk = shape.chunk};
    online_timed_attention t;
    FA_TRY(online_timed_attention_alloc(&t, impl, &args, options->seed));
    const fa_status status = online_median_ms(online_attention_work, &t, milliseconds);
    online_timed_attention_free(&t);
    snprintf(label, cap, "attention b=%lld hq=%lld nq=%lld nk=%lld d=%lld chunk=%lld",
             (long long)shape.batch, (long long)shape.heads_q, (long long)shape.nq,
             (long long)shape.nk, (long long)shape.head_dim, (long long)shape.chunk);
    return status;
}

static const fa_milestone_check checks[] = {
    {13, probe_m13, check_m13, NULL, false},
    {14, probe_m14, check_m14, NULL, false},
    {15, probe_m15, check_m15, time_m15, false},
    {16, probe_m16, check_m16, time_m16, false},
};

const fa_stage_desc stage04 = {4, checks, FA_COUNT_OF(checks), stage04_bench};
