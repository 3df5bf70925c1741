"""Variables: named state that lives across runs, and the ops that read and write it.

A `Variable` is a handle op (``VarHandleOp``, named after the variable, so ``v.name`` is
``"Variable:0"`` as in TensorFlow) plus ops that take the handle: ``ReadVariableOp``,
``Assign``, ``AssignAdd``, ``AssignSub``.  The values themselves belong to the Session (the
graph holds no run-time state).  Each use of a variable as a tensor creates a fresh read under
the control dependencies in force, so ``with df.control_dependencies([v.assign(1)]): v * 2``
reads the assigned value (resource-variable semantics; TF1's ref variables make that read racy).

Writes during a run go into that run's `RunContext` and reach the Session only when the run
succeeds, so a failed run leaves every variable as it was.  ``AssignAdd`` and ``AssignSub`` are
atomic across runs, as in TensorFlow: when runs in several threads update one variable at once,
each run's change is applied at its commit to the value the others committed, and none is lost
(the value an update returns is the one its own run computed).

A variable's value shares memory with nothing that can write it, as in TensorFlow, where a
variable owns its buffer: `_check_assignable` makes every value written (by ``Assign``,
``AssignAdd``, ``AssignSub``, ``Variable.load`` and ``Saver.restore``) a read-only array,
copying it unless the run made it and nothing outside the run holds it.  So a fed array, or a
user's array given to ``load``, may be changed afterwards without changing the variable, and a
fetched value (a read, or the output of an assign) comes back as a copy, since ``Session.run``
copies read-only arrays; a kernel handed the value cannot write into it either.  The copies are
made where they are cheapest: an ``Assign`` of a freshly computed value, which is what
optimizers write on every step, freezes that array in place instead of copying it (the Session
tells the kernel, see ``fresh_inputs`` below), and reads within a run pass the array itself.
"""

from __future__ import annotations

import contextlib
import enum
import threading
import weakref
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import FailedPreconditionError, InvalidArgumentError
from ..framework.graph import (
    Tensor,
    TensorRef,
    _user_location,
    control_dependencies,
    get_default_graph,
    graph_to_build_in,
    name_scope,
)
from ..framework.graph_keys import GraphKeys
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor, register_tensor_conversion_function
from ..framework.tensor_equality import _elementwise as _tensor_equality
from ..framework.tensor_shape import TensorShape
from ..framework.tensor_spec import TensorSpec
from ..framework.type_spec import register_spec_of

# The variables made eagerly, by the id of their handle (a tape finds a read's variable here).
_eager_variables: weakref.WeakValueDictionary = weakref.WeakValueDictionary()

# Lists that collect the variables read on this thread while `watching_reads` is active.
_read_watchers = threading.local()


@contextlib.contextmanager
def watching_reads():
    """Yields a list to which every variable read on this thread inside the block is appended
    (once per read, in order), as TensorFlow's VariableWatcher: how `df.custom_gradient` finds
    the variables a function uses."""
    stack = getattr(_read_watchers, "stack", None)
    if stack is None:
        stack = _read_watchers.stack = []
    found: list = []
    stack.append(found)
    try:
        yield found
    finally:
        stack.remove(found)


def _note_read(variable) -> None:
    stack = getattr(_read_watchers, "stack", None)
    if stack:
        for found in stack:
            found.append(variable)


class VariableRef:
    """The run-time value of a variable handle: the key of the variable in a Session."""

    __slots__ = ("key", "dtype", "shape", "__weakref__")

    def __init__(self, key: str, dtype: _dtypes.DType, shape: TensorShape):
        self.key = key
        self.dtype = dtype
        self.shape = shape

    def __repr__(self) -> str:
        return f"<VariableRef {self.key}>"


def _handle_kernel(attrs):
    ref = VariableRef(attrs["shared_name"], attrs["dtype"], attrs["shape"])
    return lambda: ref


define_op(
    "VarHandleOp",
    lambda op: [(_dtypes.resource, ())],
    _handle_kernel,
    inline=True,
    stateful=True,
)


def _read_kernel(attrs):
    return lambda context, ref: context.read_variable(ref)


def _infer_read(op):
    return [(op.attrs["dtype"], op.attrs["shape"])]


define_op(
    "ReadVariableOp",
    _infer_read,
    _read_kernel,
    inline=True,
    stateful=True,
    wants_context=True,
    # The gradient passes to the handle, where `gradients` sums reads; a tape watches the
    # variable a read reads (`dataflow.eager.tape`).
    extra={"passes_sparse_gradients": True, "reads_variable": True},
)


