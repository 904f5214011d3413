/**
 * @file battery.h
 * @brief M24's judge: a battery of attention calls, each a valid call with
 *        one field edited, with the status the launcher must return, the
 *        field its message must name, and for the calls it must accept, the
 *        kernel it must choose. Plain C: the check runs without a GPU.
 *
 * Every field of fa_attention_params is edited at least once: NULL q, k, v,
 * o; a dtype out of range; negative sizes; heads_q not a multiple of
 * heads_kv; head_dim 0 and 257; scale NaN, inf and negative; a mask other
 * than none; a variant out of range; version 2 asked for fp32, for a head
 * dimension not a multiple of 8, with a misaligned pointer or stride; a
 * negative stride; output strides that fold two elements onto one address;
 * o overlapping q, k or v, lse overlapping an input; sizes and strides whose
 * offsets overflow 64 bits, at the boundary (the largest accepted and the
 * smallest refused); the grid's limits; zero-size calls. The valid calls
 * cover the choice of the kernel: v2 where it can run, else v1, or the
 * variant asked for.
 *
 * The pointers are addresses far apart that no one dereferences: the
 * launcher's checks compare addresses and never read memory.
 */
#ifndef FLASH_BATTERY_H
#define FLASH_BATTERY_H

#include <stdbool.h>

#include "fa_stage.h"
#include "fa_status.h"
#include "flashattn.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One call of the battery. */
typedef struct flash_battery_case {
    const char *name;           /**< what is edited: "q NULL", "scale NaN", ... */
    bool null_params;           /**< the call passes params = NULL */
    fa_attention_params params; /**< the call */
    fa_status expected;         /**< FA_OK, or the status of the refusal */
    const char *needle;         /**< text the refusal's message must contain (the field) */
    fa_variant chosen;          /**< the kernel an accepted call chooses */
} flash_battery_case;

/** More than the battery holds. */
enum { FLASH_BATTERY_MAX = 160 };

/** Writes the battery into @p cases (room for FLASH_BATTERY_MAX); returns the count. */
int flash_battery(flash_battery_case *cases);

/** A launcher's validation: ref_attention_validate() or learner_attention_validate(). */
typedef fa_status (*flash_validator)(const fa_attention_params *p, fa_variant *chosen);

/**
 * Calls @p validate on @p c: true when it returns the expected status, a
 * refusal's message names c->needle and an accepted call chose c->chosen;
 * else false with @p why (@p cap bytes) saying what differs. A status of
 * FA_ERR_NOT_IMPLEMENTED is returned through @p status for the caller.
 */
bool flash_battery_call(flash_validator validate, const flash_battery_case *c, fa_status *status,
                        char *why, size_t cap);

/**
 * M24's check: every case of the battery through @p validate, named
 * "validate '<name>'". The first difference fails the milestone with the
 * case's name; a validator still marked FA_TODO_RETURN is not implemented.
 */
void flash_battery_check(flash_validator validate, const fa_run_options *options,
                         fa_result *result);

#ifdef __cplusplus
}
#endif

#endif /* FLASH_BATTERY_H */
