/**
 * @file fa_timing.c
 * @brief Event timing with warm-up and L2 flush, copy bandwidth, and the configuration line.
 *
 * Every repetition gets its own pair of events and all repetitions are queued
 * before the host waits, so the GPU runs them back to back: the host's launch
 * latency never lands inside a timed region. The L2 flush is queued between a
 * stop event and the next start event, outside the timed region.
 */
#include "fa_timing.h"

#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "fa_device.h"

#ifndef FA_GIT_COMMIT
#define FA_GIT_COMMIT "unknown" /* the build system defines it from `git rev-parse` */
#endif

enum {
    DEFAULT_WARMUP = 5,
    DEFAULT_REPEATS = 50,
    FLUSH_L2_MULTIPLE = 2, /* twice the L2 size evicts every line whatever the replacement policy */
    FLUSH_BYTE = 0x5A,
    COPY_SOURCE_BYTE = 0x3C
};

static const double BYTES_PER_GIGABYTE = 1e9;
static const double MILLISECONDS_PER_SECOND = 1e3;
static const double BYTES_PER_MIB = 1024.0 * 1024.0;
static const double BYTES_PER_GIB = 1024.0 * 1024.0 * 1024.0;
static const double KHZ_PER_MHZ = 1e3;

fa_timing_options fa_timing_defaults(void)
{
    return (fa_timing_options){.warmup = DEFAULT_WARMUP, .repeats = DEFAULT_REPEATS,
                               .flush_l2 = true};
}

/** What one timing run owns; released whatever state acquisition stopped in. */
typedef struct timing_run {
    cudaStream_t stream;
    int repeats;
    cudaEvent_t *start; /* [repeats], NULL where not created */
    cudaEvent_t *stop;  /* [repeats], NULL where not created */
    double *samples;    /* [repeats], milliseconds */
    void *flush;        /* NULL when not flushing (or no L2 reported) */
    size_t flush_bytes;
} timing_run;

