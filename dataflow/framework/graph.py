"""The graph IR: `Graph`, `Operation` and `Tensor`, plus name scopes, the default graph, and
the two walks over a graph that the Session, the graph passes and the saver share
(`needed_ops`, the pruning of a run; `topological_order`).

Invariants:

- An `Operation` belongs to exactly one `Graph`; every input and control input comes from the
  same graph.  Names are unique within a graph.
- A `Tensor` is output ``value_index`` of its op and is named ``"<op name>:<value_index>"``.
  Its static ``dtype`` never changes; its static ``shape`` may be partial.
- ``Graph.version`` grows with every change (new op, input rewired), so that anything derived
  from a graph (a Session's lowered programs) can be cached per version.
- The graph's indexes are kept in step with its ops, so that no edit scans the graph: the ops
  in creation order (a dict used as an ordered set, so the graph passes remove an op in O(1)),
  the ops by name, and the data edges that read each tensor (`Consumers`).
- The graph holds no run-time state: variable values live in the Session.

Ops that are created while a control-flow helper builds a branch or a loop body go through the
graph's current control-flow context (set by `primitives`): it rewrites inputs that come from
outside the branch or loop (through Switch or Enter) and gives input-less ops a control input
from the pivot.  The graph only calls the two hooks; it does not know what a cond or loop is
(`topological_order` asks the ops' OpDefs which inputs are a loop's back edges).
"""

from __future__ import annotations

import contextlib
import itertools
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Optional

from . import dtypes as _dtypes
from .device import DeviceSpec, canonical_name, merge_device
from .source_location import (  # noqa: F401 - defined there, reached here too
    SourceLocation,
    _ipython_cell,
    _user_location,
)
from .tensor_shape import TensorShape, as_shape


class Tensor:
    """A symbolic handle to output ``value_index`` of an `Operation`.

    As in TensorFlow 1.x, ``==`` and ``hash`` are by identity (so tensors can be dict keys and
    feed keys); use `df.equal` for an elementwise comparison.  An eager tensor compares values
    instead, as TensorFlow 2's, and is keyed through `ref`.  Arithmetic operators build ops
    (they are attached by ``dataflow.ops.overloads``).
    """

    __slots__ = ("_op", "_value_index", "_dtype", "_shape", "__weakref__")
    # Make numpy defer to our operators in ``ndarray + tensor``.
    __array_priority__ = 100
    # True for tensors that hold their value (`dataflow.eager.EagerTensor`) and belong to no graph.
    _is_eager = False

    def __init__(self, op: Operation, value_index: int, dtype: _dtypes.DType, shape: TensorShape):
        self._op = op
        self._value_index = value_index
        self._dtype = dtype
        self._shape = shape

    @property
    def op(self) -> Operation:
        return self._op

    @property
    def value_index(self) -> int:
        return self._value_index

    @property
    def dtype(self) -> _dtypes.DType:
        return self._dtype

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def get_shape(self) -> TensorShape:
        return self._shape

    def set_shape(self, shape) -> None:
        """Refines the static shape (it must be compatible with what is known)."""
        self._shape = self._shape.merge_with(as_shape(shape))

    @property
    def graph(self) -> Graph:
        return self._op.graph

    @property
    def name(self) -> str:
        return f"{self._op.name}:{self._value_index}"

    @property
    def device(self) -> str:
        return self._op.device

    def consumers(self) -> list[Operation]:
        return list(self._op.graph._consumers.get(self, ()))

    def ref(self) -> TensorRef:
        """A hashable key for this tensor, equal only to keys of the same tensor; ``deref()``
        gives the tensor back.  Needed for an eager tensor, whose ``==`` compares values."""
        return TensorRef(self)

    experimental_ref = ref

    def eval(self, feed_dict=None, session=None):
        """Runs the default (or given) session to compute this tensor."""
        from .session_stack import _session_for_eval

        return _session_for_eval(session, self.graph).run(self, feed_dict)

    def __repr__(self) -> str:
        return f"<df.Tensor '{self.name}' shape={self._shape} dtype={self._dtype.name}>"

    def __str__(self) -> str:
        """As TensorFlow shows a graph tensor (what ``print`` of one shows while tracing):
        ``Tensor("x:0", shape=(2,), dtype=float32)``; the shape is left out when even its
        rank is unknown, and the device is added when the op has one."""
        shape = f", shape={self._shape}" if self._shape.ndims is not None else ""
        device = f", device={self.op.device}" if self.op.device else ""
        return f'Tensor("{self.name}"{shape}, dtype={self._dtype.name}{device})'

    def __bool__(self):
        raise TypeError(
            f"Using the tensor '{self.name}' as a Python bool is not allowed: its value is only "
            "known when the graph runs. Use df.cond(pred, true_fn, false_fn) to choose between "
            "computations in the graph, or run the tensor in a Session to get its value."
        )

    __nonzero__ = __bool__

    def __iter__(self):
        raise TypeError(
            f"Tensor '{self.name}' is not iterable in a graph; use df.unstack or indexing."
        )

    def __len__(self):
        raise TypeError(
            f"len() of tensor '{self.name}' is not defined in a graph; use df.shape(t)[0] "
            "or t.shape[0] for the static size."
        )

    __hash__ = object.__hash__  # by identity, as ``__eq__``; object's own runs at C speed

    def __eq__(self, other) -> bool:
        return self is other

    def __ne__(self, other) -> bool:
        return self is not other

    def __array__(self, dtype=None, copy=None):
        # TensorFlow raises NotImplementedError here; a TypeError lets numpy and the
        # conversion code treat a tensor inside a list as the bad value it is.
        raise TypeError(
            f"Cannot convert the symbolic tensor '{self.name}' to a numpy array: run it in a "
            "Session to get its value."
        )


