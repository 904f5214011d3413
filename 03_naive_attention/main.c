/**
 * @file main.c
 * @brief The stage 03 driver: checks, timings and the benchmark of M9-M12
 *        (flags in fa_stage.h; the lesson is \ref stage03).
 */
#include "checks.h"

int main(int argc, char **argv)
{
    return fa_stage_main(argc, argv, 3, stage03_checks, stage03_check_count, stage03_bench);
}
