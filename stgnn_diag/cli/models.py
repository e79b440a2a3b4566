"""``stgnn-diag models``: the zoo with parameter counts, or one entry's card."""
from __future__ import annotations

import argparse
import sys


def run(args) -> int:
    from ..zoo import get_entry, list_models
    from ..zoo.cards import parameter_count, render_card

    if args.card:
        if not get_entry(args.card).native:  # an unknown name: one line with the closest names
            raise ValueError(f"{args.card!r} is an integration entry (its library documents it): no card here.")
        print(render_card(args.card), end="")
        return 0
    names = list_models(args.pattern)
    if not names:
        print(f"stgnn-diag models: no zoo entry matches {args.pattern!r} (`stgnn-diag models` lists them all)",
              file=sys.stderr)
        return 2
    width = max((len(n) for n in names), default=10)
    print(f"{'name':{width}s}  {'params':>8s}  summary")
    for n in names:
        entry = get_entry(n)
        count = f"{parameter_count(n):8d}" if entry.native else f"{'-':>8s}"
        print(f"{n:{width}s}  {count}  {entry.summary}")
    return 0


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``models`` on an ``argparse`` sub-parser collection."""
    p = subparsers.add_parser("models", help="list the zoo with parameter counts (for the nodes of each entry's "
                       "shipped weights; 207 without)")
    p.add_argument("pattern", nargs="?", help="shell-style filter, e.g. 'tts_*'")
    p.add_argument("--card", metavar="NAME", help="print the model card of one entry: defaults, shipped weights "
                   "and their test metrics, inputs, the command that trained them")
    p.set_defaults(func=run)
    return p
