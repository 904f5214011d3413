"""Figures of tools/bench_peers.py's results: TFLOP/s and extra memory against N.

Reads bench_peers.csv, bench_peers_memory.csv and bench_peers_meta.json from
--in (default bench-peers) and writes into --out (default docs/figures), as
PNG and SVG:

    tflops_d{D}_{causal|noncausal}_{dtype}   one per (D, causal, dtype) measured
    memory_d{D}_{causal|noncausal}_{dtype}   one per causal of the memory sweep

    python3 tools/plot_bench.py --in bench-peers --out docs/figures

The same CSVs give byte-identical files (no dates, a fixed SVG hash salt).
Exit status 2 when matplotlib or the CSVs are missing.
"""

import argparse
import csv
import json
import math
import os
import sys

from bench_peers import MIB, grouped  # the benchmark's own grouping (torch is not loaded)

# One colour and marker per implementation in every figure.
STYLES = {
    "flashattn v1": ("#9467bd", "v"),
    "flashattn v2": ("#d62728", "o"),
    "flashattn v3": ("#e377c2", "*"),
    "FA2": ("#1f77b4", "s"),
    "cuDNN": ("#2ca02c", "D"),
    "mem-efficient": ("#ff7f0e", "^"),
    "math": ("#7f7f7f", "x"),
}
MEASURED = ("ok", "MISMATCH")
ZERO_FLOOR_MIB = 0.01  # where 0 bytes is drawn on the log axis, unless values lie near it


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--in", dest="in_dir", default="bench-peers",
                        help="bench_peers.py's output folder (%(default)s)")
    parser.add_argument("--out", default=os.path.join("docs", "figures"),
                        help="folder of the figures (%(default)s)")
    return parser.parse_args(argv)


def read_csv(path):
    with open(path, newline="") as file:
        return list(csv.DictReader(file))


def read_meta(path):
    try:
        with open(path) as file:
            return json.load(file)
    except (OSError, ValueError):
        return {}



def causal_word(causal):
    return "causal" if causal == "yes" else "noncausal"


