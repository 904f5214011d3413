"""Stage 06's attention forward beside PyTorch's SDPA backends, in one process.

The same q, k, v go to every implementation, cell by cell of the course's
grid (the grid of 06_fused_flash/harness/bench.c: B N = 16384 tokens,
H D = 2048, H = 2048 // D where D does not divide it), timed the same way.
Writes, in --out (default bench-peers):
bench_peers.csv, bench_peers_memory.csv, bench_peers_meta.json and
bench_peers.md; the markdown also goes to stdout, progress to stderr.

    python3 tools/bench_peers.py --quick
    python3 tools/bench_peers.py --d 128 --causal no,yes --impl v2,FA2,cuDNN
    python3 tools/bench_peers.py --library build-gpu/06_fused_flash/libflashattn.so
    python3 tools/bench_peers.py --causal no,yes --figures docs/figures   # the docs' figures

Implementations: flashattn v1, flashattn v2, flashattn v3 (short: v1, v2,
v3; v3 on compute capability 9.0), FA2, cuDNN,
mem-efficient, math. The last line printed is the range of each ratio of
the course's kernels to FlashAttention-2 and cuDNN over the cells. Exit
status: 0 when the run completed (cells may be unsupported), 1 when a
project kernel's output differs from the reference's ("MISMATCH") or a call
failed ("error": a CUDA fault, a bad status), 2 on usage or setup errors or
when --figures could not draw. Needs torch; tools/plot_bench.py draws the
CSVs.
"""

import argparse
import contextlib
import csv
import datetime
import json
import math
import os
import statistics
import subprocess
import sys
import warnings

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIBRARY_DEFAULTS = [os.path.join(REPO, build, "06_fused_flash", "libflashattn.so")
                    for build in ("build-gpu", "build")]
TOKENS, WIDTH = 16384, 2048
GRID_N = [512, 1024, 2048, 4096, 8192, 16384]
GRID_D = [64, 128]
HEAD_DIMS = list(range(8, 257, 8))  # what --d takes: the head dims of v2 and v3
IMPLEMENTATIONS = ["flashattn v1", "flashattn v2", "flashattn v3", "FA2", "cuDNN", "mem-efficient",
                   "math"]
PROJECT = ["flashattn v1", "flashattn v2", "flashattn v3"]
SDPA_BACKENDS = {"FA2": "FLASH_ATTENTION", "cuDNN": "CUDNN_ATTENTION",
                 "mem-efficient": "EFFICIENT_ATTENTION", "math": "MATH"}
# (markdown column, project kernel, its peer, CSV field of the ratio)
RATIOS = [("v2/FA2", "flashattn v2", "FA2", "ratio_fa2"),
          ("v2/cuDNN", "flashattn v2", "cuDNN", "ratio_cudnn"),
          ("v3/FA2", "flashattn v3", "FA2", "ratio_fa2"),
          ("v3/cuDNN", "flashattn v3", "cuDNN", "ratio_cudnn"),
          ("v1/FA2", "flashattn v1", "FA2", "ratio_fa2")]
MISMATCH_LIMIT = 0.05
MIN_REPEATS = 5
MEMORY_SHAPE = {"d": 128, "heads": 16, "batch": 1, "dtype": "bf16"}
FIELDS = ["d", "heads", "n", "batch", "dtype", "causal", "implementation", "status", "median_ms",
          "tflops", "repeats", "max_abs_diff", "extra_bytes", "ratio_fa2", "ratio_cudnn"]
MEMORY_FIELDS = ["implementation", "d", "heads", "n", "batch", "dtype", "causal", "status",
                 "extra_bytes"]
MIB = 1 << 20


class SetupError(Exception):
    """Something the run needs is missing: exit status 2."""


def comma_list(convert, allowed):
    def parse(text):
        values = [convert(item.strip()) for item in text.split(",") if item.strip()]
        bad = [v for v in values if v not in allowed]
        if bad or not values:
            raise argparse.ArgumentTypeError("%r: expected a comma list of %s"
                                             % (text, ", ".join(map(str, allowed))))
        return list(dict.fromkeys(values))
    return parse


