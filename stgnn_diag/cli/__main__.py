"""``python -m stgnn_diag.cli``: the ``stgnn-diag`` command."""
import sys

from . import main

if __name__ == "__main__":
    sys.exit(main())