def _check_assignable(ref: VariableRef, value, validate_shape: bool, owned: bool = False):
    """``value`` as the array variable ``ref`` will hold: of its dtype, of a shape it accepts,
    read-only, and sharing memory with nothing else that could write it (see the module
    docstring).  ``owned`` says the array was made by this run and nothing outside the run
    holds it: it is then frozen in place rather than copied, unless it is a view of another
    array."""
    value = np.asarray(value)
    dtype = _dtypes.numpy_dtype(ref.dtype)
    if value.dtype != dtype:
        value = value.astype(dtype)  # a new array
    elif not owned or value.base is not None:
        value = value.copy()
    if validate_shape and not ref.shape.is_compatible_with(value.shape):
        raise InvalidArgumentError(
            None,
            None,
            f"Cannot assign a value of shape {value.shape} to variable '{ref.key}' of shape "
            f"{ref.shape}",
        )
    value.flags.writeable = False
    return value


def _assign_kernel(attrs):
    """``fresh_inputs`` (set by the Session when it lowers the op): which inputs are arrays
    the run made that nothing else holds (``inplace.is_fresh_value``), so that a freshly
    computed value is taken without a copy."""
    validate = attrs.get("validate_shape", True)
    owned = attrs.get("fresh_inputs", (False, False))[1]

    def assign(context, ref, value):
        value = _check_assignable(ref, value, validate, owned)
        context.write_variable(ref, value)
        return value

    return assign


def _update_kernel(ufunc):
    def make(attrs):
        def update(context, ref, delta):
            # The ufunc's result is a new array: the variable takes it as it is.  The context
            # is told what it was computed from, so that a run committing first is not undone.
            base = context.read_variable(ref)
            value = _check_assignable(ref, ufunc(base, delta), True, owned=True)
            context.update_variable(ref, base, value)
            return value

        return update

    return make


def _infer_assign(op):
    handle, value = op.inputs
    var_dtype, var_shape = op.attrs["dtype"], op.attrs["shape"]
    if value.dtype is not var_dtype:
        raise TypeError(f"Cannot assign a {value.dtype.name} value to a {var_dtype.name} variable")
    if op.attrs.get("validate_shape", True) and not var_shape.is_compatible_with(value.shape):
        raise ValueError(f"Shapes {var_shape} and {value.shape} are incompatible")
    shape = var_shape if op.attrs.get("validate_shape", True) else value.shape
    return [(var_dtype, shape)]


for _type, _kernel in (
    ("Assign", _assign_kernel),
    ("AssignAdd", _update_kernel(np.add)),
    ("AssignSub", _update_kernel(np.subtract)),
):
    define_op(
        _type,
        _infer_assign,
        _kernel,
        inline=True,
        stateful=True,
        wants_context=True,
        # The Session passes the kernel factory ``fresh_inputs`` (see `_assign_kernel`).  A TF1
        # reference (`dataflow.ops.ref_variables`) names the storage as a handle does.
        extra={"fresh_inputs": True, "ref_inputs": (0,)},
    )


class VariableSynchronization(enum.Enum):
    """When a distributed variable's copies are brought in step (``tf.VariableSynchronization``).
    Recorded on the variable; with one process there is nothing to synchronize."""

    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class VariableAggregation(enum.Enum):
    """How a distributed variable's copies combine their updates (``tf.VariableAggregation``).
    Recorded on the variable; with one process there is one copy."""

    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3


@contextlib.contextmanager
def _outside_control_flow():
    """Builds a variable's ops at the top level of the default graph, outside any cond branch
    or loop body being built (TensorFlow's ``init_scope``): a variable made in a body exists
    once, is initialized by ``global_variables_initializer`` like any other, and its handle
    enters the body as a loop invariant.  The name scope is kept."""
    graph = get_default_graph()
    context = graph._control_flow_context
    graph._control_flow_context = None
    try:
        yield
    finally:
        graph._control_flow_context = context


# The variable creators in force for each graph (innermost last), `variable_creator_scope`'s.
_creator_stacks: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_CREATOR_KEYWORDS = (
    "initial_value",
    "trainable",
    "collections",
    "validate_shape",
    "caching_device",
    "name",
    "variable_def",
    "dtype",
    "expected_shape",
    "import_scope",
    "constraint",
    "use_resource",
    "synchronization",
    "aggregation",
    "shape",
)


