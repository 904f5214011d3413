/** @file fa_milestones.c @brief The course map (one table, read by drivers and the tour). */
#include "fa_milestones.h"

#include <stddef.h>
#include <stdio.h>

#include "fa_problem.h"

/* The flags each check reads, by the kind of problem it takes. */
enum {
    VECTOR = FA_PROBLEM_N,
    ROWS = FA_PROBLEM_ROWS | FA_PROBLEM_COLS,
    MATMUL = FA_PROBLEM_M | FA_PROBLEM_N | FA_PROBLEM_K,
    ATTENTION = FA_PROBLEM_ATTENTION,
    ONLINE_ROWS = FA_PROBLEM_ROWS | FA_PROBLEM_N | FA_PROBLEM_CHUNK,
    TILES = FA_PROBLEM_HEADS | FA_PROBLEM_NQ | FA_PROBLEM_NK | FA_PROBLEM_D | FA_PROBLEM_DTYPE,
    FUSED = FA_PROBLEM_BATCH | FA_PROBLEM_HEADS | FA_PROBLEM_HEADS_KV | FA_PROBLEM_NQ |
            FA_PROBLEM_NK | FA_PROBLEM_D | FA_PROBLEM_DTYPE
};

static const fa_milestone_info milestones[FA_MILESTONE_COUNT] = {
    {1, 1, "vector add", 0, VECTOR},
    {2, 1, "scale array", 0, VECTOR},
    {3, 1, "elementwise exp", 0, VECTOR},
    {4, 1, "row max", 0, ROWS},
    {5, 1, "row sum", 0, ROWS},
    {6, 2, "dot product", 0, FA_PROBLEM_N | FA_PROBLEM_DTYPE},
    {7, 2, "matmul", 4, MATMUL},
    {8, 2, "transpose", 2, ROWS},
    /* Stage 03 has one kind of head (no --heads-kv); M9 and M11 take no mask and
     * M10 no head dimension or dtype (its scores are fp32). */
    {9, 3, "QK^T scores", 0,
     FA_PROBLEM_BATCH | FA_PROBLEM_HEADS | FA_PROBLEM_NQ | FA_PROBLEM_NK | FA_PROBLEM_D |
         FA_PROBLEM_DTYPE},
    {10, 3, "row softmax", 0,
     FA_PROBLEM_BATCH | FA_PROBLEM_HEADS | FA_PROBLEM_NQ | FA_PROBLEM_NK | FA_PROBLEM_MASK},
    {11, 3, "PV matmul", 0,
     FA_PROBLEM_BATCH | FA_PROBLEM_HEADS | FA_PROBLEM_NQ | FA_PROBLEM_NK | FA_PROBLEM_D |
         FA_PROBLEM_DTYPE},
    {12, 3, "naive attention", 0,
     FA_PROBLEM_BATCH | FA_PROBLEM_HEADS | FA_PROBLEM_NQ | FA_PROBLEM_NK | FA_PROBLEM_D |
         FA_PROBLEM_DTYPE | FA_PROBLEM_MASK},
    {13, 4, "running max", 0, ONLINE_ROWS},
    {14, 4, "correction factor", 0, ONLINE_ROWS},
    {15, 4, "update running sum", 0, ONLINE_ROWS},
    {16, 4, "rescale output", 0, ONLINE_ROWS | ATTENTION},
    {17, 5, "tile load", 2, TILES},
    {18, 5, "tile scores", 2, TILES},
    {19, 5, "tile rowmax", 2, TILES},
    {20, 5, "tile exp", 2, TILES},
    {21, 5, "tile rowsum", 2, TILES},
    {22, 5, "accumulate PV", 2, TILES},
    /* Stage 06 runs FA_MASK_NONE only (the masks are M25's); M24 is host code judged
     * on a battery of calls, not on a problem. */
    {23, 6, "fused flash kernel", 3, FUSED},
    {24, 6, "flash attention launcher", 0, 0},
    {25, 7, "causal mask", 3, FUSED | FA_PROBLEM_MASK | FA_PROBLEM_WINDOW},
};

static const char *const stage_dirs[FA_STAGE_COUNT] = {
    "01_primitives", "02_matrix",  "03_naive_attention", "04_online_softmax",
    "05_tiled_blocks", "06_fused_flash", "07_causal",
};

const fa_milestone_info *fa_milestone(int number)
{
    if (number < 1 || number > FA_MILESTONE_COUNT)
        return NULL;
    return &milestones[number - 1];
}

const char *fa_stage_dir(int stage)
{
    if (stage < 1 || stage > FA_STAGE_COUNT)
        return NULL;
    return stage_dirs[stage - 1];
}

/** "M<m> <title>[, version <v>] is not implemented yet: write it in <file> and delete its
 *  <marker> line". */
static fa_status not_implemented(int milestone, int version, const char *file, const char *marker)
{
    const fa_milestone_info *info = fa_milestone(milestone);
    char which[32] = "";
    if (version > 0)
        snprintf(which, sizeof which, ", version %d", version);
    return fa_fail(FA_ERR_NOT_IMPLEMENTED,
                   "M%d %s%s is not implemented yet: write it in %s and delete its %s line",
                   milestone, info != NULL ? info->title : "?", which, file, marker);
}

fa_status fa_todo_return_fail(int milestone, const char *file)
{
    char marker[48];
    snprintf(marker, sizeof marker, "FA_TODO_RETURN(%d)", milestone);
    return not_implemented(milestone, 0, file, marker);
}

fa_status fa_todo_fail(int milestone, int version, const char *file)
{
    char marker[48];
    if (version > 0)
        snprintf(marker, sizeof marker, "FA_TODO_VERSION(%d, %d)", milestone, version);
    else
        snprintf(marker, sizeof marker, "FA_TODO(%d)", milestone);
    return not_implemented(milestone, version, file, marker);
}