def implementation_name(text):
    """'v1', 'flashattn v1', 'fa2', ... -> the implementation's name."""
    by_key = {name.lower().replace("flashattn ", ""): name for name in IMPLEMENTATIONS}
    return by_key.get(text.lower().replace("flashattn ", ""), text)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--library", help="libflashattn.so (default: the first of %s)"
                        % ", ".join(os.path.relpath(p, REPO) for p in LIBRARY_DEFAULTS))
    parser.add_argument("--out", default="bench-peers", help="output folder (%(default)s)")
    parser.add_argument("--n", type=comma_list(int, GRID_N), help="sequence lengths")
    parser.add_argument("--d", type=comma_list(int, HEAD_DIMS),
                        help="head dimensions (default: %s)" % ",".join(map(str, GRID_D)))
    parser.add_argument("--dtype", type=comma_list(str, ["bf16", "fp16"]))
    parser.add_argument("--causal", type=comma_list(str, ["no", "yes"]))
    parser.add_argument("--impl", type=comma_list(implementation_name, IMPLEMENTATIONS),
                        default=IMPLEMENTATIONS, help="implementations (default: all)")
    parser.add_argument("--quick", action="store_true",
                        help="N 1024,4096, D 64,128, bf16, non-causal, at most 10 repeats")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--warmup", type=int, default=3, help="fewest warm-up calls (%(default)s)")
    parser.add_argument("--warmup-ms", type=float, default=50.0,
                        help="fewest milliseconds of warm-up calls (%(default)s)")
    parser.add_argument("--repeats", type=int, help="most timed calls per cell (30; quick 10)")
    parser.add_argument("--budget-s", type=float, default=1.0,
                        help="timed seconds per cell that set the repeats (%(default)s)")
    parser.add_argument("--commit", help="commit to report (default: $FA_GIT_COMMIT, else git describe)")
    parser.add_argument("--figures", help="also draw the figures into this folder "
                        "(tools/plot_bench.py; needs matplotlib)")
    args = parser.parse_args(argv)
    quick = args.quick  # explicit options win over --quick's choices
    args.n = args.n or ([1024, 4096] if quick else GRID_N)
    args.d = args.d or GRID_D
    args.dtype = args.dtype or (["bf16"] if quick else ["bf16", "fp16"])
    args.causal = args.causal or (["no"] if quick else ["no", "yes"])
    args.repeats = max(args.repeats or (10 if quick else 30), MIN_REPEATS)
    return args


def method_lines(args):
    return [
        "Grid: B N = %d tokens, H D = %d (Hq = Hkv = H), [B, N, H, D] contiguous inputs, "
        "torch.randn seeded %d; the same q, k, v for every implementation (SDPA gets "
        "q.transpose(1, 2) views)." % (TOKENS, WIDTH, args.seed),
        "FLOPs = 4 B H N^2 D, halved when causal; TFLOP/s = FLOPs / median seconds / 1e12.",
        "Timing: CUDA events on the current stream, L2 flushed before each call (zeroing 2x L2 "
        "bytes); right before the timed calls, with no pause between, at least %d warm-up calls "
        "and %g ms of them, so that every cell is timed after at least that much work; repeats = "
        "clamp(%.1f s / one call, %d, %d); median."
        % (args.warmup, args.warmup_ms, args.budget_s, MIN_REPEATS, args.repeats),
        "SDPA backends forced one at a time with torch.nn.attention.sdpa_kernel (no fallback): "
        "FA2 = FLASH_ATTENTION, cuDNN = CUDNN_ATTENTION, mem-efficient = EFFICIENT_ATTENTION, "
        "math = MATH.",
        "Sanity check (not a correctness test): max |o - o_ref| in fp32, o_ref = FA2's output "
        "(else the first that ran); above %g max |o_ref| or not finite: MISMATCH."
        % MISMATCH_LIMIT,
        "Extra memory: peak bytes allocated through PyTorch's caching allocator during one call "
        "(after a first call), minus its output. The flashattn library allocates no device "
        "memory itself (its C benchmark measures 0 bytes with cudaMemGetInfo).",
    ]


