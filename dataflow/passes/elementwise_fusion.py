"""Elementwise fusion: a chain of elementwise ops becomes one ``FusedElementwise`` op.

Without fusion, ``tanh(x * 1.5 + 0.5)`` on a large ``x`` runs three kernels and allocates three
arrays of ``x``'s size, each written once and read once.  A static graph shows the whole chain
before it runs, so it can be compiled into one kernel that allocates one buffer and computes
every step into it with numpy's ``out=``: the memory traffic and the page faults of the
intermediate arrays disappear, and the executor schedules one node instead of three.

A chain is a sequence of ops, each an elementwise numpy ufunc (``OpDef.extra["ufunc"]``) with
inputs and output of one dtype, where each op's output is used exactly once, by the next op of
the chain (not fetched, no other consumer, no control consumer), in the same control-flow
context.  The other operands of each step become inputs of the fused op.  The fused op takes
the name, location and context of the chain's last op and the control inputs of all of them.

The ``FusedElementwise`` kernel (its attributes are plain data, so an optimized graph can be
saved): ``steps`` lists ``[op type, operand positions, op name, "file:line"]``, an operand
being an input index or -1 for the previous step's value.  The first step that returns an
array allocates the buffer (or reuses input ``inplace_input``, see ``inplace.py``); every later
step writes into it when its result has the buffer's shape and dtype, and allocates otherwise
(a broadcast that grows the value), so results are identical to the unfused ops', bit for bit.
A step that fails raises its error marked with the step (``error.fused_step``: the step's
record and its operand values), so that a Session's error names the user's op that failed,
its line and its inputs, exactly as without fusion.  If any step is
a "quiet" op (division, logarithms, ... which TensorFlow computes without warnings), the whole
kernel runs under ``np.errstate(all="ignore")``: other steps then do not warn either.
A large chain runs in cache-sized blocks on the Session's intra-op threads
(``attrs["intra_op_threads"]``, given at lowering), with the same values, dtypes, warnings and
errors (`dataflow.passes.blocked_elementwise`).

``df.gradients`` through a ``FusedElementwise`` (an optimized graph saved and loaded, then
differentiated) rebuilds its steps as the ops they were and applies each one's own gradient,
so the gradient is the one of the unfused chain.
"""

from __future__ import annotations

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.gradient_registry import RegisterGradient
from ..framework.graph import Operation, Tensor
from ..framework.graph_walk import topological_order
from ..framework.intra_op import default_threads
from ..framework.op_registry import apply_op, define_op, get_op_def
from ..framework.tensor_shape import TensorShape
from .blocked_elementwise import BlockedChain
from .graph_item import GraphItem, is_pure
from .registry import GraphPass, PassReport, register_pass


def _infer_fused(op):
    steps = op.attrs["steps"]
    if not steps or not op.inputs:
        raise ValueError("a fused op needs at least one step and one input")
    from ..ops.math_ops import broadcast_shape

    dtype = op.inputs[0].dtype
    shape = None
    for step in steps:
        step_type, operands = step[0], step[1]
        extra = get_op_def(step_type).extra
        if "ufunc" not in extra:
            raise ValueError(f"step {step_type!r} is not an elementwise ufunc op")
        step_shape = None
        for k in operands:
            if k < 0:
                if shape is None:
                    raise ValueError("the first step cannot use a previous value")
                operand = shape
            else:
                if k >= len(op.inputs) or op.inputs[k].dtype is not dtype:
                    raise ValueError(f"step {step_type!r} has a bad operand {k}")
                operand = op.inputs[k].shape
            step_shape = operand if step_shape is None else broadcast_shape(step_shape, operand)
        shape = step_shape
    return [(dtype, shape if shape is not None else TensorShape(None))]


def _mark_failed_step(error: Exception, step, args) -> None:
    """Records on ``error`` which step failed and on what: a Session's error then names the
    user's op of that step, its line and its input values, as it would without fusion."""
    try:
        error.fused_step = (step, args)
    except Exception:  # an exception that takes no attributes: it says what it can
        pass


def _fused_kernel(attrs):
    steps = attrs["steps"]
    compiled = [(get_op_def(s[0]).extra["ufunc"], tuple(s[1])) for s in steps]
    quiet = any(get_op_def(s[0]).extra.get("quiet") for s in steps)
    inplace = attrs.get("inplace_input", -1)
    dtype = _dtypes.numpy_dtype(attrs["T"])

    def fused(*inputs):
        buffer = None
        if inplace >= 0:
            x = inputs[inplace]
            if type(x) is np.ndarray and x.ndim and x.flags.writeable and x.dtype == dtype:
                buffer = x
        value = None
        for position, (ufunc, operands) in enumerate(compiled):
            if len(operands) == 2:
                first, second = operands
                args = (
                    value if first < 0 else inputs[first],
                    value if second < 0 else inputs[second],
                )
            else:
                args = (value if operands[0] < 0 else inputs[operands[0]],)
            try:
                if buffer is not None:
                    try:
                        value = ufunc(*args, out=buffer)
                        continue
                    except (ValueError, TypeError):
                        pass  # the result does not fit the buffer: allocate
                value = ufunc(*args)
            except Exception as e:
                _mark_failed_step(e, steps[position], args)
                raise
            if type(value) is np.ndarray and value.ndim:
                buffer = value
        return value

    one_thread = fused
    if quiet:

        def one_thread(*inputs):
            with np.errstate(all="ignore"):
                return fused(*inputs)

    threads = attrs.get("intra_op_threads") or default_threads()
    blocked = BlockedChain(compiled, steps, quiet, inplace, dtype, threads, replay=fused)
    if not blocked.usable:
        return one_thread

    def many_threads(*inputs):
        value = blocked.run(inputs)
        return one_thread(*inputs) if value is None else value

    return many_threads