class TensorRef:
    """What `Tensor.ref` returns: a dict key for a tensor by identity, whatever its ``==``."""

    __slots__ = ("_tensor",)

    def __init__(self, tensor: Tensor):
        self._tensor = tensor

    def deref(self) -> Tensor:
        return self._tensor

    def __hash__(self) -> int:
        return id(self._tensor)

    def __eq__(self, other) -> bool:
        return isinstance(other, TensorRef) and other._tensor is self._tensor

    def __repr__(self) -> str:
        return f"<Reference wrapping {self._tensor!r}>"


class Consumers:
    """The data edges that read one tensor, in the order they were made.

    It reads as a list of the consuming ops: iterating gives the op of each edge (an op that
    reads the tensor twice comes twice) and ``len`` counts the edges.  An edge is the pair
    ``(op, input index)``, added and removed in O(1), so rewiring a tensor that many ops read
    costs the edges moved, never a scan of the readers or of their inputs.
    """

    __slots__ = ("_edges",)

    def __init__(self):
        self._edges: dict[tuple[Operation, int], None] = {}

    def add(self, op: Operation, index: int) -> None:
        self._edges[(op, index)] = None

    def remove(self, op: Operation, index: int) -> None:
        del self._edges[(op, index)]

    def edges(self) -> list[tuple[Operation, int]]:
        """The ``(op, input index)`` pairs, in order (a copy: the caller may rewire them)."""
        return list(self._edges)

    def __iter__(self):
        return (op for op, _ in self._edges)

    def __len__(self) -> int:
        return len(self._edges)

    def __repr__(self) -> str:
        return f"Consumers({[f'{op.name}:{i}' for op, i in self._edges]})"


class Operation:
    """A node of the graph: an op type, its inputs, attributes and outputs."""

    def __init__(
        self,
        graph: Graph,
        op_def: Any,
        name: str,
        inputs: Sequence[Tensor],
        control_inputs: Sequence[Operation],
        attrs: dict,
        location: SourceLocation,
    ):
        self._graph = graph
        self._op_def = op_def
        self._name = name
        self._inputs = list(inputs)
        self._control_inputs = list(control_inputs)
        self.attrs = attrs
        self.location = location
        self._outputs: list[Tensor] = []
        self._control_flow_context = None
        # The `control_dependencies` blocks open when the op was created (see create_op).
        self._control_blocks: frozenset = frozenset()
        # canonical (`dataflow.framework.device`); "" when no device was asked for
        self._device = ""
        self._id = 0  # the graph's `version` just after this op was added to it

    # -- public API mirroring tf.Operation -------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def type(self) -> str:
        return self._op_def.type

    @property
    def op_def(self):
        return self._op_def

    @property
    def graph(self) -> Graph:
        return self._graph

    @property
    def inputs(self) -> tuple[Tensor, ...]:
        return tuple(self._inputs)

    @property
    def outputs(self) -> list[Tensor]:
        return list(self._outputs)

    @property
    def control_inputs(self) -> list[Operation]:
        return list(self._control_inputs)

    @property
    def device(self) -> str:
        """The device the op was built for (``with df.device(...)``, or that of the op it is
        colocated with), as a canonical string; "" when none was asked for."""
        return self._device

    def _set_device(self, device) -> None:
        """Sets the device (a string, a `DeviceSpec` or None), as TensorFlow's op method."""
        self._device = canonical_name(device)
        if self._device:
            self._graph._has_devices = True

    def colocation_groups(self) -> list[bytes]:
        """The ``loc:@<op name>`` groups the op is colocated with (its ``_class`` attribute),
        else its own, as bytes like TensorFlow's."""
        groups = [g for g in self.attrs.get("_class", ()) if g.startswith("loc:@")]
        return [g.encode() for g in groups or [f"loc:@{self._name}"]]

    def values(self) -> tuple[Tensor, ...]:
        return tuple(self._outputs)

    def get_attr(self, name: str) -> Any:
        """The attribute ``name``.  Besides the attributes the op keeps, the type attributes
        TensorFlow's op definitions carry and this runtime infers are derived as TensorFlow
        would report them: ``T`` (the dtype of the first input that is not a bool, else bool),
        ``SrcT`` of ``Cast``, ``N`` (the number of inputs of a list op) and ``keep_dims`` (the
        reductions' old name for ``keepdims``)."""
        try:
            return self.attrs[name]
        except KeyError:
            pass
        derived = self._derived_attr(name)
        if derived is None:
            raise ValueError(f"Operation '{self._name}' has no attr named '{name}'.")
        return derived

    _LIST_OPS = frozenset({"AddN", "ConcatV2", "Pack"})

    def _derived_attr(self, name: str) -> Any:
        inputs = self._inputs
        if name == "T" and inputs:
            if self._op_def.type == "Cast":
                return None
            return next((t.dtype for t in inputs if t.dtype.name != "bool"), inputs[0].dtype)
        if name == "SrcT" and self._op_def.type == "Cast":
            return inputs[0].dtype
        if name == "N" and self._op_def.type in self._LIST_OPS:
            return len(inputs)
        if name == "keep_dims" and "keepdims" in self.attrs:
            return self.attrs["keepdims"]
        return None

    def run(self, feed_dict=None, session=None) -> None:
        """Runs this op in the default (or given) session."""
        from .session_stack import _session_for_eval

        _session_for_eval(session, self._graph).run(self, feed_dict)

    def _update_input(self, index: int, tensor: Tensor) -> None:
        """Rewires input ``index`` (used to close a loop's back edge into a Merge)."""
        self._graph._check_not_finalized(f"an input of op '{self._name}' was changed")
        if tensor.graph is not self._graph:
            raise ValueError(f"Tensor '{tensor.name}' is not from the graph of op '{self._name}'")
        self._graph._remove_edge(self._inputs[index], self, index)
        self._inputs[index] = tensor
        self._graph._add_edge(tensor, self, index)
        self._graph._version += 1

    def _add_control_input(self, op: Operation) -> None:
        self._graph._check_not_finalized(f"a control input was added to op '{self._name}'")
        if op not in self._control_inputs:
            self._control_inputs.append(op)
            self._graph._version += 1

    def __repr__(self) -> str:
        return f"<df.Operation '{self._name}' type={self.type}>"

    def __str__(self) -> str:
        ins = ", ".join(t.name for t in self._inputs)
        ctrl = "".join(f", ^{c.name}" for c in self._control_inputs)
        attrs = "".join(f", {k}={v!r}" for k, v in sorted(self.attrs.items()) if k != "value")
        outs = ", ".join(f"{t.dtype.name}{t.shape}" for t in self._outputs)
        lhs = f"{self._name} -> {outs}" if outs else self._name
        return f"{lhs} = {self.type}({ins}{ctrl}{attrs})"


