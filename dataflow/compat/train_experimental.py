"""``df.train.experimental``: TF1's ``tf.train.experimental`` loss scales, the switches of
the mixed-precision graph rewrite (`dataflow.training.loss_scale`) and `PythonState` (Python state
in object-based checkpoints, `dataflow.training.checkpoint`)."""

from ..training.checkpoint import PythonState  # noqa: F401
from ..training.loss_scale import (  # noqa: F401
    DynamicLossScale,
    FixedLossScale,
    LossScale,
    MixedPrecisionLossScaleOptimizer,
    disable_mixed_precision_graph_rewrite,
    enable_mixed_precision_graph_rewrite,
)

__all__ = [
    "DynamicLossScale",
    "FixedLossScale",
    "LossScale",
    "MixedPrecisionLossScaleOptimizer",
    "PythonState",
    "disable_mixed_precision_graph_rewrite",
    "enable_mixed_precision_graph_rewrite",
]
