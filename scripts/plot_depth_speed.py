#!/usr/bin/python3
"""Plots decode speed against session depth (the tokens already in the session when decoding
starts), one line per engine and model, and prints the figures as a Markdown table.

A documentation tool only (never needed to build or test). Needs Debian's matplotlib:
    apt-get install python3-matplotlib
The CSV has one row per measurement, with the columns
    engine,model,depth,decode_tokens_per_s
e.g. from `sinkscope-cli bench --kv-window 256 --depth D -p 1 -n 32` and another engine's
figures at the same depths. Usage:
    scripts/plot_depth_speed.py --csv runs.csv --out plot.png [--title TEXT]
"""

import argparse
import csv
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 (the backend is chosen first)

STYLES = ["-o", "--s", "-^", "--d", "-v", "--x"]


def read_csv(path):
    """(engine, model) -> sorted [(depth, tokens/s)], in the file's order of first appearance."""
    series = defaultdict(list)
    with open(path, newline="") as file:
        for row in csv.DictReader(file):
            key = (row["engine"], row["model"])
            series[key].append((int(row["depth"]), float(row["decode_tokens_per_s"])))
    return {key: sorted(points) for key, points in series.items()}


def markdown(series):
    depths = sorted({depth for points in series.values() for depth, _ in points})
    lines = ["| engine, model | " + " | ".join(f"depth {d:,}" for d in depths) + " |",
             "|---|" + "---|" * len(depths)]
    for (engine, model), points in series.items():
        speeds = dict(points)
        cells = [f"{speeds[d]:,.1f}" if d in speeds else "" for d in depths]
        lines.append(f"| {engine}, {model} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--title", default="Decode speed against session depth")
    args = parser.parse_args()

    series = read_csv(args.csv)
    figure, axes = plt.subplots(figsize=(8, 4.5), dpi=120)
    for index, ((engine, model), points) in enumerate(series.items()):
        depths = [max(depth, 1) for depth, _ in points]  # depth 0 drawn at 1 on the log axis
        speeds = [speed for _, speed in points]
        axes.plot(depths, speeds, STYLES[index % len(STYLES)], label=f"{engine}, {model}")
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("tokens already in the session (depth; 0 drawn at 1)")
    axes.set_ylabel("decode tokens/s")
    axes.set_title(args.title)
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(args.out)
    print(markdown(series))


if __name__ == "__main__":
    main()