class _VariableMeta(type):
    """Makes ``Variable(...)`` go through the creators of `variable_creator_scope`, as
    TensorFlow's variable metaclass does (``get_variable`` makes its variables so too)."""

    def __call__(cls, *args, **kwargs):
        stack = _creator_stacks.get(get_default_graph()) if cls is Variable else None
        if not stack:
            return super().__call__(*args, **kwargs)
        arguments = dict(zip(_CREATOR_KEYWORDS, args))
        for key, value in kwargs.items():
            if key in arguments:
                raise TypeError(f"Variable() got multiple values for argument '{key}'")
            arguments[key] = value
        for key, default in _creator_defaults().items():
            arguments.setdefault(key, default)
        arguments.setdefault("experimental_enable_variable_lifting", True)

        def default_creator(**kw):
            kw.pop("experimental_enable_variable_lifting", None)
            return type.__call__(cls, **kw)

        creator = default_creator
        for outer in stack:
            creator = _next_creator(outer, creator)
        return creator(**arguments)


def _creator_defaults() -> dict:
    import inspect

    parameters = inspect.signature(Variable.__init__).parameters
    return {key: parameters[key].default for key in _CREATOR_KEYWORDS}


def _next_creator(creator, next_creator):
    return lambda **kwargs: creator(next_creator, **kwargs)


@contextlib.contextmanager
def variable_creator_scope(variable_creator):
    """Inside, every variable made in the default graph (``Variable`` and ``get_variable``) is
    made by ``variable_creator(next_creator, **kwargs)``, which may change the keyword
    arguments (``initial_value``, ``name``, ``trainable``, ...) and calls ``next_creator`` to
    go on (an outer scope's creator, then the default one)."""
    graph = get_default_graph()
    stack = _creator_stacks.setdefault(graph, [])
    stack.append(variable_creator)
    try:
        yield
    finally:
        stack.remove(variable_creator)


