"""One bench unit in its own process: ``python -m stgnn_diag.bench.worker --unit JSON --results DIR``.

Used by ``stgnn-diag bench --isolate``: a crash or an out-of-memory kill of this process loses only
this unit. The unit writes its ``result.json`` itself (peak memory = this process's peak RSS); on an
error it writes ``error.json`` with the traceback and exits with status 1. When another live process holds
the unit's run lock it writes nothing into the folder (the run there is fine) and exits with ``BUSY_EXIT``.
"""
from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path
from typing import List, Optional

def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m stgnn_diag.bench.worker", description=__doc__)
    p.add_argument("--unit", required=True, help="the unit as JSON (Unit.to_dict())")
    p.add_argument("--results", required=True)
    p.add_argument("--data-root")
    p.add_argument("--accelerator", default="cpu")
    p.add_argument("--devices", default="1")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)

    from ..training.run_dir import RunBusyError
    from .unit import Unit
    from .isolation import BUSY_EXIT
    from .store import record_error, unit_dir
    from .unit_run import run_unit

    unit = Unit.from_dict(json.loads(args.unit))
    devices = args.devices if args.devices == "auto" else int(args.devices)
    try:
        run_unit(unit, Path(args.results), data_root=args.data_root, accelerator=args.accelerator,
                 devices=devices, progress=not args.no_progress, isolated=True)
    except KeyboardInterrupt:
        return 130
    except RunBusyError as e:  # not this unit's failure: another process trains it
        print(f"{type(e).__name__}: {e}", file=sys.stderr)
        return BUSY_EXIT
    except Exception as e:  # noqa: BLE001  recorded for the parent, then a non-zero exit
        record_error(unit_dir(Path(args.results), unit), unit, f"{type(e).__name__}: {e}", traceback.format_exc())
        traceback.print_exc()
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
