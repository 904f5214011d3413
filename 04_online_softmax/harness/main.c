/**
 * @file main.c
 * @brief The stage04 driver: checks and times M13-M16 of the reference and the
 *        learner's file, or prints the benchmark (flags: see fa_stage.h).
 */
#include "checks.h"

int main(int argc, char **argv)
{
    return fa_stage_main(argc, argv, &stage04);
}
