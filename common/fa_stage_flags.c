/**
 * @file fa_stage_flags.c
 * @brief The flags of every stage driver (plain C, so that every stage's
 *        command line is tested on machines without a GPU).
 */
#include "fa_stage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fa_cli.h"
#include "fa_milestones.h"

static const char *const impl_choices[] = {"reference", "learner", "both", NULL};
static const char *const dtype_choices[] = {"fp32", "bf16", "fp16", NULL};
static const char *const mask_choices[] = {"none", "causal", "causal-bottom-right", NULL};
/* The stages that take a window's extents offer it as a mask too (::fa_mask order). */
static const char *const window_mask_choices[] = {"none", "causal", "causal-bottom-right", "window",
                                                  NULL};

/* The problem flags, in the order the usage lists them. */
static const fa_problem_flag problem_flags[] = {
    FA_PROBLEM_N,     FA_PROBLEM_ROWS,  FA_PROBLEM_COLS,     FA_PROBLEM_M,  FA_PROBLEM_K,
    FA_PROBLEM_BATCH, FA_PROBLEM_HEADS, FA_PROBLEM_HEADS_KV, FA_PROBLEM_NQ, FA_PROBLEM_NK,
    FA_PROBLEM_D,     FA_PROBLEM_CHUNK, FA_PROBLEM_DTYPE,    FA_PROBLEM_MASK,
    FA_PROBLEM_WINDOW_LEFT, FA_PROBLEM_WINDOW_RIGHT,
};
enum { PROBLEM_FLAGS = (int)(sizeof problem_flags / sizeof problem_flags[0]) };

/* Flags start here, below every accepted value, so "given" is "changed": the
 * choices (dtype, mask) at -1, the integers (a window's extent may be -1) lower. */
enum { NOT_GIVEN = -1 };
static const int64_t INT_NOT_GIVEN = INT64_MIN;

typedef struct problem_values {
    int64_t ints[PROBLEM_FLAGS];
    int dtype, mask;
} problem_values;

static const char *problem_help(fa_problem_flag flag)
{
    switch (flag) {
    case FA_PROBLEM_N: return "elements of a vector or of a row";
    case FA_PROBLEM_ROWS: return "rows";
    case FA_PROBLEM_COLS: return "columns";
    case FA_PROBLEM_M: return "rows of the product (matmul: m x k times k x n)";
    case FA_PROBLEM_K: return "the reduced dimension of the product";
    case FA_PROBLEM_BATCH: return "batch";
    case FA_PROBLEM_HEADS: return "query heads";
    case FA_PROBLEM_HEADS_KV: return "key/value heads (divides --heads)";
    case FA_PROBLEM_NQ: return "query rows";
    case FA_PROBLEM_NK: return "keys";
    case FA_PROBLEM_D: return "head dimension";
    case FA_PROBLEM_CHUNK: return "keys (entries) per online update";
    case FA_PROBLEM_DTYPE: return "element type of the inputs";
    case FA_PROBLEM_MASK: return "which keys a query row sees";
    case FA_PROBLEM_WINDOW_LEFT: return "--mask window: keys before the bottom-right diagonal (-1: all)";
    case FA_PROBLEM_WINDOW_RIGHT: return "--mask window: keys after it (-1: all)";
    }
    return "";
}

/* The smallest value a size flag accepts: sizes may be 0 (a no-op), counts of
 * heads, head dimensions and chunks are at least 1. */
static int64_t problem_min(fa_problem_flag flag)
{
    if (flag == FA_PROBLEM_WINDOW_LEFT || flag == FA_PROBLEM_WINDOW_RIGHT)
        return -1;
    return flag == FA_PROBLEM_HEADS_KV || flag == FA_PROBLEM_D || flag == FA_PROBLEM_CHUNK ? 1 : 0;
}

/** The union of the problem flags of stage @p stage's milestones. */
static unsigned stage_problem_flags(int stage)
{
    unsigned flags = 0;
    for (int m = 1; m <= FA_MILESTONE_COUNT; m++)
        if (fa_milestone(m)->stage == stage)
            flags |= fa_milestone(m)->problem;
    return flags;
}

bool fa_milestone_reads(int number, unsigned given)
{
    const fa_milestone_info *info = fa_milestone(number);
    return info != NULL && (info->problem & given) == given;
}

