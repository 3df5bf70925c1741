"""The errors of a run as a user reads them: a kernel's failure, a deadline, a fetch that was
never computed or an invalid program, each turned into TensorFlow's error class with the op, its
type, the user's file and line and, inside a loop, the frame and iteration."""

from __future__ import annotations

from typing import Optional

import numpy as np

import executor
from executor.program import NodeKind

from ..framework import errors
from ..framework.graph import (
    Operation,
)
from . import compiler
from .plan import _Plan


def _user_op(op: Operation) -> Operation:
    """The op of the user's graph that ``op`` (an op of the plan) stands for: every error a run
    raises names it, never an op of the graph passes' private copy (a pass records it on the
    ops it copies or creates, see `dataflow.passes`).  Run statistics name the op that ran."""
    return getattr(op, "_original", op)


def _describe_value(value) -> str:
    if isinstance(value, (np.ndarray, np.generic)):
        return f"{value.dtype}{tuple(value.shape)}"
    return type(value).__name__


_INVALID_ARGUMENT_CAUSES = (
    ValueError,
    TypeError,
    IndexError,
    KeyError,
    ZeroDivisionError,
    FloatingPointError,
    ArithmeticError,
)


def _where(frame: Optional[str], iteration: Optional[int]) -> str:
    """`` in loop 'loop', iteration 3 (frame instance loop[iter 0 of root])``, or nothing in
    the root frame."""
    if frame is None or frame == "root":
        return ""
    return f" in loop '{frame.split('[', 1)[0]}', iteration {iteration} (frame instance {frame})"


def _kernel_error(e: executor.KernelError) -> errors.OpError:
    op = _user_op(e.node.tag)
    cause = e.cause
    described, input_values = errors.describe_op(op), e.input_values
    member = getattr(cause, "compiled_step", None)
    if member is not None:  # a member of a compiled region (`dataflow.client.compiler`)
        op = _user_op(member[0])
        described, input_values = errors.describe_op(op), member[1]
    step = getattr(cause, "fused_step", None)
    if step is not None:  # a step of a fused kernel (`dataflow.passes.elementwise_fusion`)
        op, described, input_values = _failed_step(op, *step)
    where = described + _where(*compiler.failed_where(cause, e.frame, e.iteration))
    if isinstance(cause, errors.OpError):
        return type(cause)(None, op, f"{where}: {cause.message}")
    if isinstance(cause, executor.RunCancelledError):  # noticed by a compiled loop
        return errors.CancelledError(None, op, f"{where}: {cause}")
    inputs = ", ".join(_describe_value(v) for v in input_values) or "none"
    message = f"{where} failed: {type(cause).__name__}: {cause}\n  inputs: {inputs}"
    if isinstance(cause, _INVALID_ARGUMENT_CAUSES):
        return errors.InvalidArgumentError(None, op, message)
    return errors.UnknownError(None, op, message)


def _failed_step(fused: Operation, step: list, args: tuple) -> tuple:
    """(op, description, input values) of the failed step ``step`` of the fused kernel that
    stands for ``fused``: the user's op of the step when the graph still has it, else (a graph
    saved after fusion) the step's own record, said to be fused into ``fused``."""
    op_type, _, name, location = step
    user_op = fused.graph._ops_by_name.get(name)
    if user_op is not None and user_op.type == op_type and str(user_op.location) == location:
        return user_op, errors.describe_op(user_op), args
    described = (
        f"op '{name}' ({op_type}) created at {location}, fused into {errors.describe_op(fused)}"
    )
    return fused, described, args


def _deadline_error(e: executor.DeadlineExceededError, plan: _Plan, timeout_ms: int):
    """Names where the run was: the op that fired last, the ops still running (each with the
    loop and iteration it was in) and the lines that built those loops."""
    op = None if e.node_index is None else _user_op(plan.nodes[e.node_index].tag)
    lines = [
        f"The run did not finish within timeout_in_ms={timeout_ms}; it was stopped and no "
        "further op was scheduled. Variables keep their values from before the run."
    ]
    if op is not None:
        where = _where(e.frame, e.iteration)
        lines.append(f"  It was stopped after {errors.describe_op(op)}{where}.")
    elif e.frame is not None and e.frame != "root":
        lines.append(f"  It was stopped while starting iteration {e.iteration} of {e.frame}.")
    frames = [e.frame]
    for node_index, frame, iteration in e.running:
        node = plan.nodes[node_index]
        running = _user_op(node.tag)
        op = op or running
        loop = getattr(node.kernel, "compiled_loop", None)
        if loop is None:
            frames.append(frame)
            lines.append(
                f"  Still running: {errors.describe_op(running)}{_where(frame, iteration)}."
            )
            continue
        instance = f"{loop.frame_name}[iter {iteration} of {frame}]"
        frames.append(instance)
        lines.append(
            f"  Still running: loop '{loop.frame_name}' (frame instance {instance}), compiled "
            "into one function, which stops at its own next check of the deadline."
        )
    loops = {frame.split("[", 1)[0] for frame in frames if frame is not None and frame != "root"}
    for node in (getattr(plan, "reference", None) or plan).nodes:
        if node.kind == NodeKind.ENTER and node.frame_name in loops:
            loops.discard(node.frame_name)
            op = op or _user_op(node.tag)
            lines.append(f"  The loop '{node.frame_name}' was built at {node.tag.location}.")
    if e.running:
        lines.append(
            "  An op that is running cannot be interrupted: it goes on in the background until "
            "it returns, and its results are dropped."
        )
    return errors.DeadlineExceededError(None, op, "\n".join(lines))


def _op_of_node(nodes, indices):
    for i in indices:
        if 0 <= i < len(nodes) and nodes[i] is not None:
            return _user_op(nodes[i].tag)
    return None


def _explain_invalid_program(e, nodes) -> str:
    ops = [
        _user_op(nodes[i].tag)
        for i in e.nodes
        if 0 <= i < len(nodes) and isinstance(nodes[i].tag, Operation)
    ]
    details = [f"  {op.name} ({op.type}) created at {op.location}" for op in ops]
    return "The graph cannot run: " + str(e) + ("\n" + "\n".join(details) if details else "")


def _dead_fetch_error(e: executor.FetchNotLiveError, plan: _Plan) -> errors.OpError:
    """One line per fetch without a value: the op, TF1's own phrase for it (``Retval[i] does
    not have value``, ``i`` the fetch's position in the run's fetch list, which TF1 code and
    tests look for), why it has none, and where it was made."""
    lines = []
    first_op = None
    reference = plan.reference  # of a compiled twin: name the op as the interpreter does
    for position, node_index, state in e.missing:
        if reference is not None:
            node_index = reference.executable.program.fetches[position][0]
        op = _user_op((reference or plan).nodes[node_index].tag)
        first_op = first_op or op
        lines.append(
            f"  {op.name} (Retval[{position}] does not have value): "
            f"{_why_not_live(op, state)} (created at {op.location})"
        )
    return errors.InvalidArgumentError(
        None, first_op, "Fetched tensors hold no value at the end of the run:\n" + "\n".join(lines)
    )


def _why_not_live(op: Operation, state: str) -> str:
    context = getattr(op, "_control_flow_context", None)
    while context is not None:
        branch = getattr(context, "branch", None)
        if branch is not None:
            side = "true" if branch else "false"
            return f"it lies on the untaken ({side}) branch of cond '{context.name}'"
        context = getattr(context, "outer_context", None)
    if state == "dead":
        return "it depends on the untaken branch of a Switch"
    return "it was never produced"
