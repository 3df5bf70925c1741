"""The global step (TensorFlow's ``training_util``): the counter of training steps a graph
keeps, made, found and checked as TF1 does; and where optimizer state is built (``_lifted``)."""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..distribute.cluster import ClusterSpec  # noqa: E402, F401
from ..distribute.device_setter import replica_device_setter  # noqa: E402, F401
from ..framework import dtypes as _dtypes
from ..framework.graph import Graph, Tensor, get_default_graph
from ..framework.graph_keys import GraphKeys
from ..io.checkpoint_management import (  # noqa: E402, F401
    checkpoints_iterator,
    generate_checkpoint_state_proto,
    get_checkpoint_mtimes,
    remove_checkpoint,
    update_checkpoint_state,
)
from ..io.checkpoint_utils import (  # noqa: E402, F401
    NewCheckpointReader,
    init_from_checkpoint,
    list_variables,
    load_checkpoint,
    load_variable,
)
from ..io.graph_def import write_graph  # noqa: E402, F401
from ..io.saver import (  # noqa: E402, F401  # noqa: E402, F401
    CheckpointState,
    Saver,
    checkpoint_exists,
    export_meta_graph,
    get_checkpoint_state,
    import_meta_graph,
    latest_checkpoint,
)
from ..io.summary import summary_iterator  # noqa: E402, F401
from ..ops.io_ops import match_filenames_once  # noqa: E402, F401
from ..ops.variables import Variable
from .learning_rate_decay import (  # noqa: E402, F401
    cosine_decay,
    cosine_decay_restarts,
    exponential_decay,
    inverse_time_decay,
    linear_cosine_decay,
    natural_exp_decay,
    noisy_linear_cosine_decay,
    piecewise_constant,
    piecewise_constant_decay,
    polynomial_decay,
)
from .moving_averages import ExponentialMovingAverage  # noqa: E402, F401


def _lifted(graph: Graph):
    """Builds at the top level of control flow, outside any ``control_dependencies`` block, in
    the current name scope (TensorFlow's ``init_scope``): where optimizer state is created."""
    from primitives.contexts import building_in

    return building_in(graph, None)


# -- the global step -------------------------------------------------------------------------------
def global_step(sess, global_step_tensor) -> int:
    """The value of the global step in ``sess``, as a Python int."""
    return int(sess.run(global_step_tensor))


def assert_global_step(global_step_tensor) -> None:
    """``TypeError`` unless ``global_step_tensor`` is an integer scalar Variable or Tensor."""
    if not isinstance(global_step_tensor, (Variable, Tensor)):
        raise TypeError(
            f'Existing "global_step" must be a Variable or Tensor: {global_step_tensor}.'
        )
    if not global_step_tensor.dtype.is_integer:
        raise TypeError(
            f'Existing "global_step" does not have integer type: {global_step_tensor.dtype.name}'
        )
    shape = global_step_tensor.shape
    if shape.ndims != 0 and shape.is_fully_defined():
        raise TypeError(f'Existing "global_step" is not scalar: {shape}')


def get_global_step(graph: Optional[Graph] = None):
    """The global step of ``graph`` (default graph): the one member of the ``global_step``
    collection, else the variable or tensor named ``global_step:0``, else None.  None too when
    the collection holds several (TensorFlow logs an error then)."""
    graph = graph or get_default_graph()
    steps = graph.get_collection(GraphKeys.GLOBAL_STEP)
    if len(steps) > 1:
        return None
    if steps:
        step = steps[0]
    else:
        named = [
            v for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES) if v.name == "global_step:0"
        ]
        if named:
            step = named[0]
        else:
            try:
                step = graph.get_tensor_by_name("global_step:0")
            except KeyError:
                return None
    assert_global_step(step)
    return step


def create_global_step(graph: Optional[Graph] = None) -> Variable:
    """Creates the int64 scalar variable ``global_step`` (initial value 0, not trainable, in
    the ``global_step`` collection) at the top level of ``graph``; ``ValueError`` if ``graph``
    already has a global step."""
    graph = graph or get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    with graph.as_default(), _lifted(graph), graph.name_scope(None):
        return Variable(
            np.int64(0),
            trainable=False,
            name="global_step",
            dtype=_dtypes.int64,
            collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP],
        )


def get_or_create_global_step(graph: Optional[Graph] = None):
    """The global step of ``graph``, created if it has none."""
    graph = graph or get_default_graph()
    step = get_global_step(graph)
    if step is None:
        step = create_global_step(graph)
    return step


__all__ = [
    "assert_global_step",
    "create_global_step",
    "get_global_step",
    "get_or_create_global_step",
    "global_step",
]
