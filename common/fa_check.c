/**
 * @file fa_check.c
 * @brief The "bound covers the output" verdict and its report.
 */
#include "fa_check.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "fa_math.h"

/** The fp32 pattern of a buffer filled with FA_POISON_BYTE. */
static const uint32_t POISON_BITS = 0xFFFFFFFFu;
_Static_assert(FA_POISON_BYTE == 0xFF, "POISON_BITS repeats FA_POISON_BYTE in every byte");

static uint32_t float_bits(float x)
{
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

bool fa_is_poison(float x) { return float_bits(x) == POISON_BITS; }

void fa_poison_host(void *p, size_t bytes)
{
    if (bytes > 0)
        memset(p, FA_POISON_BYTE, bytes);
}

float fa_load_or_poison(const void *data, fa_dtype dtype, int64_t i)
{
    if (dtype != FA_F32 && ((const uint16_t *)data)[i] == UINT16_C(0xFFFF)) {
        float poison;
        fa_poison_host(&poison, sizeof poison);
        return poison;
    }
    return fa_load(data, dtype, i);
}

static fa_shape make_shape(int rank, const int64_t *dims, const char *const *names)
{
    fa_shape shape = {0};
    shape.rank = rank;
    for (int d = 0; d < rank; d++) {
        shape.dims[d] = dims[d];
        shape.names[d] = names[d];
    }
    return shape;
}

fa_shape fa_shape_1d(int64_t n)
{
    static const char *const names[] = {"i"};
    return make_shape(1, (const int64_t[]){n}, names);
}

fa_shape fa_shape_2d(int64_t rows, int64_t cols)
{
    static const char *const names[] = {"row", "col"};
    return make_shape(2, (const int64_t[]){rows, cols}, names);
}

fa_shape fa_shape_4d(int64_t batch, int64_t heads, int64_t rows, int64_t cols)
{
    static const char *const names[] = {"batch", "head", "row", "col"};
    return make_shape(4, (const int64_t[]){batch, heads, rows, cols}, names);
}

int64_t fa_shape_count(const fa_shape *shape)
{
    int64_t count = 1;
    for (int d = 0; d < shape->rank; d++)
        count *= shape->dims[d];
    return count;
}

/*
 * An index outside the shape (or a NULL shape) is printed as "(index N)"
 * rather than as a wrong coordinate.
 */
const char *fa_shape_format(const fa_shape *shape, int64_t index, char *buf, size_t cap)
{
    if (cap == 0)
        return buf;
    if (!shape || shape->rank < 1 || shape->rank > FA_SHAPE_MAX_RANK || index < 0 ||
        index >= fa_shape_count(shape)) {
        snprintf(buf, cap, "(index %" PRId64 ")", index);
        return buf;
    }
    int64_t coordinate[FA_SHAPE_MAX_RANK];
    int64_t rest = index;
    for (int d = shape->rank - 1; d >= 0; d--) { /* row-major: the last axis varies fastest */
        coordinate[d] = rest % shape->dims[d];
        rest /= shape->dims[d];
    }
    size_t used = 0;
    for (int d = 0; d < shape->rank && used < cap; d++) {
        const int written = snprintf(buf + used, cap - used, "%s%s %" PRId64, d == 0 ? "(" : ", ",
                                     shape->names[d] ? shape->names[d] : "axis", coordinate[d]);
        if (written < 0)
            break;
        used += (size_t)written;
    }
    if (used < cap)
        snprintf(buf + used, cap - used, ")");
    return buf;
}

/**
 * err/bound of one element for the report. Finite pairs under a positive bound
 * give the plain ratio; anything else is 0 when covered and +inf when not
 * (a zero bound exceeded, a wrong non-finite value, an unwritten element).
 */
static double element_ratio(bool finite_pair, double err, double bound, bool covered)
{
    if (finite_pair && bound > 0.0)
        return err / bound;
    return covered ? 0.0 : INFINITY;
}

/*
 * report may be NULL (only the verdict is wanted). n <= 0 compares nothing and
 * is covered. In exact mode the absolute and relative errors are still
 * measured against the double reference.
 *
 * A bound element is read only where the reference is finite; there it must
 * be a finite number >= 0. An infinite one would cover any output, a NaN one
 * (err <= NaN is false) none, silently: both are refused, and so is a negative
 * one. Such an element is uncovered with err/bound NaN, which the NaN-keeping
 * maximum carries into worst_ratio.
 */
bool fa_check_covers(const float *out, const double *ref, const double *bound, int64_t n,
                     fa_check_report *report)
{
    fa_check_report local;
    fa_check_report *r = report ? report : &local;
    memset(r, 0, sizeof *r);
    r->worst_index = -1;
    r->invalid.index = -1;
    double abs_err_sum = 0.0;
    int64_t finite_pairs = 0;

    for (int64_t i = 0; i < n; i++) {
        const float got = out[i];
        const double want = ref[i];
        const double b = bound ? bound[i] : 0.0;
        const bool finite_pair = isfinite(got) && isfinite(want);
        const double err = finite_pair ? fabs((double)got - want) : NAN;
        const bool has_bound = !isfinite(want) || (isfinite(b) && b >= 0.0);
        bool covered;

        if (!has_bound) {
            if (r->invalid_bounds++ == 0)
                r->invalid = (fa_mismatch){i, got, want, b};
        }
        if (fa_is_poison(got)) {
            r->unwritten++;
            covered = false;
        } else if (isnan(want)) {
            covered = isnan(got);
        } else if (isinf(want)) {
            covered = (double)got == want;
        } else {
            /* Exact mode compares bits, so -0.0 does not pass for 0.0. */
            covered = has_bound && (bound ? finite_pair && err <= b
                                          : float_bits(got) == float_bits((float)want));
            if (!covered && !isfinite(got))
                r->nonfinite++;
        }

        if (finite_pair) {
            finite_pairs++;
            abs_err_sum += err;
            r->max_abs_err = fa_max_nan_double(r->max_abs_err, err);
            if (want != 0.0)
                r->max_rel_err = fa_max_nan_double(r->max_rel_err, err / fabs(want));
        }
        const double ratio = has_bound ? element_ratio(finite_pair, err, b, covered) : NAN;
        /* The first element of the largest ratio; a NaN ratio is larger than any number. */
        const double worst = fa_max_nan_double(r->worst_ratio, ratio);
        if (r->worst_index < 0 || (worst != r->worst_ratio && !isnan(r->worst_ratio))) {
            r->worst_ratio = worst;
            r->worst_index = i;
        }
        if (!covered) {
            if (r->mismatches < FA_CHECK_MAX_MISMATCHES)
                r->first[r->mismatches++] = (fa_mismatch){i, got, want, b};
            r->uncovered++;
        }
    }
    r->count = n > 0 ? n : 0;
    r->mean_abs_err = finite_pairs > 0 ? abs_err_sum / (double)finite_pairs : 0.0;
    if (r->invalid_bounds > 0)
        r->status = fa_fail(FA_ERR_INVALID_ARGUMENT,
                            "check: bound[%" PRId64 "] = %g where the reference is %.17g: a bound is "
                            "a finite number >= 0 (a gamma_n with n*u >= 1, or a NaN term, gives "
                            "none); %" PRId64 " of %" PRId64 " elements without a bound, not judged",
                            r->invalid.index, r->invalid.bound, r->invalid.want, r->invalid_bounds,
                            r->count);
    return r->uncovered == 0;
}

/**
 * Writes "got G, want W (bound B, err/bound R)" for one mismatch: "unwritten"
 * replaces "got G" for a poisoned element, and a zero bound (an exact
 * comparison) has no ratio to print.
 */
static int format_mismatch(char *buf, size_t cap, const fa_mismatch *m)
{
    if (fa_is_poison(m->got))
        return snprintf(buf, cap, "unwritten, want %.17g (bound %.3g)", m->want, m->bound);
    if (m->bound == 0.0)
        return snprintf(buf, cap, "got %.9g, want %.17g (bound 0)", (double)m->got, m->want);
    const bool finite_pair = isfinite(m->got) && isfinite(m->want);
    const double err = finite_pair ? fabs((double)m->got - m->want) : NAN;
    return snprintf(buf, cap, "got %.9g, want %.17g (bound %.3g, err/bound %.3g)", (double)m->got,
                    m->want, m->bound, element_ratio(finite_pair, err, m->bound, false));
}

/** Advances a write position by what snprintf reported, never past the buffer. */
static size_t advance(size_t used, int written, size_t cap)
{
    if (written < 0)
        return cap;
    used += (size_t)written;
    return used < cap ? used : cap;
}

/*
 * A covered report gives "all N covered (worst err/bound R)". The buffer is
 * always NUL-terminated when cap > 0; a long line is cut, never overrun.
 */
const char *fa_check_describe(const fa_check_report *report, const fa_shape *shape, char *buf,
                              size_t cap)
{
    if (cap == 0)
        return buf;
    if (report->status != FA_OK) {
        char where[128];
        snprintf(buf, cap,
                 "not judged: the bound at %s is %g where the reference is %.17g (a bound is a "
                 "finite number >= 0); %" PRId64 " of %" PRId64 " elements without a bound",
                 fa_shape_format(shape, report->invalid.index, where, sizeof where),
                 report->invalid.bound, report->invalid.want, report->invalid_bounds, report->count);
        return buf;
    }
    if (report->uncovered == 0) {
        snprintf(buf, cap, "all %" PRId64 " covered (worst err/bound %.3g)", report->count,
                 report->worst_ratio);
        return buf;
    }
    char where[128];
    const fa_mismatch *m = &report->first[0];
    size_t used = advance(0, snprintf(buf, cap, "at %s: ",
                                      fa_shape_format(shape, m->index, where, sizeof where)), cap);
    used = advance(used, format_mismatch(buf + used, cap - used, m), cap);
    advance(used, snprintf(buf + used, cap - used,
                           "; %" PRId64 " of %" PRId64 " uncovered, %" PRId64 " non-finite, %" PRId64
                           " unwritten, worst err/bound %.3g",
                           report->uncovered, report->count, report->nonfinite, report->unwritten,
                           report->worst_ratio),
            cap);
    return buf;
}

void fa_check_print(FILE *out, const char *label, const fa_check_report *report,
                    const fa_shape *shape)
{
    char where[128];
    fprintf(out, "%s: %s, %" PRId64 " of %" PRId64 " uncovered (%" PRId64 " non-finite, %" PRId64
                 " unwritten)\n",
            label, report->uncovered == 0 ? "covered" : "NOT covered", report->uncovered,
            report->count, report->nonfinite, report->unwritten);
    if (report->status != FA_OK)
        fprintf(out, "  NOT JUDGED: %" PRId64 " elements without a bound, the first at %s (bound %g)\n",
                report->invalid_bounds,
                fa_shape_format(shape, report->invalid.index, where, sizeof where),
                report->invalid.bound);
    fprintf(out, "  max abs err %.3g, mean abs err %.3g, max rel err %.3g\n", report->max_abs_err,
            report->mean_abs_err, report->max_rel_err);
    if (report->worst_index >= 0)
        fprintf(out, "  worst err/bound %.3g at %s\n", report->worst_ratio,
                fa_shape_format(shape, report->worst_index, where, sizeof where));
    if (report->mismatches > 0)
        fprintf(out, "  first uncovered:\n");
    for (int i = 0; i < report->mismatches; i++) {
        char line[256];
        format_mismatch(line, sizeof line, &report->first[i]);
        fprintf(out, "    %s: %s\n",
                fa_shape_format(shape, report->first[i].index, where, sizeof where), line);
    }
}
