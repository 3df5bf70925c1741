"""Running a recurrent cell over sequences, as ``tf.compat.v1.nn``: `dynamic_rnn` and
`bidirectional_dynamic_rnn` (a `while_loop` over time with TensorArrays, the graph TF1 builds),
`static_rnn` and `static_bidirectional_rnn` (the cell unrolled once per step).

``sequence_length`` masking, as in TF1: past its length, an entry's output is zeros and its
state is copied through unchanged, so the final state of each entry is its state at its last
valid step.  `dynamic_rnn` runs only ``max(sequence_length)`` steps (at least one) and leaves
the outputs of the steps it did not run at zero.

Variables are made by the cell in the variable scope ``rnn`` (or ``scope``):
``rnn/basic_lstm_cell/kernel``; ops are named as TF1 names them (``rnn/while/...``,
``rnn/transpose``).
"""

from __future__ import annotations

from typing import Optional

from ..framework import dtypes as _dtypes
from ..framework import nest
from ..framework.graph import Tensor, control_dependencies, name_scope
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape, dimension_value
from ..ops.array_ops import concat, identity, shape, stack, transpose, zeros
from ..ops.math_ops import (
    cast,
    equal,
    logical_not,
    logical_or,
    maximum,
    minimum,
    reduce_all,
    reduce_max,
    where,
)
from ..ops.misc_ops import Assert
from ..ops.reverse_ops import reverse, reverse_sequence
from ..ops.tensor_array_ops import TensorArray
from ..ops.variable_scope import variable_scope
from .rnn_cell import RNNCell, _state_size_with_prefix

__all__ = [
    "bidirectional_dynamic_rnn",
    "dynamic_rnn",
    "raw_rnn",
    "static_bidirectional_rnn",
    "static_rnn",
    "static_state_saving_rnn",
]


def _check_cell(cell, what: str = "cell") -> None:
    if not isinstance(cell, RNNCell) and not (
        hasattr(cell, "output_size") and hasattr(cell, "state_size") and callable(cell)
    ):
        raise TypeError(f"{what} must be an instance of RNNCell, saw: {cell!r}")


def _transpose_batch_time(x: Tensor) -> Tensor:
    """Swaps the first two dimensions (batch-major <-> time-major)."""
    rank = x.shape.ndims
    if rank is not None and rank < 2:
        return x
    if rank is None:
        raise ValueError(f"Expected input tensor {x.name} to have a known rank")
    result = transpose(x, [1, 0] + list(range(2, rank)))
    dims = x.shape.as_list()
    result.set_shape([dims[1], dims[0]] + dims[2:])
    return result


def _batch_size(flat_input: list) -> object:
    """The batch size (dimension 1 of time-major inputs): static when known, else a tensor."""
    for t in flat_input:
        if t.shape.ndims is None:
            continue
        if t.shape.ndims < 2:
            raise ValueError(f"Expected input tensor {t.name} to have rank at least 2")
        if dimension_value(t.shape[1]) is not None:
            return t.shape[1]
    return shape(flat_input[0])[1]


def _initial_state(cell, initial_state, batch_size, dtype):
    if initial_state is not None:
        return initial_state
    if not dtype:
        raise ValueError("If there is no initial_state, you must give a dtype.")
    return cell.get_initial_state(inputs=None, batch_size=batch_size, dtype=dtype)


def _state_dtype(dtype, state):
    if dtype is not None:
        return _dtypes.as_dtype(dtype)
    dtypes = {t.dtype for t in nest.flatten(state)}
    if len(dtypes) != 1:
        raise ValueError(f"State has tensors of different dtypes: {sorted(d.name for d in dtypes)}")
    return dtypes.pop()


def _checked_sequence_length(sequence_length):
    if sequence_length is None:
        return None
    sequence_length = convert_to_tensor(sequence_length)
    if sequence_length.shape.ndims not in (None, 1):
        raise ValueError(
            "sequence_length must be a vector of length batch_size, but saw shape: "
            f"{sequence_length.shape}"
        )
    if sequence_length.dtype is not _dtypes.int32:
        sequence_length = cast(sequence_length, _dtypes.int32)
    return identity(sequence_length, name="sequence_length")


