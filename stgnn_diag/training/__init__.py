"""Training and evaluation engine (Lightning): one code path for CPU, a GPU and multi-device DDP."""
from .budgets import BUDGETS, Budget, get_budget
from .evaluate import CheckpointError, evaluate, load_checkpoint, predict_split
from .module import ForecastModule, NonFiniteLossError
from .run_dir import RunDirError
from .train import TrainConfig, train

__all__ = ["BUDGETS", "Budget", "get_budget", "CheckpointError", "evaluate", "load_checkpoint", "predict_split",
           "ForecastModule", "NonFiniteLossError", "RunDirError", "TrainConfig", "train"]
