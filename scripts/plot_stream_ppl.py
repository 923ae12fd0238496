#!/usr/bin/python3
"""Plots `sinkscope-cli stream-ppl` output: rolling perplexity against position, one line per
policy, with each policy's KV bytes in the legend; prints the figures as a Markdown table.

A documentation tool only (never needed to build or test). Needs Debian's matplotlib:
    apt-get install python3-matplotlib
Usage:
    sinkscope-cli stream-ppl ... --csv run.csv --json > run.json
    scripts/plot_stream_ppl.py --csv run.csv --json run.json --out plot.png [--title TEXT]
"""

import argparse
import csv
import json
import math
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 (the backend is chosen first)

# Drawn in this order, so the plain window stays visible over the lines it nearly matches.
ORDER = ["dense", "sink:1", "sink:4", "recompute", "sink:4:streaming", "window"]
COLOURS = {
    "dense": "#7f7f7f",
    "window": "#d62728",
    "sink:1": "#ff7f0e",
    "sink:4": "#9467bd",
    "sink:4:streaming": "#2ca02c",
    "recompute": "#1f77b4",
}


def read_csv(path):
    """policy -> (positions, nll, rolling_ppl), in file order."""
    series = defaultdict(lambda: ([], [], []))
    with open(path, newline="") as file:
        for row in csv.DictReader(file):
            positions, nll, rolling = series[row["policy"]]
            positions.append(int(row["position"]))
            nll.append(float(row["nll"]))
            rolling.append(float(row["rolling_ppl"]))
    return series


def kibibytes(count):
    return f"{count / 1024:,.0f} KiB"


def perplexity(values):
    return math.exp(sum(values) / len(values)) if values else float("nan")


def like_for_like(series, every):
    """Each policy's perplexity on the positions recompute scored (p % every == 0)."""
    return {
        policy: perplexity([n for p, n in zip(positions, nll) if p % every == 0])
        for policy, (positions, nll, _) in series.items()
    }


def plot(series, report, out, title):
    figure, axes = plt.subplots(figsize=(12, 7), dpi=100)
    kv_bytes = {entry["policy"]: entry["kv_bytes"] for entry in report["policies"]}
    for policy in sorted(series, key=lambda name: ORDER.index(name) if name in ORDER else -1):
        positions, _, rolling = series[policy]
        label = f"{policy}  ({kibibytes(kv_bytes[policy])} KV)"
        if policy == "recompute" and report["recompute_every"] > 1:
            label += f", every {report['recompute_every']} positions"
        axes.plot(positions, rolling, label=label, color=COLOURS.get(policy),
                  linewidth=1.0 if policy == "window" else 1.4)
    # Where each copy of the repeated text begins (after BOS).
    for copy in range(1, report["repeat"]):
        axes.axvline(1 + copy * report["text_tokens"], color="grey", linestyle=":", linewidth=0.8)
    context = report["trained_context"]
    axes.axvline(context, color="black", linestyle="--", linewidth=0.9)
    axes.annotate(f"GGUF context length {context:,}", (context, 0.97),
                  xycoords=("data", "axes fraction"), xytext=(4, 0), textcoords="offset points",
                  ha="left", va="top", fontsize=9)
    axes.set_yscale("log")
    axes.set_xlim(0, max(max(p) for p, _, _ in series.values()))
    axes.set_xlabel("position in the stream (tokens); dotted: a new copy of the text begins")
    axes.set_ylabel(f"perplexity, rolling over {report['rolling_span']} positions (log scale)")
    axes.set_title(title or (
        f"stream-ppl: window W = {report['window']}, {report['stream_tokens']:,} tokens "
        f"(the text {report['repeat']}x), {report['kv_bits']}-bit KV cache"))
    axes.grid(True, which="major", alpha=0.35)
    handles, labels = axes.get_legend_handles_labels()
    order = sorted(range(len(labels)), key=lambda i: list(series).index(labels[i].split()[0]))
    axes.legend([handles[i] for i in order], [labels[i] for i in order], loc="upper center",
                bbox_to_anchor=(0.5, -0.11), ncol=3, fontsize=9, frameon=False)
    figure.tight_layout()
    figure.savefig(out, pil_kwargs={"optimize": True})


def print_table(series, report):
    every = report["recompute_every"]
    same = like_for_like(series, every)
    print(f"W = {report['window']}: {report['stream_tokens']:,} tokens, "
          f"recompute every {every} positions")
    print(f"| policy | ppl | ppl, last 1,000 | ppl < {report['trained_context']:,} "
          f"| ppl >= {report['trained_context']:,} | ppl on p % {every} == 0 | tokens/s | KV bytes |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for entry in report["policies"]:
        policy = entry["policy"]
        print(f"| {policy} | {entry['ppl']:.2f} | {entry['ppl_last_1000']:.2f} "
              f"| {entry['ppl_before_trained_context']:.2f} | {entry['ppl_past_trained_context']:.2f} "
              f"| {same[policy]:.2f} | {entry['tokens_per_s']:,.0f} | {entry['kv_bytes']:,} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", required=True, help="stream-ppl --csv output")
    parser.add_argument("--json", required=True, help="stream-ppl --json output")
    parser.add_argument("--out", required=True, help="the PNG to write")
    parser.add_argument("--title", help="the plot's title (default: from the JSON)")
    args = parser.parse_args()
    series = read_csv(args.csv)
    with open(args.json) as file:
        report = json.load(file)
    plot(series, report, args.out, args.title)
    print_table(series, report)


if __name__ == "__main__":
    main()
