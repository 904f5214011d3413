/** @file fa_status.c @brief Status names and the per-thread error message. */
#include "fa_status.h"

#include <stdarg.h>
#include <stdio.h>

enum { FA_MESSAGE_CAPACITY = 512 };

static _Thread_local char last_message[FA_MESSAGE_CAPACITY];

const char *fa_status_name(fa_status status)
{
    switch (status) {
    case FA_OK: return "FA_OK";
    case FA_ERR_NULL_POINTER: return "FA_ERR_NULL_POINTER";
    case FA_ERR_INVALID_SIZE: return "FA_ERR_INVALID_SIZE";
    case FA_ERR_UNSUPPORTED: return "FA_ERR_UNSUPPORTED";
    case FA_ERR_MISALIGNED: return "FA_ERR_MISALIGNED";
    case FA_ERR_BAD_STRIDE: return "FA_ERR_BAD_STRIDE";
    case FA_ERR_OVERFLOW: return "FA_ERR_OVERFLOW";
    case FA_ERR_OUT_OF_MEMORY: return "FA_ERR_OUT_OF_MEMORY";
    case FA_ERR_NO_DEVICE: return "FA_ERR_NO_DEVICE";
    case FA_ERR_CUDA: return "FA_ERR_CUDA";
    case FA_ERR_NOT_IMPLEMENTED: return "FA_ERR_NOT_IMPLEMENTED";
    case FA_ERR_INVALID_ARGUMENT: return "FA_ERR_INVALID_ARGUMENT";
    }
    return "FA_ERR_UNKNOWN";
}

const char *fa_last_error(void) { return last_message; }

void fa_clear_error(void) { last_message[0] = '\0'; }

fa_status fa_fail(fa_status status, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(last_message, sizeof last_message, format, args);
    va_end(args);
    return status;
}
