/**
 * @file main.c
 * @brief The stage07 driver: checks and times M25 (the mask in the fused
 *        kernel) of the reference and the learner's key tiles, or prints the
 *        benchmark (flags: see fa_stage.h).
 */
#include "checks.h"

int main(int argc, char **argv)
{
    return fa_stage_main(argc, argv, &stage07);
}
