"""Recurrent cells as in ``tf.compat.v1.nn.rnn_cell``: `RNNCell` and the standard cells.

A cell maps ``(inputs, state)`` to ``(output, new_state)`` for one time step; `dataflow.nn.rnn`
runs it over a sequence (``dynamic_rnn`` in a `while_loop`, ``static_rnn`` unrolled).  As in
TF1, a cell is a layer: its first call opens a variable scope named after the cell
(``basic_lstm_cell``, unique among its siblings, or the ``scope`` given to the call) inside the
variable scope around the call, makes its variables there with `get_variable` (``kernel`` and
``bias``: ``rnn/basic_lstm_cell/kernel``), and keeps them; later calls reuse them and build
their ops in the same name scope.  So variable names, op names and ``trainable_variables()``
line up with TF1 code and checkpoints.

The cells' variables default to the variable scope's initializer (Glorot uniform when the scope
has none, as `get_variable` does); biases start at zeros, except the gates of `GRUCell`, which
start at ones, as in TF1.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Callable
from typing import Optional

from ..framework import dtypes as _dtypes
from ..framework import nest
from ..framework.graph import Tensor, name_scope
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape, dimension_value
from ..ops.array_ops import concat, split, stack, zeros
from ..ops.math_ops import (
    add,
    cast,
    clip_by_value,
    greater_equal,
    matmul,
    multiply,
    sigmoid,
    tanh,
)
from ..ops.nn_ops import bias_add, dropout
from ..ops.random_ops import random_uniform
from ..ops.variable_scope import get_variable, variable_scope
from .layers import VariableOwner

__all__ = [
    "BasicLSTMCell",
    "BasicRNNCell",
    "DeviceWrapper",
    "DropoutWrapper",
    "GRUCell",
    "LSTMCell",
    "LSTMStateTuple",
    "MultiRNNCell",
    "RNNCell",
    "ResidualWrapper",
]


def _snake_case(name: str) -> str:
    """TF1's layer names: ``BasicLSTMCell`` -> ``basic_lstm_cell``."""
    name = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


def _zeros_initializer(shape, dtype=_dtypes.float32, partition_info=None):
    return zeros(shape, dtype)


def _constant_initializer(value: float) -> Callable:
    def initializer(shape, dtype=_dtypes.float32, partition_info=None):
        return zeros(shape, dtype) + convert_to_tensor(value, dtype=dtype)

    return initializer


class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ("c", "h"))):
    """The state of an LSTM: the cell state ``c`` and the output ``h`` (``tf.nn.rnn_cell.
    LSTMStateTuple``)."""

    __slots__ = ()

    @property
    def dtype(self):
        c, h = self
        if c.dtype is not h.dtype:
            raise TypeError(f"Inconsistent internal state: {c.dtype.name} vs {h.dtype.name}")
        return c.dtype


def _state_size_with_prefix(size, prefix) -> list:
    return list(prefix) + (TensorShape(size).as_list() if not isinstance(size, int) else [size])


def _zero_state_tensors(state_size, batch_size, dtype):
    """Zeros of shape ``[batch_size] + size`` for each leaf of ``state_size``."""
    static_batch = batch_size if isinstance(batch_size, int) else None

    def zeros_for(size):
        dims = _state_size_with_prefix(size, [])
        if isinstance(batch_size, int):
            value = zeros([batch_size] + dims, dtype)
        else:
            value = zeros(stack([batch_size] + dims), dtype)
        value.set_shape([static_batch] + dims)
        return value

    return nest.map_structure(zeros_for, state_size)


