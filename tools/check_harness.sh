#!/usr/bin/env bash
# Proves the learner harness honest both ways:
#   1. with the shipped skeletons, every learner milestone of every stage reports
#      "not implemented" (and each driver prints a line for each of its milestones);
#   2. a learner's folder outside the repository, set up by tools/learner_init.sh and
#      filled with correct code (the reference kernel files), compiles, and every
#      milestone passes on a GPU, or is reported as built but not run without one;
#   3. on a GPU, a planted bug in each stage's filled slots fails and names the
#      coordinate (without a GPU, common/test_common.c checks the same verdicts);
#   0. first, a self-test: a driver that crashes, or prints too few milestone lines,
#      must fail these checks.
# Usage: tools/check_harness.sh SKELETON_BUILD_DIR WORK_DIR [extra cmake args...]
# SKELETON_BUILD_DIR is an existing build of the repository as shipped.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
skeleton_build=$(cd "$1" && pwd)
work=$2
shift 2
mkdir -p "$work"
work=$(cd "$work" && pwd)
failures=0

stages=()
for dir in "$root"/[0-9][0-9]_*/; do
  [ -f "$dir/CMakeLists.txt" ] && stages+=("$(basename "$dir")")
done

# The milestones a stage declares (its CMakeLists.txt: MILESTONES 1 2 3 ...).
milestones_of() {
  sed -n 's/.*MILESTONES\(\( [0-9]\+\)\+\).*/\1/p' "$root/$1/CMakeLists.txt"
}

# judge_build BUILD WORDS: every stage driver in BUILD runs (exit 0, 1 or 77: anything
# else, a crash included, fails), prints exactly one line per declared milestone, and
# every line's outcome matches WORDS (one word, or alternatives: 'not-run|passed').
# Prints what it found; returns 1 on any fault.
judge_build() {
  local build=$1 word=$2 stage driver output code expected got bad fault=0 total=0
  for stage in "${stages[@]}"; do
    driver="$build/$stage/stage${stage:0:2}"
    set +e
    output=$("$driver" --impl learner --tour 2>&1)
    code=$?
    set -e
    if [ "$code" -ne 0 ] && [ "$code" -ne 1 ] && [ "$code" -ne 77 ]; then
      echo "harness: $driver ended with exit code $code (a crash?)"
      fault=1
    fi
    expected=$(milestones_of "$stage" | wc -w)
    got=$(printf '%s\n' "$output" | grep -c '^M[0-9]' || true)
    if [ "$got" -ne "$expected" ]; then
      echo "harness: $driver printed $got milestone lines, expected $expected"
      fault=1
    fi
    bad=$(printf '%s\n' "$output" | grep '^M[0-9]' | awk -v w="^($word)$" '$2 !~ w' || true)
    if [ -n "$bad" ]; then
      echo "harness: expected '$word' from $driver, got:"
      printf '%s\n' "$bad"
      fault=1
    fi
    total=$((total + got))
  done
  [ "$fault" -eq 0 ] && echo "harness: $total milestones '$word' in $(basename "$build")"
  return "$fault"
}

expect_all() {
  judge_build "$1" "$2" || failures=$((failures + 1))
}

echo "== 0. self-test: a crashing driver and a missing milestone line must fail the check"
fake=$work/fake-build
rm -rf "$fake"
for stage in "${stages[@]}"; do
  mkdir -p "$fake/$stage"
  printf '#!/bin/sh\nkill -SEGV $$\n' > "$fake/$stage/stage${stage:0:2}"
  chmod +x "$fake/$stage/stage${stage:0:2}"
done
if judge_build "$fake" not-implemented > "$work/self-test-crash.log"; then
  echo "harness: self-test FAILED: a crashing driver passed"; failures=$((failures + 1))
else
  echo "harness: self-test: a crashing driver fails the check"
fi
first=${stages[0]}
printf '#!/bin/sh\necho "M%s not-implemented fake"\nexit 1\n' "$(milestones_of "$first" | awk '{print $1}')" \
  > "$fake/$first/stage${first:0:2}"
if judge_build "$fake" not-implemented > "$work/self-test-missing.log"; then
  echo "harness: self-test FAILED: a driver with missing milestone lines passed"; failures=$((failures + 1))
else
  echo "harness: self-test: a missing milestone line fails the check"
fi

if [ -n "$(command -v nvidia-smi)" ] && nvidia-smi -L >/dev/null 2>&1; then gpu=yes; else gpu=no; fi

echo "== 1. shipped skeletons report 'not implemented'"
expect_all "$skeleton_build" not-implemented

