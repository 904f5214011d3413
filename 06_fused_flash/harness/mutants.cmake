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

# Version 3's, in the library's place (forward_hopper.cu rebuilt over each),
# judged by M23's version 3 cases; skipped where the device is not of compute
# capability 9.0.
set(stage06_library_mutants [=[
v3_o_not_rescaled|3|06_fused_flash/flash_3_hopper.cuh|tile2_rescale<D, 1>(o, alpha);|/* O not rescaled */|judge:10
v3_tail_unmasked|3|06_fused_flash/flash_3_hopper.cuh|if (causal_tile_masked(tile.keys, t))|if (false)|judge:10
v3_scale_twice|3|06_fused_flash/flash_3_hopper.cuh|const float c = scale * FA_LOG2E_F;|const float c = scale * scale * FA_LOG2E_F;|judge:10
v3_copies_unswizzled|3|06_fused_flash/forward_hopper.cu|CU_TENSOR_MAP_SWIZZLE_128B|CU_TENSOR_MAP_SWIZZLE_NONE|judge:10
v3_o_chunks_past_d|3|06_fused_flash/flash_3_hopper.cuh|if (row < rows && chunk * TILE2_CHUNK < p.head_dim)|if (row < rows)|fails
v3_o_fragments_past_d|3|06_fused_flash/flash_3_hopper.cuh|if (8 * n < p.head_dim)|if (true)|fails
]=])
# What each breaks: v3_o_not_rescaled, v3_tail_unmasked and v3_scale_twice
# as version 2's o_not_rescaled, tail_unmasked and scale_twice;
# v3_copies_unswizzled, TMA lays the tiles out unswizzled while wgmma's
# descriptors read them 128-byte swizzled, so Q, K and V reach the products
# with their 16-byte chunks permuted; v3_o_chunks_past_d (rows of 128 and
# more, O staged) and v3_o_fragments_past_d (rows of 64) store O's columns
# from d to the padded row's end, zeros, over the next head's or row's
# elements, o's gaps, or past o's last row (the grid's d = 32, 96, 160 and
# 224, the fixture's 8).

fa_add_mutants(NUMBER 06 MILESTONE 23 TABLE stage06_library_mutants
               LIBRARY_VERSION 3 LIBRARY_TARGET flashattn_hopper)
