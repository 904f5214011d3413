/**
 * @file main.c
 * @brief The stage01 driver: checks and times M1-M5 of the reference and the
 *        learner's file, or prints the benchmark (flags: see fa_stage.h).
 */
#include "checks.h"

int main(int argc, char **argv)
{
    return fa_stage_main(argc, argv, &stage01);
}
