#!/usr/bin/env bash
# One command for a machine with a GPU: configure for the local GPU, build,
# run every test (CPU and GPU), run compute-sanitizer (memcheck, racecheck,
# synccheck, initcheck) on every stage driver at small sizes, check the learner
# harness both ways, run the benchmarks, measure the library beside PyTorch's
# SDPA backends (tools/bench_peers.py --quick, when torch is there), and print
# a short summary last.
#
# Usage: tools/gpu_check.sh [LOG_DIR]   (default: $OUT if set, else gpu-check-logs)
# Logs: build.log ctest.log ctest-output.log (every test's output) sanitizer.log
#       harness.log bench.log peers.log peers/ progress.txt summary.txt
# FA_GPU_CHECK_STEPS selects steps (default: "tests sanitizer harness bench peers";
# the build always runs).
set -uo pipefail
steps=" ${FA_GPU_CHECK_STEPS:-tests sanitizer harness bench peers} "
wants() { [[ "$steps" == *" $1 "* ]]; }
root=$(cd "$(dirname "$0")/.." && pwd)
logs=${1:-${OUT:-$root/gpu-check-logs}}
mkdir -p "$logs"
logs=$(cd "$logs" && pwd)
: > "$logs/progress.txt"
build=$root/build-gpu
jobs=$(nproc)
summary=()
status=0
# The commit, "-dirty" when tracked files differ from it (a summary never names a tree it did not build).
commit=${FA_GIT_COMMIT:-$(git -C "$root" describe --always --dirty --exclude='*' 2>/dev/null || echo unknown)}
# Each result is also appended to progress.txt at once, so a run cut short still says how far it got.
note() {
  summary+=("$(printf '%-28s %s' "$1" "$2")")
  printf '%-28s %s\n' "$1" "$2" >> "$logs/progress.txt"
}

cd "$root"
generator=()
keep_going=(-k)
command -v ninja >/dev/null && { generator=(-G Ninja); keep_going=(-k 0); }
cmake_args=("${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=native)

echo "== configure and build ($build)"
if ! cmake -S "$root" -B "$build" "${cmake_args[@]}" > "$logs/build.log" 2>&1; then
  tail -40 "$logs/build.log"
  note configure FAILED
  printf '%s\n' "${summary[@]}" | tee "$logs/summary.txt"
  exit 1
fi
# Keep going past a failing target so that one broken file does not hide the
# results of every other stage; the failure is still reported.
if cmake --build "$build" --parallel "$jobs" -- "${keep_going[@]}" >> "$logs/build.log" 2>&1; then
  note build ok
else
  grep -E 'error|FAILED' "$logs/build.log" | head -20
  note build "FAILED: $(grep -c '^FAILED' "$logs/build.log") target(s), see build.log"
  status=1
fi

stages=()
for dir in "$root"/[0-9][0-9]_*/; do
  [ -f "$dir/CMakeLists.txt" ] && stages+=("$(basename "$dir")")
done

if wants tests; then
echo "== tests (everything but learner and bench)"
ctest --test-dir "$build" -LE 'learner|bench' --output-on-failure -j 4 > "$logs/ctest.log" 2>&1
ctest_status=$?
cp "$build/Testing/Temporary/LastTest.log" "$logs/ctest-output.log" 2>/dev/null
tests_line=$(grep -E 'tests passed|tests failed' "$logs/ctest.log" | tail -1)
# ctest lists each skipped test once, under "did not run", as "  57 - docs (Skipped)".
skipped=$(sed -n 's/^[[:space:]]*[0-9]* - \(.*\) (Skipped)$/\1/p' "$logs/ctest.log" | paste -sd, -)
note ctest "${tests_line:-no result} (skipped: ${skipped:-none})"
[ $ctest_status -eq 0 ] || { status=1; grep -E 'Failed|\*\*\*' "$logs/ctest.log" | head -20; }
fi

# The sanitizers and the learner harness time nothing, so they run side by side:
# every (stage, tool) run of compute-sanitizer is its own background job, and the
# harness check builds and runs its learner trees meanwhile.
sanitizer_job() { # STAGE TOOL: one compute-sanitizer run, its log in $logs/san-STAGE-TOOL.log
  local extra=()
  [ "$2" = memcheck ] && extra=(--leak-check full)
  timeout 480 compute-sanitizer --tool "$2" "${extra[@]}" --error-exitcode 99 \
    "$build/$1/stage${1:0:2}" --impl reference --quick > "$logs/san-$1-$2.log" 2>&1
}
tools_run=(memcheck racecheck synccheck initcheck)
declare -A sanitizer_pid=()
if wants sanitizer; then
  echo "== compute-sanitizer (in the background)"
  for stage in "${stages[@]}"; do
    for tool in "${tools_run[@]}"; do
      sanitizer_job "$stage" "$tool" &
      sanitizer_pid["$stage $tool"]=$!
    done
  done
fi

if wants harness; then
echo "== learner harness"
if bash "$root/tools/check_harness.sh" "$build" "$root/build-gpu-harness" "${cmake_args[@]}" \
     > "$logs/harness.log" 2>&1; then
  note harness "$(tail -1 "$logs/harness.log")"
else
  note harness "FAILED: $(grep -m1 'expected\|NOT caught\|exit code\|printed' "$logs/harness.log")"
  status=1
fi
fi

if wants sanitizer; then
  : > "$logs/sanitizer.log"
  for stage in "${stages[@]}"; do
    results=""
    for tool in "${tools_run[@]}"; do
      if wait "${sanitizer_pid["$stage $tool"]}"; then
        results+="$tool ok, "
      else
        results+="$tool FAILED, "
        status=1
      fi
      { echo "---- $stage $tool"; cat "$logs/san-$stage-$tool.log"; } >> "$logs/sanitizer.log"
      rm -f "$logs/san-$stage-$tool.log"
    done
    note "sanitizer $stage" "${results%, }"
  done
fi

if wants bench; then
echo "== benchmarks"
: > "$logs/bench.log"
for stage in "${stages[@]}"; do
  echo "==== $stage" >> "$logs/bench.log"
  if "$build/$stage/stage${stage:0:2}" --bench >> "$logs/bench.log" 2>&1; then
    note "bench $stage" ok
  else
    note "bench $stage" FAILED
    status=1
  fi
done
cat "$logs/bench.log"
fi

if wants peers; then
echo "== beside PyTorch's SDPA backends (tools/bench_peers.py --quick)"
figures=() # drawn where matplotlib is there
python3 -c "import matplotlib" > /dev/null 2>&1 && figures=(--figures "$logs/peers/figures")
if ! python3 -c "import sys, torch; sys.exit(not torch.cuda.is_available())" > /dev/null 2>&1; then
  note peers "skipped: no torch with CUDA"
elif python3 "$root/tools/bench_peers.py" --quick --commit "$commit" --out "$logs/peers" \
     --library "$build/06_fused_flash/libflashattn.so" "${figures[@]}" > "$logs/peers.log" 2>&1; then
  note peers "ok: $(tail -1 "$logs/peers.log")" # the ratios' ranges, bench_peers' last line
  cat "$logs/peers/bench_peers.md"
else
  note peers "FAILED: see peers.log"
  tail -20 "$logs/peers.log"
  status=1
fi
fi

echo
echo "== summary ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1); commit $commit)"
printf '%s\n' "${summary[@]}" | tee "$logs/summary.txt"
[ $status -eq 0 ] && echo "gpu_check: all passed" || echo "gpu_check: FAILURES above"
exit $status
