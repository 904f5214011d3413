/**
 * @file judge.h
 * @brief How stage 06 judges what a call wrote: o and lse end to end against
 *        fa_attention_reference() under the method the kernel declares, and
 *        the bytes between o's elements untouched. Plain C.
 *
 * The judge reads the call's host o span through its strides and dtype
 * (16-bit poison, 0xFFFF, reads as the fp32 poison: an element never written
 * is reported as such), gathers it into [batch][heads_q][rows][head_dim]
 * floats, and compares it and lse with fa_attention_covers(). Long calls are
 * judged on a sample of query rows (every batch and head): the reference
 * computes each row from q's row and the keys its mask allows it (the
 * sample's problem tells the reference each row's place in the call,
 * fa_attn_problem.sample_rows), so a sample is judged exactly as the whole
 * would be.
 */
#ifndef FLASH_JUDGE_H
#define FLASH_JUDGE_H

#include <stdbool.h>
#include <stdint.h>

#include "fa_check.h"
#include "fa_stage.h"
#include "fa_status.h"
#include "fixtures.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The method version @p version (1 or 2) declares for @p call:
 * fa_attention_method() with the variant forced to that version (its status:
 * a call the version cannot run is refused with the reason).
 */
fa_status flash_method(const flash_call *call, int version, fa_attn_method *method);

/** Query rows of a call of @p nq rows judged from nq = FLASH_SAMPLE_FROM on. */
enum { FLASH_SAMPLE_FROM = 1000, FLASH_SAMPLE_EDGE = 64, FLASH_SAMPLE_EVERY = 16 };

/**
 * The rows judged of a call of @p nq query rows, written to @p rows (room for
 * nq) in increasing order: all of them below FLASH_SAMPLE_FROM; from there
 * the first and the last FLASH_SAMPLE_EDGE (64: every row position of a
 * query tile of either version, whose tiles are 64 or 128 rows, is met in
 * one or the other) and every FLASH_SAMPLE_EVERY-th row between (row 3 mod
 * 16). Returns the count. At nq = 1024, 184 rows: the reference's time on
 * the CPU is most of a check's, and the grid's three shapes of 1024 rows
 * would take most of that.
 */
int64_t flash_sample_rows(int64_t nq, int64_t *rows);

/**
 * o of @p p (p->o, its host span) as floats [batch][heads_q][count][head_dim]
 * for the query rows @p rows (NULL: all nq rows, @p count = nq), 16-bit
 * elements widened, 16-bit poison turned into the fp32 poison.
 */
void flash_gather_o(const fa_attention_params *p, const int64_t *rows, int64_t count, float *out);

/**
 * Bytes of o's span that are not elements of o (the gaps its strides leave)
 * and no longer hold the poison: a kernel wrote where it must not.
 * FA_ERR_OUT_OF_MEMORY, or FA_OK.
 */
fa_status flash_gap_bytes(const fa_attention_params *p, int64_t *written);

/** What the judge found. */
typedef struct flash_verdict {
    fa_check_report o, lse; /**< lse's is empty (count 0) when the call has no lse */
    int64_t gap_bytes;      /**< bytes between o's elements that lost the poison */
    bool covered;           /**< o and lse covered, no gap written */
} flash_verdict;

/**
 * Judges the outputs of @p call (its host o span and lse) under @p method on
 * the query rows @p rows (NULL: every row) into @p verdict.
 * @return the reference's status (FA_ERR_UNSUPPORTED for a row it cannot
 *         bound, ...) or FA_ERR_OUT_OF_MEMORY; FA_OK when judged.
 */
fa_status flash_judge(const flash_call *call, const fa_attn_method *method, const int64_t *rows,
                      int64_t count, flash_verdict *verdict);

/**
 * flash_judge() for a check: true when covered; otherwise @p result says
 * why (an error of the judge, bytes written into o's gaps, or the first
 * uncovered element of o or lse with its coordinate "at (batch b, head h,
 * row r, col c)": with a sample, row r is the call's row).
 */
bool flash_result_judge(fa_result *result, const char *name, const flash_call *call,
                        const fa_attn_method *method, const int64_t *rows, int64_t count);

/** What the hand values of a fixture came to (flash_fixture_verify()). */
typedef struct flash_fixture_verdict {
    int64_t differing;     /**< hand values of o and lse farther than the tolerance from the reference */
    flash_verdict written; /**< the judge's verdict on the hand values written as a kernel's output */
} flash_fixture_verdict;

/**
 * The hand arithmetic of fixture @p x under @p method: its o and lse against
 * fa_attention_reference()'s, each within @p tolerance relative (infinities
 * equal), and the judge's verdict when the hand values, rounded as a kernel
 * stores them, are written into the call's outputs (batch 1). The reference's
 * status, or FA_OK with @p verdict filled.
 */
fa_status flash_fixture_verify(flash_fixture *x, const fa_attn_method *method, double tolerance,
                               flash_fixture_verdict *verdict);

#ifdef __cplusplus
}
#endif

#endif /* FLASH_JUDGE_H */
