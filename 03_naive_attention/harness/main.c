/**
 * @file main.c
 * @brief The stage03 driver: checks and times M9-M12 of the reference and the
 *        learner's file, or prints the benchmark (flags: see fa_stage.h; the
 *        lesson is \ref stage03).
 */
#include "checks.h"

int main(int argc, char **argv)
{
    return fa_stage_main(argc, argv, &stage03);
}
