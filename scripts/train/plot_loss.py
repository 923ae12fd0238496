"""Draws the training loss (and the periodic exact match) from loss.csv into a PNG.

A resumed run repeats the steps after its last checkpoint, so loss.csv may hold a step twice: the
later row (the run that continued) wins. --csv-out writes the rows so cleaned.

  python3 plot_loss.py --csv DIR/loss.csv --out needle-nano-loss.png [--csv-out clean.csv]
"""

import argparse
import csv

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--csv", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--csv-out", default="")
    args = ap.parse_args()
    with open(args.csv) as f:
        reader = csv.DictReader(f)
        fields = reader.fieldnames
        by_step = {int(r["step"]): r for r in reader}
    rows = [by_step[s] for s in sorted(by_step)]
    if args.csv_out:
        with open(args.csv_out, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=fields)
            writer.writeheader()
            writer.writerows(rows)
    tokens = [int(r["tokens_seen"]) / 1e6 for r in rows]
    loss = [float(r["loss"]) for r in rows]
    evals = [(int(r["tokens_seen"]) / 1e6, float(r["eval_exact_match"]))
             for r in rows if r["eval_exact_match"]]

    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(tokens, loss, color="tab:blue", linewidth=1)
    ax.set_xlabel("tokens seen (millions)")
    ax.set_ylabel("loss on assistant tokens (nats)", color="tab:blue")
    ax.set_yscale("log")
    ax.grid(alpha=0.3)
    if evals:
        ax2 = ax.twinx()
        ax2.plot([e[0] for e in evals], [e[1] for e in evals], "o-", color="tab:red")
        ax2.set_ylabel("exact match, 4 eval conversations", color="tab:red")
        ax2.set_ylim(0, 1)
    ax.set_title("needle-nano training")
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)


if __name__ == "__main__":
    main()
