"""Draws a training run: the loss from loss.csv and, below it, the diagnostics from
diagnostics.csv (diagnostics.py) against the tokens seen, into one PNG.

A resumed run repeats the steps after its last checkpoint, so a CSV may hold a step twice: the
later row (the run that continued) wins. --csv-out writes the loss rows so cleaned.

  python3 plot_loss.py --csv DIR/loss.csv [--diagnostics DIR/diagnostics.csv] --out run.png
"""

import argparse
import csv
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

DIAGNOSTIC_LINES = [  # field, label, style
    ("name_acc", "tool name, random-ID block", "o-"),
    ("name_acc_blank", "tool name, blank block", "s--"),
    ("chance", "chance (1/K)", ":"),
    ("copy_acc", "copy of repeated random tokens", "^-"),
    ("exact_on", "exact match, dev set, sinks on", "D-"),
    ("exact_off", "exact match, dev set, sinks off", "x--"),
    ("lookup_acc", "lookup of a name by its description", "v-"),
]


def read_rows(path):
    """The CSV's rows in step order, one per step (the last written wins), and its fields."""
    with open(path) as f:
        reader = csv.DictReader(f)
        by_step = {int(r["step"]): r for r in reader}
        return [by_step[s] for s in sorted(by_step)], reader.fieldnames


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--csv", required=True)
    ap.add_argument("--diagnostics", default="")
    ap.add_argument("--out", required=True)
    ap.add_argument("--csv-out", default="")
    args = ap.parse_args()
    rows, fields = read_rows(args.csv)
    if args.csv_out:
        with open(args.csv_out, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=fields)
            writer.writeheader()
            writer.writerows(rows)
    diag = read_rows(args.diagnostics)[0] if args.diagnostics and os.path.exists(
        args.diagnostics) else []

    fig, axes = plt.subplots(2 if diag else 1, 1, figsize=(7, 7 if diag else 4), squeeze=False,
                             sharex=True)
    ax = axes[0][0]
    ax.plot([int(r["tokens_seen"]) / 1e6 for r in rows], [float(r["loss"]) for r in rows],
            color="tab:blue", linewidth=1)
    ax.set_ylabel("weighted loss on assistant tokens (nats)")
    ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.set_title("needle-nano training")
    if diag:
        ax = axes[1][0]
        tokens = [int(r["tokens_seen"]) / 1e6 for r in diag]
        for field, label, style in DIAGNOSTIC_LINES:
            # Fields added in later runs are empty in the rows logged before them.
            points = [(t, float(r[field])) for t, r in zip(tokens, diag) if r.get(field)]
            if points:
                ax.plot(*zip(*points), style, label=label, markersize=3)
        ax.set_ylim(0, 1)
        ax.set_ylabel("accuracy")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper left")
    axes[-1][0].set_xlabel("tokens seen (millions)")
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)


if __name__ == "__main__":
    main()
