"""Which passes a Session runs: TensorFlow 1.x's ``GraphOptions`` / ``RewriterConfig`` names.

::

    config = df.ConfigProto(graph_options=df.GraphOptions(
        rewrite_options=df.RewriterConfig(constant_folding=df.RewriterConfig.OFF)))
    sess = df.Session(config=config)
    sess.run(y, options=df.RunOptions(rewrite_options=df.RewriterConfig(
        disable_meta_optimizer=True)))        # this run: no pass at all

Each pass has a toggle (``DEFAULT``, ``ON`` or ``OFF``; ``DEFAULT`` means on), named as the
closest TensorFlow 1.x Grappler optimizer:

=================================  ==========================
``RewriterConfig`` field           pass
=================================  ==========================
``disable_model_pruning`` (bool)   ``pruning``
``constant_folding``               ``constant_folding``
``layout_optimizer``               ``layout``
``arithmetic_optimization``        ``arithmetic``
``common_subgraph_elimination``    ``common_subexpression``
``loop_optimization``              ``loop_invariant_motion``
``remapping``                      ``elementwise_fusion``
``memory_optimization``            ``inplace``
=================================  ==========================

``disable_meta_optimizer=True`` turns every pass off; ``optimizers`` (a list of pass names)
replaces the default pipeline by exactly those passes, in that order, except that ``inplace``
always runs last: it decides which buffers a kernel may overwrite, and a pass after it could
give such a buffer another reader (`dataflow.passes.registry.run_order`).
``OptimizerOptions(opt_level=OptimizerOptions.L0)`` turns constant folding and common
subexpression elimination off unless their toggles say ``ON`` or the ``OptimizerOptions`` flags
``do_constant_folding`` / ``do_common_subexpression_elimination`` keep them, as TensorFlow's L0
does.

A dataflow extension: ``RunOptions.rewrite_options`` replaces the Session's rewrite options for
one run (TensorFlow 1.x has them on ``ConfigProto`` only).  A run whose ``RunOptions`` watch
tensors (``df.debug``) runs without passes unless its ``rewrite_options`` choose some, so that
every tensor of the user's graph can be watched (fused or folded ones would not exist).  Plans
are cached per pipeline, so switching back and forth costs one optimization per (fetches,
feeds, pipeline).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..framework.protos import Message
from .registry import run_order


@dataclass
class RewriterConfig(Message):
    """Per-pass toggles (see the module docstring)."""

    DEFAULT = 0
    ON = 1
    OFF = 2

    disable_meta_optimizer: bool = False
    disable_model_pruning: bool = False
    constant_folding: int = DEFAULT
    layout_optimizer: int = DEFAULT
    arithmetic_optimization: int = DEFAULT
    common_subgraph_elimination: int = DEFAULT
    loop_optimization: int = DEFAULT
    remapping: int = DEFAULT
    memory_optimization: int = DEFAULT
    optimizers: list[str] = field(default_factory=list)


@dataclass
class OptimizerOptions(Message):
    """``opt_level``: ``L1`` (default) or ``L0`` (no constant folding, no CSE by default).

    As in TensorFlow, ``do_constant_folding`` and ``do_common_subexpression_elimination`` turn
    those passes on at ``L0`` (``L1`` runs them anyway).  ``do_function_inlining`` is accepted
    and has nothing to do: dataflow graphs have no function calls to inline.
    """

    L1 = 0
    L0 = -1

    opt_level: int = L1
    do_common_subexpression_elimination: bool = False
    do_constant_folding: bool = False
    do_function_inlining: bool = False


@dataclass
class GraphOptions(Message):
    """``ConfigProto.graph_options``: how the Session rewrites graphs before running them."""

    optimizer_options: OptimizerOptions = field(default_factory=OptimizerOptions)
    rewrite_options: RewriterConfig = field(default_factory=RewriterConfig)


# (toggle field, pass name, the OptimizerOptions flag that keeps it at opt_level L0, or None
# when L0 leaves it on) in pipeline order.
_TOGGLED = (
    ("constant_folding", "constant_folding", "do_constant_folding"),
    ("layout_optimizer", "layout", None),
    ("arithmetic_optimization", "arithmetic", None),
    ("common_subgraph_elimination", "common_subexpression", "do_common_subexpression_elimination"),
    ("loop_optimization", "loop_invariant_motion", None),
    ("remapping", "elementwise_fusion", None),
    ("memory_optimization", "inplace", None),
)


def pipeline_for(
    graph_options: Optional[GraphOptions], rewrite_options: Optional[RewriterConfig] = None
) -> tuple[str, ...]:
    """The pass names to run for these options (``rewrite_options`` overrides the config's)."""
    graph_options = graph_options or GraphOptions()
    rewrite = rewrite_options or graph_options.rewrite_options
    if rewrite.disable_meta_optimizer:
        return ()
    if rewrite.optimizers:
        return tuple(run_order(rewrite.optimizers))
    optimizer = graph_options.optimizer_options
    level0 = optimizer.opt_level == OptimizerOptions.L0
    passes = []
    for toggle_name, pass_name, kept_at_level0_by in _TOGGLED:
        toggle = getattr(rewrite, toggle_name)
        off_at_level0 = kept_at_level0_by is not None and not getattr(optimizer, kept_at_level0_by)
        if toggle == RewriterConfig.ON or (
            toggle == RewriterConfig.DEFAULT and not (level0 and off_at_level0)
        ):
            passes.append(pass_name)
    if not rewrite.disable_model_pruning:
        # Before fusion and in-place reuse, which count the consumers of each value.
        at = passes.index("elementwise_fusion") if "elementwise_fusion" in passes else len(passes)
        at = min(at, passes.index("inplace") if "inplace" in passes else len(passes))
        passes.insert(at, "pruning")
    return tuple(passes)


# The passes a Session runs by default (no options given).
DEFAULT_PIPELINE = pipeline_for(None)
