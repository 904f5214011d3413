# The GPU mutants of the fused kernels (common/mutants.cmake has the table's
# format and what each verdict requires), judged by M23.
set(stage06_mutants [=[
o_not_rescaled|2|05_tiled_blocks/tiles_2_tensor_cores.cuh|o[i][n][e] *= alpha[i][e / 2];|o[i][n][e] *= 1.0f;|judge:10
pv_in_bf16|2|05_tiled_blocks/tiles_2_tensor_cores.cuh|o[i][n][e] *= alpha[i][e / 2];|o[i][n][e] = __bfloat162float(__float2bfloat16(o[i][n][e] * alpha[i][e / 2]));|judge:1
tail_unmasked|2|06_fused_flash/flash_2_tensor_cores.cuh|if (causal_tile_masked(tiles, t))|if (false)|judge:10
lse_without_max|2|05_tiled_blocks/tiles_2_tensor_cores.cuh|fmaf(scale, m[i][h], logf(l[i][h]))|logf(l[i][h])|judge:10
scale_twice|2|06_fused_flash/flash_2_tensor_cores.cuh|const float c = scale * FA_LOG2E_F;|const float c = scale * scale * FA_LOG2E_F;|judge:10
v1_barrier_dropped|1|06_fused_flash/flash_1_cuda_cores.cuh|__syncthreads(); /* the previous tile's K, V and P are no longer read */|/* barrier dropped */|racecheck
o_barrier_dropped|2|06_fused_flash/flash_2_tensor_cores.cuh|    __syncthreads();\n    constexpr int PER_CHUNK|    constexpr int PER_CHUNK|racecheck
]=])
# What each breaks: o_not_rescaled, O kept at the old max when it rises (M22's
# alpha dropped); pv_in_bf16, O rounded to bf16 after every key tile (P V
# accumulated in bf16); tail_unmasked, the zero-filled keys past nk in the
# last tile take part in the softmax; lse_without_max, lse = ln l; scale_twice,
# the scale applied twice; v1_barrier_dropped, version 1 overwrites the K, V
# and P tiles while other threads may still read the previous ones;
# o_barrier_dropped, threads read O back from shared memory before the other
# threads have staged it. (Version 1's dropped running max is the planted bug
# of tools/check_harness.sh.)

fa_add_mutants(NUMBER 06 MILESTONE 23 TABLE stage06_mutants)
