/**
 * @file checks.h
 * @brief Stage 01 as the harness sees it: a check per milestone (M1-M5) and
 *        the benchmark. Built only with CUDA.
 *
 * Each check runs the chosen implementation's launcher on every fixture of
 * fixtures.h (compared bit for bit, M3 by its bound), then on random cases of
 * awkward sizes against the double reference of fa_reference.h under the
 * bounds of model.h. The first failing case and coordinate become the
 * milestone's detail line.
 */
#ifndef PRIMITIVES_CHECKS_H
#define PRIMITIVES_CHECKS_H

#include "fa_stage.h"
#include "fa_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** M1..M5 and the benchmark, for fa_stage_main(). */
extern const fa_stage_desc stage01;

/**
 * The stage benchmark (`stage01 --bench`, bench.c): the configuration, the
 * copy bandwidth the kernels are judged against, each reference kernel's
 * effective bandwidth at 256 MiB and 1 GiB per array (16 MiB with
 * fa_run_options::quick) as a share of it, and the measured ulp error of the
 * three exp variants over [-87, 88]. Fails when an exp variant leaves its
 * bound (or the sweep meets a NaN).
 */
fa_status stage01_bench(const fa_run_options *options);

#ifdef __cplusplus
}
#endif

#endif /* PRIMITIVES_CHECKS_H */
