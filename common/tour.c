/**
 * @file tour.c
 * @brief The progress table: every milestone M1..M25, its status, and what to do next.
 *
 * For each stage in the repository the tour runs the stage driver with
 * `--impl learner --tour` and reads one line per milestone:
 * "M<n> <passed|failed|not-implemented|not-run|error> <detail>". It needs no
 * GPU: without one, the drivers still tell written kernels from unwritten ones
 * (the FA_TODO probe) and report written ones as built but not run.
 *
 * Exit code: 0, unless a row is an ERROR (a driver that crashed, printed no
 * line for one of its milestones, or reported an error): then 1, so that a
 * broken harness never passes as progress. A learner's failing kernel is
 * progress to come, not an error of the tour.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "fa_milestones.h"

enum { LINE_CAPACITY = 1024, PATH_CAPACITY = 1024 };

typedef struct milestone_status {
    char word[32];                /* outcome word from the driver, or one of the tour's own */
    char detail[LINE_CAPACITY];
} milestone_status;

static bool exists(const char *path)
{
    struct stat info;
    return stat(path, &info) == 0;
}

/* Why the drivers could not run kernels ("" while every driver had a GPU). */
static char no_gpu_reason[LINE_CAPACITY];

/* Runs one stage driver and stores the line of each of its milestones. */
static void read_stage(int stage, milestone_status *status)
{
    const char *dir = fa_stage_dir(stage);
    char path[PATH_CAPACITY];
    snprintf(path, sizeof path, "%s/%s", FA_SOURCE_DIR, dir);
    const char *fallback = "not-in-repository";
    if (exists(path)) {
        snprintf(path, sizeof path, "%s/%s/stage%02d", FA_BUILD_DIR, dir, stage);
        fallback = exists(path) ? "error" : "not-built";
    }
    for (int m = 1; m <= FA_MILESTONE_COUNT; m++)
        if (fa_milestone(m)->stage == stage)
            snprintf(status[m - 1].word, sizeof status[m - 1].word, "%s", fallback);
    if (strcmp(fallback, "error") != 0)
        return;

    char command[PATH_CAPACITY + 64];
    snprintf(command, sizeof command, "'%s' --impl learner --tour 2>&1", path);
    FILE *pipe = popen(command, "r");
    if (pipe == NULL)
        return;
    char line[LINE_CAPACITY];
    while (fgets(line, sizeof line, pipe) != NULL) {
        int number = 0, consumed = 0;
        char word[32];
        if (strncmp(line, "GPU no ", 7) == 0) {
            snprintf(no_gpu_reason, sizeof no_gpu_reason, "%s", line + 7);
            no_gpu_reason[strcspn(no_gpu_reason, "\n")] = '\0';
            continue;
        }
        if (sscanf(line, "M%d %31s %n", &number, word, &consumed) < 2)
            continue;
        if (fa_milestone(number) == NULL || fa_milestone(number)->stage != stage)
            continue;
        milestone_status *s = &status[number - 1];
        snprintf(s->word, sizeof s->word, "%s", word);
        snprintf(s->detail, sizeof s->detail, "%s", line + consumed);
        s->detail[strcspn(s->detail, "\n")] = '\0';
    }
    /* A driver that crashed, or ended with a code no driver returns, leaves
     * its unread milestones as errors and says why. */
    const int code = pclose(pipe);
    const bool normal = code != -1 && WIFEXITED(code) &&
                        (WEXITSTATUS(code) == 0 || WEXITSTATUS(code) == 1 ||
                         WEXITSTATUS(code) == 77);
    if (normal)
        return;
    for (int m = 1; m <= FA_MILESTONE_COUNT; m++) {
        milestone_status *s = &status[m - 1];
        if (fa_milestone(m)->stage != stage || strcmp(s->word, "error") != 0 || s->detail[0])
            continue;
        if (code != -1 && WIFSIGNALED(code))
            snprintf(s->detail, sizeof s->detail, "%.900s was killed by signal %d", path,
                     WTERMSIG(code));
        else
            snprintf(s->detail, sizeof s->detail, "%.900s ended with exit code %d", path,
                     code == -1 ? -1 : WEXITSTATUS(code));
    }
}

/* What the table shows for a driver's outcome word. */
static const char *shown(const milestone_status *s)
{
    if (strcmp(s->word, "passed") == 0) return "passed";
    if (strcmp(s->word, "failed") == 0) return "FAILED";
    if (strcmp(s->word, "not-implemented") == 0) return "not started";
    if (strcmp(s->word, "not-run") == 0) return "built, not run";
    if (strcmp(s->word, "not-in-repository") == 0) return "not yet in the repository";
    if (strcmp(s->word, "not-built") == 0) return "not built (no CUDA toolkit)";
    return "ERROR";
}

int main(void)
{
    milestone_status status[FA_MILESTONE_COUNT];
    memset(status, 0, sizeof status);
    for (int stage = 1; stage <= FA_STAGE_COUNT; stage++)
        read_stage(stage, status);

    printf("\nFlashAttention in CUDA: progress (learner files under %s)\n\n", FA_LEARNER_DIR);
    printf("  %-4s %-27s %-19s %s\n", "", "milestone", "stage", "status");
    int next = 0, passed = 0, not_run = 0, failed = 0, errors = 0;
    for (int m = 1; m <= FA_MILESTONE_COUNT; m++) {
        const fa_milestone_info *info = fa_milestone(m);
        const milestone_status *s = &status[m - 1];
        printf("  M%-3d %-27s %-19s %s", m, info->title, fa_stage_dir(info->stage), shown(s));
        bool failing = strcmp(s->word, "failed") == 0 || strcmp(s->word, "error") == 0;
        if (failing && s->detail[0] != '\0')
            printf(": %s", s->detail);
        printf("\n");
        passed += strcmp(s->word, "passed") == 0;
        not_run += strcmp(s->word, "not-run") == 0;
        failed += failing;
        errors += strcmp(shown(s), "ERROR") == 0;
        bool open = failing || strcmp(s->word, "not-implemented") == 0;
        if (next == 0 && open)
            next = m;
    }

    printf("\n%d passed, %d failed, %d built but not run, of %d milestones.\n", passed, failed,
           not_run, FA_MILESTONE_COUNT);
    if (next != 0) {
        const fa_milestone_info *info = fa_milestone(next);
        const char *dir = fa_stage_dir(info->stage);
        printf("Next: M%d %s. Edit %s/%s/learner/, then run\n"
               "  cmake --build build -t stage%02d && build/%s/stage%02d --impl learner --milestone %d\n",
               next, info->title, FA_LEARNER_DIR, dir, info->stage, dir, info->stage, next);
    } else {
        printf("Next: every milestone in the repository is done or waiting for a GPU.\n");
    }
    if (no_gpu_reason[0] != '\0')
        printf("No usable GPU (%s):\nthe kernels were built but not run. Run the tour on a machine with a GPU to check them.\n",
               no_gpu_reason);
    if (errors > 0)
        printf("%d milestone(s) could not be judged (ERROR above): the harness itself failed.\n",
               errors);
    return errors > 0 ? 1 : 0;
}
