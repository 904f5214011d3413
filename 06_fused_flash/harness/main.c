/**
 * @file main.c
 * @brief The stage06 driver: checks and times M23 (the fused kernel, both
 *        versions) and checks M24 (the launcher's validation, without a GPU
 *        too) of the reference and the learner's code, or prints the
 *        benchmark (flags: see fa_stage.h).
 */
#include "checks.h"

int main(int argc, char **argv)
{
    return fa_stage_main(argc, argv, &stage06);
}