/** Prints "<program>: <message>" and the usage hint; returns FA_CLI_ERROR. */
static int refuse(const char *program, const char *message)
{
    fprintf(stderr, "%s: %s (--help lists the flags)\n", program, message);
    return FA_CLI_ERROR;
}

/** The milestones of @p stage as "M13, M14, ...". */
static void list_milestones(int stage, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int m = 1; m <= FA_MILESTONE_COUNT && used < cap; m++)
        if (fa_milestone(m)->stage == stage) {
            const int written = snprintf(buf + used, cap - used, "%sM%d", used ? ", " : "", m);
            if (written < 0)
                break;
            used += (size_t)written;
        }
}

/** Checks the combination of flags against the course map (after a successful parse). */
static int check_request(const char *program, int stage, const fa_stage_request *r)
{
    char message[512], list[256];
    list_milestones(stage, list, sizeof list);
    const fa_milestone_info *info = r->milestone ? fa_milestone(r->milestone) : NULL;
    if (r->milestone != 0 && (info == NULL || info->stage != stage)) {
        snprintf(message, sizeof message, "--milestone %d is not in stage %02d (%s)", r->milestone,
                 stage, list);
        return refuse(program, message);
    }
    if (r->run.version != 0) {
        if (info == NULL) {
            snprintf(message, sizeof message,
                     "--version %d needs --milestone: versions belong to one milestone",
                     r->run.version);
            return refuse(program, message);
        }
        if (info->versions == 0 || r->run.version > info->versions) {
            if (info->versions == 0)
                snprintf(message, sizeof message, "--version %d: M%d has one version only",
                         r->run.version, info->number);
            else
                snprintf(message, sizeof message, "--version %d: M%d has versions 1..%d",
                         r->run.version, info->number, info->versions);
            return refuse(program, message);
        }
    }
    const unsigned given = r->run.problem.given;
    if (given != 0 && r->run.case_name != NULL)
        return refuse(program, "--case reruns a case of the checks; it does not take problem "
                               "flags (they make a case of their own)");
    if (given != 0 && !(r->bench || r->tour)) {
        bool some = false;
        for (int m = 1; m <= FA_MILESTONE_COUNT; m++) {
            const bool selected = r->milestone ? m == r->milestone : fa_milestone(m)->stage == stage;
            some = some || (selected && fa_milestone_reads(m, given));
        }
        if (!some) {
            snprintf(message, sizeof message,
                     "no milestone %s reads every problem flag given (%s)",
                     r->milestone ? "selected" : "of this stage", list);
            return refuse(program, message);
        }
    }
    if (given != 0 && (r->bench || r->tour))
        return refuse(program, "--bench and --tour take no problem flags");
    if ((given & FA_PROBLEM_WINDOW) != 0 && r->run.problem.mask != FA_MASK_WINDOW)
        return refuse(program, "--window-left and --window-right are the extents of --mask window");
    return FA_CLI_OK;
}

