"""Lowering a graph to the executor's program: the passes, one node per op with its kernel
(wrapped to check numerics or read references where asked), control edges, and the compiled
twin of a plan; and running a lowered plan inside another run (``run_inside``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Optional

import numpy as np

import executor
from executor.program import Node, NodeKind, Program

from ..framework import errors
from ..framework.graph import Graph, Operation, Tensor, _user_location
from ..framework.graph_walk import control_sources, gc_paused, needed_ops
from ..framework.op_registry import ref_inputs
from ..passes import GraphItem, PassManager
from ..passes.inplace import is_fresh_value
from ..passes.lower_functional_ops import LOWER_FUNCTIONAL_OPS
from . import compiler
from . import debug_watcher as _debug_watcher
from .plan import (
    _Plan,
)
from .run_context import (
    RunContext,
)
from .run_errors import (
    _dead_fetch_error,
    _explain_invalid_program,
    _kernel_error,
    _op_of_node,
    _user_op,
)

# Ops whose outputs are all known to be this small run inline (a thread hop costs more).
_INLINE_MAX_ELEMENTS = 4096


def lower_graph(
    graph: Graph,
    flat_fetches,
    feed_tensors,
    pipeline: tuple,
    intra_op_threads: Optional[int] = None,
) -> _Plan:
    """The plan that runs ``flat_fetches`` of ``graph`` fed ``feed_tensors``: the passes of
    ``pipeline`` run on a copy of the ops needed (the user's graph is never changed), then
    every op is lowered to an executor node and the program is analysed; a kernel may use
    ``intra_op_threads`` threads (None: one per core).  A pipeline that only
    lowers functional ops costs no copy when no op needed is one."""
    if pipeline == (LOWER_FUNCTIONAL_OPS,) and not any(
        op._op_def.extra.get("lowering") for op in needed_ops(flat_fetches, feed_tensors)
    ):
        pipeline = ()
    if pipeline and flat_fetches:
        item = GraphItem.from_graph(graph, flat_fetches, feed_tensors)
        item, reports = PassManager(pipeline).run(item, copy=False)
        flat_fetches, feed_tensors = item.fetches, tuple(item.feeds)
        taken_out = {
            name: f"{report.verb} ({report.name})"
            for report in reports
            for name in report.taken_out
        }
    else:
        taken_out = {}
    needed = needed_ops(flat_fetches, feed_tensors)
    nodes: list[Node] = []
    node_of: dict[Operation, int] = {}
    arg_of: dict[Tensor, int] = {}
    for tensor in feed_tensors:
        arg_of[tensor] = len(nodes)
        nodes.append(Node(name=tensor.name, kind=NodeKind.ARG, tag=tensor.op, inline=True))
    for op in needed:
        node_of[op] = len(nodes)
        nodes.append(None)  # filled below, once every op has its index
    for op in needed:
        try:
            nodes[node_of[op]] = _lower_op(op, node_of, arg_of, True, intra_op_threads)
        except Exception as e:  # a kernel factory that rejects the op's attributes
            op = _user_op(op)
            raise errors.InvalidArgumentError(
                None,
                op,
                f"{errors.describe_op(op)} cannot be prepared to run: {type(e).__name__}: {e}",
            ) from e
    fetch_edges = []
    fetch_positions = []
    targets = []
    for element in flat_fetches:
        if isinstance(element, Operation):
            targets.append(node_of[element])
            fetch_positions.append(None)
            continue
        edge = (
            (arg_of[element], 0)
            if element in arg_of
            else (node_of[element.op], element.value_index)
        )
        fetch_positions.append(len(fetch_edges))
        fetch_edges.append(edge)
    program = Program(
        nodes=nodes,
        arg_nodes=tuple(arg_of[t] for t in feed_tensors),
        fetches=fetch_edges,
        targets=targets,
    )
    try:
        executable = executor.prepare(program)
    except executor.InvalidProgramError as e:
        raise errors.InvalidArgumentError(
            None, _op_of_node(nodes, e.nodes), _explain_invalid_program(e, nodes)
        ) from None
    return _Plan(executable, fetch_positions, feed_tensors, nodes, taken_out)


def _compiled(plan: _Plan, options) -> _Plan:
    """The plan a run without statistics uses: ``plan``'s compiled twin when the compilation
    mode makes one (`dataflow.client.compiler`), else ``plan``; a run that watches tensors keeps the
    interpreter."""
    twin = plan.compiled
    if twin is None:
        with plan.compile_lock:  # one thread compiles; the others wait for its twin
            twin = plan.compiled
            if twin is None:
                plan.runs += 1
                if not compiler.compile_now(plan.runs):
                    return plan
                if _debug_watcher.requested_watches(options):
                    return plan
                with gc_paused():
                    result = compiler.compile_program(plan.executable.program)
                if result is None:
                    plan.compiled = twin = False
                else:
                    plan.compiled = twin = replace(
                        plan,
                        executable=result.executable,
                        nodes=result.nodes,
                        compiled=False,
                        reference=plan,
                        regions=result.regions,
                    )
    if not twin or _debug_watcher.requested_watches(options):
        return plan
    return twin


def run_inside(plan: _Plan, values, context: RunContext) -> list:
    """The values of ``plan``'s fetches, run on ``values`` for its feeds as part of the run
    ``context`` belongs to (a function an op calls, such as a branch of ``If``): it reads and
    writes that run's variables, shares its deadline and runs on the calling thread.  Its
    errors are those a run raises (an `errors.OpError` naming the op inside and its line)."""
    try:
        results = plan.executable.run(
            list(values), context=context, pool=None, deadline=context.deadline
        )
    except executor.KernelError as e:
        raise _kernel_error(e) from e.cause
    except executor.FetchNotLiveError as e:
        raise _dead_fetch_error(e, plan) from None
    return [results[p] for p in plan.fetch_positions]


def _lower_op(
    op: Operation,
    node_of: dict,
    arg_of: dict,
    with_kernel: bool = True,
    intra_op_threads: Optional[int] = None,
) -> Node:
    """The executor node of ``op``; without ``with_kernel``, one that is analysed but never
    run (see `_check_feedable`).  ``intra_op_threads``: the threads one kernel may use (None:
    one per core)."""
    op_def = op._op_def
    inputs = [(arg_of[t], 0) if t in arg_of else (node_of[t.op], t.value_index) for t in op._inputs]
    control_inputs = _control_nodes(op._control_inputs, node_of, arg_of)
    kind = op_def.kind
    node = Node(
        name=op.name,
        kind=kind,
        inputs=inputs,
        control_inputs=control_inputs,
        num_outputs=len(op._outputs),
        tag=op,
        inline=True,
    )
    if kind == NodeKind.OP and not with_kernel:
        node.kernel = _never_run
    elif kind == NodeKind.OP:
        attrs = op.attrs
        if op_def.extra.get("fresh_inputs"):
            # Which inputs are arrays the run makes and nothing else holds (never a fed one):
            # a variable's assign takes those without a copy (`dataflow.ops.variables`).
            attrs = dict(attrs)
            attrs["fresh_inputs"] = tuple(t not in arg_of and is_fresh_value(t) for t in op._inputs)
        if op_def.extra.get("named_by_op"):
            # A TF1 variable without a shared_name stores its value under the op's name.
            attrs = dict(attrs)
            attrs["op_name"] = op.name
        if op_def.extra.get("intra_op_threads"):
            # A kernel that splits its work among threads learns the Session's budget.
            attrs = dict(attrs)
            attrs["intra_op_threads"] = intra_op_threads
        if op_def.extra.get("random_stream"):
            # The op's stream in the Session is named by the op (`dataflow.client.random_streams`).
            attrs = dict(attrs)
            attrs["stream"] = op.name
        node.kernel = op_def.kernel(attrs)
        node.wants_context = op_def.wants_context
        node.fires_on_dead = op_def.fires_on_dead
        node.blocking = op_def.blocking
        node.wants_frame = op_def.wants_frame
        node.asynchronous = op_def.asynchronous
        kept = ref_inputs(op_def, len(op._inputs))
        read = [i for i, t in enumerate(op._inputs) if t._dtype.is_ref_dtype and i not in kept]
        if read:
            node.kernel = _reading_refs(node.kernel, read, op_def.wants_context)
            node.wants_context = True
        if op.attrs.get("_check_numerics"):  # `df.debugging.enable_check_numerics`
            node.kernel = _checking_numerics(node.kernel, op)
        node.inline = op_def.inline
        if node.inline is None and all(
            (t.shape.num_elements() or _INLINE_MAX_ELEMENTS + 1) <= _INLINE_MAX_ELEMENTS
            for t in op._outputs
        ):
            node.inline = True
    elif kind == NodeKind.ENTER:
        node.frame_name = op.attrs["frame_name"]
        node.is_constant = op.attrs["is_constant"]
        node.parallel_iterations = op.attrs["parallel_iterations"]
    return node


def _checking_numerics(kernel: Callable, op: Operation) -> Callable:
    """``kernel``, whose floating-point outputs must hold no Inf or NaN."""
    count = len(op._outputs)
    checked = [i for i, t in enumerate(op._outputs) if t.dtype.is_floating]

    def check_numerics(*args):
        result = kernel(*args)
        values = result if count > 1 else (result,)
        for index in checked:
            value = values[index]
            if isinstance(value, np.ndarray) or np.isscalar(value):
                if not np.isfinite(value).all():
                    raise numerics_error(op, index, value)
        return result

    return check_numerics


def numerics_error(op, index: int, value) -> errors.InvalidArgumentError:
    """The error of `df.debugging.enable_check_numerics` for output ``index`` of ``op``."""
    return errors.InvalidArgumentError(None, op, _numerics_report(op, index, value))


def _numerics_report(op, index: int, value) -> str:
    value = np.asarray(value)
    found = (
        ("-Inf", np.isneginf(value).any()),
        ("+Inf", np.isposinf(value).any()),
        ("NaN", np.isnan(value).any()),
    )
    kinds = [kind for kind, present in found if present]
    # an op run eagerly was made where it ran: the user's line now
    location = _user_location() if op.location.filename == "<eager>" else op.location
    inputs = "".join(f"\n    {i}: {t!r}" for i, t in enumerate(op.inputs))
    return (
        f'\n\n!!! Detected Infinity or NaN in output {index} of graph op "{op.type}" '
        f"(# of outputs: {len(op.outputs)}) !!!\n  dtype: {op.outputs[index].dtype!r}\n"
        f"  shape: {np.shape(value)}\n\n  Input tensors ({len(op.inputs)}):{inputs}\n\n"
        f"  Op created at: {location}\n"
        f" : Tensor had {' and '.join(kinds)} values"
    )


def _reading_refs(kernel: Callable, positions: list, kernel_wants_context: bool) -> Callable:
    """``kernel`` given the values of the references at ``positions``, read when it runs (TF1:
    an op that takes a value reads a reference it is given at that moment)."""

    def run(context, *args):
        args = list(args)
        for i in positions:
            args[i] = context.read_variable(args[i])
        return kernel(context, *args) if kernel_wants_context else kernel(*args)

    return run


def _control_nodes(control_inputs: list, node_of: dict, arg_of: dict) -> list:
    """The nodes that control edges from ``control_inputs`` wait for: an op's node, or the ARG
    nodes of its feeds where they stand in for it (`graph.control_sources`)."""
    if not arg_of:
        return [node_of[c] for c in control_inputs]
    return [
        arg_of[source] if isinstance(source, Tensor) else node_of[source]
        for c in control_inputs
        for source in control_sources(c, arg_of)
    ]


def _never_run(*args):
    raise AssertionError("a node lowered for analysis only was run")