# ``\Z``, not ``$``: ``$`` also matches before a final newline, which a name must not hold.
_VALID_OP_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\-/>]*\Z")
_VALID_SCOPE_NAME = re.compile(r"^[A-Za-z0-9_.\-/>]*\Z")  # inside a scope, "_x" is allowed


def is_valid_op_name(name: str) -> bool:
    r"""Whether ``name`` may name an op (TensorFlow's rule: ``[A-Za-z0-9.][A-Za-z0-9_.\-/>]*``)."""
    return bool(_VALID_OP_NAME.match(name))


# Attributes whose strings are data a kernel prints or matches (a print's ``end="\n"``, a
# regular expression), which may hold any character.  Every other string of a graph (a name,
# a location, a device, a frame name, a fused step's record) is printable text, and a loader
# refuses one holding a control character (`control_character`).
DATA_TEXT_ATTRS = frozenset(
    {"message", "sep", "end", "template", "fill", "separator", "pattern", "rewrite", "delimiter"}
)
# Unicode's control and format characters (a bidirectional override among them), lone
# surrogates, and the line and paragraph separators.
_CONTROL_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def control_character(value: Any) -> Optional[str]:
    """The first control character (a newline, a NUL, a bidirectional override, a line
    separator...) of a string, or of the strings inside lists, tuples and dicts; None when
    there is none.  A loaded graph's text must hold none: it ends up in error messages,
    printed listings and (as string literals) in generated code."""
    if isinstance(value, str):
        if value.isprintable():  # the common case, in C: no character of Other or Separator
            return None
        import unicodedata

        return next((c for c in value if unicodedata.category(c) in _CONTROL_CATEGORIES), None)
    if isinstance(value, (list, tuple)):
        items: Iterable = value
    elif isinstance(value, dict):
        items = value.values()
    else:
        return None
    return next((c for c in map(control_character, items) if c is not None), None)


_control_block_ids = itertools.count()  # ids of `control_dependencies` blocks


def ref_inputs(op_def, num_inputs: int) -> tuple:
    """The input positions where ``op_def`` takes a TF1 reference as it is, without reading it
    (``extra["ref_inputs"]``: a tuple of positions, or "all"; `dataflow.ops.ref_variables`)."""
    slots = op_def.extra.get("ref_inputs", ())
    return tuple(range(num_inputs)) if slots == "all" else slots


@contextlib.contextmanager
def _values_for_inference(op_def, inputs: list):
    """Shows ``op_def``'s inference the value dtype of each reference it will read (TF1 matches
    an op's value inputs against a reference's ``base_dtype``), and the inputs as they are
    afterwards.  Runs under the graph's lock, which every op creation takes.  An op without a
    kernel (a control-flow primitive, whose Ref variant forwards references) cannot read one."""
    kept = ref_inputs(op_def, len(inputs))
    read = [t for i, t in enumerate(inputs) if t._dtype.is_ref_dtype and i not in kept]
    if read and op_def.kernel is None:
        raise TypeError(
            f"'{read[0].name}' is a reference ({read[0]._dtype.name}), which a {op_def.type} "
            "cannot read (it has no kernel) nor forward here: read it first with df.identity"
        )
    for t in read:
        t._dtype = t._dtype.base_dtype
    try:
        yield
    finally:
        for t in read:
            t._dtype = t._dtype._as_ref


# Functions called with each op this thread creates, in any graph (``tf.debugging``'s
# ``enable_check_numerics`` marks ops with one); higher layers add them, so that the graph
# needs to know none of them.
_op_creation_hooks = threading.local()


def add_op_creation_hook(hook: Callable) -> None:
    """Calls ``hook(op)`` for every op this thread creates from now on."""
    hooks = getattr(_op_creation_hooks, "hooks", None)
    if hooks is None:
        hooks = _op_creation_hooks.hooks = []
    if hook not in hooks:
        hooks.append(hook)