def flops(row):
    total = 4 * row["batch"] * row["heads"] * row["n"] ** 2 * row["d"]
    return total / 2 if row["causal"] == "yes" else total


def grid_cells(args):
    for d in args.d:
        for causal in args.causal:
            for dtype in args.dtype:
                for n in args.n:
                    yield {"d": d, "heads": WIDTH // d, "n": n, "batch": TOKENS // n,
                           "dtype": dtype, "causal": causal}


def make_inputs(cell, seed):
    import torch
    generator = torch.Generator(device="cuda").manual_seed(seed)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[cell["dtype"]]
    shape = (cell["batch"], cell["n"], cell["heads"], cell["d"])
    return [torch.randn(shape, dtype=dtype, device="cuda", generator=generator)
            for _ in range(3)]


def implementation(name, q, k, v, causal):
    """(context factory, call): the context forces the SDPA backend, so that SDPA raises
    rather than falls back; call() returns o as [B, N, H, D]."""
    import torch
    if name in PROJECT:
        import flashattn
        variant = name.split()[-1]
        return contextlib.nullcontext, lambda: flashattn.forward(
            q, k, v, causal=causal, variant=variant, layout="bnhd")
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backend = getattr(SDPBackend, SDPA_BACKENDS[name])
    qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))
    return (lambda: sdpa_kernel(backend)), lambda: torch.nn.functional.scaled_dot_product_attention(
        qt, kt, vt, is_causal=causal).transpose(1, 2)


def short_reason(error, caught):
    """The error's first line; SDPA's 'No available kernel' gives its reasons as warnings."""
    text = (str(error).strip().splitlines() or [type(error).__name__])[0]
    if "No available kernel" in text:
        reasons = [str(w.message).split(" (Triggered internally")[0].strip() for w in caught]
        reasons = [r for r in reasons if r and "not used because" not in r]
        text = "; ".join(dict.fromkeys(reasons)) or text
    return text if len(text) <= 120 else text[:117] + "..."


def refused(error):
    """True when @p error is a refusal to run the call, not a failure while running it:
    flashattn's FA_ERR_UNSUPPORTED or NotImplementedError, SDPA's "No available kernel"."""
    import flashattn
    if isinstance(error, flashattn.Error):
        return error.name == "FA_ERR_UNSUPPORTED"
    return isinstance(error, NotImplementedError) or "No available kernel" in str(error)


def guarded(context, body):
    """(body's result, "ok"), or (None, "unsupported: ..." / "error: ..." / "out of memory").
    An error is a failure (a CUDA fault, a bad status): the run's exit status says so."""
    import torch
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with context():
                return body(), "ok"
        except torch.cuda.OutOfMemoryError:  # before RuntimeError, its base class
            pass
        except RuntimeError as error:  # flashattn.Error and NotImplementedError among them
            kind = "unsupported: " if refused(error) else "error: "
            return None, kind + short_reason(error, caught)
    torch.cuda.empty_cache()  # here: the traceback, whose frames hold tensors, is gone
    return None, "out of memory"


def extra_bytes(call):
    import torch
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    output = call()
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() - base - output.untyped_storage().nbytes()


def timed_calls(call, count, flush, warmup=0):
    """Milliseconds of @p count calls, each after an L2 flush, one synchronization; @p warmup
    untimed calls, flushed the same way, go first in the same stream of work."""
    import torch
    for _ in range(warmup):
        flush.zero_()
        call()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(count)]
    for start, end in events:
        flush.zero_()
        start.record()
        call()
        end.record()
    torch.cuda.synchronize()
    return [start.elapsed_time(end) for start, end in events]


