"""Training and evaluation engine (Lightning): one code path for CPU, a GPU and multi-device DDP.

The names below are imported on first use (PEP 562): the budgets are read by the command line's
argument parser, which must not load Lightning.
"""
from .._lazy import lazy_exports

_WHERE = {"BUDGETS": "budgets", "Budget": "budgets", "get_budget": "budgets",
          "CheckpointError": "predictor", "load_checkpoint": "predictor", "Predictor": "predictor",
          "load_predictor": "predictor", "evaluate": "scoring", "predict_split": "scoring",
          "score_predictor": "scoring", "ForecastModule": "module", "NonFiniteLossError": "module",
          "RunDirError": "run_dir", "TrainConfig": "fit", "train": "fit", "fit_fallback_table": "seasonal"}
__all__ = list(_WHERE)
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