def remove_op_creation_hook(hook: Callable) -> None:
    hooks = getattr(_op_creation_hooks, "hooks", None) or []
    if hook in hooks:
        hooks.remove(hook)


class Graph:
    """A dataflow graph: the ops a program is made of.

    ``print(graph)`` shows it as text, one op per line in creation order.
    """

    # Whether an op made while this graph is the default belongs here even when all its inputs
    # are another graph's tensors (captured): True for the graph a function is traced into.
    captures_outer_tensors = False
    # True while the ops of a df.function's body are made here (always, for the graph it is traced
    # into): TensorFlow builds such a body's control flow as functional ops (cond_v2), whose
    # branches cannot see each other's tensors.
    building_function = False
    # True while a df.function's body is made here: each cond branch and loop body then orders
    # its side effects and makes its results wait for them (`primitives.auto_control_deps`).
    automatic_control_dependencies = False
    # What runs the ops made while this graph is the default, instead of adding them to it
    # (`op_registry.apply_op`); None for a graph that is built.  Eager mode's graph has one.
    _op_runner = None
    # True for eager mode's graph (`dataflow.eager.context`): ops run at once, and cond,
    # while_loop and the grouping helpers run as plain Python.
    _eager = False

    def __init__(self):
        self._ops: dict[Operation, None] = {}  # in creation order
        self._ops_by_name: dict[str, Operation] = {}
        self._names_in_use: dict[str, int] = {}
        self._consumers: dict[Tensor, Consumers] = {}
        self._collections: dict[str, list] = {}
        self._version = 0  # counts every change: ops made, edges and control inputs changed
        # Ops made outside every cond and loop: they change no existing op, and no plan of
        # existing fetches could reach them, so plans outlive them (`plan_version`).
        self._ops_added_at_top_level = 0
        self._finalized = False
        # The graph-level random seed (`dataflow.framework.random_seed`), and how many random ops
        # took an op seed derived from it.
        self.seed: Optional[int] = None
        self._derived_op_seeds = 0
        self._lock = threading.RLock()
        self._thread_local = threading.local()
        self._has_devices = False  # whether any op has a device (a Session then checks them)
        # Marked op or tensor -> why a run may not fetch or feed it (None: no reason given).
        self._unfetchable_ops: dict[Operation, Optional[str]] = {}
        self._unfeedable_tensors: dict[Tensor, Optional[str]] = {}

    # -- per-thread building state ---------------------------------------------------------------
    @property
    def _state(self):
        local = self._thread_local
        if not hasattr(local, "name_scope"):
            local.name_scope = ""
            local.control_blocks = []  # [(block id, [Operation])], outermost first
            local.control_flow_context = None
            local.device_functions = []  # device functions and None (a reset), outermost first
            local.colocation_ops = []  # the ops of the open colocate_with blocks, outermost first
        return local

    @property
    def _control_flow_context(self):
        return self._state.control_flow_context

    @_control_flow_context.setter
    def _control_flow_context(self, context) -> None:
        self._state.control_flow_context = context

    # -- queries ---------------------------------------------------------------------------------
    @property
    def version(self) -> int:
        return self._version

    @property
    def plan_version(self) -> int:
        """What a run plan of this graph depends on: `version` less the ops made at the top
        level.  A TF1 program that adds ops between runs (``sess.run(tf.sigmoid(x))`` in its
        training loop) keeps its plans; a change to an existing op, or an op made inside a cond
        or loop (whose plans take them whole), makes new ones."""
        return self._version - self._ops_added_at_top_level

    @property
    def finalized(self) -> bool:
        return self._finalized

    def get_operations(self) -> list[Operation]:
        return list(self._ops)

    def last_operation(self) -> Optional[Operation]:
        """The op made last (None in an empty graph): a mark for `operations_after`."""
        return next(reversed(self._ops), None)

    def operations_after(self, mark: Optional[Operation]) -> list[Operation]:
        """The ops made after ``mark`` (from `last_operation`), in creation order; the cost is
        the number of those ops, not the size of the graph."""
        made = []
        for op in reversed(self._ops):
            if op is mark:
                break
            made.append(op)
        made.reverse()
        return made

    def get_operation_by_name(self, name: str) -> Operation:
        if not isinstance(name, str):
            raise TypeError(f"Operation names are strings, got {name!r}")
        if ":" in name:
            raise ValueError(
                f"The name '{name}' looks like a tensor name; use get_tensor_by_name for it."
            )
        try:
            return self._ops_by_name[name]
        except KeyError:
            raise KeyError(f"The name '{name}' refers to an Operation not in the graph.") from None

    def get_tensor_by_name(self, name: str) -> Tensor:
        if not isinstance(name, str):
            raise TypeError(f"Tensor names are strings, got {name!r}")
        op_name, sep, index = name.rpartition(":")
        if not sep or not index.isdigit() or ":" in op_name:
            raise ValueError(
                f"The name '{name}' is not a valid tensor name (tensor names look like "
                "'op_name:0')."
            )
        op = self._ops_by_name.get(op_name)
        if op is None:
            raise KeyError(
                f"The name '{name}' refers to a Tensor whose operation '{op_name}' "
                "is not in the graph."
            )
        if int(index) >= len(op._outputs):
            raise KeyError(
                f"The name '{name}' refers to a Tensor which does not exist: operation "
                f"'{op_name}' has {len(op._outputs)} outputs."
            )
        return op._outputs[int(index)]

    def as_graph_element(self, obj, allow_tensor: bool = True, allow_operation: bool = True):
        """Resolves a Tensor, Operation or name ("op" or "op:0") to an element of this graph."""
        if isinstance(obj, str):
            if ":" in obj and allow_tensor:
                return self.get_tensor_by_name(obj)
            if allow_operation:
                return self.get_operation_by_name(obj)
            return self.get_tensor_by_name(obj)
        if isinstance(obj, (Tensor, Operation)):
            if obj.graph is not self:
                raise ValueError(f"{obj!r} is not an element of this graph.")
            return obj
        convert = getattr(obj, "_as_graph_element", None)
        if convert is not None:
            return self.as_graph_element(convert(), allow_tensor, allow_operation)
        raise TypeError(f"Cannot interpret {obj!r} as a Tensor or Operation of this graph.")

    # -- what a run may feed and fetch (Session.run checks) ---------------------------------------
    def prevent_fetching(self, op: Operation, reason: Optional[str] = None) -> None:
        """Makes ``Session.run`` refuse to fetch ``op`` or its outputs.

        ``reason`` (a dataflow addition) is the clause the refusal gives after "has been marked
        as not fetchable: ", as `cond` and `while_loop` give for the ops they mark; the first
        reason given stays."""
        self._unfetchable_ops.setdefault(op, reason)

    def prevent_feeding(self, tensor: Tensor, reason: Optional[str] = None) -> None:
        """Makes ``Session.run`` refuse to feed ``tensor``; ``reason`` as for
        `prevent_fetching`, after "may not be fed: "."""
        self._unfeedable_tensors.setdefault(tensor, reason)

    def is_fetchable(self, tensor_or_op) -> bool:
        op = tensor_or_op.op if isinstance(tensor_or_op, Tensor) else tensor_or_op
        return op not in self._unfetchable_ops

    def is_feedable(self, tensor: Tensor) -> bool:
        return tensor not in self._unfeedable_tensors

    # -- collections -----------------------------------------------------------------------------
    def add_to_collection(self, name: str, value) -> None:
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names: Iterable[str], value) -> None:
        """Adds ``value`` once to each collection of ``names`` (one name may be given alone)."""
        names = (names,) if isinstance(names, str) else dict.fromkeys(names)
        for name in names:
            self.add_to_collection(name, value)

    def get_collection(self, name: str, scope: Optional[str] = None) -> list:
        """A copy of collection ``name``; with ``scope``, only the items whose ``name`` the
        regular expression matches from its start (items without a name are left out)."""
        items = list(self._collections.get(name, ()))
        if scope is None:
            return items
        pattern = re.compile(scope)
        return [
            x for x in items if isinstance(getattr(x, "name", None), str) and pattern.match(x.name)
        ]

    def get_collection_ref(self, name: str) -> list:
        return self._collections.setdefault(name, [])

    def get_all_collection_keys(self) -> list[str]:
        return list(self._collections)

    def clear_collection(self, name: str) -> None:
        self._collections.pop(name, None)

    # -- building --------------------------------------------------------------------------------
    def finalize(self) -> None:
        """Makes the graph read-only: creating an op afterwards raises ``RuntimeError``."""
        self._finalized = True

    def _unsafe_unfinalize(self) -> None:
        self._finalized = False

    def _check_not_finalized(self, change: str = "an op was created") -> None:
        if self._finalized:
            raise RuntimeError(
                f"Graph is finalized and cannot be modified ({change} after Graph.finalize(), "
                f"at {_user_location()})."
            )

    @contextlib.contextmanager
    def as_default(self):
        """Makes this graph the default graph of the current thread inside the ``with``."""
        stack = _default_graph_stack()
        stack.append(self)
        try:
            yield self
        finally:
            stack.pop()

    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        scope = self._state.name_scope
        if scope:
            name = scope + "/" + name
        key = name.lower()
        count = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = count + 1
        if count > 0:
            base = name
            while True:
                name = f"{base}_{count}"
                if name.lower() not in self._names_in_use:
                    break
                count += 1
            if mark_as_used:
                self._names_in_use[name.lower()] = 1
        return name

    @contextlib.contextmanager
    def name_scope(self, name: Optional[str]):
        """Opens a name scope; names of ops created inside get ``scope/`` in front.

        As in TensorFlow, a name ending in ``/`` re-enters that exact scope, ``None`` or ``""``
        resets to the top level, and reusing a scope name makes it unique (``scope_1``).
        """
        state = self._state
        old = state.name_scope
        if name and not (_VALID_SCOPE_NAME if old else _VALID_OP_NAME).match(name):
            raise ValueError(f"{name!r} is not a valid scope name ({_user_location()})")
        if not name:
            new = ""
        elif name.endswith("/"):
            new = name[:-1]
        else:
            new = self.unique_name(name)
        state.name_scope = new
        try:
            yield new + "/" if new else ""
        finally:
            state.name_scope = old

    def get_name_scope(self) -> str:
        return self._state.name_scope

    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        """Ops created inside run only after ``control_inputs``; ``None`` clears the outer ones.

        As in TensorFlow, an op gets no control edge from an op that is already one of its data
        inputs, nor from a block that one of its inputs was created in (that input already
        waits for the block's ops)."""
        state = self._state
        old = state.control_blocks
        if control_inputs is None:
            new = []
        else:
            ops = list(dict.fromkeys(self._as_control_input(c) for c in control_inputs))
            if None in ops:
                ops.remove(None)
            new = old + [(next(_control_block_ids), ops)]
        state.control_blocks = new
        try:
            yield
        finally:
            state.control_blocks = old

    @contextlib.contextmanager
    def device(self, device_name_or_function):
        """Ops created inside get a device: a string (``"/gpu:0"``, ``"/job:ps/task:1"``) or
        `DeviceSpec` is merged into what inner scopes set (they win where both set a field), a
        function ``f(op)`` returns the op's device, and None ignores the outer scopes."""
        entry = device_name_or_function
        if isinstance(entry, (str, DeviceSpec)):
            try:
                entry = merge_device(entry)
            except (TypeError, ValueError) as e:
                raise type(e)(f"{e} (device scope at {_user_location()})") from None
        elif entry is not None and not callable(entry):
            raise TypeError(
                f"A device is a string, a DeviceSpec, a function of an op or None, got "
                f"{entry!r:.80} ({_user_location()})"
            )
        state = self._state
        old = state.device_functions
        state.device_functions = old + [entry]
        try:
            yield
        finally:
            state.device_functions = old

    @contextlib.contextmanager
    def colocate_with(self, op, ignore_existing: bool = False):
        """Ops created inside are colocated with ``op`` (an Operation, Tensor or Variable):
        they get its colocation groups in their ``_class`` attribute and its device, and the
        ``device`` scopes around are ignored.  ``ignore_existing`` drops the outer
        ``colocate_with`` blocks; ``colocate_with(None, ignore_existing=True)`` clears them."""
        if op is None and not ignore_existing:
            raise ValueError(
                "Trying to reset colocation (op is None) but ignore_existing is not True"
            )
        if op is not None:
            op = getattr(op, "op", op)
            if not isinstance(op, Operation):
                raise TypeError(
                    f"colocate_with needs an Operation, Tensor or Variable, got {op!r:.80}"
                )
            if op.graph is not self:
                raise ValueError(f"colocate_with: {op.name!r} is from a different graph.")
        state = self._state
        old_ops, old_devices = state.colocation_ops, state.device_functions
        state.colocation_ops = ([] if ignore_existing else old_ops) + ([op] if op else [])
        state.device_functions = []
        try:
            yield
        finally:
            state.colocation_ops, state.device_functions = old_ops, old_devices

    def _place(self, op: Operation, state) -> None:
        """Sets ``op``'s device from the device scopes (innermost first, each filling in what
        the inner ones left unset, up to a None) and then from the ops it is colocated with."""
        for function in reversed(state.device_functions):
            if function is None:
                break
            op._set_device(function(op))
        if state.colocation_ops:
            groups: set[str] = set()
            device_set = False
            for other in reversed(state.colocation_ops):
                groups.update(g.decode() for g in other.colocation_groups())
                if other.device and not device_set:
                    op._set_device(other.device)
                    device_set = True
            op.attrs["_class"] = sorted(groups)

    def _as_control_input(self, c) -> Optional[Operation]:
        if c is None:
            return None
        if hasattr(c, "_as_graph_element") and not isinstance(c, (Tensor, Operation)):
            c = c._as_graph_element()
        if isinstance(c, Tensor):
            c = c.op
        if not isinstance(c, Operation):
            raise TypeError(f"Control input must be an Operation or Tensor, got {c!r}")
        if c.graph is not self:
            raise ValueError(f"Control input {c.name!r} is from a different graph.")
        return c

    def create_op(
        self,
        op_def,
        inputs: Sequence[Tensor],
        attrs: dict,
        name: Optional[str] = None,
        control_inputs: Sequence = (),
        location: Optional[SourceLocation] = None,
    ) -> Operation:
        """Adds an op.  Static dtype/shape inference runs here; its errors name the user's line,
        or ``location`` when the op stands for one made elsewhere (a loaded graph's)."""
        self._check_not_finalized(f"a {op_def.type} op named {name or op_def.type!r} was created")
        if location is None:
            location = _user_location()
        for t in inputs:
            if not isinstance(t, Tensor):
                raise TypeError(f"Inputs of {op_def.type} must be Tensors, got {t!r} ({location})")
        if any(t.graph is not self for t in inputs):
            inputs = [
                t if t.graph is self else self._tensor_from_other_graph(t, op_def.type, location)
                for t in inputs
            ]
        state = self._state
        ctrl = [self._as_control_input(c) for c in control_inputs]
        input_ops = {t.op for t in inputs}
        skipped = set(ctrl) | input_ops  # a set: a block may hold thousands of ops
        for block, block_ops in state.control_blocks:
            if any(block in op._control_blocks for op in input_ops):
                continue
            for c in block_ops:
                if c not in skipped:
                    ctrl.append(c)
                    skipped.add(c)
        blocks = frozenset(block for block, _ in state.control_blocks)
        context = state.control_flow_context
        if context is not None:
            inputs, ctrl = context.prepare_op_inputs(
                op_def, list(inputs), ctrl, self._name_to_be(name, op_def)
            )
        else:
            for source in [t.op for t in inputs] + ctrl:
                if source._control_flow_context is not None:
                    source._control_flow_context.check_used_outside(
                        source, self._name_to_be(name, op_def), op_def.type
                    )
        with self._lock:
            if name is None:
                name = op_def.type
            elif not _VALID_OP_NAME.match(name.rstrip("/")):
                raise ValueError(f"{name!r} is not a valid op name ({location})")
            if name.endswith("/"):
                unique = name[:-1]
                if unique in self._ops_by_name:
                    raise ValueError(f"Duplicate op name '{unique}' ({location})")
                self._names_in_use[unique.lower()] = 1
            else:
                unique = self.unique_name(name)
            op = Operation(self, op_def, unique, inputs, ctrl, dict(attrs), location)
            op._control_blocks = blocks
            if state.device_functions or state.colocation_ops:
                self._place(op, state)
            try:
                with _values_for_inference(op_def, inputs):
                    specs = op_def.infer(op)
            except (ValueError, TypeError) as e:
                raise type(e)(f"{op_def.type} op '{unique}' at {location}: {e}") from None
            # Only an op that forwards references outputs one; any other reads them (TF1).
            keeps_refs = op_def.extra.get("outputs_refs", False)
            op._outputs = [
                Tensor(
                    op,
                    i,
                    _dtypes.as_dtype(dt) if keeps_refs else _dtypes.as_dtype(dt).base_dtype,
                    as_shape(shape),
                )
                for i, (dt, shape) in enumerate(specs)
            ]
            self._ops[op] = None
            self._ops_by_name[unique] = op
            for index, t in enumerate(inputs):
                self._add_edge(t, op, index)
            self._version += 1
            op._id = self._version  # what `as_graph_def(from_version=...)` compares
            if context is None:
                self._ops_added_at_top_level += 1
        if context is not None:
            op._control_flow_context = context
            context.add_op(op)
        hooks = getattr(_op_creation_hooks, "hooks", None)
        if hooks:
            for hook in hooks:
                hook(op)
        return op

    def _tensor_from_other_graph(self, tensor: Tensor, op_type: str, location) -> Tensor:
        """What stands for ``tensor`` of another graph as an input here: an error in a plain
        graph; a graph that captures (a traced function's) returns a placeholder."""
        raise ValueError(
            f"Tensor '{tensor.name}' must be from the same graph as the op being created "
            f"({op_type} at {location})."
        )

    def _capture_eager_tensor(self, tensor: Tensor, op_type: str) -> Tensor:
        """The tensor of this graph that stands for ``tensor``, a value computed eagerly, as
        an input of an op of type ``op_type`` built here.  A plain graph has none: a graph
        that is traced from a function overrides this to take the value in as an input."""
        raise RuntimeError(
            f"Attempting to capture an EagerTensor without building a function: a {op_type} "
            f"op of a graph cannot take a value computed eagerly ({_user_location()})."
        )

    def _name_to_be(self, name: Optional[str], op_def) -> str:
        """The name ``create_op`` will give an op it is about to make, for errors raised first."""
        if name and name.endswith("/"):
            return name[:-1]
        return self.unique_name(name or op_def.type, mark_as_used=False)

    def _add_edge(self, tensor: Tensor, op: Operation, index: int) -> None:
        """Records that input ``index`` of ``op`` reads ``tensor``."""
        consumers = self._consumers.get(tensor)
        if consumers is None:
            consumers = self._consumers[tensor] = Consumers()
        consumers.add(op, index)

    def _forget_ops(self, ops: Iterable[Operation]) -> None:
        """Takes ``ops`` out of the graph: ops that nothing outside them reads and that no run
        plan includes (what `dataflow.eager.lazy` recorded and then ran as an earlier recording's
        plan).  Existing plans stay valid, as they do when top-level ops are added."""
        with self._lock:
            for op in ops:
                for index, tensor in enumerate(op._inputs):
                    self._remove_edge(tensor, op, index)
                for tensor in op._outputs:
                    self._unfeedable_tensors.pop(tensor, None)
                del self._ops[op]
                del self._ops_by_name[op._name]
                self._unfetchable_ops.pop(op, None)
                self._version += 1
                self._ops_added_at_top_level += 1

    def _remove_edge(self, tensor: Tensor, op: Operation, index: int) -> None:
        """Forgets that input ``index`` of ``op`` reads ``tensor``."""
        consumers = self._consumers[tensor]
        consumers.remove(op, index)
        if not consumers:
            del self._consumers[tensor]

    def as_graph_def(self, from_version: Optional[int] = None, add_shapes: bool = False):
        """This graph as a TensorFlow ``GraphDef`` proto (`dataflow.io.export_graph_def`):
        only the ops added after `version` was ``from_version`` when that is given, each with
        an ``_output_shapes`` attribute when ``add_shapes``.  An op outside the op set shared
        with TensorFlow (a variable: freeze the graph first) is an error naming it."""
        return _graph_def_exporter(self, from_version=from_version, add_shapes=add_shapes)

    # -- display ---------------------------------------------------------------------------------
    def __str__(self) -> str:
        return "\n".join(str(op) for op in self._ops)

    def _repr_svg_(self):
        """Inline display in Jupyter, drawn as `dataflow.render` draws (with or without ``dot``)."""
        if _svg_drawer is None:
            return None
        try:
            return _svg_drawer(self)
        except Exception:  # no Graphviz can draw it: Jupyter falls back to the text repr
            return None

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(f"<df.Graph with {len(self._ops)} ops>")


