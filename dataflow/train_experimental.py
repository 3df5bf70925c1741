"""``df.train.experimental``: TF1's ``tf.train.experimental`` loss scales and the switches of
the mixed-precision graph rewrite (`dataflow.loss_scale`)."""

from .loss_scale import (  # noqa: F401
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
    "disable_mixed_precision_graph_rewrite",
    "enable_mixed_precision_graph_rewrite",
]
