"""`CompiledRegion`: a region of a program written out as one Python function (`codegen`),
and made native where numba can (`native`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from executor.program import Node

from . import native
from .codegen import LineEmitter, identifier, locate_member, quoted, return_statement, value_name


class CompiledRegion:
    """A region's generated function and what it stands for.

    ``members``: node indices of the interpreted program, in the order they run;
    ``inputs``/``outputs``: the edges ``(node, output)`` of that program that the function
    takes and returns; ``source``: its text; ``function``: the callable the executor runs.
    ``lines`` maps a line of the source to ``(member, argument names, step)`` (`locate_member`).
    ``make_native(region, python_function)`` gives the callable the executor runs: the scalar
    tier's (`native.native_region`) by default, the array tier's for an array region
    (`native_arrays`).
    """

    def __init__(
        self,
        name: str,
        nodes: Sequence[Node],
        members: Sequence[int],
        outputs,
        make_native: Callable = native.native_region,
    ):
        self.name = name
        self.members = tuple(members)
        member_set = set(members)
        inputs: list = []
        for index in members:
            for edge in nodes[index].inputs:
                if edge[0] not in member_set and tuple(edge) not in inputs:
                    inputs.append(tuple(edge))
        self.inputs = tuple(inputs)
        self.outputs = tuple(outputs)
        self.nodes = nodes
        self.lines: dict[int, tuple[int, tuple[str, ...], Any]] = {}
        self.source, bound = self._generate(nodes, member_set)
        namespace: dict[str, Any] = {}
        code = compile(self.source, f"<compiled region {quoted(name)}>", "exec")
        exec(code, namespace)  # noqa: S102 - the text generated just above
        python_function = namespace["make"](**bound, locate=self.locate)
        self._code = python_function.__code__
        self.python_function = python_function
        self.function = make_native(self, python_function)

    def _generate(self, nodes: Sequence[Node], member_set: set) -> tuple[str, dict]:
        parameters = {edge: f"in{i}" for i, edge in enumerate(self.inputs)}
        names: dict[tuple[int, int], str] = dict(parameters)
        bound: dict[str, Any] = {}
        body: list[tuple[str, int, tuple[str, ...], Any]] = []
        emitter = LineEmitter(bound)
        for index in self.members:
            node = nodes[index]
            args = tuple(names[tuple(edge)] for edge in node.inputs)
            for text, step in emitter.lines(node, index, args):
                body.append((text, index, args, step))
            for k in range(node.num_outputs):
                names[(index, k)] = value_name(index, k, node.num_outputs)
        returned = return_statement([names[edge] for edge in self.outputs])
        closure = ", ".join([*bound, "locate"])
        lines = [
            f"def make({closure}):",
            f"    def {self.function_name}({', '.join(parameters.values())}):",
            "        try:",
        ]
        for text, index, args, step in body:
            self.lines[len(lines) + 1] = (index, args, step)
            lines.append(f"            {text}")
        lines += [
            f"            {returned}",
            "        except Exception as error:",
            "            locate(error)",
            "            raise",
            f"    return {self.function_name}",
        ]
        return "\n".join(lines) + "\n", bound

    @property
    def function_name(self) -> str:
        return identifier("region_", self.name)

    def locate(self, error: BaseException) -> None:
        """Records on ``error`` which member raised it and with what inputs (`locate_member`)."""
        locate_member(error, self._code, self.lines, self.nodes)