# Draws a Graph as SVG for Jupyter: registered by `dataflow.render`, which sits above this module.
_svg_drawer: Optional[Callable] = None


def register_svg_drawer(draw: Callable) -> None:
    """Makes ``draw(graph)`` (SVG text) what `Graph._repr_svg_` shows."""
    global _svg_drawer
    _svg_drawer = draw


# Writes a Graph as a GraphDef: registered by `dataflow.io.graph_def`, which sits above this module.
_graph_def_exporter: Optional[Callable] = None


def register_graph_def_exporter(exporter: Callable) -> None:
    """``exporter(graph, from_version=, add_shapes=)`` serves `Graph.as_graph_def`."""
    global _graph_def_exporter
    _graph_def_exporter = exporter


# -- default graph ---------------------------------------------------------------------------------
_global_default_graph: Optional[Graph] = None


class _ThreadState(threading.local):
    """Per thread, the stack of graphs made the default with ``as_default()``: every thread
    has one from its first look, so `get_default_graph`, which runs for every op built and
    every op run eagerly, reads it with no call and no check."""

    def __init__(self):
        self.graph_stack: list = []


_thread_state = _ThreadState()


def _default_graph_stack() -> list:
    return _thread_state.graph_stack


def graph_to_build_in(graph: Graph) -> Graph:
    """The graph in which to build an op that reads tensors of ``graph``: ``graph``, unless the
    default graph is a function being traced (it captures the tensors of other graphs), where
    the op belongs to the function, as a closure's ops do in TensorFlow (a ``cond`` branch
    built with control flow v2 that assigns to a variable of the outer graph, say)."""
    default = get_default_graph()
    if default._eager and graph.building_function and graph not in _thread_state.graph_stack:
        raise _out_of_scope(graph)
    return default if default.captures_outer_tensors else graph


