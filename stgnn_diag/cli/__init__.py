"""The ``stgnn-diag`` command line, one module per sub-command: :mod:`stgnn_diag.cli.models`,
:mod:`stgnn_diag.cli.train`, :mod:`stgnn_diag.cli.evaluate`, :mod:`stgnn_diag.cli.bench`,
:mod:`stgnn_diag.cli.sensitivity`. Each has ``add_parser(subparsers)`` and ``run(args) -> exit status``."""
from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional

from . import bench, evaluate, models, sensitivity, train

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="stgnn-diag", description="Diagonal-regularized temporal attention "
                                     "for spatio-temporal GNNs: zoo, training, evaluation, sensitivity.")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in (models, train, evaluate, bench, sensitivity):
        command.add_parser(sub)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # the command line, as the bench records it
    if args.command == "evaluate" and not (args.model or args.checkpoint):
        parser.error("evaluate needs --model BASELINE or --checkpoint PATH")
    try:
        return args.func(args)
    except (ValueError, TypeError, OSError, RuntimeError) as e:  # our clear errors: no traceback
        print(f"stgnn-diag {args.command}: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head` & co.: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print(f"\nstgnn-diag {args.command}: interrupted; resume a training run with --resume.", file=sys.stderr)
        return 130