class Variable(metaclass=_VariableMeta):
    """A tensor-like value that persists across ``Session.run`` calls (``tf.compat.v1.Variable``).

    Its initial value is set by running ``v.initializer`` (or
    ``df.global_variables_initializer()``); reading it before that fails with
    ``FailedPreconditionError``.

    Equality follows the mode the variable was made in, as in TensorFlow:

    - Made in a graph (TF1's graph mode): ``==`` and ``!=`` are identity and ``hash`` is by
      ``id``, so variables key dicts and sets as TF1 code expects.
    - Made eagerly (TF2), including the variables a ``df.function`` makes: ``v == x`` and
      ``v != x`` compare the variable's value elementwise with ``x`` (a variable, a tensor or
      a Python/numpy value, broadcast) and give a bool tensor; when the two shapes cannot
      broadcast the answer is one bool scalar (False for ``==``, True for ``!=``), as
      TensorFlow's ``incompatible_shape_error=False``.  Such a variable is unhashable:
      ``v.ref()`` is the dict or set key (``ref().deref()`` gives the variable back).
      ``v == None`` is a ``ValueError`` (None is no value to compare with; TensorFlow 2.21
      raises the same), so test for a missing variable with ``is None``.
      ``df.disable_tensor_equality()`` gives TF1's identity and hashing back
      (`dataflow.framework.tensor_equality`).
    """

    # What a variable rebuilt from a saved graph has (the file does not record them).
    _constraint = None
    _caching_device = None
    _synchronization = VariableSynchronization.AUTO
    _aggregation = VariableAggregation.NONE
    _eager = False  # made in eager mode: holds its value in the eager context, reads at once

    def __init__(
        self,
        initial_value=None,
        trainable: Optional[bool] = None,
        collections=None,
        validate_shape: bool = True,
        caching_device=None,
        name: Optional[str] = None,
        variable_def=None,
        dtype=None,
        expected_shape=None,
        import_scope=None,
        constraint=None,
        use_resource=None,
        synchronization=None,
        aggregation=None,
        shape=None,
    ):
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        if trainable is None:  # as TensorFlow: a variable synchronized on read is not trained
            trainable = synchronization is not VariableSynchronization.ON_READ
        if constraint is not None and not callable(constraint):
            raise ValueError(f"The `constraint` argument must be a callable, got {constraint!r}")
        # A graph may build its variables elsewhere (a trace in eager mode makes them eagerly).
        creation_scope = getattr(get_default_graph(), "variable_creation_scope", None)
        with (
            creation_scope(self) if creation_scope else contextlib.nullcontext(),
            name_scope(name or "Variable") as scope,
            _outside_control_flow(),
        ):
            op_name = scope[:-1]
            # As TensorFlow: a callable runs in an "Initializer" scope, a value converts to
            # "<name>/initial_value"; neither is under the control dependencies in force.
            with control_dependencies(None):
                if callable(initial_value):
                    with name_scope("Initializer"):
                        initial = convert_to_tensor(
                            initial_value(), dtype=dtype, name="initial_value"
                        )
                else:
                    initial = convert_to_tensor(initial_value, dtype=dtype, name="initial_value")
            if validate_shape and shape is None and not initial.shape.is_fully_defined():
                raise ValueError(
                    f"initial_value must have a shape specified: {initial!r} (or pass "
                    "validate_shape=False)"
                )
            self._dtype = initial.dtype
            self._shape = TensorShape(shape) if shape is not None else initial.shape
            if not validate_shape:
                self._shape = TensorShape(None)
            attrs = {"dtype": self._dtype, "shape": self._shape}
            with control_dependencies(None):
                self._handle = apply_op(
                    "VarHandleOp", (), dict(attrs, shared_name=op_name), name=op_name + "/"
                ).outputs[0]
                self._initializer_op = apply_op(
                    "Assign",
                    [self._handle, initial],
                    dict(attrs, validate_shape=validate_shape),
                    name="Assign",
                )
                # Eagerly a variable has no fixed read: `value()` reads it when asked.
                self._eager = self._handle._is_eager
                self._snapshot = None if self._eager else self._read("read")
        self._initial_value = initial
        self._trainable = trainable
        self._constraint = constraint
        self._caching_device = caching_device
        self._synchronization = synchronization or VariableSynchronization.AUTO
        self._aggregation = aggregation or VariableAggregation.NONE
        self._graph = self._handle.graph
        if self._eager:  # as in TensorFlow's eager mode, no collection keeps the variable...
            _eager_variables[id(self._handle)] = self
            if collections and GraphKeys.GLOBAL_STEP in collections:
                # ...but the global step, so that get_or_create_global_step finds it again.
                self._graph.add_to_collection(GraphKeys.GLOBAL_STEP, self)
            return
        if collections is None:
            collections = [GraphKeys.GLOBAL_VARIABLES]
        if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections = list(collections) + [GraphKeys.TRAINABLE_VARIABLES]
        self._graph.add_to_collections(collections, self)

    def _attrs(self) -> dict:
        return {"dtype": self._dtype, "shape": self._shape}

    def _read(self, name: str) -> Tensor:
        _note_read(self)
        return apply_op("ReadVariableOp", [self._handle], self._attrs(), name=name).outputs[0]

    # -- properties ------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._handle.name

    @property
    def op(self):
        return self._handle.op

    @property
    def handle(self) -> Tensor:
        return self._handle

    @property
    def dtype(self) -> _dtypes.DType:
        return self._dtype

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def get_shape(self) -> TensorShape:
        return self._shape

    @property
    def graph(self):
        return self._graph

    @property
    def trainable(self) -> bool:
        return self._trainable

    @property
    def initializer(self):
        return self._initializer_op

    @property
    def initial_value(self) -> Tensor:
        return self._initial_value

    @property
    def device(self) -> str:
        return self._handle.op.device

    @property
    def constraint(self):
        """The function an optimizer applies to the variable after each update, or None."""
        return self._constraint

    @property
    def caching_device(self):
        return self._caching_device

    @property
    def synchronization(self) -> VariableSynchronization:
        return self._synchronization

    @property
    def aggregation(self) -> VariableAggregation:
        return self._aggregation

    # -- reading and writing ---------------------------------------------------------------------
    def value(self) -> Tensor:
        """A read of the variable made when the variable was created (its graph element);
        eagerly, the variable's value now."""
        if self._eager:
            return self._read("read")
        _note_read(self)
        return self._snapshot

    def numpy(self):
        """The variable's value now, as a numpy array (eager mode only, as in TensorFlow)."""
        if not self._eager:
            raise NotImplementedError("numpy() is only available when eager execution is enabled.")
        return self._read("read").numpy()

    def read_value(self) -> Tensor:
        """A new read of the variable, ordered after the control dependencies in force.  Named
        ``read`` in the current name scope, as TensorFlow's."""
        return self._read("read")

    def sparse_read(self, indices, name: Optional[str] = None) -> Tensor:
        """The rows ``indices`` of the variable (a ``gather`` of a read), whose gradient with
        respect to the variable is those rows only (IndexedSlices)."""
        from .gather_ops import gather

        with name_scope(name or "Gather"):
            return gather(self, indices)

    def _as_graph_element(self) -> Tensor:
        return self.value()

    def assign(self, value, use_locking=None, name=None, read_value=True):
        """Writes ``value`` into the variable.  Returns the variable as it is after the write
        (an `_UnreadVariable`: use it as a value, or chain another update on it), or with
        ``read_value=False`` the update `Operation` in a graph and None eagerly, as in
        TensorFlow."""
        return self._update("Assign", value, name, read_value)

    def assign_add(self, delta, use_locking=None, name=None, read_value=True):
        """Adds ``delta`` (of the variable's shape) to the variable; returns what `assign`
        returns."""
        return self._update("AssignAdd", delta, name, read_value)

    def assign_sub(self, delta, use_locking=None, name=None, read_value=True):
        """Subtracts ``delta`` (of the variable's shape) from the variable; returns what
        `assign` returns."""
        return self._update("AssignSub", delta, name, read_value)

    def _update_graph(self):
        """Where an update of the variable is built: its own graph, or for an eager variable
        the default graph (eager mode's, or a trace that captures the variable)."""
        return get_default_graph() if self._eager else self._handle.graph

    def _update(self, op_type: str, value, name, read_value=True, validate_shape=True):
        graph = graph_to_build_in(self._update_graph())
        with graph.as_default(), graph.name_scope(name or op_type) as scope:
            # A tensor of another dtype is the op's TypeError; other values convert to ours
            # (as "Assign/value", like TensorFlow's op wrappers name them).
            if not isinstance(value, Tensor):
                value = convert_to_tensor(value, dtype=self._dtype, name="value")
            if self._eager:
                self._check_eager_update(op_type, scope[:-1], value, validate_shape)
            attrs = self._attrs()
            if not validate_shape:
                attrs["validate_shape"] = False
            op = apply_op(op_type, [self._handle, value], attrs, name=scope)
        return self._after_update(op, read_value)

    def _check_eager_update(
        self, op_type: str, op_name: str, value: Tensor, validate_shape: bool
    ) -> None:
        """The checks TensorFlow 2's variables make in Python before an update, with its
        ``ValueError``: the value's dtype, and for ``assign`` its shape (a wrong shape for
        ``assign_add``/``assign_sub`` is the op's error, as there)."""
        if value.dtype.base_dtype is not self._dtype:
            raise ValueError(
                f"{op_type} op '{op_name}' at {_user_location()}: Tensor conversion requested "
                f"dtype {self._dtype.name} for Tensor with dtype {value.dtype.name}: {value!r}"
            )
        if (
            op_type == "Assign"
            and validate_shape
            and not self._shape.is_compatible_with(value.shape)
        ):
            raise ValueError(
                f"{op_type} op '{op_name}' at {_user_location()}: Cannot assign value to "
                f"variable '{self.name}': Shape mismatch. The variable shape {self._shape}, "
                f"and the assigned value shape {value.shape} are incompatible."
            )

    def _after_update(self, op, read_value: bool):
        """What an update made by ``op`` returns (see `assign`).  An op run eagerly belongs to
        no graph: the update is done, and the variable seen after it is the variable itself."""
        ran_eagerly = op.graph is None
        if not read_value:
            return None if ran_eagerly else op
        return _UnreadVariable(self, None if ran_eagerly else op)

    # -- sparse updates (the ops are defined in dataflow.ops.state_ops) ---------------------
    def scatter_update(self, sparse_delta, use_locking=False, name=None):
        """Sets the rows ``sparse_delta.indices`` to ``sparse_delta.values`` (an
        ``IndexedSlices``); returns the new value (see `_scatter`)."""
        return self._scatter("ScatterUpdate", sparse_delta.indices, sparse_delta.values, name)

    def scatter_add(self, sparse_delta, use_locking=False, name=None):
        """Adds ``sparse_delta.values`` to the rows ``sparse_delta.indices``."""
        return self._scatter("ScatterAdd", sparse_delta.indices, sparse_delta.values, name)

    def scatter_sub(self, sparse_delta, use_locking=False, name=None):
        """Subtracts ``sparse_delta.values`` from the rows ``sparse_delta.indices``."""
        return self._scatter("ScatterSub", sparse_delta.indices, sparse_delta.values, name)

    def scatter_mul(self, sparse_delta, use_locking=False, name=None):
        """Multiplies the rows ``sparse_delta.indices`` by ``sparse_delta.values``."""
        return self._scatter("ScatterMul", sparse_delta.indices, sparse_delta.values, name)

    def scatter_div(self, sparse_delta, use_locking=False, name=None):
        """Divides the rows ``sparse_delta.indices`` by ``sparse_delta.values``."""
        return self._scatter("ScatterDiv", sparse_delta.indices, sparse_delta.values, name)

    def scatter_min(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("ScatterMin", sparse_delta.indices, sparse_delta.values, name)

    def scatter_max(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("ScatterMax", sparse_delta.indices, sparse_delta.values, name)

    def scatter_nd_update(self, indices, updates, name=None):
        """Sets the elements (or slices) that the last axis of ``indices`` addresses."""
        return self._scatter("ScatterNdUpdate", indices, updates, name)

    def scatter_nd_add(self, indices, updates, name=None):
        return self._scatter("ScatterNdAdd", indices, updates, name)

    def scatter_nd_sub(self, indices, updates, name=None):
        return self._scatter("ScatterNdSub", indices, updates, name)

    def _scatter(self, op_type: str, indices, updates, name):
        """The sparse update ``op_type``.  Returns the variable after it for a variable made
        eagerly (eager mode or a trace), as TensorFlow 2's do (see `assign`); in a graph, the
        op's output (the new value), as TF1's variables give."""
        graph = graph_to_build_in(self._update_graph())
        with graph.as_default(), graph.name_scope(name or op_type) as scope:
            if not isinstance(indices, Tensor):
                indices = convert_to_tensor(indices, name="indices")
            if not isinstance(updates, Tensor):
                updates = convert_to_tensor(updates, dtype=self._dtype, name="updates")
            op = apply_op(op_type, [self._handle, indices, updates], self._attrs(), name=scope)
        if not self._eager:
            return op.outputs[0]
        return self._after_update(op, read_value=True)

    def load(self, value, session=None) -> None:
        """Writes ``value`` into the variable in ``session`` (the default one if omitted);
        eagerly, into the variable itself."""
        if self._eager:
            self.assign(value)
            return
        from ..framework.session_stack import _session_for_eval

        _session_for_eval(session, self._graph)._load_variable(self, value)

    def eval(self, session=None):
        return self.value().eval(session=session)

    def __repr__(self) -> str:
        described = f"df.Variable '{self.name}' shape={self._shape} dtype={self._dtype.name}"
        if self._eager:
            value = self._read("read")._value
            return f"<{described}, numpy={value if value.ndim == 0 else repr(value)}>"
        return f"<{described}>"

    # -- equality and hashing (see the class docstring) ------------------------------------------
    def __hash__(self) -> int:
        if self._eager and _tensor_equality[0]:
            raise TypeError(
                "Variable is unhashable. Instead, use variable.ref() as the key. (Variable: "
                f"<df.Variable '{self.name}' shape={self._shape} dtype={self._dtype.name}>)"
            )
        return id(self)

    def __eq__(self, other):
        if self._eager and _tensor_equality[0]:
            return _compare_elementwise(self, other, "Equal")
        return self is other

    def __ne__(self, other):
        if self._eager and _tensor_equality[0]:
            return _compare_elementwise(self, other, "NotEqual")
        return self is not other

    def ref(self) -> TensorRef:
        """A hashable key for this variable, equal only to keys of the same variable object;
        ``deref()`` gives the variable back.  Needed for an eager variable, whose ``==``
        compares values."""
        return TensorRef(self)

    experimental_ref = ref

    # -- the value as Python and numpy see it (eagerly; a graph's value is only known when run)
    def __bool__(self):
        return bool(self.read_value())

    def __float__(self) -> float:
        return float(self.value())

    def __int__(self) -> int:
        return int(self.value())

    def __complex__(self) -> complex:
        return complex(np.asarray(self.value()))

    def __iter__(self):
        return iter(self.value())

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.value(), dtype)

    __array_priority__ = 100


class _UnreadVariable(Variable):
    """What ``Variable.assign*`` and ``scatter_*`` return, as TensorFlow's resource variables
    do: the same variable, seen after the update.

    It is not a new variable (no collection holds it, its handle is the variable's) and it
    compares, hashes and converts as the variable does.

    - In a graph (TF1, or a ``df.function`` being traced) it is the variable after the update
      ``op``: its reads (``read_value()``, ``value()``, its use as a tensor, its operators)
      are ordered after ``op``, so they see the update; fetching it, or depending on it, runs
      ``op`` and gives the new value (the update's own output); ``.op`` and ``.name`` are the
      update's, and a further ``assign*`` runs after it.
    - Eagerly (``op`` is None: the update has run) it reads the variable's value when asked,
      as TensorFlow 2's does: ``v.assign_sub(1) * 2`` reads the new value, and a later write
      to ``v`` shows through it too.  Its name is ``UnreadVariable``, as there.
    """

    def __init__(self, variable: Variable, update_op):
        self.__dict__.update(variable.__dict__)
        self._update_op = update_op
        if update_op is not None:
            self._snapshot = update_op.outputs[0]

    @property
    def name(self) -> str:
        return "UnreadVariable" if self._update_op is None else self._update_op.name

    @property
    def op(self):
        return super().op if self._update_op is None else self._update_op

    @property
    def graph(self):
        return self._graph if self._update_op is None else self._update_op.graph

    def _after_the_update(self):
        """Where reads and further updates go: after the update, in the graph it was built in
        (a traced branch or function builds it in its own graph, not in the variable's)."""
        if self._update_op is None:
            return contextlib.nullcontext()
        stack = contextlib.ExitStack()
        stack.enter_context(self._update_op.graph.as_default())
        stack.enter_context(control_dependencies([self._update_op]))
        return stack

    def _read(self, name: str) -> Tensor:
        with self._after_the_update():
            return super()._read(name)

    def _update(self, op_type: str, value, name, read_value=True, validate_shape=True):
        with self._after_the_update():
            return super()._update(op_type, value, name, read_value, validate_shape)

    def _scatter(self, op_type: str, indices, updates, name):
        with self._after_the_update():
            return super()._scatter(op_type, indices, updates, name)


def value_of_unread_variable(value):
    """``value``, or when it is a variable seen after an update (`_UnreadVariable`) its value
    read after that update: what a ``df.function`` returns for it, as TensorFlow's do."""
    return value.value() if isinstance(value, _UnreadVariable) else value


def _compare_elementwise(variable: Variable, other, op_type: str) -> Tensor:
    """``variable == other`` (``op_type`` ``Equal``) or ``!=`` (``NotEqual``) for an eager
    variable: see `Variable`."""
    from .math_ops import compare_for_equality

    if other is None:
        raise ValueError(
            f"{op_type} op at {_user_location()}: Attempt to convert a value (None) with an "
            f"unsupported type (<class 'NoneType'>) to a Tensor, to compare it with variable "
            f"'{variable.name}'; test for a missing variable with 'is None'."
        )
    return compare_for_equality(variable.value(), other, op_type)


def _convert_variable(var: Variable, dtype=None, name=None) -> Tensor:
    if dtype is not None and _dtypes.as_dtype(dtype) is not var.dtype:
        raise ValueError(
            f"Tensor conversion requested dtype {_dtypes.as_dtype(dtype).name} for variable "
            f"'{var.name}' of dtype {var.dtype.name}"
        )
    return var.read_value()


register_tensor_conversion_function(Variable, _convert_variable)


def _forward_operator(name: str):
    def method(self, *args):
        return getattr(self.read_value(), name)(*args)

    method.__name__ = name
    return method


for _name in (
    "__add__ __radd__ __sub__ __rsub__ __mul__ __rmul__ __truediv__ __rtruediv__ __floordiv__ "
    "__rfloordiv__ __mod__ __rmod__ __pow__ __rpow__ __matmul__ __rmatmul__ __neg__ __abs__ "
    "__lt__ __le__ __gt__ __ge__ __and__ __rand__ __or__ __ror__ __xor__ __rxor__ __invert__ "
    "__getitem__"
).split():
    setattr(Variable, _name, _forward_operator(_name))


# -- module-level functions -----------------------------------------------------------------------
def _update_through_ref(op_type: str, ref: Tensor, value, name, validate_shape=True) -> Tensor:
    """``op_type`` (Assign, AssignAdd, AssignSub) on the storage a TF1 reference tensor names
    (`dataflow.ops.ref_variables`); outputs the new value."""
    if not ref.dtype.is_ref_dtype:
        raise TypeError(
            f"{op_type} needs a Variable or a reference to one; '{ref.name}' is a "
            f"{ref.dtype.name} value"
        )
    graph = ref.graph
    dtype = ref.dtype.base_dtype
    with graph.as_default(), graph.name_scope(name or op_type) as scope:
        if not isinstance(value, Tensor):
            value = convert_to_tensor(value, dtype=dtype, name="value")
        attrs = {"dtype": dtype, "shape": ref.shape, "validate_shape": validate_shape}
        return apply_op(op_type, [ref, value], attrs, name=scope).outputs[0]


def assign(ref: Variable, value, validate_shape=None, use_locking=None, name=None) -> Tensor:
    """``ref.assign(value)``; ``validate_shape=False`` lets the value change the shape.  ``ref``
    may also be a TF1 reference to a variable's storage."""
    if isinstance(ref, Tensor):
        return _update_through_ref("Assign", ref, value, name, validate_shape is not False)
    return ref._update("Assign", value, name, validate_shape=validate_shape is not False)


def assign_add(ref: Variable, value, use_locking=None, name=None) -> Tensor:
    """``ref.assign_add(value)``: the op that adds ``value`` to the variable (or reference)."""
    if isinstance(ref, Tensor):
        return _update_through_ref("AssignAdd", ref, value, name)
    return ref.assign_add(value, name=name)


def assign_sub(ref: Variable, value, use_locking=None, name=None) -> Tensor:
    """``ref.assign_sub(value)``: the op that subtracts ``value`` from the variable (or
    reference)."""
    if isinstance(ref, Tensor):
        return _update_through_ref("AssignSub", ref, value, name)
    return ref.assign_sub(value, name=name)


def global_variables(scope: Optional[str] = None) -> list[Variable]:
    """The default graph's ``GLOBAL_VARIABLES`` (every variable, unless made with other
    ``collections``), those whose names match the regular expression ``scope`` when given."""
    return get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


def trainable_variables(scope: Optional[str] = None) -> list[Variable]:
    """The default graph's ``TRAINABLE_VARIABLES``, those whose names match ``scope`` when
    given: what an optimizer trains by default."""
    return get_default_graph().get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def local_variables(scope: Optional[str] = None) -> list[Variable]:
    """The default graph's ``LOCAL_VARIABLES``, those whose names match ``scope`` when given."""
    return get_default_graph().get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def model_variables(scope: Optional[str] = None) -> list[Variable]:
    """The default graph's ``MODEL_VARIABLES`` (those a model is made of, which layers
    libraries add there), those whose names match ``scope`` when given."""
    return get_default_graph().get_collection(GraphKeys.MODEL_VARIABLES, scope)


def moving_average_variables(scope: Optional[str] = None) -> list[Variable]:
    """The default graph's ``MOVING_AVERAGE_VARIABLES`` (the variables an
    ``ExponentialMovingAverage`` keeps averages of), those matching ``scope`` when given."""
    return get_default_graph().get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, scope)


