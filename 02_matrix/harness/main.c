/**
 * @file main.c
 * @brief The stage02 driver: checks and times M6 dot product, M7 matmul and M8
 *        transpose of the reference and the learner's files, or prints the
 *        benchmark against cuBLAS and the copy bandwidth (flags: see fa_stage.h).
 */
#include "checks.h"

int main(int argc, char **argv)
{
    return fa_stage_main(argc, argv, &stage02);
}