def _copy_through_past_length(time, sequence_length, zero_output, state, output, new_state):
    """Past each entry's length: zeros for its output, its old state for its new state
    (TF1's ``_rnn_step`` without its conditionals; the results are the same)."""
    copy = time >= sequence_length

    def pick(old, new):
        if isinstance(new, TensorArray) or new.shape.ndims == 0:
            return new
        chosen = where(copy, old, new)
        chosen.set_shape(old.shape)
        return chosen

    nest.assert_same_structure(zero_output, output)
    nest.assert_same_structure(state, new_state)
    output = nest.map_structure(pick, zero_output, output)
    new_state = nest.map_structure(pick, state, new_state)
    return output, new_state


def _zeros_for(size, batch_size, dtype, static_batch):
    dims = _state_size_with_prefix(size, [])
    if isinstance(batch_size, int):
        value = zeros([batch_size] + dims, dtype)
    else:
        value = zeros(stack([batch_size] + dims), dtype)
    value.set_shape([static_batch] + dims)
    return value


def dynamic_rnn(
    cell,
    inputs,
    sequence_length=None,
    initial_state=None,
    dtype=None,
    parallel_iterations: Optional[int] = None,
    swap_memory: bool = False,
    time_major: bool = False,
    scope=None,
):
    """Runs ``cell`` over the time steps of ``inputs`` in a `while_loop`
    (``tf.compat.v1.nn.dynamic_rnn``); returns ``(outputs, final_state)``.

    ``inputs`` is ``[batch, time, ...]`` (``[time, batch, ...]`` with ``time_major``), or a
    nested structure of such tensors; the depth of each must be known.  Without
    ``initial_state`` the state starts at zeros of ``dtype``.  ``outputs`` has the layout of
    the inputs and the structure of ``cell.output_size``.  ``sequence_length`` (int32 vector of
    ``batch``) masks as the module docstring says.
    """
    __tracebackhide__ = True
    _check_cell(cell)
    with variable_scope(scope or "rnn"):
        flat_input = [convert_to_tensor(t) for t in nest.flatten(inputs)]
        if not time_major:
            flat_input = [_transpose_batch_time(t) for t in flat_input]
        parallel_iterations = parallel_iterations or 32
        sequence_length = _checked_sequence_length(sequence_length)
        batch_size = _batch_size(flat_input)
        state = _initial_state(cell, initial_state, batch_size, dtype)
        if sequence_length is not None:
            expected = stack([batch_size])
            check = Assert(
                reduce_all(equal(shape(sequence_length), expected)),
                [
                    f"Expected shape for Tensor {sequence_length.name} is ",
                    expected,
                    " but saw shape: ",
                    shape(sequence_length),
                ],
            )
            with control_dependencies([check]):
                sequence_length = identity(sequence_length, name="CheckSeqLen")
        inputs = nest.pack_sequence_as(inputs, flat_input)
        outputs, final_state = _dynamic_rnn_loop(
            cell, inputs, state, parallel_iterations, swap_memory, sequence_length, dtype
        )
        if not time_major:
            outputs = nest.map_structure(_transpose_batch_time, outputs)
        return outputs, final_state


