/**
 * @file fa_stats.h
 * @brief Summary statistics of timing samples (pure C, unit-tested on the CPU).
 */
#ifndef FA_STATS_H
#define FA_STATS_H

#ifdef __cplusplus
extern "C" {
#endif

/** Summary of repeated measurements, in the unit of the samples. */
typedef struct fa_stats {
    int count;
    double median;
    double min;
    double max;
    double p10;      /**< 10th percentile (linear interpolation between order statistics) */
    double p90;      /**< 90th percentile */
    double spread;   /**< (p90 - p10) / median: the relative noise band */
} fa_stats;

/** Summarises samples[0..count); sorts @p samples in place. count >= 1. */
fa_stats fa_stats_compute(double *samples, int count);

#ifdef __cplusplus
}
#endif

#endif /* FA_STATS_H */