class RNNCell(VariableOwner):
    """The abstract cell: ``cell(inputs, state) -> (output, new_state)``, with ``state_size``
    and ``output_size`` (ints, `TensorShape`\\ s, or nested structures of them) and
    ``zero_state``.  Subclasses implement ``build(inputs_shape)`` (making variables with
    `add_variable`) and ``call(inputs, state)``.
    """

    def __init__(self, trainable: bool = True, name: Optional[str] = None, dtype=None, **kwargs):
        self._reuse = kwargs.pop("_reuse", None)
        if kwargs:
            raise TypeError(f"Unexpected arguments: {sorted(kwargs)}")
        self.trainable = trainable
        self._base_name = name or _snake_case(type(self).__name__)
        self._name = name or self._base_name
        self._dtype = None if dtype is None else _dtypes.as_dtype(dtype)
        self._scope = None
        self._variables: list = []
        self.built = False

    # -- what subclasses define ------------------------------------------------------------------
    @property
    def state_size(self):
        raise NotImplementedError("Abstract method")

    @property
    def output_size(self):
        raise NotImplementedError("Abstract method")

    def build(self, inputs_shape: TensorShape) -> None:
        self.built = True

    def call(self, inputs, state):
        raise NotImplementedError("Abstract method")

    # -- the layer machinery ---------------------------------------------------------------------
    def add_variable(self, name: str, shape, dtype=None, initializer=None, trainable=True, **kw):
        """Makes (or, in a reused scope, finds) the variable ``name`` in the cell's scope."""
        variable = get_variable(
            name,
            shape=shape,
            dtype=dtype or self._dtype or _dtypes.float32,
            initializer=initializer,
            trainable=trainable and self.trainable,
            **kw,
        )
        if not any(known is variable for known in self._variables):  # by identity: see Variable
            self._variables.append(variable)
        return variable

    add_weight = add_variable

    def __call__(self, inputs, state, scope=None):
        """Runs one step: ``(output, new_state)``.  The first call makes the variables (see the
        module docstring); ``scope`` names the variable scope instead of the cell's name."""
        __tracebackhide__ = True
        if self._scope is None:
            if self._reuse:
                opening = variable_scope(scope if scope is not None else self._base_name)
            else:
                opening = variable_scope(scope, default_name=self._base_name)
            with opening as captured:
                self._scope = captured
        with variable_scope(
            self._scope, reuse=True if self.built else self._reuse, auxiliary_name_scope=False
        ):
            with name_scope(self._scope.original_name_scope):
                if not self.built:
                    inputs_shape = nest.flatten(inputs)[0]
                    if not isinstance(inputs_shape, Tensor):
                        inputs_shape = convert_to_tensor(inputs_shape)
                    if self._dtype is None:
                        self._dtype = inputs_shape.dtype
                    self.build(inputs_shape.shape)
                    self.built = True
                return self.call(inputs, state)

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        """The zero state for ``inputs`` (its first dimension and dtype) or for ``batch_size``
        and ``dtype``."""
        if inputs is not None:
            inputs = convert_to_tensor(inputs, name="inputs")
            if batch_size is None:
                batch_size = dimension_value(inputs.shape[0])
                if batch_size is None:
                    from ..ops.array_ops import shape

                    batch_size = shape(inputs)[0]
            dtype = dtype or inputs.dtype
        if batch_size is None or dtype is None:
            raise ValueError("get_initial_state needs inputs, or both batch_size and dtype")
        return self.zero_state(batch_size, dtype)

    def zero_state(self, batch_size, dtype):
        """Zeros shaped like the state for a batch of ``batch_size`` (an int or a scalar
        tensor), in the name scope ``<CellClass>ZeroState``."""
        with name_scope(type(self).__name__ + "ZeroState"):
            return _zero_state_tensors(self.state_size, batch_size, _dtypes.as_dtype(dtype))

    def __repr__(self) -> str:
        return f"<df.nn.rnn_cell.{type(self).__name__} '{self._name}'>"


def _input_depth(inputs_shape: TensorShape, cell: RNNCell) -> int:
    depth = dimension_value(inputs_shape[-1]) if inputs_shape.ndims else None
    if depth is None:
        raise ValueError(
            f"Expected inputs.shape[-1] to be known, saw shape: {inputs_shape} (cell '{cell.name}')"
        )
    return depth


class BasicRNNCell(RNNCell):
    """``output = new_state = activation(W [inputs, state] + b)``, ``tanh`` by default."""

    def __init__(self, num_units: int, activation=None, reuse=None, name=None, dtype=None, **kw):
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kw)
        self._num_units = num_units
        self._activation = activation or tanh

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape, self)
        self._kernel = self.add_variable("kernel", [depth + self._num_units, self._num_units])
        self._bias = self.add_variable("bias", [self._num_units], initializer=_zeros_initializer)
        self.built = True

    def call(self, inputs, state):
        gate_inputs = matmul(concat([inputs, state], 1), self._kernel)
        output = self._activation(bias_add(gate_inputs, self._bias))
        return output, output