static fa_status timing_run_acquire(timing_run *run, int repeats, bool flush_l2)
{
    const size_t count = (size_t)repeats;
    run->repeats = repeats;
    run->start = calloc(count, sizeof *run->start);
    run->stop = calloc(count, sizeof *run->stop);
    run->samples = calloc(count, sizeof *run->samples);
    if (!run->start || !run->stop || !run->samples)
        return fa_fail(FA_ERR_OUT_OF_MEMORY, "fa_time_gpu: no host memory for %d repeats", repeats);

    /* A blocking stream: it waits for work the caller queued on the legacy
     * default stream (an asynchronous cudaMemset of the inputs, say). */
    FA_CUDA_TRY(cudaStreamCreate(&run->stream));
    for (int i = 0; i < repeats; i++) {
        FA_CUDA_TRY(cudaEventCreate(&run->start[i]));
        FA_CUDA_TRY(cudaEventCreate(&run->stop[i]));
    }
    if (flush_l2) {
        int device, l2_bytes;
        FA_CUDA_TRY(cudaGetDevice(&device));
        FA_CUDA_TRY(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
        run->flush_bytes = (size_t)l2_bytes * FLUSH_L2_MULTIPLE;
        FA_TRY(fa_device_alloc(&run->flush, run->flush_bytes));
    }
    return FA_OK;
}

static void timing_run_release(timing_run *run)
{
    for (int i = 0; i < run->repeats; i++) {
        if (run->start && run->start[i])
            cudaEventDestroy(run->start[i]);
        if (run->stop && run->stop[i])
            cudaEventDestroy(run->stop[i]);
    }
    if (run->stream)
        cudaStreamDestroy(run->stream);
    fa_device_free(run->flush);
    free(run->start);
    free(run->stop);
    free(run->samples);
}

static fa_status queue_l2_flush(const timing_run *run)
{
    if (run->flush)
        FA_CUDA_TRY(cudaMemsetAsync(run->flush, FLUSH_BYTE, run->flush_bytes, run->stream));
    return FA_OK;
}

static fa_status timing_run_measure(timing_run *run, fa_gpu_work work, void *context,
                                    const fa_timing_options *options)
{
    int rep = 0;
    /* Warm-up repeats the timed loop (flush included) without events. */
    for (int i = 0; i < options->warmup; i++, rep++) {
        FA_TRY(queue_l2_flush(run));
        FA_TRY(work(context, rep, run->stream));
    }
    for (int i = 0; i < options->repeats; i++, rep++) {
        FA_TRY(queue_l2_flush(run));
        FA_CUDA_TRY(cudaEventRecord(run->start[i], run->stream));
        FA_TRY(work(context, rep, run->stream));
        FA_CUDA_TRY(cudaEventRecord(run->stop[i], run->stream));
    }
    /* Also reports an asynchronous fault of the work. */
    FA_CUDA_TRY(cudaStreamSynchronize(run->stream));
    for (int i = 0; i < options->repeats; i++) {
        float ms;
        FA_CUDA_TRY(cudaEventElapsedTime(&ms, run->start[i], run->stop[i]));
        run->samples[i] = ms;
    }
    return FA_OK;
}

/*
 * options may be NULL (fa_timing_defaults()). repeats must be >= 1 and warmup
 * >= 0. The work runs on a private stream; a non-OK status from
 * the work stops the timing and is returned.
 */
fa_status fa_time_gpu(fa_gpu_work work, void *context, const fa_timing_options *options,
                      fa_stats *milliseconds)
{
    if (!work)
        return fa_fail(FA_ERR_NULL_POINTER, "fa_time_gpu: work = NULL, expected a function");
    if (!milliseconds)
        return fa_fail(FA_ERR_NULL_POINTER, "fa_time_gpu: milliseconds = NULL, expected a fa_stats *");
    const fa_timing_options defaults = fa_timing_defaults();
    if (!options)
        options = &defaults;
    if (options->repeats < 1)
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "fa_time_gpu: repeats = %d, expected >= 1",
                       options->repeats);
    if (options->warmup < 0)
        return fa_fail(FA_ERR_INVALID_ARGUMENT, "fa_time_gpu: warmup = %d, expected >= 0",
                       options->warmup);

    timing_run run = {0};
    fa_status status = timing_run_acquire(&run, options->repeats, options->flush_l2);
    if (status == FA_OK)
        status = timing_run_measure(&run, work, context, options);
    if (status == FA_OK)
        *milliseconds = fa_stats_compute(run.samples, options->repeats);
    timing_run_release(&run);
    return status;
}

/** Buffers of one device-to-device copy. */
typedef struct copy_work {
    void *dst;
    const void *src;
    size_t bytes;
} copy_work;

static fa_status copy_once(void *context, int rep, cudaStream_t stream)
{
    (void)rep;
    const copy_work *copy = context;
    FA_CUDA_TRY(cudaMemcpyAsync(copy->dst, copy->src, copy->bytes, cudaMemcpyDeviceToDevice, stream));
    return FA_OK;
}

static fa_status measure_copy(void *dst, void *src, size_t bytes, double *gb_per_s)
{
    /* Non-zero source bytes, as for every benchmark input. */
    FA_CUDA_TRY(cudaMemset(src, COPY_SOURCE_BYTE, bytes));
    copy_work copy = {dst, src, bytes};
    const fa_timing_options options = fa_timing_defaults();
    fa_stats ms;
    FA_TRY(fa_time_gpu(copy_once, &copy, &options, &ms));
    const double bytes_moved = 2.0 * (double)bytes; /* read once, written once */
    *gb_per_s = bytes_moved / (ms.median / MILLISECONDS_PER_SECOND) / BYTES_PER_GIGABYTE;
    return FA_OK;
}

