"""The figure every bench plot draws on: a matplotlib ``Figure`` with an Agg canvas (no pyplot state, no
display needed, safe in worker processes)."""
from __future__ import annotations


def new_figure(width: float, height: float):
    """A ``Figure`` of ``width`` x ``height`` inches at 100 dpi, attached to an Agg canvas (``fig.savefig``)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    return fig
