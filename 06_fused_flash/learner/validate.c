/*
 * Stage 06, M24 — YOUR LAUNCHER'S VALIDATION (the exercise), in plain C.
 * Lesson: 06_fused_flash/README.md, section "M24: the library", with the
 * rules and examples of their messages.
 *
 * fa_attention_forward() (flashattn.h) validates every field of a call before
 * it launches anything, and chooses the kernel that runs it. You write that
 * function: every check, in a fixed order, each failure a status and a
 * message that names the field, its value and what is allowed; then the
 * choice between version 2 (tensor cores) and version 1 (CUDA cores).
 *   1. write the body of the function at the end of this file;
 *   2. delete its first line, FA_TODO_RETURN(24);
 *   3. build and check:   cmake --build build -t stage06
 *                          build/06_fused_flash/stage06 --impl learner --milestone 24
 * M24's check needs no GPU: it hands your function good calls and calls with
 * one field wrong and compares your status and your choice of kernel with
 * the reference's (06_fused_flash/validate.c, the solution: read it after).
 * The first rule that fails decides the status, so the ORDER below matters.
 *
 * The build names this function learner_attention_validate() (FA_LAUNCHER,
 * common/fa_launch.h); the library itself keeps calling the reference's, so a
 * mistake here cannot break the kernels' checks. Plain C11, compiled with
 * -Wall -Wextra -Wshadow -Werror. Static helper functions are yours to add
 * (a helper per tensor is worth it: four tensors share rule 5).
 *
 * Tools (nothing here dereferences a pointer):
 * - fa_fail(status, "printf format", ...) (fa_status.h) records the message
 *   and returns the status: `return fa_fail(FA_ERR_INVALID_SIZE, "%s: ...", API, ...);`
 *   Begin every message with "fa_attention: ", as the reference does.
 * - fa_bytes.h: fa_require_size() (>= 0), fa_require_array() (present when
 *   not empty, aligned), fa_require_disjoint() (two byte ranges apart),
 *   fa_mul_within() (a product without overflow), fa_max_elements(),
 *   fa_is_aligned(); each returns a status and writes its own message.
 * - fa_dtype_size() (fa_half.h): 4 or 2 bytes. FA_TRY(call) returns the
 *   call's status when it is not FA_OK.
 * - Print int64_t with "%lld" and a (long long) cast.
 */
#include "flash.h"

#include <math.h>
#include <stdio.h>

#include "fa_bytes.h"
#include "fa_launch.h"