def _dynamic_rnn_loop(
    cell, inputs, state, parallel_iterations, swap_memory, sequence_length, dtype
):
    from primitives.control_flow_ops import while_loop

    flat_input = nest.flatten(inputs)
    flat_output_size = nest.flatten(cell.output_size)
    time_steps = shape(flat_input[0])[0]
    batch_size = _batch_size(flat_input)
    shapes = []
    for t in flat_input:
        got = t.shape
        if got.ndims is None or got.ndims < 3:
            raise ValueError(
                f"Input '{t.name}' must have rank at least 3 (time, batch, depth), got shape {got}"
            )
        if not got[2:].is_fully_defined():
            raise ValueError(
                "Input size (depth of inputs) must be accessible via shape inference, but saw "
                "value None."
            )
        shapes.append(got)
    const_time_steps, const_batch_size = shapes[0].as_list()[:2]
    for got in shapes[1:]:
        if got[0] != const_time_steps:
            raise ValueError(
                "Time steps is not the same for all the elements in the input in a batch."
            )
        if got[1] != const_batch_size:
            raise ValueError("Batch_size is not the same for all the elements in the input.")
    if const_time_steps is not None:
        time_steps = const_time_steps
    state_dtype = _state_dtype(dtype, state)
    zero_output = nest.pack_sequence_as(
        cell.output_size,
        [_zeros_for(size, batch_size, state_dtype, const_batch_size) for size in flat_output_size],
    )
    if sequence_length is not None:
        max_sequence_length = reduce_max(sequence_length)
    else:
        max_sequence_length = time_steps
    time = convert_to_tensor(0, dtype=_dtypes.int32, name="time")
    with name_scope("dynamic_rnn") as base_name:
        pass
    output_ta = tuple(
        TensorArray(
            state_dtype,
            size=time_steps,
            element_shape=TensorShape([const_batch_size]).concatenate(
                _state_size_with_prefix(size, [])
            ),
            tensor_array_name=base_name + f"output_{i}",
        )
        for i, size in enumerate(flat_output_size)
    )
    input_ta = tuple(
        TensorArray(
            t.dtype,
            size=time_steps,
            element_shape=t.shape[1:],
            tensor_array_name=base_name + f"input_{i}",
        ).unstack(t)
        for i, t in enumerate(flat_input)
    )

    def time_step(time, output_ta_t, state):
        input_t = [ta.read(time) for ta in input_ta]
        for value, got in zip(input_t, shapes):
            value.set_shape(got[1:])
        input_t = nest.pack_sequence_as(inputs, input_t)
        output, new_state = cell(input_t, state)
        if sequence_length is not None:
            output, new_state = _copy_through_past_length(
                time, sequence_length, zero_output, state, output, new_state
            )
        flat_output = nest.flatten(output)
        output_ta_t = tuple(ta.write(time, out) for ta, out in zip(output_ta_t, flat_output))
        return time + 1, output_ta_t, new_state

    # At least one step, so that the arrays learn the outputs' shapes.
    loop_bound = minimum(time_steps, maximum(1, max_sequence_length))
    _, output_final_ta, final_state = while_loop(
        lambda time, *_: time < loop_bound,
        time_step,
        (time, output_ta, state),
        parallel_iterations=parallel_iterations,
        maximum_iterations=time_steps,
        swap_memory=swap_memory,
    )
    final_outputs = []
    for ta, size in zip(output_final_ta, flat_output_size):
        stacked = ta.stack()
        stacked.set_shape([const_time_steps, const_batch_size] + _state_size_with_prefix(size, []))
        final_outputs.append(stacked)
    return nest.pack_sequence_as(cell.output_size, final_outputs), final_state


def _reverse(value, sequence_length, seq_axis: int, batch_axis: int):
    if sequence_length is not None:
        return reverse_sequence(value, sequence_length, seq_axis=seq_axis, batch_axis=batch_axis)
    return reverse(value, axis=[seq_axis])


def bidirectional_dynamic_rnn(
    cell_fw,
    cell_bw,
    inputs,
    sequence_length=None,
    initial_state_fw=None,
    initial_state_bw=None,
    dtype=None,
    parallel_iterations: Optional[int] = None,
    swap_memory: bool = False,
    time_major: bool = False,
    scope=None,
):
    """A forward `dynamic_rnn` (scope ``fw``) and one over the time-reversed inputs (scope
    ``bw``, each entry reversed within its ``sequence_length``), in the variable scope
    ``bidirectional_rnn``; returns ``((output_fw, output_bw), (state_fw, state_bw))``, with
    ``output_bw`` reversed back into input order."""
    __tracebackhide__ = True
    _check_cell(cell_fw, "cell_fw")
    _check_cell(cell_bw, "cell_bw")
    time_axis, batch_axis = (0, 1) if time_major else (1, 0)
    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, state_fw = dynamic_rnn(
                cell_fw,
                inputs,
                sequence_length=sequence_length,
                initial_state=initial_state_fw,
                dtype=dtype,
                parallel_iterations=parallel_iterations,
                swap_memory=swap_memory,
                time_major=time_major,
                scope=fw_scope,
            )
        with variable_scope("bw") as bw_scope:
            reversed_inputs = nest.map_structure(
                lambda t: _reverse(t, sequence_length, time_axis, batch_axis), inputs
            )
            reversed_output, state_bw = dynamic_rnn(
                cell_bw,
                reversed_inputs,
                sequence_length=sequence_length,
                initial_state=initial_state_bw,
                dtype=dtype,
                parallel_iterations=parallel_iterations,
                swap_memory=swap_memory,
                time_major=time_major,
                scope=bw_scope,
            )
    output_bw = nest.map_structure(
        lambda t: _reverse(t, sequence_length, time_axis, batch_axis), reversed_output
    )
    return (output_fw, output_bw), (state_fw, state_bw)