fa_status fa_measure_copy_bandwidth(size_t bytes, double *gb_per_s)
{
    if (!gb_per_s)
        return fa_fail(FA_ERR_NULL_POINTER, "fa_measure_copy_bandwidth: gb_per_s = NULL");
    if (bytes == 0)
        return fa_fail(FA_ERR_INVALID_SIZE, "fa_measure_copy_bandwidth: bytes = 0, expected > 0");

    void *src = NULL, *dst = NULL;
    fa_status status = fa_device_alloc(&src, bytes);
    if (status == FA_OK)
        status = fa_device_alloc(&dst, bytes);
    if (status == FA_OK)
        status = measure_copy(dst, src, bytes, gb_per_s);
    fa_device_free(dst);
    fa_device_free(src);
    return status;
}

/** Prints "<what> <MHz> MHz" for a clock attribute, or says it cannot be read. */
static void print_clock(FILE *out, const char *what, enum cudaDeviceAttr attribute, int device)
{
    int khz = 0;
    /* CUDA 13 removed the clock fields of cudaDeviceProp; the attribute may
     * also be unsupported (an error, or 0). */
    const cudaError_t error = cudaDeviceGetAttribute(&khz, attribute, device);
    if (error == cudaSuccess && khz > 0) {
        fprintf(out, "%s %.0f MHz", what, khz / KHZ_PER_MHZ);
        return;
    }
    fprintf(out, "%s not readable", what);
    if (error != cudaSuccess) /* consume it, so the next FA_LAUNCH_CHECK() does not report it */
        (void)cudaGetLastError();
}

/** "13.0" from CUDA's 1000 * major + 10 * minor encoding. */
static void print_cuda_version(FILE *out, const char *what, int version)
{
    fprintf(out, "%s %d.%d", what, version / 1000, (version % 1000) / 10);
}

/*
 * Describes the current device. Fails (with nothing printed) when no device
 * is usable; an unreadable clock is printed as such and is not an error.
 */
fa_status fa_print_configuration(FILE *out)
{
    if (!out)
        return fa_fail(FA_ERR_NULL_POINTER, "fa_print_configuration: out = NULL");
    int device, runtime_version, driver_version;
    struct cudaDeviceProp properties;
    FA_CUDA_TRY(cudaGetDevice(&device));
    FA_CUDA_TRY(cudaGetDeviceProperties(&properties, device));
    FA_CUDA_TRY(cudaRuntimeGetVersion(&runtime_version));
    FA_CUDA_TRY(cudaDriverGetVersion(&driver_version));

    fprintf(out, "GPU      %s, %d SMs, compute capability %d.%d\n", properties.name,
            properties.multiProcessorCount, properties.major, properties.minor);
    fprintf(out, "clocks   ");
    print_clock(out, "SM", cudaDevAttrClockRate, device);
    fprintf(out, ", ");
    print_clock(out, "memory", cudaDevAttrMemoryClockRate, device);
    fprintf(out, "\nmemory   %.1f GiB, L2 %.1f MiB\n", (double)properties.totalGlobalMem / BYTES_PER_GIB,
            properties.l2CacheSize / BYTES_PER_MIB);
    fprintf(out, "CUDA     ");
    print_cuda_version(out, "runtime", runtime_version);
    fprintf(out, ", ");
    print_cuda_version(out, "driver", driver_version);
    fprintf(out, "\ncommit   %s\n", FA_GIT_COMMIT);
    return FA_OK;
}

fa_status fa_bench_begin(size_t copy_bytes, double *copy_gb_per_s)
{
    FA_TRY(fa_print_configuration(stdout));
    FA_TRY(fa_measure_copy_bandwidth(copy_bytes, copy_gb_per_s));
    printf("\nCeiling: device-to-device cudaMemcpyAsync of %.0f MiB: %.0f GB/s (bytes read + "
           "written)\n",
           (double)copy_bytes / BYTES_PER_MIB, *copy_gb_per_s);
    return FA_OK;
}
