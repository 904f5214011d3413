/**
 * @file fa_stats.c
 * @brief Median, extremes, percentiles and relative spread of timing samples.
 */
#include "fa_stats.h"

#include <math.h>
#include <stdlib.h>

static int compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/**
 * Percentile @p q (0..1) of sorted[0..count) by linear interpolation between
 * the order statistics at ranks floor(q (count - 1)) and the next one.
 */
static double percentile_sorted(const double *sorted, int count, double q)
{
    const double rank = q * (double)(count - 1);
    const int below = (int)floor(rank);
    if (below >= count - 1)
        return sorted[count - 1];
    const double fraction = rank - (double)below;
    return sorted[below] + fraction * (sorted[below + 1] - sorted[below]);
}

/*
 * count < 1 (or NULL samples) gives a zeroed summary with count 0. A zero
 * median gives spread 0 when p10 == p90 and +inf otherwise.
 */
fa_stats fa_stats_compute(double *samples, int count)
{
    fa_stats stats = {0};
    if (!samples || count < 1)
        return stats;
    qsort(samples, (size_t)count, sizeof *samples, compare_doubles);
    stats.count = count;
    stats.min = samples[0];
    stats.max = samples[count - 1];
    stats.median = percentile_sorted(samples, count, 0.5);
    stats.p10 = percentile_sorted(samples, count, 0.1);
    stats.p90 = percentile_sorted(samples, count, 0.9);
    const double band = stats.p90 - stats.p10;
    if (stats.median != 0.0)
        stats.spread = band / stats.median;
    else
        stats.spread = band == 0.0 ? 0.0 : INFINITY;
    return stats;
}
