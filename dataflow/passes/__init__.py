"""Graph compiler passes: Graph -> Graph rewrites that a Session applies before it runs a plan.

A static graph shows the whole program before any of it runs, so a compiler can simplify it:
compute what depends only on constants, drop what no fetch needs, merge repeated work, and turn
chains of elementwise ops into one kernel writing into one buffer.  Each pass is a module here:

=========================  ===================================================================
``pruning``                drop ops no fetch needs (dead code elimination)
``constant_folding``       compute constant subgraphs now; collapse conds on constant predicates
``layout``                 run chains of NCHW convolutions and pools in NHWC, transposing at edges
``arithmetic``             ``x*1``, ``x+0`` (exact cases), ``--x``, transpose and reshape pairs
``common_subexpression``   merge ops computing the same value in the same context
``loop_invariant_motion``  hoist elementwise ops on loop invariants out of their loop
``elementwise_fusion``     one kernel per chain of elementwise ops, no intermediate arrays
``inplace``                an elementwise op writes into an input buffer nothing else holds
=========================  ===================================================================

Before those, a Session lowers functional control-flow ops (``If``) to Switch/Merge
(``lower_functional_ops``); that pass is not a rewrite option (see its module).

``df.Session`` runs `DEFAULT_PIPELINE` on the pruned graph of each (fetches, feeds) plan, once,
when it builds the plan; ``ConfigProto.graph_options.rewrite_options`` (a `RewriterConfig`, as
in TensorFlow 1.x) or ``RunOptions.rewrite_options`` turn passes off or choose them.  To look at
what the passes do, `optimize` returns the rewritten graph and one `PassReport` per pass, and
``python -m dataflow optimize FILE -o FILE`` does the same for a saved graph.

Layer: passes, above autodiff and below the client that runs them; they may import
the framework, ops, primitives, linalg and autodiff, never a Session.
"""

from . import (  # noqa: E402  (each module registers its pass)
    arithmetic,
    common_subexpression,
    constant_folding,
    elementwise_fusion,
    inplace,
    layout,
    loop_invariant_motion,
    lower_functional_ops,
    pruning,
)
from .config import (
    DEFAULT_PIPELINE,
    GraphOptions,
    OptimizerOptions,
    RewriterConfig,
    pipeline_for,
)
from .graph_item import GraphItem
from .manager import PassManager, optimize
from .registry import GraphPass, PassReport, get_pass, register_pass, registered_passes

__all__ = [
    "DEFAULT_PIPELINE",
    "GraphOptions",
    "OptimizerOptions",
    "RewriterConfig",
    "pipeline_for",
    "GraphItem",
    "GraphPass",
    "PassManager",
    "PassReport",
    "get_pass",
    "optimize",
    "register_pass",
    "registered_passes",
]