class GRUCell(RNNCell):
    """The gated recurrent unit (Cho et al., 2014) as TF1 computes it: gates ``r, u`` from
    ``[inputs, state]``, candidate from ``[inputs, r * state]``, ``new = u * state + (1 - u) *
    candidate``.  Variables ``gates/kernel``, ``gates/bias`` (ones), ``candidate/kernel``,
    ``candidate/bias`` (zeros)."""

    def __init__(
        self,
        num_units: int,
        activation=None,
        reuse=None,
        kernel_initializer=None,
        bias_initializer=None,
        name=None,
        dtype=None,
        **kw,
    ):
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kw)
        self._num_units = num_units
        self._activation = activation or tanh
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape, self)
        n = self._num_units
        self._gate_kernel = self.add_variable(
            "gates/kernel", [depth + n, 2 * n], initializer=self._kernel_initializer
        )
        self._gate_bias = self.add_variable(
            "gates/bias", [2 * n], initializer=self._bias_initializer or _constant_initializer(1.0)
        )
        self._candidate_kernel = self.add_variable(
            "candidate/kernel", [depth + n, n], initializer=self._kernel_initializer
        )
        self._candidate_bias = self.add_variable(
            "candidate/bias", [n], initializer=self._bias_initializer or _zeros_initializer
        )
        self.built = True

    def call(self, inputs, state):
        gate_inputs = matmul(concat([inputs, state], 1), self._gate_kernel)
        value = sigmoid(bias_add(gate_inputs, self._gate_bias))
        r, u = split(value=value, num_or_size_splits=2, axis=1)
        candidate = matmul(concat([inputs, r * state], 1), self._candidate_kernel)
        c = self._activation(bias_add(candidate, self._candidate_bias))
        new_h = u * state + (1 - u) * c
        return new_h, new_h


class BasicLSTMCell(RNNCell):
    """The LSTM of Zaremba et al. (2014) as TF1's ``BasicLSTMCell``: one ``kernel`` for the four
    gates ``i, j, f, o`` (in that order), ``forget_bias`` added to ``f``, no peepholes or
    projection.  The state is an `LSTMStateTuple` ``(c, h)``, or with ``state_is_tuple=False``
    the two concatenated."""

    def __init__(
        self,
        num_units: int,
        forget_bias: float = 1.0,
        state_is_tuple: bool = True,
        activation=None,
        reuse=None,
        name=None,
        dtype=None,
        **kw,
    ):
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kw)
        self._num_units = num_units
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = activation or tanh

    @property
    def state_size(self):
        n = self._num_units
        return LSTMStateTuple(n, n) if self._state_is_tuple else 2 * n

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape, self)
        n = self._num_units
        self._kernel = self.add_variable("kernel", [depth + n, 4 * n])
        self._bias = self.add_variable("bias", [4 * n], initializer=_zeros_initializer)
        self.built = True

    def call(self, inputs, state):
        if self._state_is_tuple:
            c, h = state
        else:
            c, h = split(value=state, num_or_size_splits=2, axis=1)
        gate_inputs = bias_add(matmul(concat([inputs, h], 1), self._kernel), self._bias)
        i, j, f, o = split(value=gate_inputs, num_or_size_splits=4, axis=1)
        forget_bias = convert_to_tensor(self._forget_bias, dtype=f.dtype)
        new_c = add(
            multiply(c, sigmoid(add(f, forget_bias))),
            multiply(sigmoid(i), self._activation(j)),
        )
        new_h = multiply(self._activation(new_c), sigmoid(o))
        new_state = (
            LSTMStateTuple(new_c, new_h) if self._state_is_tuple else concat([new_c, new_h], 1)
        )
        return new_h, new_state