def _out_of_scope(graph: Graph) -> TypeError:
    """TensorFlow's error for a tensor of a finished function trace used by an eager op: the
    tensor leaked out of the function (kept in a Python list, a global, an attribute)."""
    return TypeError(
        f"A tensor of the graph of df.function '{getattr(graph, 'name', '?')}' is out of scope "
        f"and cannot be used here ({_user_location()}). Use return values, explicit Python "
        "locals or TensorFlow collections to access it: a tensor made while a function was "
        "traced has no value outside it."
    )


def get_default_graph() -> Graph:
    """The innermost graph opened with ``as_default()`` in this thread, else the global one."""
    global _global_default_graph
    stack = _thread_state.graph_stack
    if stack:
        return stack[-1]
    if _global_default_graph is None:
        _global_default_graph = Graph()
    return _global_default_graph


def outermost_graph(graph: Graph) -> Graph:
    """The graph outside every function being traced into ``graph`` (a df.function's graph
    keeps the graph it was called from as ``outer_graph``)."""
    while getattr(graph, "building_function", False) and getattr(graph, "outer_graph", None):
        graph = graph.outer_graph
    return graph


def executing_eagerly_outside_functions() -> bool:
    """Whether the outermost context (outside every function being traced) runs eagerly: True
    in a program that runs eagerly (TensorFlow 2's way), also while it traces a df.function;
    False while a graph is built for a Session.  Ops whose TensorFlow 2 form differs from
    ``tf.compat.v1``'s ask it to pick theirs."""
    return bool(outermost_graph(get_default_graph())._eager)


