/**
 * @file test_device.c
 * @brief Unit tests of the CUDA half of common/ that need no GPU: how the
 *        runtime's answers are classified into usable, absent (skip) and
 *        broken (fail).
 */
#include <stdio.h>
#include <string.h>

#include "fa_device.h"
#include "fa_test.h"

static void test_gpu_classify(fa_tests *t)
{
    char why[256];
    /* Driver 12.4 (12040), runtime 13.0 (13000). */
    FA_EXPECT(t, fa_gpu_classify(cudaErrorInsufficientDriver, 0, cudaSuccess, 0, 13000, why,
                                 sizeof why) == FA_GPU_ABSENT &&
                     strcmp(why, "no NVIDIA driver") == 0,
              "no driver installed: absent (%s)", why);
    FA_EXPECT(t, fa_gpu_classify(cudaErrorInsufficientDriver, 0, cudaSuccess, 12040, 13000, why,
                                 sizeof why) == FA_GPU_ABSENT &&
                     strstr(why, "driver too old") && strstr(why, "CUDA 12.4") &&
                     strstr(why, "CUDA 13.0"),
              "an old driver: absent, with both versions (%s)", why);
    FA_EXPECT(t, fa_gpu_classify(cudaErrorNoDevice, 0, cudaSuccess, 13000, 13000, why,
                                 sizeof why) == FA_GPU_ABSENT &&
                     strcmp(why, "no device") == 0,
              "no device: absent (%s)", why);
    FA_EXPECT(t, fa_gpu_classify(cudaSuccess, 0, cudaSuccess, 13000, 13000, why, sizeof why) ==
                     FA_GPU_ABSENT,
              "zero devices counted: absent");
    FA_EXPECT(t, fa_gpu_classify(cudaErrorUnknown, 0, cudaSuccess, 13000, 13000, why,
                                 sizeof why) == FA_GPU_BROKEN,
              "any other error while counting: broken, never skipped (%s)", why);
    FA_EXPECT(t, fa_gpu_classify(cudaSuccess, 1, cudaErrorDevicesUnavailable, 13000, 13000, why,
                                 sizeof why) == FA_GPU_BROKEN &&
                     strstr(why, "cudaErrorDevicesUnavailable"),
              "a device whose context fails: broken (%s)", why);
    FA_EXPECT(t, fa_gpu_classify(cudaSuccess, 2, cudaSuccess, 13000, 13000, NULL, 0) ==
                     FA_GPU_USABLE,
              "a device and a context: usable");
}

int main(void)
{
    fa_tests t = {0};
    test_gpu_classify(&t);
    return fa_tests_finish(&t);
}