class LSTMCell(RNNCell):
    """TF1's full ``LSTMCell``: optional peephole connections (``w_f_diag``, ``w_i_diag``,
    ``w_o_diag``), cell clipping, and a projection of the output to ``num_proj`` units
    (``projection/kernel``) with optional clipping.  The state is ``(c, m)`` where ``m`` is the
    (projected) output."""

    def __init__(
        self,
        num_units: int,
        use_peepholes: bool = False,
        cell_clip: Optional[float] = None,
        initializer=None,
        num_proj: Optional[int] = None,
        proj_clip: Optional[float] = None,
        num_unit_shards=None,
        num_proj_shards=None,
        forget_bias: float = 1.0,
        state_is_tuple: bool = True,
        activation=None,
        reuse=None,
        name=None,
        dtype=None,
        **kw,
    ):
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kw)
        if num_unit_shards is not None or num_proj_shards is not None:
            raise ValueError(
                "num_unit_shards and num_proj_shards are deprecated in TF1 and not supported; "
                "use a variable_scope partitioner"
            )
        self._num_units = num_units
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._num_proj = num_proj
        self._proj_clip = proj_clip
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = activation or tanh

    @property
    def state_size(self):
        n, m = self._num_units, self._num_proj or self._num_units
        return LSTMStateTuple(n, m) if self._state_is_tuple else n + m

    @property
    def output_size(self):
        return self._num_proj or self._num_units

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape, self)
        n = self._num_units
        h_depth = self._num_proj or n
        self._kernel = self.add_variable(
            "kernel", [depth + h_depth, 4 * n], initializer=self._initializer
        )
        self._bias = self.add_variable("bias", [4 * n], initializer=_zeros_initializer)
        if self._use_peepholes:
            self._w_f_diag = self.add_variable("w_f_diag", [n], initializer=self._initializer)
            self._w_i_diag = self.add_variable("w_i_diag", [n], initializer=self._initializer)
            self._w_o_diag = self.add_variable("w_o_diag", [n], initializer=self._initializer)
        if self._num_proj is not None:
            self._proj_kernel = self.add_variable(
                "projection/kernel", [n, self._num_proj], initializer=self._initializer
            )
        self.built = True

    def call(self, inputs, state):
        n = self._num_units
        if self._state_is_tuple:
            c_prev, m_prev = state
        else:
            c_prev, m_prev = split(state, [n, self._num_proj or n], axis=1)
        lstm_matrix = bias_add(matmul(concat([inputs, m_prev], 1), self._kernel), self._bias)
        i, j, f, o = split(value=lstm_matrix, num_or_size_splits=4, axis=1)
        forget_bias = convert_to_tensor(self._forget_bias, dtype=f.dtype)
        if self._use_peepholes:
            c = sigmoid(f + forget_bias + self._w_f_diag * c_prev) * c_prev + sigmoid(
                i + self._w_i_diag * c_prev
            ) * self._activation(j)
        else:
            c = sigmoid(f + forget_bias) * c_prev + sigmoid(i) * self._activation(j)
        if self._cell_clip is not None:
            c = clip_by_value(c, -self._cell_clip, self._cell_clip)
        if self._use_peepholes:
            m = sigmoid(o + self._w_o_diag * c) * self._activation(c)
        else:
            m = sigmoid(o) * self._activation(c)
        if self._num_proj is not None:
            m = matmul(m, self._proj_kernel)
            if self._proj_clip is not None:
                m = clip_by_value(m, -self._proj_clip, self._proj_clip)
        new_state = LSTMStateTuple(c, m) if self._state_is_tuple else concat([c, m], 1)
        return m, new_state


