"""In-place buffer reuse: an elementwise op writes its result into an input nothing else holds.

``y = exp(x * 2)``: the product is a fresh array read once, by ``exp``; ``exp`` can write its
result into that array (``np.exp(p, out=p)``) instead of allocating another.  The pass finds,
for each elementwise op (a ufunc op or a ``FusedElementwise``), an input ``t`` that

- comes from an op whose kernel returns a freshly allocated array that nothing else holds: a
  ufunc op (``OpDef.extra["ufunc"]``) or an op marked ``"fresh_output"``.  Never a fed value, a
  constant, a variable's value, an ``Identity``/``Reshape`` view, nor anything else (a value a
  stack keeps, say), since those arrays are held elsewhere;
- is used once: a single data edge in the (pruned) program and not fetched;
- has the op's output dtype and a static shape compatible with the output's;
- for a fused op, is used by its first step only (later steps run after the buffer changed).

Ops whose output is statically known to have fewer than `MIN_ELEMENTS` elements are left alone.

The decision holds for one run plan only, so the pass always runs last (`PassManager` moves it
to the end of any order it is given), and ``inplace_input`` never leaves the plan: a
`GraphItem` made from a graph resets it, ``df.io.save_graph`` writes -1 and ``load_graph``
ignores it.

The op becomes (or, if fused, is marked as) a ``FusedElementwise`` with ``inplace_input`` set.
Its kernel checks at run time that the value really is a writeable ``numpy.ndarray`` of the
output's dtype with at least one dimension, and that the result has its shape (numpy refuses an
``out=`` that does not fit); otherwise it allocates, so the result is the same either way.
"""

from __future__ import annotations

from ..framework.graph import Operation, Tensor
from ..framework.graph_walk import topological_order
from .elementwise_fusion import fusable, fuse_chain
from .graph_item import GraphItem
from .registry import GraphPass, PassReport, register_pass


def is_fresh_value(t: Tensor) -> bool:
    """Whether the kernel making ``t`` returns an array nothing else holds (a ufunc op's
    result, or an op marked ``"fresh_output"``); the Session asks it too, for assigns."""
    extra = t.op._op_def.extra
    return ("ufunc" in extra or extra.get("fresh_output", False)) and len(t.op._outputs) == 1


def _candidate(item: GraphItem, op: Operation, k: int) -> bool:
    t = op._inputs[k]
    out = op._outputs[0]
    return (
        is_fresh_value(t)
        and item.use_count(t) == 1
        and not item.is_fed(t)
        and t.dtype is out.dtype
        and t.shape.is_compatible_with(out.shape)
    )


# Below this many elements (when the static shape says so) an allocation costs less than the
# Python call that avoids it, and scalars are numpy scalars, which have no buffer to reuse.
MIN_ELEMENTS = 1024


class InplaceBufferReuse(GraphPass):
    name = "inplace"
    runs_last = True  # a later pass could give a reused value a second reader

    def rewrite(self, item: GraphItem, report: PassReport) -> None:
        for op in topological_order(item.graph):
            if item.graph._ops_by_name.get(op._name) is not op:
                continue
            size = op._outputs[0].shape.num_elements() if op._outputs else 0
            if size is not None and size < MIN_ELEMENTS:
                continue
            if op._op_def.type == "FusedElementwise":
                if op.attrs.get("inplace_input", -1) >= 0:
                    continue
                steps = op.attrs["steps"]
                uses = [k for step in steps for k in step[1] if k >= 0]
                for k in steps[0][1]:
                    if k >= 0 and uses.count(k) == 1 and _candidate(item, op, k):
                        op.attrs = {**op.attrs, "inplace_input": k}
                        report.count("ops writing into an input")
                        break
            elif fusable(item, op):
                for k in range(len(op._inputs)):
                    if op._inputs.count(op._inputs[k]) == 1 and _candidate(item, op, k):
                        fuse_chain(item, [op], inplace_input=k)
                        report.count("ops writing into an input")
                        break


register_pass(InplaceBufferReuse())
