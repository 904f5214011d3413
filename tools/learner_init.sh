#!/usr/bin/env bash
# Sets up a learner's work folder outside the course's own files, in one command:
# copies every stage's learner/ folder to DIR/NN_stage/learner/ (files that are
# already there are kept: your work is never overwritten) and configures the
# build with FA_LEARNER_DIR=DIR, so every stage compiles and judges your copies.
#
# Usage: tools/learner_init.sh [DIR [BUILD_DIR [extra cmake args...]]]
#   DIR        default: mywork/ in the repository (git ignores it)
#   BUILD_DIR  default: build/ in the repository, the folder the README's commands use
# Then: cmake --build build -t stage01 && build/01_primitives/stage01 --impl learner
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$root/mywork}
build=${2:-$root/build}
shift $(( $# < 2 ? $# : 2 ))
mkdir -p "$work"
work=$(cd "$work" && pwd)

copied=0 kept=0
for dir in "$root"/[0-9][0-9]_*/; do
  stage=$(basename "$dir")
  [ -d "$dir/learner" ] || continue
  mkdir -p "$work/$stage/learner"
  for file in "$dir"/learner/*; do
    target="$work/$stage/learner/$(basename "$file")"
    if [ -e "$target" ]; then
      kept=$((kept + 1))
    else
      cp "$file" "$target"
      copied=$((copied + 1))
    fi
  done
done
echo "learner_init: $copied file(s) copied to $work, $kept already there and kept"

mkdir -p "$build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFA_LEARNER_DIR="$work" "$@" \
  > "$build/learner_init.log" 2>&1 || { cat "$build/learner_init.log"; exit 1; }
echo "learner_init: $build is configured with FA_LEARNER_DIR=$work"
echo "next: cmake --build $build -t stage01 && $build/01_primitives/stage01 --impl learner"
