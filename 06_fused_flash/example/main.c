/**
 * @file main.c
 * @brief The library of stage 06 from a program of its own: one attention
 *        forward over [batch, n, heads, head_dim] bf16 tensors with
 *        grouped-query heads, checked on one row against a direct computation
 *        on the CPU.
 *
 * Exit status: 0 when the row matches, 1 on any failure, 77 when no GPU is
 * there (the validation ran, the forward was skipped; CTest's
 * SKIP_RETURN_CODE).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <flashattn/flashattn.h>

/** Exit status of a run without a GPU. */
#define EXIT_SKIPPED 77

enum { BATCH = 2, NQ = 77, NK = 130, HEADS_Q = 4, HEADS_KV = 2, HEAD_DIM = 64 };

/** The row checked on the CPU: the last query row of the last head of the last batch. */
enum { ROW_BATCH = BATCH - 1, ROW_HEAD = HEADS_Q - 1, ROW = NQ - 1 };

/*
 * Tolerances of the row check for inputs in [-1, 1] (so |o| <= 1): the
 * tensor-core kernel rounds the weights P to bf16 before P V (at most 2^-8 of
 * sum_j p_j |v_j| <= 2^-8) and o is stored in bf16 (2^-8 |o|); twice their sum
 * leaves room for the fp32 sums. The course judges every element by its own
 * error bound instead: fa_attention_method() and fa_attention_reference().
 */
static const double O_TOLERANCE = 4 * 0x1p-8;
static const double LSE_TOLERANCE = 5e-4;

/** The host and device buffers of the call. */
typedef struct buffers {
    uint16_t *q, *k, *v, *o; /* bf16 bit patterns (fa_half.h) */
    float *lse;
    void *dq, *dk, *dv, *d_o, *dlse;
} buffers;

static const size_t Q_COUNT = (size_t)BATCH * NQ * HEADS_Q * HEAD_DIM;
static const size_t KV_COUNT = (size_t)BATCH * NK * HEADS_KV * HEAD_DIM;
static const size_t LSE_COUNT = (size_t)BATCH * HEADS_Q * NQ;

static int fail_status(const char *what, fa_status status)
{
    fprintf(stderr, "%s: %s: %s\n", what, fa_status_name(status), fa_last_error());
    return EXIT_FAILURE;
}

static int fail_cuda(const char *what, cudaError_t error)
{
    fprintf(stderr, "%s: %s (%s)\n", what, cudaGetErrorString(error), cudaGetErrorName(error));
    return EXIT_FAILURE;
}

/** Uniform in [-1, 1), rounded to bf16: a small deterministic generator (xorshift32). */
static uint16_t next_bf16(uint32_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 17;
    *state ^= *state << 5;
    return fa_float_to_bf16((float)(*state >> 8) * 0x1p-23f - 1.0f);
}

/** 1 when a GPU can run the forward; 0 when none is there; -1 when the runtime fails otherwise. */
static int gpu_present(const char **why)
{
    int driver = 0, count = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0) {
        *why = "no NVIDIA driver";
        return 0;
    }
    const cudaError_t error = cudaGetDeviceCount(&count);
    if (error == cudaErrorInsufficientDriver) {
        *why = "the driver is older than this CUDA runtime";
        return 0;
    }
    if (error == cudaErrorNoDevice || (error == cudaSuccess && count == 0)) {
        *why = "no device";
        return 0;
    }
    if (error != cudaSuccess) {
        *why = cudaGetErrorString(error);
        return -1;
    }
    return 1;
}

/** Element (b, n, h, d) of a bf16 tensor read through its strides, as flashattn.h defines them. */
static double at(const uint16_t *t, fa_strides s, int64_t b, int64_t n, int64_t h, int64_t d)
{
    return fa_bf16_to_float(t[b * s.batch + n * s.row + h * s.head + d]);
}