def measure(call, args, flush):
    output = call()  # the first call: setup costs and errors show here, untimed
    extra = extra_bytes(call)
    one_ms = max(timed_calls(call, 1, flush)[0], 1e-6)
    repeats = min(max(int(args.budget_s * 1e3 / one_ms), MIN_REPEATS), args.repeats)
    warmup = max(args.warmup, math.ceil(args.warmup_ms / max(one_ms, 0.01)))  # at most 100 a ms
    median_ms = statistics.median(timed_calls(call, repeats, flush, warmup))
    return output, {"median_ms": median_ms, "repeats": repeats, "extra_bytes": extra}


def bench_cell(cell, args, flush):
    """One row per implementation, with the sanity check and the ratios filled in."""
    q, k, v = make_inputs(cell, args.seed)
    rows, outputs = {}, {}
    for name in args.impl:
        context, call = implementation(name, q, k, v, cell["causal"] == "yes")
        result, status = guarded(context, lambda: measure(call, args, flush))
        row = dict(cell, implementation=name, status=status)
        if result is not None:
            outputs[name], numbers = result
            row.update(numbers, tflops=flops(cell) / (numbers["median_ms"] * 1e-3) / 1e12)
        rows[name] = row
        print("%s: %s" % (cell_label(cell, name), progress_text(row)), file=sys.stderr)
    reference = outputs.get("FA2", next(iter(outputs.values()), None))
    largest = reference.float().abs().max().item() if reference is not None else 0.0
    for name, output in outputs.items():
        difference = (output.float() - reference.float()).abs().max().item()
        rows[name]["max_abs_diff"] = difference
        if not math.isfinite(difference) or difference > MISMATCH_LIMIT * largest:
            rows[name]["status"] = "MISMATCH"
    for _, mine, peer, field in RATIOS:
        if rows.get(mine, {}).get("tflops") and rows.get(peer, {}).get("tflops"):
            rows[mine][field] = rows[mine]["tflops"] / rows[peer]["tflops"]
    return list(rows.values())


def cell_label(cell, name):
    return "D=%(d)d H=%(heads)d N=%(n)d B=%(batch)d %(dtype)s causal=%(causal)s " % cell + name


def progress_text(row):
    if "tflops" not in row:
        return row["status"]
    return "%.1f TFLOP/s (%.3f ms, %d repeats)" % (row["tflops"], row["median_ms"],
                                                   row["repeats"])


def memory_only(call):
    call()  # a first call, so that one-time allocations (workspaces, plans) are not counted
    return extra_bytes(call)


def memory_sweep(args):
    rows = []
    for causal in args.causal:
        for n in args.n:
            cell = dict(MEMORY_SHAPE, n=n, causal=causal)
            q, k, v = make_inputs(cell, args.seed)
            for name in args.impl:
                context, call = implementation(name, q, k, v, causal == "yes")
                extra, status = guarded(context, lambda: memory_only(call))
                rows.append(dict(cell, implementation=name, status=status, extra_bytes=extra))
                print("memory %s: %s" % (cell_label(cell, name), status if extra is None
                                         else "%d bytes" % extra), file=sys.stderr)
    return rows


def ratio_ranges(rows):
    """'v2/FA2 0.93-1.04, ... over N cells': each ratio's range over the cells that have it."""
    parts, cells = [], 0
    for label, mine, _, field in RATIOS:
        values = [r[field] for r in rows if r["implementation"] == mine and field in r]
        if values:
            parts.append("%s %.2f-%.2f" % (label, min(values), max(values)))
            cells = max(cells, len(values))
    return "%s over %d cells" % (", ".join(parts), cells) if parts else "no ratio measured"


def csv_value(value):
    if value is None:
        return ""
    return "%.6g" % value if isinstance(value, float) else value


def write_csv(path, fields, rows):
    with open(path, "w", newline="") as file:
        writer = csv.writer(file, lineterminator="\n")
        writer.writerow(fields)
        for row in rows:
            writer.writerow([csv_value(row.get(field)) for field in fields])


