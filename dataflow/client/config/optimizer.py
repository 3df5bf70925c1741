"""``df.config.optimizer``: the graph passes and compiled plans of Sessions made from now on.

``set_experimental_options`` takes Grappler's option names; those that name one of dataflow's
passes (``constant_folding``, ``layout_optimizer``, ``arithmetic_optimization``,
``common_subgraph_elimination``, ``loop_optimization``, ``remapping``,
``memory_optimization``) turn it on or off, as ``ConfigProto.graph_options.rewrite_options``
does, and ``disable_meta_optimizer`` turns every pass off.  Options of Grappler passes that
dataflow does not have are kept and listed, and change nothing.

``set_jit`` is dataflow's counterpart of XLA's auto-clustering: compiled plans
(`dataflow.client.compiler`), on (``"auto"``: a plan run a few times is compiled) or off.
"""

from __future__ import annotations

from ._state import STATE

__all__ = ["get_experimental_options", "get_jit", "set_experimental_options", "set_jit"]


def get_experimental_options() -> dict:
    """The options set, with ``disable_model_pruning`` and ``disable_meta_optimizer`` always
    present, as TensorFlow lists them."""
    options = {"disable_model_pruning": False, "disable_meta_optimizer": False}
    options.update(STATE.optimizer_options)
    return options


def set_experimental_options(options) -> None:
    """Updates the options (a dict of option name to bool, or int for ``min_graph_nodes``)."""
    if not isinstance(options, dict):
        raise TypeError(f"config.optimizer.set_experimental_options takes a dict, got {options!r}")
    STATE.optimizer_options.update(options)


def get_jit() -> str:
    """``"autoclustering"`` when plans are compiled, ``""`` when they are not."""
    from .. import compiler

    return "" if compiler.mode() == "off" else "autoclustering"


def set_jit(enabled) -> None:
    """Turns compiled plans on (True or ``"autoclustering"``) or off (False or ``""``)."""
    from .. import compiler

    if enabled not in (True, False, "autoclustering", ""):
        raise ValueError("config.optimizer.set_jit: enabled must be a bool or 'autoclustering'")
    compiler.set_mode("auto" if enabled else "off")
