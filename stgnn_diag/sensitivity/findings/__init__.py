"""The pieces of the findings report (``python -m stgnn_diag.sensitivity.report``).

* :mod:`.models`: the models studied (``VARIANTS``, ``LABELS``) and their weights (checkpoint or
  :func:`brief_train`), :func:`test_mae`;
* :mod:`.measurements`: per-model Jacobian / attention / path measurements (:func:`measure_models`),
  :func:`map_pattern` of an attention map;
* :mod:`.figures`: the PNGs (:func:`write_figures`);
* :mod:`.markdown`: the README (:func:`render`), one module per numbered section
  (:mod:`.section_hops`, :mod:`.section_attention`, :mod:`.section_sweep`, :mod:`.section_summary`),
  number formatting in :mod:`.formatting`.
"""
from .figures import write_figures
from .formatting import fmt, short_source
from .markdown import render
from .measurements import last_attention_input, layer_paths, map_pattern, measure_models
from .models import LABELS, VARIANTS, brief_train, get_model, test_mae

__all__ = ["render", "VARIANTS", "LABELS", "brief_train", "test_mae", "get_model", "last_attention_input",
           "layer_paths", "map_pattern", "measure_models", "write_figures", "short_source", "fmt"]