class MultiRNNCell(RNNCell):
    """Cells stacked: the output of cell ``k`` is the input of cell ``k+1``; the state is the
    tuple of the cells' states.  Cell ``k`` builds in the variable scope ``cell_k``."""

    def __init__(self, cells, state_is_tuple: bool = True):
        super().__init__()
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        if not nest.is_nested(cells):
            raise TypeError(f"cells must be a list or tuple, but saw: {cells!r}.")
        if len(set(id(c) for c in cells)) < len(cells):
            import logging

            logging.getLogger(__name__).warning(
                "At least two cells provided to MultiRNNCell are the same object and will "
                "share weights."
            )
        self._cells = list(cells)
        self._state_is_tuple = state_is_tuple
        if not state_is_tuple and any(nest.is_nested(c.state_size) for c in self._cells):
            raise ValueError(
                "Some cells return tuples of states, but the flag state_is_tuple is not set. "
                f"State sizes are: {[c.state_size for c in self._cells]}"
            )

    @property
    def state_size(self):
        if self._state_is_tuple:
            return tuple(cell.state_size for cell in self._cells)
        return sum(cell.state_size for cell in self._cells)

    @property
    def output_size(self):
        return self._cells[-1].output_size

    @property
    def variables(self) -> list:
        return [v for cell in self._cells for v in cell.variables]

    weights = variables

    @property
    def trainable_variables(self) -> list:
        return [v for cell in self._cells for v in cell.trainable_variables]

    trainable_weights = trainable_variables

    def zero_state(self, batch_size, dtype):
        with name_scope(type(self).__name__ + "ZeroState"):
            if self._state_is_tuple:
                return tuple(cell.zero_state(batch_size, dtype) for cell in self._cells)
            return super().zero_state(batch_size, dtype)

    def build(self, inputs_shape):
        self.built = True

    def call(self, inputs, state):
        current = inputs
        new_states = []
        start = 0
        for i, cell in enumerate(self._cells):
            with variable_scope(f"cell_{i}"):
                if self._state_is_tuple:
                    if not nest.is_nested(state):
                        raise ValueError(
                            f"Expected state to be a tuple of length {len(self.state_size)}, "
                            f"but received: {state!r}"
                        )
                    cell_state = state[i]
                else:
                    from ..ops.slice_ops import slice as _slice

                    cell_state = _slice(state, [0, start], [-1, cell.state_size])
                    start += cell.state_size
                current, new_state = cell(current, cell_state)
                new_states.append(new_state)
        if self._state_is_tuple:
            return current, tuple(new_states)
        return current, concat(new_states, 1)


class _Wrapper(RNNCell):
    """A cell around another one: its sizes, zero state and variables are the wrapped cell's,
    and it opens no variable scope of its own."""

    def __init__(self, cell: RNNCell):
        super().__init__()
        if not isinstance(cell, RNNCell):
            raise TypeError(f"The parameter cell is not a RNNCell: {cell!r}")
        self._cell = cell

    @property
    def wrapped_cell(self) -> RNNCell:
        return self._cell

    @property
    def state_size(self):
        return self._cell.state_size

    @property
    def output_size(self):
        return self._cell.output_size

    @property
    def variables(self) -> list:
        return self._cell.variables

    weights = variables

    @property
    def trainable_variables(self) -> list:
        return self._cell.trainable_variables

    trainable_weights = trainable_variables

    def zero_state(self, batch_size, dtype):
        with name_scope(type(self).__name__ + "ZeroState"):
            return self._cell.zero_state(batch_size, dtype)

    def __call__(self, inputs, state, scope=None):
        __tracebackhide__ = True
        return self.call(inputs, state, scope)


def _default_state_filter(substate):
    """TF1's default: drop out every state tensor, but of an LSTM state only ``h``."""
    if isinstance(substate, LSTMStateTuple):
        return LSTMStateTuple(c=False, h=True)
    return True


def _filtered_map(fn, visitor, value):
    """``fn`` applied to the leaves of ``value`` that ``visitor`` selects: it returns a bool
    for a whole substructure (True: go into it) or a structure of bools for its parts."""
    decision = visitor(value)
    if isinstance(decision, bool):
        if not decision:
            return value
        if not nest.is_nested(value):
            return fn(value)
        children = [_filtered_map(fn, visitor, child) for child in value]
        return type(value)(*children) if hasattr(value, "_fields") else type(value)(children)
    flags = list(decision)
    children = [
        _filtered_map(fn, visitor, child) if flag else child for child, flag in zip(value, flags)
    ]
    return type(value)(*children) if hasattr(value, "_fields") else type(value)(children)