def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None, scope=None):
    """Runs ``cell`` over the list ``inputs`` (one ``[batch, depth]`` tensor, or nested
    structure, per step), unrolled (``tf.compat.v1.nn.static_rnn``); returns ``(outputs,
    final_state)`` with one output per step.

    With ``sequence_length``, TF1 wraps each step in conds that skip the cell once every entry
    is past its length; here the cell runs at every step and the masking selects, which gives
    the same values (and gradients) with fewer ops."""
    __tracebackhide__ = True
    _check_cell(cell)
    if not nest.is_nested(inputs):
        raise TypeError("inputs must be a sequence")
    if not inputs:
        raise ValueError("inputs must not be empty")
    outputs = []
    with variable_scope(scope or "rnn") as varscope:
        first = nest.flatten(inputs[0])[0]
        first = convert_to_tensor(first)
        for leaf in nest.flatten(inputs[0]):
            leaf_shape = convert_to_tensor(leaf).shape
            if leaf_shape.ndims is not None and leaf_shape.ndims >= 2:
                for i, size in enumerate(leaf_shape[1:].as_list()):
                    if size is None:
                        raise ValueError(
                            f"Input size (dimension {i} of inputs) must be accessible via shape "
                            "inference, but saw value None."
                        )
        static_batch = first.shape[0] if first.shape.ndims else None
        batch_size = static_batch if static_batch is not None else shape(first)[0]
        state = _initial_state(cell, initial_state, batch_size, dtype)
        sequence_length = _checked_sequence_length(sequence_length)
        if sequence_length is not None:
            state_dtype = _state_dtype(dtype, state)
            zero_output = nest.pack_sequence_as(
                cell.output_size,
                [
                    _zeros_for(size, batch_size, state_dtype, static_batch)
                    for size in nest.flatten(cell.output_size)
                ],
            )
        for time, input_ in enumerate(inputs):
            if time > 0:
                varscope.reuse_variables()
            output, new_state = cell(input_, state)
            if sequence_length is not None:
                output, new_state = _copy_through_past_length(
                    time, sequence_length, zero_output, state, output, new_state
                )
            state = new_state
            outputs.append(output)
        return outputs, state


def static_bidirectional_rnn(
    cell_fw,
    cell_bw,
    inputs,
    initial_state_fw=None,
    initial_state_bw=None,
    dtype=None,
    sequence_length=None,
    scope=None,
):
    """`static_rnn` forward (scope ``fw``) and over the reversed inputs (scope ``bw``), in the
    variable scope ``bidirectional_rnn``; returns ``(outputs, state_fw, state_bw)`` where each
    output is the forward and backward outputs of that step concatenated."""
    __tracebackhide__ = True
    _check_cell(cell_fw, "cell_fw")
    _check_cell(cell_bw, "cell_bw")
    if not nest.is_nested(inputs) or not inputs:
        raise TypeError("inputs must be a non-empty sequence")
    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, state_fw = static_rnn(
                cell_fw, inputs, initial_state_fw, dtype, sequence_length, scope=fw_scope
            )
        with variable_scope("bw") as bw_scope:
            reversed_inputs = _reverse_steps(inputs, sequence_length)
            tmp, state_bw = static_rnn(
                cell_bw, reversed_inputs, initial_state_bw, dtype, sequence_length, scope=bw_scope
            )
    output_bw = _reverse_steps(tmp, sequence_length)
    flat_fw = [nest.flatten(o) for o in output_fw]
    flat_bw = [nest.flatten(o) for o in output_bw]
    outputs = [
        nest.pack_sequence_as(output_fw[0], [concat([f, b], 1) for f, b in zip(fw, bw)])
        for fw, bw in zip(flat_fw, flat_bw)
    ]
    return outputs, state_fw, state_bw