def markdown_table(header, lines):
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + \
        ["| " + " | ".join(str(c) for c in line) + " |" for line in lines]


def failure_text(row):
    return {"out of memory": "OOM"}.get(row["status"], row["status"].split(":")[0])


def tflops_text(row):
    if "tflops" not in row:
        return failure_text(row)
    return "%.1f%s" % (row["tflops"], " MISMATCH" if row["status"] == "MISMATCH" else "")


def grouped(rows, keys):
    """Rows by the values of @p keys, in the order of first appearance."""
    groups = {}
    for row in rows:
        groups.setdefault(tuple(row[key] for key in keys), []).append(row)
    return groups


def tflops_tables(rows, impls):
    ratios = [r for r in RATIOS if r[1] in impls and r[2] in impls]
    lines = []
    for (d, causal, dtype), group in grouped(rows, ("d", "causal", "dtype")).items():
        lines += ["", "## TFLOP/s, D = %d, H = %d, %s, %s" % (
            d, WIDTH // d, dtype, "causal" if causal == "yes" else "non-causal"), ""]
        table, notes = [], {}
        for n, cell_rows in grouped(group, ("n",)).items():
            by_name = {row["implementation"]: row for row in cell_rows}
            ratio_cells = ["%.2f" % by_name[mine][field] if field in by_name[mine] else "-"
                           for _, mine, _, field in ratios]
            table.append([n[0], TOKENS // n[0]] + [tflops_text(by_name[name]) for name in impls]
                         + ratio_cells)
            for row in cell_rows:
                if row["status"] != "ok":
                    notes.setdefault("%s: %s" % (row["implementation"], row["status"]), []).append(
                        "N=%d" % n[0] if row["status"] != "MISMATCH"
                        else "N=%d: max diff %.3g" % (n[0], row["max_abs_diff"]))
        lines += markdown_table(["N", "B"] + impls + [r[0] for r in ratios], table)
        if notes:
            lines += [""] + ["- %s (%s)" % (k, ", ".join(v)) for k, v in notes.items()]
    return lines


def memory_tables(rows, impls):
    lines = []
    for (causal,), group in grouped(rows, ("causal",)).items():
        lines += ["", "## Extra device memory per call, MiB: B = 1, H = 16, D = 128, bf16, %s"
                  % ("causal" if causal == "yes" else "non-causal"), ""]
        table = []
        for n, cell_rows in grouped(group, ("n",)).items():
            by_name = {row["implementation"]: row for row in cell_rows}
            table.append([n[0]] + [memory_text(by_name[name]) for name in impls])
        lines += markdown_table(["N"] + impls, table)
    return lines


def memory_text(row):
    if row["extra_bytes"] is None:
        return failure_text(row)
    return "0" if row["extra_bytes"] == 0 else "%.3g" % (row["extra_bytes"] / MIB)


def command_output(command, cwd=REPO):
    try:
        return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=30,
                              check=True).stdout.strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        return None


def nvidia_smi(fields):
    return command_output(["nvidia-smi", "--format=csv,noheader", "--query-gpu=" + fields])


def configuration(args, library, properties):
    import torch
    import torch.nn.attention as attention
    # a newer torch can swap the kernel behind FLASH_ATTENTION (FA3, FA4): say which ran
    flash_impl = getattr(attention, "current_flash_attention_impl", lambda: None)()
    # as CMake and gpu_check.sh name it: FA_GIT_COMMIT first (a copy of the tree may carry a
    # stale .git), else git, "-dirty" when tracked files differ from the commit
    commit = (args.commit or os.environ.get("FA_GIT_COMMIT")
              or command_output(["git", "describe", "--always", "--dirty", "--exclude=*"])
              or "unknown")
    return {
        "gpu": properties.name,
        "SMs": properties.multi_processor_count,
        # the current clocks read idle between runs: the maximum ones say which part it is
        "max clocks (SM, memory)": nvidia_smi("clocks.max.sm,clocks.max.mem") or "unknown",
        "driver": nvidia_smi("driver_version") or "unknown",
        "torch": torch.__version__,
        "CUDA (torch)": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "SDPA flash kernel": flash_impl or "built-in (FlashAttention-2)",
        "library": library,
        "commit": commit,
        "date UTC": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
    }


def setup(args):
    """Imports torch and the binding; returns the library's path. Raises SetupError."""
    library = os.path.abspath(args.library) if args.library else next(
        (p for p in LIBRARY_DEFAULTS if os.path.exists(p)), None)
    if library is None or not os.path.exists(library):
        raise SetupError("libflashattn.so not found (%s): build the course with CUDA or pass "
                         "--library" % (library or ", ".join(LIBRARY_DEFAULTS)))
    os.environ["FLASHATTN_LIBRARY"] = library  # read by the binding when it loads
    try:
        import torch
    except ImportError:
        raise SetupError("torch is not installed: this benchmark needs PyTorch with CUDA")
    if not torch.cuda.is_available():
        raise SetupError("torch %s sees no CUDA device" % torch.__version__)
    sys.path.insert(0, os.path.join(REPO, "python"))
    import flashattn
    try:
        flashattn.library()
    except (OSError, ImportError) as error:
        raise SetupError("cannot load %s: %s" % (library, error))
    return library


def main(argv=None):
    args = parse_args(argv)
    try:
        library = setup(args)
    except SetupError as error:
        print("bench_peers: error: %s" % error, file=sys.stderr)
        return 2
    import torch
    properties = torch.cuda.get_device_properties(torch.cuda.current_device())
    config = configuration(args, library, properties)
    l2_bytes = getattr(properties, "L2_cache_size", 0) or 64 * MIB
    flush = torch.empty(2 * l2_bytes, dtype=torch.uint8, device="cuda")
    rows = [row for cell in grid_cells(args) for row in bench_cell(cell, args, flush)]
    memory_rows = memory_sweep(args)
    os.makedirs(args.out, exist_ok=True)
    write_csv(os.path.join(args.out, "bench_peers.csv"), FIELDS, rows)
    write_csv(os.path.join(args.out, "bench_peers_memory.csv"), MEMORY_FIELDS, memory_rows)
    meta = {key: str(config[key]) for key in ("gpu", "commit", "torch", "cudnn")}
    with open(os.path.join(args.out, "bench_peers_meta.json"), "w") as file:
        json.dump(dict(meta, date_utc=config["date UTC"]), file, indent=2)
        file.write("\n")
    text = "\n".join(["# flashattn beside PyTorch's SDPA backends", ""]
                     + ["- %s: %s" % item for item in config.items()]
                     + ["", "Method:", ""] + ["- " + line for line in method_lines(args)]
                     + tflops_tables(rows, args.impl) + memory_tables(memory_rows, args.impl))
    with open(os.path.join(args.out, "bench_peers.md"), "w") as file:
        file.write(text + "\n")
    print(text, flush=True)  # before plot_bench's lines, which share the output
    drawn = not args.figures or subprocess.run(
        [sys.executable, os.path.join(REPO, "tools", "plot_bench.py"), "--in", args.out,
         "--out", args.figures]).returncode == 0
    if not drawn:
        print("bench_peers: the figures were not drawn (tools/plot_bench.py failed)",
              file=sys.stderr)
    print(ratio_ranges(rows))
    failed = [r for r in rows + memory_rows if r["status"].startswith("error")
              or (r["implementation"] in PROJECT and r["status"] == "MISMATCH")]
    for row in failed:
        print("bench_peers: %s: %s" % (row["status"], cell_label(row, row["implementation"])),
              file=sys.stderr)
    return 1 if failed else (0 if drawn else 2)


if __name__ == "__main__":
    sys.exit(main())
