"""Builds executor programs by hand for the tests, in the shapes ``primitives`` produces.

A value is a handle ``(node_index, output_index)``.  `Builder.cond` and `Builder.while_loop`
follow the graph shapes of ``docs/control-flow-semantics.md`` ("The helpers' graph shapes"), so the
tests exercise the executor on the programs the front end will give it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Optional

import numpy as np

from executor import Node, NodeKind, Program

Handle = tuple[int, int]


def identity(value):
    return value


class Builder:
    """Appends nodes; every method returns the handle(s) of what it built."""

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.arg_nodes: list[int] = []

    def add(self, node: Node) -> int:
        self.nodes.append(node)
        return len(self.nodes) - 1

    def arg(self, name: str = "arg") -> Handle:
        index = self.add(Node(name, NodeKind.ARG))
        self.arg_nodes.append(index)
        return (index, 0)

    def op(
        self,
        kernel: Callable,
        *inputs: Handle,
        name: Optional[str] = None,
        control: Sequence[Handle | int] = (),
        num_outputs: int = 1,
        inline: Optional[bool] = None,
        wants_context: bool = False,
        asynchronous: bool = False,
        blocking: bool = False,
    ):
        index = self.add(
            Node(
                name or f"{getattr(kernel, '__name__', 'op')}_{len(self.nodes)}",
                NodeKind.OP,
                kernel=kernel,
                inputs=list(inputs),
                control_inputs=[_index(c) for c in control],
                num_outputs=num_outputs,
                inline=inline,
                wants_context=wants_context,
                asynchronous=asynchronous,
                blocking=blocking,
            )
        )
        if num_outputs == 0:
            return index
        if num_outputs == 1:
            return (index, 0)
        return tuple((index, k) for k in range(num_outputs))

    def const(self, value, name: Optional[str] = None, control: Sequence = ()) -> Handle:
        return self.op(lambda: value, name=name or f"const_{len(self.nodes)}", control=control)

    def switch(self, data: Handle, pred: Handle, name: Optional[str] = None, control=()):
        index = self.add(
            Node(
                name or f"switch_{len(self.nodes)}",
                NodeKind.SWITCH,
                inputs=[data, pred],
                control_inputs=[_index(c) for c in control],
            )
        )
        return (index, 0), (index, 1)

    def merge(self, *inputs: Handle, name: Optional[str] = None, control=()):
        index = self.add(
            Node(
                name or f"merge_{len(self.nodes)}",
                NodeKind.MERGE,
                inputs=list(inputs),
                control_inputs=[_index(c) for c in control],
            )
        )
        return (index, 0), (index, 1)

    def enter(
        self,
        data: Handle,
        frame: str,
        constant: bool = False,
        parallel_iterations: int = 10,
        name: Optional[str] = None,
        control=(),
    ) -> Handle:
        index = self.add(
            Node(
                name or f"{frame}/enter_{len(self.nodes)}",
                NodeKind.ENTER,
                inputs=[data],
                control_inputs=[_index(c) for c in control],
                frame_name=frame,
                is_constant=constant,
                parallel_iterations=parallel_iterations,
            )
        )
        return (index, 0)

    def exit(self, data: Handle, name: Optional[str] = None) -> Handle:
        return (self.add(Node(name or f"exit_{len(self.nodes)}", NodeKind.EXIT, inputs=[data])), 0)

    def next_iteration(self, data: Handle, name: Optional[str] = None, control=()) -> Handle:
        index = self.add(
            Node(
                name or f"next_iteration_{len(self.nodes)}",
                NodeKind.NEXT_ITERATION,
                inputs=[data],
                control_inputs=[_index(c) for c in control],
            )
        )
        return (index, 0)

    def program(self, fetches: Sequence[Handle] = (), targets: Sequence[Handle | int] = ()):
        return Program(
            self.nodes,
            arg_nodes=list(self.arg_nodes),
            fetches=list(fetches),
            targets=[_index(t) for t in targets],
        )

    # -- the helpers' shapes ----------------------------------------------------------------------

    def cond(self, pred: Handle, true_fn, false_fn, name: str = "cond"):
        """``Merge([false_result, true_result])[0]`` per result; each fn gets a `Branch`."""
        switch_false, switch_true = self.switch(pred, pred, name=f"{name}/switch_pred")
        true_pivot = self.op(identity, switch_true, name=f"{name}/pivot_t", inline=True)
        false_pivot = self.op(identity, switch_false, name=f"{name}/pivot_f", inline=True)
        true_results = true_fn(Branch(self, pred, True, true_pivot, name))
        false_results = false_fn(Branch(self, pred, False, false_pivot, name))
        assert len(true_results) == len(false_results)
        return [
            self.merge(f, t, name=f"{name}/merge_{k}")[0]
            for k, (f, t) in enumerate(zip(false_results, true_results))
        ]

    def while_loop(
        self,
        cond_fn,
        body_fn,
        loop_vars: Sequence[Handle],
        name: str = "while",
        parallel_iterations: int = 10,
    ) -> list[Handle]:
        """``cond_fn(loop)`` and ``body_fn(loop)`` get a `Loop` whose ``vars`` are the current
        values; ``body_fn`` returns the next values.  Returns the Exit handles."""
        enters = [
            self.enter(v, name, parallel_iterations=parallel_iterations, name=f"{name}/enter_{k}")
            for k, v in enumerate(loop_vars)
        ]
        merges = [self.merge(e, name=f"{name}/merge_{k}")[0] for k, e in enumerate(enters)]
        loop = Loop(self, name, parallel_iterations, merges, pivot=None)
        pred = self.op(identity, cond_fn(loop), name=f"{name}/loop_cond", inline=True)
        switches = [self.switch(m, pred, name=f"{name}/switch_{k}") for k, m in enumerate(merges)]
        exits = [self.exit(f, name=f"{name}/exit_{k}") for k, (f, _) in enumerate(switches)]
        body_vars = [
            self.op(identity, t, name=f"{name}/identity_{k}", inline=True)
            for k, (_, t) in enumerate(switches)
        ]
        body = Loop(self, name, parallel_iterations, body_vars, pivot=body_vars[0])
        body.entered = loop.entered
        results = body_fn(body)
        assert len(results) == len(merges)
        for k, (merge, result) in enumerate(zip(merges, results)):
            # As TensorFlow does for any op whose inputs are all loop invariants.
            control = [body.pivot] if body.is_invariant(result) else []
            next_value = self.next_iteration(
                result, name=f"{name}/next_iteration_{k}", control=control
            )
            self.nodes[merge[0]].inputs = [enters[k], next_value]
        return exits


class Branch:
    """One branch of a cond: `outer` brings a value from outside through a memoized Switch."""

    def __init__(self, builder: Builder, pred: Handle, taken: bool, pivot: Handle, name: str):
        self.builder = builder
        self.pred = pred
        self.taken = taken
        self.pivot = pivot
        self.name = name
        self._switched: dict[Handle, Handle] = {}

    def outer(self, value: Handle) -> Handle:
        if value not in self._switched:
            outputs = self.builder.switch(value, self.pred, name=f"{self.name}/switch_in")
            self._switched[value] = outputs[1] if self.taken else outputs[0]
        return self._switched[value]


class Loop:
    """The inside of a loop: ``vars``, and `outer` for invariants (memoized constant Enters)."""

    def __init__(self, builder, name, parallel_iterations, variables, pivot):
        self.builder = builder
        self.name = name
        self.parallel_iterations = parallel_iterations
        self.vars = list(variables)
        self.pivot = pivot
        self.entered: dict[Handle, Handle] = {}

    def is_invariant(self, value: Handle) -> bool:
        """True for a constant Enter of this loop."""
        return value in self.entered.values()

    def outer(self, value: Handle) -> Handle:
        if value not in self.entered:
            self.entered[value] = self.builder.enter(
                value,
                self.name,
                constant=True,
                parallel_iterations=self.parallel_iterations,
                name=f"{self.name}/invariant_{len(self.entered)}",
            )
        return self.entered[value]


def _index(handle) -> int:
    return handle[0] if isinstance(handle, tuple) else handle


def i64(value) -> np.int64:
    return np.int64(value)
