/** @file fa_milestones.c @brief The course map (one table, read by drivers and the tour). */
#include "fa_milestones.h"

#include <stddef.h>

static const fa_milestone_info milestones[FA_MILESTONE_COUNT] = {
    {1, 1, "vector add"},
    {2, 1, "scale array"},
    {3, 1, "elementwise exp"},
    {4, 1, "row max"},
    {5, 1, "row sum"},
    {6, 2, "dot product"},
    {7, 2, "matmul"},
    {8, 2, "transpose"},
    {9, 3, "QK^T scores"},
    {10, 3, "row softmax"},
    {11, 3, "PV matmul"},
    {12, 3, "naive attention"},
    {13, 4, "running max"},
    {14, 4, "correction factor"},
    {15, 4, "update running sum"},
    {16, 4, "rescale output"},
    {17, 5, "tile load"},
    {18, 5, "tile scores"},
    {19, 5, "tile rowmax"},
    {20, 5, "tile exp"},
    {21, 5, "tile rowsum"},
    {22, 5, "accumulate PV"},
    {23, 6, "fused flash kernel"},
    {24, 6, "flash attention launcher"},
    {25, 7, "causal mask"},
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
