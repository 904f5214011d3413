/**
 * @file main.c
 * @brief The stage05 driver: checks and times M17-M22 (both versions) of the
 *        reference and the learner's blocks, or prints the benchmark (flags:
 *        see fa_stage.h).
 */
#include "checks.h"

int main(int argc, char **argv)
{
    return fa_stage_main(argc, argv, &stage05);
}