def _reverse_steps(steps: list, sequence_length) -> list:
    """The list of steps reversed, each entry within its own length (TF1's ``_reverse_seq``)."""
    if sequence_length is None:
        return list(reversed(steps))
    flat_steps = [nest.flatten(step) for step in steps]
    results = [[] for _ in steps]
    for leaf in range(len(flat_steps[0])):
        series = stack([step[leaf] for step in flat_steps])
        flipped = reverse_sequence(series, sequence_length, seq_axis=0, batch_axis=1)
        for t in range(len(steps)):
            value = flipped[t]
            value.set_shape(flat_steps[t][leaf].shape)
            results[t].append(value)
    return [nest.pack_sequence_as(step, flat) for step, flat in zip(steps, results)]


# -- raw_rnn and the state-saving static rnn -----------------------------------------------------
def raw_rnn(cell, loop_fn, parallel_iterations=None, swap_memory=False, scope=None):
    """Runs ``cell`` in a `while_loop` whose every step ``loop_fn`` drives, as TF1's
    ``raw_rnn``: ``loop_fn(time, cell_output, cell_state, loop_state)`` returns
    ``(finished, next_input, next_cell_state, emit_output, next_loop_state)``; it is called
    once before the loop with ``cell_output``, ``cell_state`` and ``loop_state`` None (its
    ``next_cell_state`` is then the initial state and its ``emit_output``, if not None, the
    structure of what is emitted, one entry's shape without the batch), and after each step.
    Entries ``finished`` keep their state and emit zeros; the loop stops when every entry is
    finished.  Returns ``(emit_ta, final_state, final_loop_state)``, the TensorArrays of what
    was emitted at each step."""
    from primitives.control_flow_ops import while_loop

    __tracebackhide__ = True
    _check_cell(cell)
    if not callable(loop_fn):
        raise TypeError("loop_fn must be a callable")
    parallel_iterations = parallel_iterations or 32
    with variable_scope(scope or "rnn"):
        time = convert_to_tensor(0, dtype=_dtypes.int32)
        finished, next_input, initial_state, emit_structure, init_loop_state = loop_fn(
            time=time, cell_output=None, cell_state=None, loop_state=None
        )
        flat_input = [convert_to_tensor(t) for t in nest.flatten(next_input)]
        next_input = nest.pack_sequence_as(next_input, flat_input)
        loop_state = (
            init_loop_state
            if init_loop_state is not None
            else convert_to_tensor(0, dtype=_dtypes.int32)
        )
        static_batch = None
        for t in flat_input:
            if t.shape.ndims:
                dim = dimension_value(t.shape[0])
                if static_batch is not None and dim is not None and dim != static_batch:
                    raise ValueError(
                        f"all inputs must have one batch size, got {static_batch} and {dim}"
                    )
                static_batch = dim if dim is not None else static_batch
        batch_size = static_batch if static_batch is not None else shape(flat_input[0])[0]
        nest.assert_same_structure(initial_state, cell.state_size)
        flat_state = [convert_to_tensor(t) for t in nest.flatten(initial_state)]
        state = nest.pack_sequence_as(initial_state, flat_state)
        if emit_structure is not None:
            flat_emit = [convert_to_tensor(t) for t in nest.flatten(emit_structure)]
            flat_emit_size = [
                e.shape.as_list() if e.shape.is_fully_defined() else shape(e) for e in flat_emit
            ]
            flat_emit_dtypes = [e.dtype for e in flat_emit]
        else:
            emit_structure = cell.output_size
            flat_emit_size = [_state_size_with_prefix(s, []) for s in nest.flatten(emit_structure)]
            flat_emit_dtypes = [flat_state[0].dtype] * len(flat_emit_size)

        def element_shape(size):
            dims = size if isinstance(size, list) else None
            return TensorShape([static_batch]).concatenate(TensorShape(dims))

        flat_emit_ta = [
            TensorArray(
                dtype,
                size=0,
                dynamic_size=True,
                element_shape=element_shape(size),
                tensor_array_name=f"rnn_output_{i}",
            )  # fmt: skip
            for i, (dtype, size) in enumerate(zip(flat_emit_dtypes, flat_emit_size))
        ]
        emit_ta = nest.pack_sequence_as(emit_structure, flat_emit_ta)

        def zeros_of(size, dtype):
            if isinstance(size, list):
                if isinstance(batch_size, int):
                    return zeros([batch_size] + size, dtype)
                return zeros(stack([batch_size] + size), dtype)
            batch = stack([convert_to_tensor(batch_size, _dtypes.int32)])
            return zeros(concat([batch, cast(size, _dtypes.int32)], 0), dtype)

        zero_emit = nest.pack_sequence_as(
            emit_structure, [zeros_of(s, d) for s, d in zip(flat_emit_size, flat_emit_dtypes)]
        )

        def condition(unused_time, elements_finished, *_):
            return logical_not(reduce_all(elements_finished))

        def body(time, elements_finished, current_input, emit_ta, state, loop_state):
            next_output, cell_state = cell(current_input, state)
            nest.assert_same_structure(state, cell_state)
            nest.assert_same_structure(cell.output_size, next_output)
            next_time = time + 1
            next_finished, next_input, next_state, emit_output, next_loop_state = loop_fn(
                next_time, next_output, cell_state, loop_state
            )
            nest.assert_same_structure(state, next_state)
            nest.assert_same_structure(current_input, next_input)
            nest.assert_same_structure(emit_ta, emit_output)
            loop_state = loop_state if next_loop_state is None else next_loop_state

            def copy_some_through(current, candidate):
                def copy(cur, cand):
                    if isinstance(cur, TensorArray) or cur.shape.ndims == 0:
                        return cand
                    return where(elements_finished, cur, cand)

                return nest.map_structure(copy, current, candidate)

            emit_output = copy_some_through(zero_emit, emit_output)
            next_state = copy_some_through(state, next_state)
            emit_ta = nest.map_structure(lambda ta, e: ta.write(time, e), emit_ta, emit_output)
            elements_finished = logical_or(elements_finished, next_finished)
            return next_time, elements_finished, next_input, emit_ta, next_state, loop_state

        returned = while_loop(
            condition,
            body,
            [time, finished, next_input, emit_ta, state, loop_state],
            parallel_iterations=parallel_iterations,
            swap_memory=swap_memory,
        )
        emit_ta, final_state, final_loop_state = returned[-3:]
        if init_loop_state is None:
            final_loop_state = None
        return emit_ta, final_state, final_loop_state


