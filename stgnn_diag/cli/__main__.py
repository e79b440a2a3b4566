"""``python -m stgnn_diag.cli``: the ``stgnn-diag`` command."""
import sys

from . import main

sys.exit(main())
