/** @file fa_problem.c @brief The problem flags: names and lookups. */
#include "fa_problem.h"

#include <stddef.h>

int64_t fa_problem_get(const fa_problem *p, fa_problem_flag flag, int64_t fallback)
{
    if (!fa_problem_has(p, flag))
        return fallback;
    switch (flag) {
    case FA_PROBLEM_N: return p->n;
    case FA_PROBLEM_ROWS: return p->rows;
    case FA_PROBLEM_COLS: return p->cols;
    case FA_PROBLEM_M: return p->m;
    case FA_PROBLEM_K: return p->k;
    case FA_PROBLEM_BATCH: return p->batch;
    case FA_PROBLEM_HEADS: return p->heads;
    case FA_PROBLEM_HEADS_KV: return p->heads_kv;
    case FA_PROBLEM_NQ: return p->nq;
    case FA_PROBLEM_NK: return p->nk;
    case FA_PROBLEM_D: return p->d;
    case FA_PROBLEM_CHUNK: return p->chunk;
    case FA_PROBLEM_DTYPE: return (int64_t)p->dtype;
    case FA_PROBLEM_MASK: return (int64_t)p->mask;
    case FA_PROBLEM_WINDOW_LEFT: return p->window_left;
    case FA_PROBLEM_WINDOW_RIGHT: return p->window_right;
    }
    return fallback;
}

const char *fa_problem_flag_name(fa_problem_flag flag)
{
    switch (flag) {
    case FA_PROBLEM_N: return "n";
    case FA_PROBLEM_ROWS: return "rows";
    case FA_PROBLEM_COLS: return "cols";
    case FA_PROBLEM_M: return "m";
    case FA_PROBLEM_K: return "k";
    case FA_PROBLEM_BATCH: return "batch";
    case FA_PROBLEM_HEADS: return "heads";
    case FA_PROBLEM_HEADS_KV: return "heads-kv";
    case FA_PROBLEM_NQ: return "nq";
    case FA_PROBLEM_NK: return "nk";
    case FA_PROBLEM_D: return "d";
    case FA_PROBLEM_DTYPE: return "dtype";
    case FA_PROBLEM_MASK: return "mask";
    case FA_PROBLEM_CHUNK: return "chunk";
    case FA_PROBLEM_WINDOW_LEFT: return "window-left";
    case FA_PROBLEM_WINDOW_RIGHT: return "window-right";
    }
    return NULL;
}

const char *fa_mask_flag_name(fa_mask mask)
{
    switch (mask) {
    case FA_MASK_NONE: return "none";
    case FA_MASK_CAUSAL_TOP_LEFT: return "causal";
    case FA_MASK_CAUSAL_BOTTOM_RIGHT: return "causal-bottom-right";
    case FA_MASK_WINDOW: return "window"; /* with --window-left and --window-right (stage 07) */
    }
    return NULL;
}