# "fresh_output": the kernel returns an array that nothing else holds (see inplace.py);
# "intra_op_threads": the Session gives the kernel its intra-op budget (blocked_elementwise.py).
define_op(
    "FusedElementwise",
    _infer_fused,
    _fused_kernel,
    extra={"fresh_output": True, "intra_op_threads": True},
)


def _sum(grads: list):
    if not grads:
        return None
    if len(grads) == 1:
        return grads[0]
    from ..ops.math_ops import add_n

    return add_n(grads)


@RegisterGradient("FusedElementwise")
def _fused_grad(op: Operation, grad):
    """The gradient of a fused chain (an optimized graph, saved and loaded, differentiated
    again): the steps are rebuilt as the ops they were, on the fused op's inputs, and each
    step's own gradient is applied, last step first.  Every step is an elementwise op fully
    described by its type and operands, so the rebuilt ops compute the fused values."""
    inputs = list(op.inputs)
    steps = op.attrs["steps"]
    if grad is None or not (op.outputs[0].dtype.is_floating or op.outputs[0].dtype.is_complex):
        return [None] * len(inputs)
    rebuilt = []
    value = None
    for step in steps:
        operands = [value if k < 0 else inputs[k] for k in step[1]]
        step_op = apply_op(step[0], operands, name=step[2].rsplit("/", 1)[-1])
        value = step_op.outputs[0]
        rebuilt.append(step_op)
    into_inputs: list[list] = [[] for _ in inputs]
    into_value = [grad]
    for step, step_op in zip(reversed(steps), reversed(rebuilt)):
        step_grad = _sum(into_value)
        if step_grad is None:
            break
        into_value = []
        gradient = step_op.op_def.gradient
        if gradient is None:
            raise LookupError(
                f"No gradient defined for step {step[0]} '{step[2]}' (created at {step[3]}) of "
                f"fused op '{op.name}' (created at {op.location})."
            )
        result = gradient(step_op, step_grad)
        if isinstance(result, Tensor) or result is None:
            result = [result]
        for k, g in zip(step[1], result):
            if g is not None:
                (into_value if k < 0 else into_inputs[k]).append(g)
    return [_sum(grads) for grads in into_inputs]


def fusable(item: GraphItem, op: Operation) -> bool:
    """An elementwise ufunc op with inputs and output of one dtype (fusion can chain it), of a
    dtype that runs the ufunc: not one with a kernel of its own (``extra["dtype_kernels"]``:
    strings' ``Add``, complex products and quotients, which round as TensorFlow's)."""
    extra = op._op_def.extra
    if not is_pure(op) or "ufunc" not in extra or len(op._outputs) != 1:
        return False
    if item.is_fetched(op) or not op._inputs:
        return False
    dtype = op._outputs[0].dtype
    if dtype in extra.get("dtype_kernels", ()):
        return False
    return all(t.dtype is dtype for t in op._inputs)


def step_record(op: Operation, operands: list[int]) -> list:
    """``[type, operands, name, "file:line"]``, naming the op of the user's graph that ``op``
    stands for (a hoisted op of the passes' copy is renamed; the user's is not)."""
    user_op = getattr(op, "_original", op)
    return [op.type, operands, user_op.name, str(op.location)]


class ElementwiseFusion(GraphPass):
    name = "elementwise_fusion"
    verb = "fused"

    def rewrite(self, item: GraphItem, report: PassReport) -> None:
        in_chain: set[Operation] = set()
        chains = []
        for tail in reversed(topological_order(item.graph)):
            if tail in in_chain or not fusable(item, tail):
                continue
            chain = [tail]
            current = tail
            while True:
                previous = self._link(item, current, in_chain)
                if previous is None:
                    break
                chain.append(previous)
                in_chain.add(previous)
                current = previous
            in_chain.add(tail)
            if len(chain) > 1:
                chains.append(chain[::-1])
        for chain in chains:
            fuse_chain(item, chain)
            report.count("ops fused", len(chain))
            report.count("fused kernels")

    @staticmethod
    def _link(item: GraphItem, op: Operation, in_chain: set):
        """The op before ``op`` in its chain, or None."""
        for t in op._inputs:
            producer = t.op
            if (
                producer not in in_chain
                and fusable(item, producer)
                and item.use_count(t) == 1
                and not item.control_consumers(producer)
                and producer._control_flow_context is op._control_flow_context
            ):
                return producer
        return None


def fuse_chain(item: GraphItem, chain: list[Operation], inplace_input: int = -1) -> Operation:
    """Replaces ``chain`` (ops in order, each feeding the next) by one ``FusedElementwise``."""
    members = set(chain)
    input_index: dict[Tensor, int] = {}  # the fused op's inputs, in order of first use
    steps = []
    previous = None
    for op in chain:
        operands = []
        for t in op._inputs:
            if previous is not None and t is previous._outputs[0]:
                operands.append(-1)
            else:
                operands.append(input_index.setdefault(t, len(input_index)))
        steps.append(step_record(op, operands))
        previous = op
    inputs = list(input_index)
    controls = list(
        dict.fromkeys(c for op in chain for c in op._control_inputs if c not in members)
    )
    tail = chain[-1]
    out = tail._outputs[0]
    name = item.free_name(tail)
    fused = item.add_op(
        "FusedElementwise",
        inputs,
        {"steps": steps, "inplace_input": inplace_input, "T": out.dtype},
        name,
        tail,
        controls,
        outputs=[(out.dtype, out.shape)],
    )
    item.replace_op(tail, fused._outputs, [fused])
    for op in reversed(chain[:-1]):
        item.replace_op(op, [fused._outputs[0]], [fused])
    return fused


register_pass(ElementwiseFusion())
