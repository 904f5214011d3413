/**
 * @file fa_milestones.h
 * @brief The course map: milestones M1..M25 and the seven stages that hold them.
 */
#ifndef FA_MILESTONES_H
#define FA_MILESTONES_H

#include "fa_status.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { FA_MILESTONE_COUNT = 25, FA_STAGE_COUNT = 7 };

/** One milestone of the course. */
typedef struct fa_milestone_info {
    int number;         /**< 1..25, global across stages */
    int stage;          /**< 1..7 */
    const char *title;  /**< "vector add" */
    int versions;       /**< kernel versions a driver's --version picks from; 0: just one */
    unsigned problem;   /**< the ::fa_problem_flag bits its check reads (fa_problem.h) */
} fa_milestone_info;

/** Milestone @p number (1..25), or NULL. */
const fa_milestone_info *fa_milestone(int number);

/** Directory of stage @p stage (1..7), e.g. "01_primitives", or NULL. */
const char *fa_stage_dir(int stage);

/**
 * Records "M<n> <title> [version <v>] is not implemented yet: write it in
 * <file> and delete its FA_TODO line" and returns ::FA_ERR_NOT_IMPLEMENTED
 * (the launchers' fa_todo_status(), fa_launch.cuh).
 */
fa_status fa_todo_fail(int milestone, int version, const char *file);

/** The same for a learner's C function marked FA_TODO_RETURN(m) (fa_launch.h). */
fa_status fa_todo_return_fail(int milestone, const char *file);

#ifdef __cplusplus
}
#endif

#endif /* FA_MILESTONES_H */
