"""Sparse forward-mode Jacobian of the zoo's models, exploiting where information can travel.

For an input node ``u`` the tangent of every hidden representation is zero outside the nodes
``u`` can reach so far: temporal attention keeps it on the same node, each graph convolution
widens it by its reach. This engine carries, for a chunk of input nodes at once, only those
(input node, node) rows, packed into one tensor, and applies each sub-layer's *linearisation* to
them with batched matrix products:

* encoder: ``torch.func.jvp`` of ``model.encode`` (acts on each node separately);
* :class:`~stgnn_diag.models.sublayers.TemporalSublayer`: the JVP of multi-head attention +
  residual + LayerNorm written out (per-node primal quantities computed once, gathered per row);
* :class:`~stgnn_diag.models.sublayers.GraphSublayer`: the convolution is affine,
  ``conv(x) = sum_k M_k x W_k^T + b`` (``M_k`` = identity / diffusion powers / normalised
  adjacency / adaptive adjacency powers), so its JVP is one dense matmul with the stacked ``W_k``
  and one block-sparse matmul with the ``M_k``; then the activation's derivative, the residual and
  the LayerNorm JVP;
* read-out: ``model.decode`` linearised per node (with the last LayerNorm folded in). When the last
  sub-layer is a graph convolution, the read-out is pulled back through its weights once per node and
  meets the weight-free sparse products ``M_k dx`` directly (``GraphStep.contract``): the last layer's
  ``d x d`` products and output tangents are never formed.

``StructuredJacobian.work()`` counts the ``d``-vectors this engine carries through the sub-layers against
reverse mode one output at a time (the structural part of a speed-up over autograd).

Which models: :class:`~stgnn_diag.models.STAttentionBase` subclasses that keep its ``encode`` and
``decode`` and whose ``process`` is a plain chain of those two sub-layer types (checked by tracing
one forward pass with hooks); convolutions :class:`~stgnn_diag.nn.DiffusionConv` and PyG's
``GCNConv``. Every sub-layer's primal output is recomputed from the formulas used here and
compared with the real module's output before anything is differentiated, so a mismatch (a
changed layer, an unsupported option) raises :class:`UnsupportedModel` instead of a wrong
Jacobian; :func:`~stgnn_diag.sensitivity.spatiotemporal_jacobian` then falls back to the dense
``torch.func`` engine.

Modules: :mod:`.engine` (tracing and the chunk driver, :class:`StructuredJacobian`),
:mod:`.chunking` (memory-budgeted chunks of input nodes), the per-sub-layer tangent rules
:mod:`.temporal_step`, :mod:`.graph_step`, :mod:`.readout_step`, and their building blocks
:mod:`.layer_norm`, :mod:`.graph_conv`, :mod:`.support` (:class:`UnsupportedModel`, checks).
"""
from .chunking import pack_chunks, tangent_row_bytes
from .engine import StructuredJacobian
from .graph_conv import conv_terms
from .graph_step import GraphStep, PulledBack
from .layer_norm import NormLin
from .readout_step import ReadoutStep
from .support import ELEMENTWISE, UnsupportedModel, encode_window
from .temporal_step import TemporalStep

__all__ = ["StructuredJacobian", "UnsupportedModel", "encode_window", "ELEMENTWISE", "conv_terms", "NormLin", "TemporalStep",
           "GraphStep", "PulledBack", "ReadoutStep", "pack_chunks", "tangent_row_bytes"]
