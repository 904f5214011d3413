/**
 * @file fa_launch.h
 * @brief The naming of the two implementations, for C host code as for CUDA:
 *        FA_LAUNCHER(name) is ref_<name> in the reference build of a file and
 *        learner_<name> in the learner's (FA_LEARNER_KERNELS=1), and
 *        FA_TODO_RETURN(m) is the marker of a learner's C function not
 *        written yet (fa_launch.cuh has the file-scope marker of kernels).
 */
#ifndef FA_LAUNCH_H
#define FA_LAUNCH_H

#include "fa_milestones.h"
#include "fa_status.h"

/** The exported name of launcher @p name: learner_<name> or ref_<name>. */
#if FA_LEARNER_KERNELS
#define FA_LAUNCHER(name) learner_##name
#else
#define FA_LAUNCHER(name) ref_##name
#endif

/**
 * The first statement of a learner's C function that is still an exercise
 * (C has no templates for the file-scope FA_TODO() of kernel files): it
 * returns ::FA_ERR_NOT_IMPLEMENTED, saying where to write milestone @p m,
 * before touching any argument. Delete the line once the function is written.
 */
#define FA_TODO_RETURN(m) return fa_todo_return_fail((m), __FILE__)

#endif /* FA_LAUNCH_H */
