/**
 * @file fa_milestones.h
 * @brief The course map: milestones M1..M25 and the seven stages that hold them.
 */
#ifndef FA_MILESTONES_H
#define FA_MILESTONES_H

#ifdef __cplusplus
extern "C" {
#endif

enum { FA_MILESTONE_COUNT = 25, FA_STAGE_COUNT = 7 };

/** One milestone of the course. */
typedef struct fa_milestone_info {
    int number;         /**< 1..25, global across stages */
    int stage;          /**< 1..7 */
    const char *title;  /**< "vector add" */
} fa_milestone_info;

/** Milestone @p number (1..25), or NULL. */
const fa_milestone_info *fa_milestone(int number);

/** Directory of stage @p stage (1..7), e.g. "01_primitives", or NULL. */
const char *fa_stage_dir(int stage);

#ifdef __cplusplus
}
#endif

#endif /* FA_MILESTONES_H */
