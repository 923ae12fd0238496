"""Draws staged-curriculum runs (train_stages.py's stages.csv): each stage's accuracy with the
block and with it blanked, and chance, against the tokens seen, one line style per run, into one
PNG.

  python3 plot_stages.py --run "description first=DIR1/stages.csv" --run "name first=DIR2/..." \\
      --out stages.png
"""

import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import curriculum  # noqa: E402
from plot_loss import read_rows  # noqa: E402

STAGE_COLOURS = {"L1": "tab:blue", "L2": "tab:orange", "L3": "tab:green", "L4": "tab:red"}
RUN_STYLES = ["-", "--", "-.", ":"]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", action="append", required=True, help="LABEL=PATH to a stages.csv")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    fig, (with_block, blanked) = plt.subplots(2, 1, figsize=(7, 7), sharex=True)
    for run, style in zip(args.run, RUN_STYLES):
        label, path = run.split("=", 1)
        rows = read_rows(path)[0]
        tokens = [int(r["tokens_seen"]) / 1e6 for r in rows]
        for stage in curriculum.STAGES:
            # A stage not begun yet is empty in the rows before it.
            points = [(t, float(r[stage + "_acc"]), float(r[stage + "_blank"]),
                       float(r[stage + "_chance"])) for t, r in zip(tokens, rows)
                      if r.get(stage + "_acc")]
            if not points:
                continue
            t, acc, blank, chance = zip(*points)
            colour = STAGE_COLOURS[stage]
            with_block.plot(t, acc, style, color=colour, marker="o", markersize=3,
                            label="%s, %s" % (stage, label))
            blanked.plot(t, blank, style, color=colour, marker="s", markersize=3,
                         label="%s, %s" % (stage, label))
            for ax in (with_block, blanked):
                ax.plot(t, chance, ":", color=colour, linewidth=0.8)
    for ax, title in ((with_block, "with the block"), (blanked, "descriptions blanked")):
        ax.set_ylim(0, 1)
        ax.set_ylabel("lookup accuracy")
        ax.set_title("staged lookup curriculum: %s (dotted: chance)" % title, fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper left")
    blanked.set_xlabel("tokens seen in the stages (millions)")
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)


if __name__ == "__main__":
    main()