int fa_stage_parse(int argc, char **argv, int stage, fa_stage_request *request)
{
    int64_t milestone = 0, version = 0, seed = 2026;
    int impl = FA_STAGE_IMPL_BOTH;
    bool quick = false, bench = false, tour = false;
    const char *case_name = NULL;
    problem_values values;
    for (int i = 0; i < PROBLEM_FLAGS; i++)
        values.ints[i] = INT_NOT_GIVEN;
    values.dtype = NOT_GIVEN;
    values.mask = NOT_GIVEN;

    fa_flag flags[8 + PROBLEM_FLAGS] = {
        {"impl", FA_FLAG_CHOICE, &impl, "whose kernels run (both: the learner's where implemented)", 0, 0, impl_choices},
        {"milestone", FA_FLAG_INT, &milestone, "run only milestone N (0: all of the stage)", 0, FA_MILESTONE_COUNT, NULL},
        {"version", FA_FLAG_INT, &version, "run only version N of the milestone (0: every version)", 0, 16, NULL},
        {"case", FA_FLAG_STRING, &case_name, "rerun only the case of this name (as a failure printed it)", 0, 0, NULL},
        {"seed", FA_FLAG_INT, &seed, "seed of the random cases", 0, INT64_MAX, NULL},
        {"quick", FA_FLAG_BOOL, &quick, "small cases only (for compute-sanitizer)", 0, 0, NULL},
        {"bench", FA_FLAG_BOOL, &bench, "run the stage's benchmark table instead of the checks", 0, 0, NULL},
        {"tour", FA_FLAG_BOOL, &tour, "print one machine-readable line per learner milestone", 0, 0, NULL},
    };
    int count = 8;
    const unsigned accepted = stage_problem_flags(stage);
    for (int i = 0; i < PROBLEM_FLAGS; i++) {
        const fa_problem_flag flag = problem_flags[i];
        if ((accepted & (unsigned)flag) == 0)
            continue;
        fa_flag *f = &flags[count++];
        f->name = fa_problem_flag_name(flag);
        f->help = problem_help(flag);
        if (flag == FA_PROBLEM_DTYPE || flag == FA_PROBLEM_MASK) {
            f->kind = FA_FLAG_CHOICE;
            f->dest = flag == FA_PROBLEM_DTYPE ? &values.dtype : &values.mask;
            f->choices = flag == FA_PROBLEM_DTYPE                ? dtype_choices
                         : (accepted & FA_PROBLEM_WINDOW) != 0 ? window_mask_choices
                                                               : mask_choices;
            f->min = f->max = 0;
        } else {
            f->kind = FA_FLAG_INT;
            f->dest = &values.ints[i];
            f->min = problem_min(flag);
            f->max = INT64_MAX;
            f->choices = NULL;
        }
    }

    char summary[200];
    snprintf(summary, sizeof summary,
             "Stage %02d (%s): checks the reference and the learner's kernels, times them.", stage,
             fa_stage_dir(stage) ? fa_stage_dir(stage) : "?");
    const fa_cli_result parsed = fa_cli_parse(argc, argv, flags, count, summary);
    if (parsed != FA_CLI_OK)
        return (int)parsed;

    memset(request, 0, sizeof *request);
    request->impl = impl;
    request->milestone = (int)milestone;
    request->bench = bench;
    request->tour = tour;
    request->run.seed = (uint64_t)seed;
    request->run.quick = quick;
    request->run.version = (int)version;
    request->run.case_name = case_name;
    fa_problem *p = &request->run.problem;
    int64_t *fields[PROBLEM_FLAGS] = {&p->n,     &p->rows,  &p->cols,     &p->m,  &p->k,
                                      &p->batch, &p->heads, &p->heads_kv, &p->nq, &p->nk,
                                      &p->d,     &p->chunk, NULL,         NULL,
                                      &p->window_left, &p->window_right};
    for (int i = 0; i < PROBLEM_FLAGS; i++) {
        const fa_problem_flag flag = problem_flags[i];
        const bool given = flag == FA_PROBLEM_DTYPE  ? values.dtype != NOT_GIVEN
                           : flag == FA_PROBLEM_MASK ? values.mask != NOT_GIVEN
                                                     : values.ints[i] != INT_NOT_GIVEN;
        if (!given)
            continue;
        p->given |= (unsigned)flag;
        if (fields[i] != NULL)
            *fields[i] = values.ints[i];
    }
    p->dtype = values.dtype == NOT_GIVEN ? FA_F32 : (fa_dtype)values.dtype;
    p->mask = values.mask == NOT_GIVEN ? FA_MASK_NONE : (fa_mask)values.mask;
    if (!fa_problem_has(p, FA_PROBLEM_WINDOW_LEFT))
        p->window_left = -1; /* a side not given is unbounded */
    if (!fa_problem_has(p, FA_PROBLEM_WINDOW_RIGHT))
        p->window_right = -1;
    const char *program = argc > 0 && argv[0] ? argv[0] : "stage";
    return check_request(program, stage, request);
}

int fa_stage_parse_words(const char *const *words, int stage, fa_stage_request *request)
{
    int argc = 0;
    while (words[argc] != NULL)
        argc++;
    char **argv = calloc((size_t)argc + 1, sizeof *argv);
    if (argv == NULL) {
        fprintf(stderr, "fa_stage_parse_words: no host memory for %d words\n", argc);
        return FA_CLI_ERROR;
    }
    for (int i = 0; i < argc; i++)
        argv[i] = (char *)words[i]; /* fa_stage_parse() reads the words, never writes them */
    const int parsed = fa_stage_parse(argc, argv, stage, request);
    free(argv);
    return parsed;
}