echo "== 2. a learner folder outside the repository, filled with the reference kernels"
solutions=$work/solutions
rm -rf "$solutions"
bash "$root/tools/learner_init.sh" "$solutions" "$work/build-solutions" "$@" > "$work/init-solutions.log"
for stage in "${stages[@]}"; do
  for learner_file in "$solutions/$stage"/learner/*; do
    cp "$root/$stage/$(basename "$learner_file")" "$learner_file"
  done
done
targets=()
for stage in "${stages[@]}"; do targets+=("stage${stage:0:2}"); done
cmake --build "$work/build-solutions" --parallel -t "${targets[@]}" > "$work/build-solutions.log"
if [ "$gpu" = yes ]; then
  expect_all "$work/build-solutions" passed
else
  # Host-only milestones (M24's validation) run without a GPU too.
  expect_all "$work/build-solutions" 'not-run|passed'
fi

# One planted bug per stage (per version where a milestone has several), a line
# each: milestone, version (0: the milestone has one), file, text, replacement
# (tab-separated; the text is replaced once, as a fixed string). All are planted
# in one folder, so a versioned bug is judged by running its version alone: the
# other version's bug cannot answer for it.
mutants=$(printf '%s\t%s\t%s\t%s\t%s\n' \
  1 0 01_primitives/learner/primitives.cu 'out[i] = a[i] + b[i];' '(void)i;' \
  4 0 01_primitives/learner/primitives.cu 'c < cols; c += ROW_THREADS)' \
      'c + 1 < cols; c += ROW_THREADS)' \
  8 1 02_matrix/learner/transpose_1_naive.cu 'if (r < rows)' 'if (r + 1 < rows)' \
  10 0 03_naive_attention/learner/attention.cu 'fa_mask_key_range(mask, i, nq, nk).end' \
       'fa_mask_key_range(mask, i + 1, nq, nk).end' \
  16 0 04_online_softmax/learner/online.cu 'online_rescale_output(out[c], alpha,' \
       'online_rescale_output(out[c], 1.0f,' \
  19 1 05_tiled_blocks/learner/tiles_1_cuda_cores.cuh \
       'm_new[r] = online_running_max(m_old[r], fa_lanes_max<TILE1_THREAD_COLS>(tile_max));' \
       'm_new[r] = fa_lanes_max<TILE1_THREAD_COLS>(tile_max);' \
  22 2 05_tiled_blocks/learner/tiles_2_tensor_cores.cuh '*= alpha[' '*= 1.0f + 0.0f * alpha[' \
  23 1 06_fused_flash/learner/flash_1_cuda_cores.cuh 'm[r] = m_new[r];' '(void)m_new[r];' \
  23 2 06_fused_flash/learner/flash_2_tensor_cores.cuh \
       'k + (key0 - BC) * p.k_strides.row,' 'k + key0 * p.k_strides.row,' \
  25 0 07_causal/learner/key_tiles.cuh 'if (key < lo || key >= hi)' 'if (key >= hi)')

# plant FILE TEXT REPLACEMENT
plant() {
  MUTANT_TEXT=$2 MUTANT_REPLACEMENT=$3 python3 - "$1" <<'PLANT'
import os, sys
path = sys.argv[1]
source = open(path).read()
text, replacement = os.environ["MUTANT_TEXT"], os.environ["MUTANT_REPLACEMENT"]
if text not in source:
    sys.exit(f"harness: cannot plant '{text}' in {path}")
open(path, "w").write(source.replace(text, replacement, 1))
PLANT
}

if [ "$gpu" = yes ]; then
  echo "== 3. planted bugs fail and name the coordinate"
  planted=$work/planted
  rm -rf "$planted" && cp -r "$solutions" "$planted"
  while IFS=$'\t' read -r milestone version file text replacement; do
    plant "$planted/$file" "$text" "$replacement" || failures=$((failures + 1))
  done <<< "$mutants"
  cmake -S "$root" -B "$work/build-planted" -DFA_LEARNER_DIR="$planted" "$@" > "$work/configure-planted.log"
  cmake --build "$work/build-planted" --parallel -t "${targets[@]}" > "$work/build-planted.log"
  while IFS=$'\t' read -r milestone version file text replacement; do
    stage=${file%%/*}
    name=M$milestone select=(--milestone "$milestone") want="M$milestone failed "
    if [ "$version" -ne 0 ]; then
      # Its cases are named 'vN ...': the failure must be this version's.
      name="M$milestone v$version" select+=(--version "$version")
      want="M$milestone failed case 'v$version "
    fi
    line=$("$work/build-planted/$stage/stage${stage:0:2}" --impl learner --tour "${select[@]}" |
           grep "^M$milestone " || true)
    echo "harness: planted bug in $name gives: $line"
    case "$line" in
      "$want"*"at ("*) ;;
      *) echo "harness: planted bug in $name NOT caught"; failures=$((failures + 1)) ;;
    esac
  done <<< "$mutants"
fi

if [ "$failures" -ne 0 ]; then
  echo "harness: $failures check(s) failed"
  exit 1
fi
echo "harness: all checks passed (gpu: $gpu)"