def reset_default_graph() -> None:
    """Replaces the global default graph with a new, empty one.  In eager mode (its graph is
    the default: `enable_eager_execution`, ``with eager_mode():``) eager mode stays on, as in
    TensorFlow, where it is no property of a graph; what that graph kept (its collections)
    is forgotten."""
    global _global_default_graph
    stack = _default_graph_stack()
    if any(not graph._eager for graph in stack):
        raise AssertionError(
            "Do not use reset_default_graph() inside a `with graph.as_default():` block."
        )
    for graph in stack:
        graph._reset()
    if _global_default_graph is None or not _global_default_graph._eager:
        _global_default_graph = Graph()
    else:
        _global_default_graph._reset()


def name_scope(name: Optional[str], default_name: Optional[str] = None, values=None):
    """``with df.name_scope("layer1"):`` prefixes the names of ops created inside."""
    graph = get_default_graph()
    if values:
        for v in values:
            if isinstance(v, Tensor):
                graph = v.graph
                break
    return graph.name_scope(name if name is not None else default_name)


def control_dependencies(control_inputs):
    """``with df.control_dependencies([a]):`` ops created inside run after ``a``."""
    return get_default_graph().control_dependencies(control_inputs)


def device(device_name_or_function):
    """``with df.device("/gpu:0"):`` records a device on the ops created inside (see
    `Graph.device`); every op still runs on the host (`dataflow.framework.device`)."""
    return get_default_graph().device(device_name_or_function)


def colocate_with(op, ignore_existing: bool = False):
    """``with df.colocate_with(v):`` colocates the ops created inside with ``v`` (see
    `Graph.colocate_with`)."""
    return get_default_graph().colocate_with(op, ignore_existing)


def add_to_collection(name: str, value) -> None:
    """Adds ``value`` to the default graph's collection ``name``."""
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names, value) -> None:
    """Adds ``value`` to each of the default graph's collections ``names``."""
    get_default_graph().add_to_collections(names, value)


def get_collection(key: str, scope: Optional[str] = None) -> list:
    """A copy of the default graph's collection ``key`` (see `Graph.get_collection`)."""
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key: str) -> list:
    """The default graph's collection ``key`` itself: changing the list changes the graph's."""
    return get_default_graph().get_collection_ref(key)