class DropoutWrapper(_Wrapper):
    """Dropout on the inputs, outputs and state of a cell (``input_keep_prob``,
    ``output_keep_prob``, ``state_keep_prob``; a keep probability of exactly 1 adds no op).
    ``dropout_state_filter_visitor`` chooses which parts of the state are dropped (by default
    all but the ``c`` of an LSTM state).  With ``variational_recurrent`` one mask per run is
    drawn for each input, output and state tensor and used at every step (Gal and Ghahramani,
    2016)."""

    def __init__(
        self,
        cell,
        input_keep_prob=1.0,
        output_keep_prob=1.0,
        state_keep_prob=1.0,
        variational_recurrent: bool = False,
        input_size=None,
        dtype=None,
        seed=None,
        dropout_state_filter_visitor=None,
    ):
        super().__init__(cell)
        for value, what in (
            (input_keep_prob, "input_keep_prob"),
            (output_keep_prob, "output_keep_prob"),
            (state_keep_prob, "state_keep_prob"),
        ):
            if isinstance(value, (int, float)) and not 0.0 < value <= 1.0:
                raise ValueError(f"Parameter {what} must be between 0 and 1: {value}")
        if variational_recurrent and dtype is None:
            raise ValueError(
                "When variational_recurrent=True, dtype must be provided (the dtype of the masks)"
            )
        self._input_keep_prob = input_keep_prob
        self._output_keep_prob = output_keep_prob
        self._state_keep_prob = state_keep_prob
        self._variational_recurrent = variational_recurrent
        self._seed = seed
        self._state_filter = dropout_state_filter_visitor or _default_state_filter
        self._noise: dict = {}
        if variational_recurrent:
            # As TF1: one uniform draw per unit, shaped [1, size], made here (outside any loop
            # the cell will run in), so that every time step of a run uses the same masks.
            sizes = {"state": cell.state_size, "output": cell.output_size}
            if self._should_dropout(input_keep_prob):
                if input_size is None:
                    raise ValueError(
                        "When variational_recurrent=True and input_keep_prob < 1.0 or is "
                        "unknown, input_size must be provided"
                    )
                sizes["input"] = input_size
            for kind, size in sizes.items():
                self._noise[kind] = [
                    self._uniform([1] + _state_size_with_prefix(leaf, []), dtype, i)
                    for i, leaf in enumerate(nest.flatten(size))
                ]

    def _uniform(self, shape, dtype, index):
        seed = None if self._seed is None else self._seed + index
        return random_uniform(shape, dtype=dtype, seed=seed)

    @staticmethod
    def _should_dropout(keep_prob) -> bool:
        return not isinstance(keep_prob, (int, float)) or keep_prob < 1

    def _dropout(self, values, kind: str, keep_prob, visitor=lambda _: True):
        positions = {id(leaf): i for i, leaf in enumerate(nest.flatten(values))}

        def drop(value):
            index = positions[id(value)]
            if not self._variational_recurrent:
                seed = None if self._seed is None else self._seed + index
                return dropout(value, keep_prob=keep_prob, seed=seed)
            noise = self._noise[kind][index]
            mask = cast(greater_equal(keep_prob + noise, 1.0), noise.dtype)
            return value / keep_prob * mask

        return _filtered_map(drop, visitor, values)

    def call(self, inputs, state, scope=None):
        if self._should_dropout(self._input_keep_prob):
            inputs = self._dropout(inputs, "input", self._input_keep_prob)
        output, new_state = self._cell(inputs, state, scope=scope)
        if self._should_dropout(self._state_keep_prob):
            new_state = self._dropout(new_state, "state", self._state_keep_prob, self._state_filter)
        if self._should_dropout(self._output_keep_prob):
            output = self._dropout(output, "output", self._output_keep_prob)
        return output, new_state


class ResidualWrapper(_Wrapper):
    """Adds the cell's input to its output (``residual_fn(inputs, outputs)``, ``+`` by
    default)."""

    def __init__(self, cell, residual_fn=None):
        super().__init__(cell)
        self._residual_fn = residual_fn

    def call(self, inputs, state, scope=None):
        output, new_state = self._cell(inputs, state, scope=scope)

        def default_residual(inp, out):
            nest.assert_same_structure(inp, out)
            return nest.map_structure(lambda i, o: i + o, inp, out)

        return (self._residual_fn or default_residual)(inputs, output), new_state


class DeviceWrapper(_Wrapper):
    """Builds the cell's ops under ``device(device)`` (an annotation here: every op runs on the
    host)."""

    def __init__(self, cell, device: str):
        super().__init__(cell)
        self._device = device

    def call(self, inputs, state, scope=None):
        from ..framework.graph import device

        with device(self._device):
            return self._cell(inputs, state, scope=scope)
