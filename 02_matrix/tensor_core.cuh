/**
 * @file tensor_core.cuh
 * @brief The sm_80 instructions of a tensor-core GEMM as C functions: cp.async,
 *        ldmatrix and mma.sync m16n8k16 (bf16 or fp16 in, fp32 accumulate).
 *
 * Thin inline-PTX wrappers, nothing more: the tiling, the fragment addressing
 * and the pipeline are the lesson of matmul_4_mma_bf16.cu (M7 version 4, whose
 * learner's file gets these wrappers ready-made) and of the fused attention
 * kernels of the later stages, which include this header too. The register layouts the
 * instructions expect are drawn on the stage page (\ref stage02, "The m16n8k16
 * fragments"); in short, with g = lane / 4 and t = lane % 4:
 *   - A (16x16, row-major): a[0] = A[g][2t, 2t+1], a[1] = A[g+8][2t, 2t+1],
 *     a[2] = A[g][2t+8, 2t+9], a[3] = A[g+8][2t+8, 2t+9];
 *   - B (16x8, "col": each register holds two consecutive k of one column):
 *     b[0] = B[2t, 2t+1][g], b[1] = B[2t+8, 2t+9][g];
 *   - C/D (16x8 fp32): c[0], c[1] = C[g][2t, 2t+1], c[2], c[3] = C[g+8][2t, 2t+1].
 * Two bf16 values share a 32-bit register, the lower column (or k) in the low half.
 *
 * Every function here must be called by all 32 lanes of a warp together
 * (ldmatrix and mma.sync are warp-collective), except the cp.async ones,
 * which are per thread.
 */
#ifndef FA_TENSOR_CORE_CUH
#define FA_TENSOR_CORE_CUH

#include <stdint.h>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "tensor_core.cuh needs sm_80 or later (cp.async, mma.sync m16n8k16 bf16)"
#endif

/** Shared-memory address of a generic pointer, the operand form of cp.async and ldmatrix. */
static __device__ __forceinline__ uint32_t shared_address(const void *pointer)
{
    return static_cast<uint32_t>(__cvta_generic_to_shared(pointer));
}

/**
 * Starts an asynchronous 16-byte copy global -> shared that bypasses L1
 * (cp.async.cg). Only the first @p source_bytes (0 or 16) are read; the rest
 * of the 16 bytes is filled with zeros, which is how tile loads pad the edges
 * of a matrix: pass 0 for a chunk outside it (@p global must still be a valid
 * address, e.g. the matrix base). Both addresses must be 16-byte aligned.
 */
static __device__ __forceinline__ void cp_async_16(uint32_t shared, const void *global,
                                                   int source_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared), "l"(global),
                 "r"(source_bytes)
                 : "memory");
}

/** Closes the group of cp.async copies this thread issued since the last commit. */
static __device__ __forceinline__ void cp_async_commit(void)
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/**
 * Waits until at most @p PENDING of this thread's committed groups are still
 * in flight. Other threads' copies are visible only after a __syncthreads().
 */
template <int PENDING>
static __device__ __forceinline__ void cp_async_wait(void)
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
}

/**
 * ldmatrix.x4: loads four 8x8 matrices of 16-bit elements from shared memory.
 * Lane l supplies the address of one 16-byte row: lanes 0-7 the rows of
 * matrix 0, 8-15 of matrix 1, 16-23 of matrix 2, 24-31 of matrix 3. Lane l
 * receives in r[j] the elements (row l / 4, columns 2(l % 4), 2(l % 4) + 1)
 * of matrix j: exactly the A, B and C fragment pattern of mma.sync.
 */
static __device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], uint32_t shared)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(shared)
                 : "memory");
}

/**
 * ldmatrix.x4.trans: as ldmatrix_x4(), but each 8x8 matrix is transposed on
 * the way: lane l receives (rows 2(l % 4), 2(l % 4) + 1, column l / 4). Used
 * to read B fragments from a tile stored k-major ([k][n], B row-major).
 */
static __device__ __forceinline__ void ldmatrix_x4_trans(uint32_t r[4], uint32_t shared)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(shared)
                 : "memory");
}

/**
 * d += A * B for one 16x8x16 tile on the tensor cores: A and B bf16 in the
 * fragment layouts above, d fp32 (accumulated in place).
 */
static __device__ __forceinline__ void mma_m16n8k16_bf16(float d[4], const uint32_t a[4],
                                                         const uint32_t b[2])
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/** As mma_m16n8k16_bf16(), with A and B in fp16 (the same fragment layouts). */
static __device__ __forceinline__ void mma_m16n8k16_f16(float d[4], const uint32_t a[4],
                                                        const uint32_t b[2])
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

#endif /* FA_TENSOR_CORE_CUH */
