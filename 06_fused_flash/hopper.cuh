/**
 * @file hopper.cuh
 * @brief Hopper's asynchronous machinery in inline PTX, for version 3
 *        (sm_90a only): mbarriers, TMA tensor copies, wgmma and its
 *        shared-memory descriptors, setmaxnreg.
 *
 * Two proxies touch shared memory on Hopper: the generic one (ordinary loads
 * and stores) and the async one (TMA writes, wgmma reads). An mbarrier is
 * how the async proxy tells the threads that bytes have landed: a copy
 * carries the barrier's address and counts its bytes off the barrier's
 * transaction count; the barrier's phase flips when both the arrivals and
 * the bytes it expects are in. A thread waits on a phase by its parity.
 */
#ifndef FLASH_HOPPER_CUH
#define FLASH_HOPPER_CUH

#include <stdint.h>

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "tensor_core.cuh"

/** An mbarrier whose phase completes after @p arrivals arrivals (and the bytes announced). */
static __device__ __forceinline__ void mbarrier_init(uint64_t *bar, int arrivals)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(bar)), "r"(arrivals));
}

/** Makes the initialised barriers visible to the async proxy (the TMA unit) before any copy. */
static __device__ __forceinline__ void mbarrier_init_fence(void)
{
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

/** One arrival that also announces @p bytes the phase must wait for (the copies that follow). */
static __device__ __forceinline__ void mbarrier_arrive_expect(uint64_t *bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(bar)),
                 "r"(bytes)
                 : "memory");
}

/** One arrival: this thread is done with what the barrier guards. */
static __device__ __forceinline__ void mbarrier_arrive(uint64_t *bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(shared_address(bar)) : "memory");
}

/** Waits until the phase of parity @p parity has completed. */
static __device__ __forceinline__ void mbarrier_wait(uint64_t *bar, uint32_t parity)
{
    asm volatile("{\n"
                 ".reg .pred done;\n"
                 "wait:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra wait;\n"
                 "}\n" ::"r"(shared_address(bar)),
                 "r"(parity)
                 : "memory");
}

/**
 * One 16-byte store of @p value to global memory at @p to (16-byte aligned).
 * An assignment through a uint4 pointer of a value held in registers, the
 * compiler (CUDA 13.0) splits into four 4-byte stores.
 */
static __device__ __forceinline__ void store_global_16(void *to, uint4 value)
{
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(to), "r"(value.x), "r"(value.y),
                 "r"(value.z), "r"(value.w)
                 : "memory");
}

/**
 * Orders this thread's generic-proxy writes to shared memory before the
 * async proxy's later reads of it (a wgmma operand the threads wrote).
 */
static __device__ __forceinline__ void fence_proxy_async(void)
{
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

/**
 * TMA: the box of @p map at coordinates (col, head, row, batch) copied into
 * shared memory at @p dst, swizzled as the map says; elements outside the
 * tensor arrive as zeros. Completes on @p bar, counting its bytes.
 */
static __device__ __forceinline__ void tma_load(void *dst, const CUtensorMap *map, int col, int head,
                                                int row, int batch, uint64_t *bar)
{
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4, %5}], [%6];" ::"r"(shared_address(dst)),
                 "l"((uint64_t)map), "r"(col), "r"(head), "r"(row), "r"(batch),
                 "r"(shared_address(bar))
                 : "memory");
}

/**
 * A wgmma shared-memory matrix descriptor for a tile in the 128-byte swizzle
 * of TMA: start address, leading and stride byte offsets (in 16 bytes), and
 * the swizzle mode (1 in bits 62-63). Adding k to it moves the start by 16 k
 * bytes, along a swizzled row.
 */
static __device__ __forceinline__ uint64_t wgmma_descriptor(const void *tile, uint32_t leading16,
                                                            uint32_t stride16)
{
    return (uint64_t)((shared_address(tile) >> 4) & 0x3FFF) | ((uint64_t)(leading16 & 0x3FFF) << 16) |
           ((uint64_t)(stride16 & 0x3FFF) << 32) | (1ull << 62);
}

