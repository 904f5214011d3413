#!/usr/bin/env bash
# Proves the learner harness honest both ways (DESIGN §4):
#   1. with the shipped skeletons, every learner milestone reports "not implemented";
#   2. with the learner slots filled by correct code (the reference kernels, with
#      ref_ renamed learner_), every milestone passes on a GPU, or is reported as
#      built but not run without one;
#   3. on a GPU, a planted bug in each stage's filled slots fails and names the
#      coordinate (without a GPU, common/test_common.c checks the same verdicts).
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

# Prints the tour lines (M<n> <outcome> <detail>) of every stage driver in a build.
tour_lines() {
  local build=$1 stage
  for stage in "${stages[@]}"; do
    "$build/$stage/stage${stage:0:2}" --impl learner --tour | grep '^M' || true
  done
}

# expect_all BUILD WORD: every milestone line of every stage must have outcome WORD.
expect_all() {
  local build=$1 word=$2 lines bad
  lines=$(tour_lines "$build")
  bad=$(printf '%s\n' "$lines" | awk -v w="$word" '$2 != w' || true)
  if [ -z "$lines" ] || [ -n "$bad" ]; then
    echo "harness: expected every milestone to be '$word' in $build, got:"
    printf '%s\n' "$lines"
    failures=$((failures + 1))
  else
    echo "harness: $(printf '%s\n' "$lines" | wc -l) milestones '$word' in $(basename "$build")"
  fi
}

if [ -n "$(command -v nvidia-smi)" ] && nvidia-smi -L >/dev/null 2>&1; then gpu=yes; else gpu=no; fi

echo "== 1. shipped skeletons report 'not implemented'"
expect_all "$skeleton_build" not-implemented

echo "== 2. learner slots filled with the reference kernels"
solutions=$work/solutions
rm -rf "$solutions"
for stage in "${stages[@]}"; do
  mkdir -p "$solutions/$stage/learner"
  for learner_file in "$root/$stage"/learner/*.cu; do
    name=$(basename "$learner_file")
    sed 's/\bref_/learner_/g' "$root/$stage/$name" > "$solutions/$stage/learner/$name"
  done
done
targets=()
for stage in "${stages[@]}"; do targets+=("stage${stage:0:2}"); done
cmake -S "$root" -B "$work/build-solutions" -DFA_LEARNER_DIR="$solutions" "$@" > "$work/configure-solutions.log"
cmake --build "$work/build-solutions" --parallel -t "${targets[@]}" > "$work/build-solutions.log"
if [ "$gpu" = yes ]; then
  expect_all "$work/build-solutions" passed
else
  expect_all "$work/build-solutions" not-run
fi

# One planted bug per stage, a line each: milestone, file, text, replacement
# (tab-separated; the text is replaced once, as a fixed string).
mutants=$(printf '%s\t%s\t%s\t%s\n' \
  1 01_primitives/learner/primitives.cu 'out[i] = a[i] + b[i];' '(void)i;' \
  4 01_primitives/learner/primitives.cu 'return (a > b || isnan(a)) ? a : b;' 'return fmaxf(a, b);' \
  8 02_matrix/learner/transpose.cu 'if (r < rows)' 'if (r + 1 < rows)' \
  10 03_naive_attention/learner/attention.cu 'end = min64(end, i + 1);' 'end = min64(end, i + 2);' \
  16 04_online_softmax/learner/online.cu 'out = online_rescale_output(out, alpha, chunk_out);' \
     'out = online_rescale_output(out, 1.0f, chunk_out);')

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
  while IFS=$'\t' read -r milestone file text replacement; do
    plant "$planted/$file" "$text" "$replacement" || failures=$((failures + 1))
  done <<< "$mutants"
  cmake -S "$root" -B "$work/build-planted" -DFA_LEARNER_DIR="$planted" "$@" > "$work/configure-planted.log"
  cmake --build "$work/build-planted" --parallel -t "${targets[@]}" > "$work/build-planted.log"
  while IFS=$'\t' read -r milestone file text replacement; do
    stage=${file%%/*}
    line=$("$work/build-planted/$stage/stage${stage:0:2}" --impl learner --tour --milestone "$milestone" |
           grep "^M$milestone " || true)
    echo "harness: planted bug in M$milestone ($text -> $replacement) gives: $line"
    case "$line" in
      "M$milestone failed "*"at ("*) ;;
      *) echo "harness: planted bug in M$milestone NOT caught"; failures=$((failures + 1)) ;;
    esac
  done <<< "$mutants"
fi

if [ "$failures" -ne 0 ]; then
  echo "harness: $failures check(s) failed"
  exit 1
fi
echo "harness: all checks passed (gpu: $gpu)"
