# The GPU mutants of the mask (common/mutants.cmake has the table's format and
# what each verdict requires), judged by M25: each plants one bug into the
# reference key_tiles.cuh, run in the reference's version 1 kernel.
set(stage07_mutants [=[
diagonal_plus_one|0|07_causal/key_tiles.cuh|*hi = (int)fa_clip_keys(keys.end - key0, bc);|*hi = (int)fa_clip_keys(keys.end + 1 - key0, bc);|judge:10
diagonal_minus_one|0|07_causal/key_tiles.cuh|*hi = (int)fa_clip_keys(keys.end - key0, bc);|*hi = (int)fa_clip_keys(keys.end - 1 - key0, bc);|judge:10
window_left_plus_one|0|07_causal/key_tiles.cuh|*lo = (int)fa_clip_keys(keys.begin - key0, bc);|*lo = (int)fa_clip_keys(keys.begin - 1 - key0, bc);|judge:10
last_tile_skipped|0|07_causal/key_tiles.cuh|fa_ceil_div(keys.any.end, bc)|keys.any.end / bc|judge:10
edge_tile_unmasked|0|07_causal/key_tiles.cuh|tiles.full_end = keys.all.end / bc;|tiles.full_end = fa_ceil_div(keys.all.end, bc);|judge:10
packed_query_offset_dropped|0|07_causal/sequence.cuh|q0 * p.q_strides.row,|0 * p.q_strides.row,|judge:10
packed_key_offset_dropped|0|07_causal/sequence.cuh|k0 * p.k_strides.row,|0 * p.k_strides.row,|judge:10
packed_tail_of_the_batch|0|06_fused_flash/flash_1_cuda_cores.cuh|key0, seq.nk);\n        if (causal_tile_masked(tiles, t))\n            causal1_mask(s, band, row0, key0, seq.nk);|key0, p.nk);\n        if (causal_tile_masked(tiles, t))\n            causal1_mask(s, band, row0, key0, p.nk);|judge:10
]=])
# What each breaks: diagonal_plus_one, a row sees one key past its band's
# end (j <= i + 1 for causal); diagonal_minus_one, it loses its last key
# (j < i); window_left_plus_one, a window's row sees one key before its
# band; last_tile_skipped, a block skips the last tile that some row sees
# only in part; edge_tile_unmasked, the tile at the end of the keys every
# row sees runs without the element mask although some rows do not see it
# all. In the packed batches of M25's check (sequence.cuh):
# packed_query_offset_dropped, every sequence reads the first one's rows;
# packed_key_offset_dropped, the first one's keys (and its own values);
# packed_tail_of_the_batch, the scores past the sequence's last key are
# masked from the batch's last key on, so a sequence's tail tile lets its
# zero-filled keys in.

fa_add_mutants(NUMBER 07 MILESTONE 25 TABLE stage07_mutants)
