/**
 * @file main.c
 * @brief stage02: the learner's driver for M6 dot product, M7 matmul, M8 transpose.
 *
 * `stage02 --help` lists the flags (fa_stage.h): which implementation, which
 * milestone, the seed, --quick for compute-sanitizer, --bench for the table
 * against cuBLAS and the copy bandwidth.
 */
#include "checks.h"

int main(int argc, char **argv)
{
    return fa_stage_main(argc, argv, 2, stage02_checks, stage02_check_count, stage02_bench);
}