/*
 * TODO(M24): validate *p and choose the kernel. On success store the variant
 * into *chosen (when chosen is not NULL) and return FA_OK; on the first rule
 * that fails return its status with fa_fail(), and leave *chosen alone.
 * Element counts and offsets are in elements, sizes in int64_t.
 *
 * 0. p == NULL: FA_ERR_NULL_POINTER ("fa_attention: params = NULL").
 *
 * 1. The values, before any size (a bad enum says more than the sizes):
 *    a. dtype is FA_F32, FA_BF16 or FA_F16, else FA_ERR_INVALID_ARGUMENT:
 *       "fa_attention: dtype = 9, expected FA_F32, FA_BF16 or FA_F16";
 *    b. scale is 0 (meaning 1 / sqrt(head_dim)) or finite and > 0, else
 *       FA_ERR_INVALID_ARGUMENT (NaN, inf, negative: the kernels take the max
 *       of the raw scores and fold the scale into exp2, which needs scale > 0);
 *    c. mask is an fa_mask: fa_require_mask(API, mask, FA_MASK_WINDOW) gives
 *       FA_ERR_INVALID_ARGUMENT for a value that is not one (the kernels
 *       run every mask: \ref stage07); with FA_MASK_WINDOW, window_left and
 *       window_right are each >= -1 (-1: that side unbounded), else
 *       FA_ERR_INVALID_ARGUMENT naming both: fa_require_window(API, mask,
 *       window_left, window_right); the other masks ignore them;
 *    d. variant is FA_VARIANT_AUTO, _CUDA_CORES or _TENSOR_CORES, else
 *       FA_ERR_INVALID_ARGUMENT;
 *    e. cu_seqlens_q and cu_seqlens_k both set (a packed batch, \ref stage07)
 *       or both NULL, else FA_ERR_INVALID_ARGUMENT ("... a packed batch sets
 *       both, a plain one neither").
 *
 * 2. The sizes:
 *    a. batch, heads_q, nq, nk >= 0, in this order: fa_require_size()
 *       (FA_ERR_INVALID_SIZE, "fa_attention: nq = -3, expected nq >= 0");
 *    b. only when heads_q > 0: heads_kv >= 1, then heads_q a multiple of
 *       heads_kv (FA_ERR_INVALID_SIZE, saying that each key/value head serves
 *       heads_q / heads_kv query heads);
 *    c. head_dim in 1 .. TILE1_MAX_D (256), else FA_ERR_UNSUPPORTED (say what
 *       v1 and v2 take);
 *    d. packed only: max_seqlen_q, then max_seqlen_k, >= 0: fa_require_size()
 *       (FA_ERR_INVALID_SIZE). A bound, not the exact longest: larger than
 *       nq is fine (the grid takes at most nq rows). A plain batch ignores
 *       them.
 *
 * 3. The grid: batch and heads_q at most 65535 each (they are grid z and y),
 *    and nq at most FA_MAX_GRID_X (2^31 - 1) tiles of 64 rows, the smallest
 *    query tile (grid x), else FA_ERR_OVERFLOW.
 *
 * 4. Zero-size work: batch, heads_q or nq == 0 is a valid call that computes
 *    nothing and touches nothing. Return FA_OK here, before any pointer is
 *    looked at (they may be NULL), with *chosen = the variant asked for, or
 *    FA_VARIANT_CUDA_CORES for FA_VARIANT_AUTO. (nk == 0 is NOT zero-size
 *    work: every row gets o = 0 and lse = -inf, so o and lse are written.)
 *
 * 5. Each tensor, in the order q, k, v, o (skip k and v when nk == 0: they
 *    are never read). Tensor X has extents (batch, rows, heads) = (batch, nq,
 *    heads_q) for q and o, (batch, nk, heads_kv) for k and v, strides
 *    X_strides.{batch, row, head}, a contiguous last dimension of head_dim
 *    elements, and elements of fa_dtype_size(dtype) bytes (o: 4 when o_fp32).
 *    A packed batch is one tensor of all its sequences' rows: extents (1,
 *    rows, heads), its batch strides unused (flash_strides_used() in flash.h
 *    sets them to 0; use it here and in rule 8).
 *    a. every stride >= 0, in the order batch, row, head, else
 *       FA_ERR_BAD_STRIDE ("fa_attention: q_strides.row = -1, expected >= 0");
 *    b. the offset of the last element, (head_dim - 1) + the sum over the
 *       three dimensions of stride * (extent - 1), at most
 *       fa_max_elements(element bytes) and computed without overflow
 *       (fa_mul_within() for each product, and compare before adding), else
 *       FA_ERR_OVERFLOW naming the stride and the extent;
 *    c. fa_require_array("fa_attention", "q", data, last + 1, element bytes):
 *       NULL gives FA_ERR_NULL_POINTER, a pointer not aligned to its element
 *       FA_ERR_MISALIGNED;
 *    d. for o only: no two elements at one address (threads would race on
 *       it). Sort the three dimensions by stride; skipping those of extent
 *       <= 1, each stride must be >= the span of everything below it, which
 *       starts at head_dim and grows by stride * (extent - 1) per dimension;
 *       else FA_ERR_BAD_STRIDE ("fa_attention: o_strides.head = 0 makes
 *       elements of the output share an address (the smaller dimensions span
 *       64 elements); expected a stride >= 64"). Inputs may repeat elements:
 *       a head stride of 0 broadcasts one head of k to all.
 *
 * 6. The output apart from the inputs: o's bytes, (last + 1) * element bytes,
 *    disjoint from k's and v's (when nk > 0), then from q's:
 *    fa_require_disjoint() (FA_ERR_INVALID_ARGUMENT).
 *
 * 7. lse, only when it is not NULL: batch * heads_q * nq floats (contiguous,
 *    [batch][heads_q][nq]; packed: heads_q * nq, [heads_q][nq]); the count
 *    within fa_max_elements(4), else FA_ERR_OVERFLOW; fa_require_array(...,
 *    4) (FA_ERR_MISALIGNED); then disjoint from q, k, v (the two only when
 *    nk > 0) and o, in that order.
 *    Then, packed only, for cu_seqlens_q then cu_seqlens_k: batch + 1 int32,
 *    fa_require_array(..., 4), disjoint from o, then from lse (when set):
 *    every block reads them while others write. (Their contents, which the
 *    CPU cannot see, are checked by fa_attention_forward().)
 *
 * 8. The kernel. Version 2 can run the call when
 *      dtype is FA_BF16 or FA_F16                                else FA_ERR_UNSUPPORTED,
 *      head_dim is a multiple of 8 (TILE2_D_MULTIPLE) and at most
 *      FLASH2_MAX_D                                               else FA_ERR_UNSUPPORTED,
 *      q, k, v and o are 16-byte aligned and each of their strides is a
 *      multiple of 16 / element bytes (every row starts on 16 bytes:
 *      cp.async and the stores of O move 16 bytes; flash_rows_16_aligned()
 *      in flash.h tests one tensor)                               else FA_ERR_MISALIGNED,
 *    checked in that order, keeping the reason of the first that fails
 *    (snprintf() into a buffer). Then:
 *      FA_VARIANT_AUTO          version 2 when it can run the call, else version 1;
 *      FA_VARIANT_TENSOR_CORES  version 2, or that status with the message
 *                               "fa_attention: variant v2 tensor cores cannot run this
 *                               call: <the reason>; FA_VARIANT_AUTO or
 *                               FA_VARIANT_CUDA_CORES can";
 *      FA_VARIANT_CUDA_CORES    version 1 (it runs every call that got this far).
 *    *chosen = the variant (when chosen is not NULL); return FA_OK.
 *
 * Hints:
 * - Write one static function per group (values, sizes, one tensor, the
 *   version 2 refusal) and FA_TRY() them in order in the function below.
 * - Multiply with fa_mul_within(a, b, limit) (-1 when a b > limit): a stride
 *   of 2^62 times 3 batches wraps int64_t silently.
 * Pitfalls:
 * - Looking at a pointer before rule 4: a zero-size call may pass NULLs.
 * - Refusing nk == 0 or NULL k, v when nk == 0: a valid call (o = 0, lse = -inf).
 * - Choosing version 2 for head_dim 60 or for a tensor whose row stride is not
 *   a multiple of 8 bf16 elements: its 16-byte copies would be misaligned.
 * - Returning early with FA_OK after a zero-size check that forgot *chosen.
 */
fa_status FA_LAUNCHER(attention_validate)(const fa_attention_params *p, fa_variant *chosen)
{
    FA_TODO_RETURN(24); /* delete this line when your M24 is written */
    (void)p;            /* delete these two lines as you use the arguments */
    (void)chosen;
}