/** Orders this thread's register writes before the wgmma that reads them. */
static __device__ __forceinline__ void wgmma_fence(void)
{
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

/** Closes the group of wgmma issued since the last commit. */
static __device__ __forceinline__ void wgmma_commit(void)
{
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

/**
 * Waits until at most @p PENDING committed wgmma groups are unfinished: groups
 * finish in the order they were committed, so every older group's
 * accumulators are readable.
 */
template <int PENDING>
static __device__ __forceinline__ void wgmma_wait(void)
{
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(PENDING) : "memory");
}

/**
 * Ties each of @p values to this point of the program. wgmma reads and writes
 * registers asynchronously, which the compiler does not see: it takes an asm
 * statement's operands as used at the statement. Pinning what a wgmma reads
 * (O, P) before wgmma_fence() and what it reads or writes (S, O, P) after
 * wgmma_wait() keeps every other use of them outside the span in which
 * the tensor cores own them.
 */
template <int N>
static __device__ __forceinline__ void wgmma_pin(float (&values)[N])
{
#pragma unroll
    for (int i = 0; i < N; ++i)
        asm volatile("" : "+f"(values[i])::"memory");
}

/** The same for registers holding packed pairs (P as wgmma's A operand). */
template <int N>
static __device__ __forceinline__ void wgmma_pin(uint32_t (&values)[N])
{
#pragma unroll
    for (int i = 0; i < N; ++i)
        asm volatile("" : "+r"(values[i])::"memory");
}

/**
 * Named barrier @p id (1 to 15; 0 is __syncthreads()) over @p THREADS
 * threads: this warp arrives and waits until THREADS have arrived.
 */
template <int THREADS>
static __device__ __forceinline__ void named_barrier_sync(int id)
{
    asm volatile("bar.sync %0, %1;" ::"r"(id), "n"(THREADS) : "memory");
}

/** This warp arrives at named barrier @p id of @p THREADS threads and goes on. */
template <int THREADS>
static __device__ __forceinline__ void named_barrier_arrive(int id)
{
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "n"(THREADS) : "memory");
}

/** Gives this warpgroup's threads @p REGS registers each (down, for the producer). */
template <int REGS>
static __device__ __forceinline__ void registers_release(void)
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(REGS));
}

/** Takes @p REGS registers for each of this warpgroup's threads (up, for a consumer). */
template <int REGS>
static __device__ __forceinline__ void registers_claim(void)
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(REGS));
}

/* The operand lists of the wgmma below: 64 (n = 128) or 32 (n = 64) accumulators a thread. */
/** @cond */
#define FLASH3_F4(d, i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define FLASH3_F16(d, i) FLASH3_F4(d, i), FLASH3_F4(d, i + 4), FLASH3_F4(d, i + 8), FLASH3_F4(d, i + 12)
#define FLASH3_F32(d) FLASH3_F16(d, 0), FLASH3_F16(d, 16)
#define FLASH3_F64(d) FLASH3_F16(d, 0), FLASH3_F16(d, 16), FLASH3_F16(d, 32), FLASH3_F16(d, 48)
#define FLASH3_ACC32                                                                             \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, " \
    "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define FLASH3_ACC64                                                                             \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, " \
    "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, "  \
    "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, "  \
    "%56, %57, %58, %59, %60, %61, %62, %63}"
/** @endcond */

/**
 * Defines wgmma_scores() and wgmma_pv() for T = bf16 or fp16 (overloads on a
 * T() tag, as tile2_mma()), fp32 accumulators. Asynchronous: wgmma_commit(), then wgmma_wait() before d
 * is read. d = A B, not d += A B, when @p accumulate is 0.
 */
#define FLASH3_WGMMA(T, PTX)                                                                        \
    /* S (+)= Q K^T, one m64n128k16 step: Q and K both K-major in shared memory (descriptors). */   \
    static __device__ __forceinline__ void wgmma_scores(T, float(&d)[64], uint64_t a, uint64_t b,  \
                                                        int accumulate)                            \
    {                                                                                               \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                   \
                     "wgmma.mma_async.sync.aligned.m64n128k16.f32." PTX "." PTX " " FLASH3_ACC64    \
                     ", %64, %65, p, 1, 1, 0, 0;\n}\n"                                               \
                     : FLASH3_F64(d)                                                                \
                     : "l"(a), "l"(b), "r"(accumulate));                                            \
    }                                                                                               \
    /* The same over 64 keys, m64n64k16 (key tiles of 64: flash3_bc()). */                          \
    static __device__ __forceinline__ void wgmma_scores(T, float(&d)[32], uint64_t a, uint64_t b,  \
                                                        int accumulate)                            \
    {                                                                                               \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                                   \
                     "wgmma.mma_async.sync.aligned.m64n64k16.f32." PTX "." PTX " " FLASH3_ACC32     \
                     ", %32, %33, p, 1, 1, 0, 0;\n}\n"                                               \
                     : FLASH3_F32(d)                                                                \
                     : "l"(a), "l"(b), "r"(accumulate));                                            \
    }                                                                                               \
    /* O (+)= P V, one m64n64k16 step: P from registers (mma.sync's A fragment, 4 x 2             \
       elements), V stored [key][column] (MN-major: the transpose flag, the last 1). */           \
    static __device__ __forceinline__ void wgmma_pv(T, float(&d)[32], const uint32_t(&a)[4],       \
                                                    uint64_t b, int accumulate)                     \
    {                                                                                               \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"                                   \
                     "wgmma.mma_async.sync.aligned.m64n64k16.f32." PTX "." PTX " " FLASH3_ACC32     \
                     ", {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"                                 \
                     : FLASH3_F32(d)                                                                \
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));        \
    }
FLASH3_WGMMA(__nv_bfloat16, "bf16")
FLASH3_WGMMA(__half, "f16")
#undef FLASH3_WGMMA
#undef FLASH3_ACC64
#undef FLASH3_ACC32
#undef FLASH3_F64
#undef FLASH3_F32
#undef FLASH3_F16
#undef FLASH3_F4

#endif /* FLASH_HOPPER_CUH */
