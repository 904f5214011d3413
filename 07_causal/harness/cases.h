/**
 * @file cases.h
 * @brief The inputs of stage 07's checks and tests: stage 06's grid of
 *        shapes with a mask on every case, the packed batches, and the
 *        sentinel fixtures, which test every (row, key) decision of a mask by
 *        a key whose score dominates. Plain C (no CUDA).
 */
#ifndef CAUSAL_CASES_H
#define CAUSAL_CASES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fa_status.h"
#include "fixtures.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Cases of version @p version's masked grid: as many as stage 06's grid
 * (flash_grid_count()), and version 3 two more (causal_grid_spec()), which
 * @p quick keeps although they are larger than its other cases: they are
 * what compute-sanitizer sees of the three-consumer kernel under a mask.
 */
int causal_grid_count(int version, bool quick);

/**
 * Case @p index of version @p version's masked grid: stage 06's case
 * (flash_grid_spec()) with the mask CAUSAL_MASKS[index % 6]: causal
 * top-left, causal bottom-right, and the windows (17, 0), (5, 40), (0, 0)
 * and (-1, 3). The grid runs through the head dimensions of one shape
 * before the next, so every shape meets every mask. Version 3, of four head
 * dimensions, takes CAUSAL_MASKS[(index / 4 + index % 4) % 6]: its shapes
 * meet four masks each, and each head dimension meets all six. Its last two
 * cases are its own: causal top-left and bottom-right masks over more than
 * FLASH3_CAUSAL_THREE_ROWS rows at d = 64, which its kernel runs with three
 * consumers (flash3_consumers()).
 */
flash_spec causal_grid_spec(int version, bool quick, int index);

/** Sequences of a packed case. */
enum { CAUSAL_PACKED_SEQUENCES = 6 };

/** A packed batch to make (packed.h): the shape its sequences share and their lengths. */
typedef struct causal_packed_spec {
    flash_spec shape;  /**< heads, head_dim, dtype, o, lse, mask; batch, nq, nk are the sequences' */
    int count;         /**< sequences */
    int64_t nq[CAUSAL_PACKED_SEQUENCES], nk[CAUSAL_PACKED_SEQUENCES];
    bool row_gaps;     /**< rows of q, k, v and o each with its own gap after the heads */
    bool outside_rows; /**< rows before the first sequence and after the last, of no sequence */
} causal_packed_spec;

/** How many packed cases version @p version has: 14, and version 3 two more. */
int causal_packed_count(int version);

/**
 * Packed case @p index (0 to causal_packed_count(version) - 1) of version
 * @p version. Even cases pack sequences of
 * as many rows as keys, 0, 1, Bc - 1, Bc, Bc + 1 and 3 Br + 5 (Br x Bc the
 * version's tile at the case's head dimension); odd cases rows and keys of
 * their own, (1, Bc + 1), (Br - 1, 0), (0, Bc), (Br + 1, 1), (2 Br + 3,
 * Bc - 1), (7, 5 Bc + 2): empty sequences, rows with no key, tails on both
 * sides. Case pairs go through no mask and then the six of the masked grid;
 * the dtype, head dimension, heads (MHA, GQA, MQA), o in fp32 and lse
 * rotate, and the layout: contiguous rows, rows with gaps (row_gaps), or
 * rows outside every sequence (outside_rows), in turn (version 3: head dims
 * 40, 128 and 96, o in the input dtype). Each sequence's scores have their own
 * pattern and spread (causal_packed_make()). Version 3's last two cases are
 * its own: at d = 64 under the causal top-left (even) and bottom-right (odd)
 * masks, a sequence of FLASH3_CAUSAL_THREE_ROWS + 5 rows (of as many keys,
 * or 140 fewer, so that its first rows see none) in place of (1, 1) or
 * (Br + 1, 1), so that its kernel runs three consumers.
 */
causal_packed_spec causal_packed_case(int version, int index);

/** "packed 3 (6 sequences) d=128 bf16 gqa causal-br": a packed case's name, into @p buf. */
const char *causal_packed_describe(const causal_packed_spec *s, int index, char *buf, size_t cap);

/** The score of a sentinel key: e^30 outweighs every other key of its row by far. */
#define CAUSAL_SENTINEL_SCORE 30.0
/** The value of a sentinel key in column 1 (every other key has 0 there). */
#define CAUSAL_SENTINEL_VALUE 20.0

/** Columns of a sentinel fixture (head_dim). */
enum { CAUSAL_FIXTURE_D = 8 };

/** How many sentinel fixtures there are. */
extern const int causal_fixture_count;

/** Fixture @p index's name: "sentinels 6x4 causal-br", ... */
const char *causal_fixture_name(int index);

/**
 * Builds sentinel fixture @p index in @p dtype (every value is exact in each
 * dtype): nq x nk under one mask, d = 8, scale 1, one query and one key/value
 * head per key (heads_q = heads_kv = nk). In head h, key h is the sentinel:
 * its score is CAUSAL_SENTINEL_SCORE, the others' 0, and v_j = (j + 1, 0, ...)
 * but the sentinel's second column CAUSAL_SENTINEL_VALUE. So row i of head h
 * is o = (about h + 1, about 20) when the mask lets it see key h, and (the
 * mean of j + 1 over its keys, 0) when not: every (row, key) decision of the
 * mask shows in o by a margin of 20. o and lse are worked out in closed form
 * (cases.c) from the row's keys, fa_window_key_range().
 */
fa_status causal_fixture_make(int index, fa_dtype dtype, flash_fixture *x);

#ifdef __cplusplus
}
#endif

#endif /* CAUSAL_CASES_H */
