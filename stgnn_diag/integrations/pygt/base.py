"""The base of the PyG Temporal wrappers: :class:`PyGTModel` (layouts, covariates, read-out) and the edge order
some of PyG Temporal's layers need."""
from __future__ import annotations

from typing import Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .._require import require_pygt

require_pygt("stgnn_diag.integrations.pygt")

from torch_geometric.utils import sort_edge_index  # noqa: E402

from ...models.inputs import check_inputs  # noqa: E402
from ..pygt_layouts import output_to_tsl  # noqa: E402


class PyGTModel(nn.Module):
    """Base of the PyG Temporal wrappers: argument mapping, input checks, covariates, read-out.

    The wrappers take **our** layout ``x [batch, time, nodes, features]`` (tsl's), not the layout of the
    PyG Temporal class they wrap (``[batch, nodes, features, time]`` for A3TGCN2 / ASTGCN ...): they convert
    inside. An input in a PyG Temporal layout is refused with the conversion
    (``stgnn_diag.integrations.pygt_layouts.from_layout``).

    Subclasses set :attr:`needs_n_nodes` / :attr:`fixed_window` and implement :meth:`core`.

    Args:
        input_size: input channels per node and step.
        output_size: output channels (default ``input_size``).
        horizon: predicted steps.
        n_nodes: number of nodes (required by models with per-node parameters).
        hidden_size: width of the wrapped model.
        exog_size: covariate channels of ``u`` (0: none).
        window: input steps (models with a fixed input length are built for it).

    Shapes:
        - x: ``[batch, window, nodes, input_size]``
        - edge_index: ``[2, E]`` or SparseTensor ``adj_t``; edge_weight: ``[E]`` or None
        - u: ``[batch, window, exog_size]`` or ``[batch, window, nodes, exog_size]``
        - output: ``[batch, horizon, nodes, output_size]``
    """

    #: PyG Temporal class wrapped (for ``repr`` and the docs).
    wrapped: str = ""
    needs_n_nodes: bool = False
    fixed_window: bool = True

    def __init__(self, input_size: int = 1, output_size: Optional[int] = None, horizon: int = 12,
                 n_nodes: Optional[int] = None, hidden_size: int = 32, exog_size: int = 0, window: int = 12):
        super().__init__()
        for name, v in dict(input_size=input_size, horizon=horizon, hidden_size=hidden_size, window=window).items():
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise ValueError(f"{name} must be a positive integer, got {v!r}.")
        if exog_size < 0:
            raise ValueError(f"exog_size must be >= 0, got {exog_size}.")
        if self.needs_n_nodes and not n_nodes:
            raise ValueError(f"{type(self).__name__} has per-node parameters: pass n_nodes.")
        self.input_size, self.output_size = input_size, output_size or input_size
        self.horizon, self.n_nodes, self.hidden_size = horizon, n_nodes, hidden_size
        self.exog_size, self.window = exog_size, window

    @property
    def in_channels(self) -> int:
        """Channels the wrapped model reads: the input plus the covariates."""
        return self.input_size + self.exog_size

    def make_readout(self) -> nn.Linear:
        """``hidden -> horizon * output_size`` (for models that return a hidden state)."""
        return nn.Linear(self.hidden_size, self.horizon * self.output_size)

    def readout_hidden(self, h: Tensor) -> Tensor:
        """Hidden state ``[b, n, hidden]`` -> ``[b, horizon, n, output_size]`` (ReLU, then linear)."""
        return output_to_tsl(self.readout(F.relu(h)), "B N (H O)", self.horizon, self.output_size)

    def check_inputs(self, x: Tensor, edge_index, edge_weight: Optional[Tensor], u: Optional[Tensor]
                     ) -> Tuple[Tensor, Tensor, Optional[Tensor]]:
        """Validate (:func:`~stgnn_diag.models.inputs.check_inputs`, our models' checks); returns ``(edge_index,
        edge_weight [E] (ones if None), u [b, t, n, exog] or None)``."""
        edge_index, edge_weight, u = check_inputs(self, x, edge_index, edge_weight, u, fixed_window=self.fixed_window)
        if edge_weight is None:
            edge_weight = torch.ones(edge_index.size(1), dtype=x.dtype, device=x.device)
        return edge_index, edge_weight.to(x.dtype), u

    def forward(self, x: Tensor, edge_index, edge_weight: Optional[Tensor] = None,
                u: Optional[Tensor] = None) -> Tensor:
        edge_index, edge_weight, u = self.check_inputs(x, edge_index, edge_weight, u)
        return self.core(x, edge_index, edge_weight, u)

    def core(self, x: Tensor, edge_index: Tensor, edge_weight: Tensor, u: Optional[Tensor]) -> Tensor:
        raise NotImplementedError  # pragma: no cover

    def reset_parameters(self) -> None:
        for m in self.modules():
            if m is not self and hasattr(m, "reset_parameters"):
                m.reset_parameters()

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(input_size={self.input_size}, output_size={self.output_size}, "
                f"horizon={self.horizon}, hidden_size={self.hidden_size}, wraps="
                f"torch_geometric_temporal.nn.{self.wrapped})")


# --------------------------------------------------------------------- whole-sequence models


def target_major(edge_index: Tensor, edge_weight: Tensor) -> Tuple[Tensor, Tensor]:
    """Edges sorted by (target, source). PyG Temporal 0.56.2's ``DConv`` / ``BatchedDConv`` compute
    the backward-diffusion norms in the given edge order but apply them to the reversed edges in
    target-major order, so they only line up when the edges come sorted that way (PyG's
    ``dense_to_sparse`` and PyG Temporal's own METR-LA loader give source-major order)."""
    return sort_edge_index(edge_index, edge_weight, sort_by_row=False)