/** The definition of flashattn.h in double for query row @p i of head @p h in batch @p b. */
static void cpu_row(const fa_attention_params *p, const buffers *x, int64_t b, int64_t h,
                    int64_t i, double o[HEAD_DIM], double *lse)
{
    const int64_t kv_head = h / (p->heads_q / p->heads_kv);
    const double scale = fa_attention_scale(p);
    double s[NK];
    double m = -INFINITY;
    for (int64_t j = 0; j < NK; ++j) {
        double dot = 0.0;
        for (int64_t d = 0; d < HEAD_DIM; ++d)
            dot += at(x->q, p->q_strides, b, i, h, d) * at(x->k, p->k_strides, b, j, kv_head, d);
        s[j] = scale * dot;
        m = s[j] > m ? s[j] : m;
    }
    double l = 0.0;
    for (int64_t j = 0; j < NK; ++j)
        l += exp(s[j] - m);
    for (int64_t d = 0; d < HEAD_DIM; ++d) {
        double sum = 0.0;
        for (int64_t j = 0; j < NK; ++j)
            sum += exp(s[j] - m) * at(x->v, p->v_strides, b, j, kv_head, d);
        o[d] = sum / l;
    }
    *lse = m + log(l);
}

/** Runs the call on the GPU and compares the row; the host inputs are in @p x and @p p. */
static int forward_and_check(fa_attention_params *p, buffers *x)
{
    const size_t q_bytes = Q_COUNT * sizeof(uint16_t), kv_bytes = KV_COUNT * sizeof(uint16_t);
    cudaError_t error = cudaSuccess;
    if ((error = cudaMalloc(&x->dq, q_bytes)) != cudaSuccess ||
        (error = cudaMalloc(&x->dk, kv_bytes)) != cudaSuccess ||
        (error = cudaMalloc(&x->dv, kv_bytes)) != cudaSuccess ||
        (error = cudaMalloc(&x->d_o, q_bytes)) != cudaSuccess ||
        (error = cudaMalloc(&x->dlse, LSE_COUNT * sizeof(float))) != cudaSuccess)
        return fail_cuda("cudaMalloc", error);
    if ((error = cudaMemcpy(x->dq, x->q, q_bytes, cudaMemcpyHostToDevice)) != cudaSuccess ||
        (error = cudaMemcpy(x->dk, x->k, kv_bytes, cudaMemcpyHostToDevice)) != cudaSuccess ||
        (error = cudaMemcpy(x->dv, x->v, kv_bytes, cudaMemcpyHostToDevice)) != cudaSuccess)
        return fail_cuda("cudaMemcpy to the device", error);

    p->q = x->dq;
    p->k = x->dk;
    p->v = x->dv;
    p->o = x->d_o;
    p->lse = x->dlse;
    const fa_status status = fa_attention_forward(p, 0); /* the legacy default stream */
    if (status != FA_OK)
        return fail_status("fa_attention_forward", status);
    if ((error = cudaDeviceSynchronize()) != cudaSuccess)
        return fail_cuda("the forward kernel", error);
    if ((error = cudaMemcpy(x->o, x->d_o, q_bytes, cudaMemcpyDeviceToHost)) != cudaSuccess ||
        (error = cudaMemcpy(x->lse, x->dlse, LSE_COUNT * sizeof(float),
                            cudaMemcpyDeviceToHost)) != cudaSuccess)
        return fail_cuda("cudaMemcpy to the host", error);

    double want[HEAD_DIM], want_lse = 0.0;
    cpu_row(p, x, ROW_BATCH, ROW_HEAD, ROW, want, &want_lse);
    double worst = 0.0;
    for (int64_t d = 0; d < HEAD_DIM; ++d) {
        const double err = fabs(at(x->o, p->o_strides, ROW_BATCH, ROW, ROW_HEAD, d) - want[d]);
        worst = err > worst || isnan(err) ? err : worst;
    }
    const double lse_err = fabs(x->lse[((int64_t)ROW_BATCH * HEADS_Q + ROW_HEAD) * NQ + ROW] - want_lse);
    const int ok = worst <= O_TOLERANCE && lse_err <= LSE_TOLERANCE;
    printf("row (batch %d, head %d, query %d) against the CPU: max |o - cpu| = %.3g (tolerance "
           "%.3g), |lse - cpu| = %.3g (tolerance %.3g): %s\n",
           ROW_BATCH, ROW_HEAD, ROW, worst, O_TOLERANCE, lse_err, LSE_TOLERANCE,
           ok ? "ok" : "MISMATCH");
    return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}

