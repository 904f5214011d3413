/**
 * @file fa_status.h
 * @brief One status enum for every public function, with a message.
 *
 * Every public function of the course returns an ::fa_status. On failure it
 * also records a human-readable message (which argument, which value, what was
 * expected) that fa_last_error() returns until the next failure on the same
 * thread. Functions never print on their own; drivers and tests do.
 */
#ifndef FA_STATUS_H
#define FA_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Marks a function whose returned status the caller must act on: propagate it
 * (FA_TRY), report it (fa_result_status() in a check, FA_EXPECT in a test) or
 * branch on it. Under GCC, Clang and the host compiler of nvcc a call that
 * drops the status is a warning, so with -Werror the build proves that no
 * status is ignored. A cast to void does not silence it (GCC). Empty for other
 * compilers. Functions that only build a status (fa_fail()) do not carry it.
 */
#if defined(__GNUC__)
#define FA_MUST_CHECK __attribute__((warn_unused_result))
#else
#define FA_MUST_CHECK
#endif

/** Outcome of a public function. FA_OK is zero; every error is non-zero. */
typedef enum fa_status {
    FA_OK = 0,
    FA_ERR_NULL_POINTER,     /**< a required pointer was NULL */
    FA_ERR_INVALID_SIZE,     /**< a size was negative or inconsistent with another */
    FA_ERR_UNSUPPORTED,      /**< a valid request this kernel does not implement (head dim, dtype) */
    FA_ERR_MISALIGNED,       /**< a pointer is not aligned for the vector loads the kernel uses */
    FA_ERR_BAD_STRIDE,       /**< strides overlap or break the contiguous last dimension */
    FA_ERR_OVERFLOW,         /**< an element offset does not fit the index type */
    FA_ERR_OUT_OF_MEMORY,    /**< the device (or host) could not provide the memory needed */
    FA_ERR_NO_DEVICE,        /**< no usable CUDA device (no GPU or no driver) */
    FA_ERR_CUDA,             /**< a CUDA runtime call or kernel launch failed */
    FA_ERR_NOT_IMPLEMENTED,  /**< a learner kernel that has not been written yet */
    FA_ERR_INVALID_ARGUMENT  /**< any other bad value (an enum out of range, a NaN scale) */
} fa_status;

/** Short constant name of a status, e.g. "FA_ERR_MISALIGNED". */
const char *fa_status_name(fa_status status);

/** Message recorded by the last failing call on this thread ("" when none). */
const char *fa_last_error(void);

/**
 * Records a printf-style message for @p status and returns @p status, so that
 * validation reads `return fa_fail(FA_ERR_INVALID_SIZE, "n = %lld < 0", n);`.
 */
fa_status fa_fail(fa_status status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/** Clears the recorded message (tests call this between cases). */
void fa_clear_error(void);

/**
 * Propagates a non-OK status from an expression to the caller. Variadic so
 * that an expression with a comma outside parentheses, such as
 * `fa_todo_status<7, 1>()`, is one argument.
 */
#define FA_TRY(...)                               \
    do {                                          \
        fa_status fa_try_status_ = (__VA_ARGS__); \
        if (fa_try_status_ != FA_OK)              \
            return fa_try_status_;                \
    } while (0)

#ifdef __cplusplus
}
#endif

#endif /* FA_STATUS_H */