def n_label(n):
    return "%dk" % (n // 1024) if n >= 1024 and n % 1024 == 0 else str(n)


def style(name):
    return STYLES.get(name, ("#17becf", "."))


def new_axes(plt, ns):
    figure, axes = plt.subplots(figsize=(7.5, 4.8))
    axes.set_xscale("log", base=2)
    axes.set_xticks(ns)
    axes.set_xticklabels([n_label(n) for n in ns])
    axes.minorticks_off()  # after set_xticks: no stray 2^k minor ticks on the log x axis
    axes.set_xlabel("sequence length N")
    axes.grid(True, which="major", alpha=0.3)
    return figure, axes


def subtitle(meta):
    return "%s, commit %s" % (meta.get("gpu", "unknown GPU"), meta.get("commit", "unknown"))


def caption(figure, lines):
    if lines:
        figure.text(0.01, 0.01, "\n".join(lines), fontsize=7.5, va="bottom", ha="left")
        figure.subplots_adjust(bottom=0.14 + 0.035 * len(lines))


def gap_lines(rows, measured):
    """One line per implementation with points left out, and why (unsupported, out of memory)."""
    lines = []
    for name, impl_rows in grouped(rows, ("implementation",)).items():
        gaps = [r for r in impl_rows if r["status"] not in measured]
        if gaps:
            why = ", ".join(sorted({r["status"].split(":")[0] for r in gaps}))
            where = ("every N" if len(gaps) == len(impl_rows)
                     else "N = " + ", ".join(n_label(int(r["n"])) for r in gaps))
            lines.append("%s: %s at %s." % (name[0], why, where))
    return lines


def tflops_figure(plt, rows, meta):
    ns = sorted({int(r["n"]) for r in rows})
    figure, axes = new_axes(plt, ns)
    mismatched = []
    for name, impl_rows in grouped(rows, ("implementation",)).items():
        points = [(int(r["n"]), float(r["tflops"])) for r in impl_rows if r["status"] in MEASURED]
        if not points:
            continue
        colour, marker = style(name[0])
        axes.plot(*zip(*points), color=colour, marker=marker, label=name[0])
        bad = [(int(r["n"]), float(r["tflops"])) for r in impl_rows if r["status"] == "MISMATCH"]
        if bad:
            axes.scatter(*zip(*bad), s=160, facecolors="none", edgecolors="black", zorder=3)
            mismatched.append(name[0])
    first = rows[0]
    axes.set_title("Attention forward, D = %s, H = %s, %s, %s (B N = 16384)\n%s" % (
        first["d"], first["heads"], first["dtype"],
        "causal" if first["causal"] == "yes" else "non-causal", subtitle(meta)), fontsize=10)
    axes.set_ylabel("TFLOP/s (median)")
    axes.set_ylim(bottom=0)
    axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    lines = gap_lines(rows, MEASURED)
    if mismatched:
        lines.append("Circled: MISMATCH, output differs from the reference's (%s)."
                     % ", ".join(mismatched))
    caption(figure, lines)
    return figure


def memory_figure(plt, rows, meta):
    ns = sorted({int(r["n"]) for r in rows})
    figure, axes = new_axes(plt, ns)
    measured = [r for r in rows if r["status"] == "ok"]
    positive = [int(r["extra_bytes"]) / MIB for r in measured if int(r["extra_bytes"]) > 0]
    # a power of ten at least ten times below every measured value
    floor = 10 ** math.floor(math.log10(min([ZERO_FLOOR_MIB] + [v / 10 for v in positive])))
    zeros = []
    for name, impl_rows in grouped(rows, ("implementation",)).items():
        points = [(int(r["n"]), max(int(r["extra_bytes"]) / MIB, floor))
                  for r in impl_rows if r["status"] == "ok"]
        if not points:
            continue
        all_zero = all(int(r["extra_bytes"]) == 0 for r in impl_rows if r["status"] == "ok")
        zeros += [name[0]] if all_zero else []
        colour, marker = style(name[0])
        axes.plot(*zip(*points), color=colour, marker=marker,
                  label=name[0] + (" (0 bytes)" if all_zero else ""))
    axes.set_yscale("log")
    lines = ["Bytes allocated through PyTorch's caching allocator during one call, beyond its "
             "output (peak minus before)."]
    if any(int(r["extra_bytes"]) == 0 for r in measured):
        axes.axhline(floor, color="black", linewidth=0.8, linestyle=":")
        axes.text(ns[0], floor * 1.4, "0 bytes", fontsize=8)
        lines.append("0 bytes cannot sit on a log axis: it is drawn on the dotted line at %g MiB "
                     "(%s)." % (floor, ", ".join(zeros) or "some points"))
    first = rows[0]
    axes.set_title("Extra device memory per forward call, B = %s, H = %s, D = %s, %s, %s\n%s"
                   % (first["batch"], first["heads"], first["d"], first["dtype"],
                      "causal" if first["causal"] == "yes" else "non-causal", subtitle(meta)),
                   fontsize=10)
    axes.set_ylabel("MiB beyond the output")
    axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    caption(figure, lines + gap_lines(rows, ("ok",)))
    return figure


def save(plt, figure, out_dir, stem):
    paths = []
    for extension, metadata in (("png", {"Software": None}), ("svg", {"Date": None})):
        path = os.path.join(out_dir, "%s.%s" % (stem, extension))
        # "tight": the legend sits outside the axes, to the right
        figure.savefig(path, dpi=150, metadata=metadata, bbox_inches="tight")
        paths.append(path)
    plt.close(figure)
    return paths


def main(argv=None):
    args = parse_args(argv)
    try:
        import matplotlib
    except ImportError:
        print("plot_bench: error: matplotlib is not installed (pip install matplotlib)",
              file=sys.stderr)
        return 2
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "bench_peers"  # stable SVG ids across runs
    import matplotlib.pyplot as plt

    paths = [os.path.join(args.in_dir, name)
             for name in ("bench_peers.csv", "bench_peers_memory.csv")]
    absent = [path for path in paths if not os.path.exists(path)]
    if absent:
        print("plot_bench: error: %s not found: run tools/bench_peers.py --out %s first"
              % (", ".join(absent), args.in_dir), file=sys.stderr)
        return 2
    rows, memory_rows = (read_csv(path) for path in paths)
    meta = read_meta(os.path.join(args.in_dir, "bench_peers_meta.json"))
    os.makedirs(args.out, exist_ok=True)
    written = []
    for (d, causal, dtype), group in grouped(rows, ("d", "causal", "dtype")).items():
        stem = "tflops_d%s_%s_%s" % (d, causal_word(causal), dtype)
        written += save(plt, tflops_figure(plt, group, meta), args.out, stem)
    for (d, causal, dtype), group in grouped(memory_rows, ("d", "causal", "dtype")).items():
        stem = "memory_d%s_%s_%s" % (d, causal_word(causal), dtype)
        written += save(plt, memory_figure(plt, group, meta), args.out, stem)
    print("\n".join(written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