static void release(buffers *x)
{
    free(x->q);
    free(x->k);
    free(x->v);
    free(x->o);
    free(x->lse);
    void *device[5] = {x->dq, x->dk, x->dv, x->d_o, x->dlse};
    for (int i = 0; i < 5; ++i)
        if (device[i] != NULL)
            cudaFree(device[i]);
}

int main(void)
{
    /* The struct this program was compiled with is the library's. */
    if (fa_attention_params_size() != sizeof(fa_attention_params)) {
        fprintf(stderr, "flashattn.h and libflashattn disagree: sizeof(fa_attention_params) = %zu "
                        "here, %zu in the library\n",
                sizeof(fa_attention_params), fa_attention_params_size());
        return EXIT_FAILURE;
    }

    /* The inputs on the host; sizes are multiples of 16 bytes, as aligned_alloc requires. */
    buffers x;
    memset(&x, 0, sizeof x);
    x.q = aligned_alloc(16, Q_COUNT * sizeof(uint16_t));
    x.k = aligned_alloc(16, KV_COUNT * sizeof(uint16_t));
    x.v = aligned_alloc(16, KV_COUNT * sizeof(uint16_t));
    x.o = aligned_alloc(16, Q_COUNT * sizeof(uint16_t));
    x.lse = aligned_alloc(16, LSE_COUNT * sizeof(float));
    if (x.q == NULL || x.k == NULL || x.v == NULL || x.o == NULL || x.lse == NULL) {
        fprintf(stderr, "out of host memory\n");
        release(&x);
        return EXIT_FAILURE;
    }
    uint32_t state = 2024;
    for (size_t i = 0; i < Q_COUNT; ++i)
        x.q[i] = next_bf16(&state);
    for (size_t i = 0; i < KV_COUNT; ++i) {
        x.k[i] = next_bf16(&state);
        x.v[i] = next_bf16(&state);
    }

    /* One call: [B, N, H, D] tensors, 4 query heads over 2 key/value heads, o in bf16, lse. */
    fa_attention_params p;
    memset(&p, 0, sizeof p);
    p.dtype = FA_BF16;
    p.batch = BATCH;
    p.heads_q = HEADS_Q;
    p.heads_kv = HEADS_KV;
    p.nq = NQ;
    p.nk = NK;
    p.head_dim = HEAD_DIM;
    p.q_strides = fa_attention_strides_bnhd(NQ, HEADS_Q, HEAD_DIM);
    p.k_strides = fa_attention_strides_bnhd(NK, HEADS_KV, HEAD_DIM);
    p.v_strides = p.k_strides;
    p.o_strides = p.q_strides;
    p.scale = 0.0f; /* 1 / sqrt(head_dim) */
    p.mask = FA_MASK_NONE;
    p.variant = FA_VARIANT_AUTO;

    /* The validation reads no memory: the host buffers, 16-byte aligned like the
     * device ones, show which kernel the call gets before any data is on the GPU
     * (the choice asks the device only whether it runs version 3). */
    p.q = x.q;
    p.k = x.k;
    p.v = x.v;
    p.o = x.o;
    p.lse = x.lse;
    fa_variant variant = FA_VARIANT_AUTO;
    const fa_status status = fa_attention_supported(&p, &variant);
    if (status != FA_OK) {
        release(&x);
        return fail_status("fa_attention_supported", status);
    }
    printf("attention of [B, N, H, D] bf16: batch %d, nq %d, nk %d, heads %d over %d, head_dim "
           "%d: %s\n",
           BATCH, NQ, NK, HEADS_Q, HEADS_KV, HEAD_DIM, fa_attention_variant_name(variant));

    const char *why = "";
    const int gpu = gpu_present(&why);
    int result = EXIT_FAILURE;
    if (gpu == 0) {
        printf("no GPU (%s): fa_attention_forward skipped\n", why);
        result = EXIT_SKIPPED;
    } else if (gpu < 0) {
        fprintf(stderr, "CUDA runtime: %s\n", why);
    } else {
        result = forward_and_check(&p, &x);
    }
    release(&x);
    return result;
}