def static_state_saving_rnn(cell, inputs, state_saver, state_name, sequence_length=None,
                            scope=None):  # fmt: skip
    """`static_rnn` whose initial state is read from ``state_saver`` (``state_saver.state(
    name)``) and whose final state is saved back (``state_saver.save_state(name, value)``)
    before the last output and the final state are given: ``state_name`` names the state, or
    each of its parts when ``cell.state_size`` is a tuple.  Returns ``(outputs, state)``."""
    state_size = cell.state_size
    state_is_tuple = nest.is_nested(state_size)
    if state_is_tuple != nest.is_nested(state_name):
        raise ValueError(
            f"state_name should be the same type as cell.state_size. state_name: "
            f"{state_name!s}, cell.state_size: {state_size!s}"
        )
    if state_is_tuple:
        state_name_flat = nest.flatten(state_name)
        state_size_flat = nest.flatten(state_size)
        if len(state_name_flat) != len(state_size_flat):
            raise ValueError(
                f"#elems(state_name) != #elems(state_size): {len(state_name_flat)} vs. "
                f"{len(state_size_flat)}"
            )
        initial_state = nest.pack_sequence_as(
            state_size, [state_saver.state(name) for name in state_name_flat]
        )
    else:
        initial_state = state_saver.state(state_name)
    outputs, state = static_rnn(
        cell, inputs, initial_state=initial_state, sequence_length=sequence_length, scope=scope
    )
    if state_is_tuple:
        flat_last_state = nest.flatten(state)
        save_state = [
            state_saver.save_state(name, substate)
            for name, substate in zip(state_name_flat, flat_last_state)
        ]
    else:
        save_state = [state_saver.save_state(state_name, state)]
    with control_dependencies(save_state):
        last_output = outputs[-1]
        flat_last_output = [identity(o) for o in nest.flatten(last_output)]
        outputs[-1] = nest.pack_sequence_as(last_output, flat_last_output)
        if state_is_tuple:
            state = nest.pack_sequence_as(state, [identity(s) for s in flat_last_state])
        else:
            state = identity(state)
    return outputs, state