def variables_initializer(var_list, name: str = "init"):
    """One op that runs the initializers of ``var_list``."""
    from .misc_ops import group, no_op

    var_list = list(var_list)
    if not var_list:
        return no_op(name=name)
    return group(*[v.initializer for v in var_list], name=name)


def global_variables_initializer():
    """One op that runs the initializer of every variable in ``global_variables()``."""
    return variables_initializer(global_variables(), name="init")


def local_variables_initializer():
    """One op that runs the initializer of every variable in ``local_variables()``."""
    return variables_initializer(local_variables(), name="init")


initialize_all_variables = global_variables_initializer


def _uninitialized(ref: VariableRef):
    return FailedPreconditionError(None, None, f"Attempting to use uninitialized value {ref.key}")


# -- gradients -------------------------------------------------------------------------------------
# The gradient with respect to a variable is the sum over its reads: each read passes its
# gradient to the handle, where `gradients` adds them up (resource-variable semantics).
from ..framework.gradient_registry import NotDifferentiable, RegisterGradient  # noqa: E402

for _type in ("VarHandleOp", "Assign", "AssignAdd", "AssignSub"):
    NotDifferentiable(_type)


@RegisterGradient("ReadVariableOp")
def _read_variable_grad(op, grad):
    return grad


def assert_variables_initialized(var_list=None):
    """A tensor whose run fails with ``FailedPreconditionError`` if a variable of ``var_list``
    (default: every global and local variable) is not initialized (TF1's
    ``tf.assert_variables_initialized``): it reads each variable, and holds its rank (int32;
    a vector of them for several variables).  None when there is no variable."""
    from ..framework.op_registry import apply_op
    from .array_ops import stack

    if var_list is None:
        var_list = global_variables() + local_variables()
    var_list = list(var_list)
    if not var_list:
        return None
    ranks = []
    for var in var_list:
        value = var.value() if isinstance(var, Variable) else var
        ranks.append(apply_op("Rank", (value,), {"out_type": _dtypes.int32}, "Rank").outputs[0])
    if len(ranks) == 1:
        return ranks[0]
    return stack(ranks)


# A variable's spec is the spec of its value.
register_spec_of(Variable, lambda value: TensorSpec(value.shape, value.dtype.base_dtype))
