"""Variable scopes and ``get_variable``: variables shared by name, as in ``tf.compat.v1``.

Two pieces of state, both per graph, as TensorFlow keeps them:

- the *variable store* (`_VariableStore`): every variable ``get_variable`` made, by full name.
  ``get_variable("w")`` in scope ``"layer"`` looks up ``"layer/w"``; whether it may create it,
  must find it, or either (``AUTO_REUSE``) is the scope's ``reuse``.  Shared by all threads.
- the *scope stack* (`_ScopeState`, per thread, like the graph's name scope): the current
  `VariableScope` and how many times each scope name has been opened, which makes
  ``default_name`` scopes unique (``"dense"``, ``"dense_1"``).

Variable names depend only on variable scopes; op names only on name scopes.  Entering
``variable_scope("a")`` also opens ``name_scope("a")`` (made unique: the second time it is
``"a_1"``, while variables stay under ``"a/"``), unless ``auxiliary_name_scope=False``; a name
scope opened inside changes op names, never variable names.  ``get_variable`` builds the
variable at the root name scope, under its full name, and outside any cond or loop being built
(`Variable` does that), so a variable made in a loop body exists once.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import inspect
import threading
import weakref
from collections.abc import Callable
from typing import Any, Optional, Union

from ..framework import dtypes as _dtypes
from ..framework.graph import Graph, Tensor, _user_location, get_default_graph
from ..framework.graph_keys import GraphKeys
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import as_shape
from .variables import Variable, VariableAggregation, VariableSynchronization


class _ReuseMode(enum.Enum):
    """The ``reuse`` that creates a variable when it is missing and returns it when not."""

    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE


class VariableScope:
    """What ``get_variable`` uses by default inside a ``variable_scope``: the name prefix, reuse,
    initializer, regularizer, dtype, custom getter and constraint (``tf.compat.v1.VariableScope``).

    A scope object may be entered again (``with variable_scope(scope):``) to add variables to
    it or, with ``reuse=True``, to share them; ``original_name_scope`` is the name scope (with
    its ``/``) that was opened when the scope was first entered.
    """

    def __init__(
        self,
        reuse,
        name: str = "",
        initializer=None,
        regularizer=None,
        caching_device=None,
        partitioner=None,
        custom_getter=None,
        name_scope: str = "",
        dtype=_dtypes.float32,
        use_resource=None,
        constraint=None,
    ):
        _check_partitioner(partitioner)
        self._name = name
        self._reuse = reuse
        self._initializer = initializer
        self._regularizer = regularizer
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._name_scope = name_scope
        self._dtype = _dtypes.as_dtype(dtype)
        self._use_resource = use_resource
        self._constraint = constraint

    @property
    def name(self) -> str:
        return self._name

    @property
    def original_name_scope(self) -> str:
        return self._name_scope

    @property
    def reuse(self):
        return self._reuse

    @property
    def initializer(self):
        return self._initializer

    @property
    def dtype(self) -> _dtypes.DType:
        return self._dtype

    @property
    def use_resource(self):
        return self._use_resource

    @property
    def regularizer(self):
        return self._regularizer

    @property
    def caching_device(self):
        return self._caching_device

    @property
    def partitioner(self):
        return self._partitioner

    @property
    def custom_getter(self):
        return self._custom_getter

    @property
    def constraint(self):
        return self._constraint

    def reuse_variables(self) -> None:
        """From now on, ``get_variable`` in this scope only returns existing variables."""
        self._reuse = True

    def set_initializer(self, initializer) -> None:
        self._initializer = initializer

    def set_dtype(self, dtype) -> None:
        self._dtype = _dtypes.as_dtype(dtype)

    def set_use_resource(self, use_resource) -> None:
        self._use_resource = use_resource

    def set_regularizer(self, regularizer) -> None:
        self._regularizer = regularizer

    def set_caching_device(self, caching_device) -> None:
        self._caching_device = caching_device

    def set_partitioner(self, partitioner) -> None:
        _check_partitioner(partitioner)
        self._partitioner = partitioner

    def set_custom_getter(self, custom_getter) -> None:
        self._custom_getter = custom_getter

    def get_collection(self, name: str) -> list:
        """The items of collection ``name`` whose names start with this scope's name and ``/``."""
        return get_default_graph().get_collection(name, self._name + "/" if self._name else "")

    def trainable_variables(self) -> list:
        return self.get_collection(GraphKeys.TRAINABLE_VARIABLES)

    def global_variables(self) -> list:
        return self.get_collection(GraphKeys.GLOBAL_VARIABLES)

    def local_variables(self) -> list:
        return self.get_collection(GraphKeys.LOCAL_VARIABLES)

    def get_variable(
        self,
        var_store: _VariableStore,
        name: str,
        shape=None,
        dtype=None,
        initializer=None,
        regularizer=None,
        reuse=None,
        trainable=None,
        collections=None,
        caching_device=None,
        partitioner=None,
        validate_shape: bool = True,
        use_resource=None,
        custom_getter=None,
        constraint=None,
        synchronization=VariableSynchronization.AUTO,
        aggregation=VariableAggregation.NONE,
    ) -> Variable:
        """``get_variable`` in this scope: the arguments left as None take the scope's."""
        if regularizer is None:
            regularizer = self._regularizer
        if caching_device is None:
            caching_device = self._caching_device
        if partitioner is None:
            partitioner = self._partitioner
        if custom_getter is None:
            custom_getter = self._custom_getter
        if reuse is None:
            reuse = self._reuse
        if use_resource is None:
            use_resource = self._use_resource
        full_name = self._name + "/" + name if self._name else name
        if dtype is not None and initializer is not None and not callable(initializer):
            initial_dtype = convert_to_tensor(initializer).dtype
            if initial_dtype is not _dtypes.as_dtype(dtype):
                raise ValueError(
                    f"Initializer type '{initial_dtype.name}' and explicit dtype "
                    f"'{_dtypes.as_dtype(dtype).name}' don't match (variable {full_name}, at "
                    f"{_user_location()})."
                )
        if initializer is None:
            initializer = self._initializer
        if constraint is None:
            constraint = self._constraint
        if dtype is None:
            dtype = self._dtype
        # Variable names depend only on variable scopes: build at the root name scope.
        with get_default_graph().name_scope(None):
            return var_store.get_variable(
                full_name,
                shape=shape,
                dtype=dtype,
                initializer=initializer,
                regularizer=regularizer,
                reuse=reuse,
                trainable=trainable,
                collections=collections,
                caching_device=caching_device,
                partitioner=partitioner,
                validate_shape=validate_shape,
                use_resource=use_resource,
                custom_getter=custom_getter,
                constraint=constraint,
                synchronization=synchronization,
                aggregation=aggregation,
            )

    def __repr__(self) -> str:
        return f"<df.VariableScope '{self._name}' reuse={self._reuse}>"


def _check_partitioner(partitioner) -> None:
    if partitioner is not None:
        raise NotImplementedError(
            "Partitioned variables are not supported: pass partitioner=None "
            f"(at {_user_location()})."
        )


class _VariableStore:
    """The variables ``get_variable`` made in one graph, by full name."""

    def __init__(self):
        self._vars: dict[str, Variable] = {}
        self._lock = threading.RLock()  # an initializer may itself call get_variable

    def get_variable(
        self,
        name: str,
        shape=None,
        dtype=_dtypes.float32,
        initializer=None,
        regularizer=None,
        reuse=None,
        trainable=None,
        collections=None,
        caching_device=None,
        partitioner=None,
        validate_shape: bool = True,
        use_resource=None,
        custom_getter=None,
        constraint=None,
        synchronization=VariableSynchronization.AUTO,
        aggregation=VariableAggregation.NONE,
    ) -> Variable:
        """The variable ``name`` (a full name), found or made as ``reuse`` says; a custom getter
        is called with the getter that does that, and may call it with changed arguments."""
        _check_partitioner(partitioner)
        if trainable is None:
            trainable = synchronization is not VariableSynchronization.ON_READ

        def true_getter(
            name,
            shape=None,
            dtype=_dtypes.float32,
            initializer=None,
            regularizer=None,
            reuse=None,
            trainable=None,
            collections=None,
            caching_device=None,
            partitioner=None,
            validate_shape=True,
            use_resource=None,
            constraint=None,
            synchronization=VariableSynchronization.AUTO,
            aggregation=VariableAggregation.NONE,
        ):
            _check_partitioner(partitioner)
            return self._get_single_variable(
                name,
                shape,
                dtype,
                initializer,
                regularizer,
                reuse,
                True if trainable is None else trainable,
                collections,
                caching_device,
                validate_shape,
                constraint,
                synchronization,
                aggregation,
            )

        arguments = dict(
            name=name,
            shape=shape,
            dtype=dtype,
            initializer=initializer,
            regularizer=regularizer,
            reuse=reuse,
            trainable=trainable,
            collections=collections,
            caching_device=caching_device,
            partitioner=partitioner,
            validate_shape=validate_shape,
            use_resource=use_resource,
            constraint=constraint,
            synchronization=synchronization,
            aggregation=aggregation,
        )
        if custom_getter is not None:
            if not callable(custom_getter):
                raise ValueError(f"Passed a custom_getter which is not callable: {custom_getter}")
            return custom_getter(getter=true_getter, **arguments)
        return true_getter(**arguments)

    def _get_single_variable(
        self,
        name,
        shape,
        dtype,
        initializer,
        regularizer,
        reuse,
        trainable,
        collections,
        caching_device,
        validate_shape,
        constraint,
        synchronization,
        aggregation,
    ) -> Variable:
        initializing_from_value = initializer is not None and not callable(initializer)
        if shape is not None and initializing_from_value:
            raise ValueError(
                f"If initializer is a constant, do not specify shape (variable {name}, at "
                f"{_user_location()})."
            )
        dtype = _dtypes.as_dtype(dtype)
        shape = as_shape(shape)
        with self._lock:
            found = self._vars.get(name)
            if found is not None:
                return self._check_reused(found, name, shape, dtype, reuse)
            if reuse is True:
                raise ValueError(
                    f"Variable {name} does not exist, or was not created with "
                    "tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in VarScope? "
                    f"(at {_user_location()})"
                )
            if initializer is None:
                initializer = _default_initializer(name, dtype)
            if initializing_from_value:
                initial_value, variable_dtype = initializer, None
            else:
                initial_value = _initial_value_function(name, initializer, shape, dtype)
                variable_dtype = dtype
            variable = Variable(
                initial_value=initial_value,
                name=name,
                trainable=trainable,
                collections=collections,
                caching_device=caching_device,
                dtype=variable_dtype,
                validate_shape=validate_shape,
                constraint=constraint,
                synchronization=synchronization,
                aggregation=aggregation,
            )
            if not variable._eager:  # as TensorFlow's eager mode, which keeps no store
                self._vars[name] = variable
        if regularizer:
            graph = variable.graph
            with graph.name_scope(name + "/Regularizer/"):
                loss = regularizer(variable)
            if loss is not None:
                graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        return variable

    @staticmethod
    def _check_reused(found: Variable, name, shape, dtype, reuse) -> Variable:
        if not reuse:
            raise ValueError(
                f"Variable {name} already exists, disallowed. Did you mean to set reuse=True "
                f"or reuse=tf.AUTO_REUSE in VarScope? Originally defined at "
                f"{found.op.location}; asked for again at {_user_location()}."
            )
        if not shape.is_compatible_with(found.shape):
            raise ValueError(
                f"Trying to share variable {name}, but specified shape {shape} and found shape "
                f"{found.shape} (at {_user_location()})."
            )
        if not dtype.is_compatible_with(found.dtype):
            raise ValueError(
                f"Trying to share variable {name}, but specified dtype {dtype.name} and found "
                f"dtype {found.dtype.name} (at {_user_location()})."
            )
        return found


def _default_initializer(name: str, dtype: _dtypes.DType):
    """TensorFlow's default: Glorot uniform for floats, zeros for integers and bools."""
    if dtype.is_floating or dtype.is_integer or dtype.is_bool:
        from . import init_ops

        if dtype.is_floating:
            return init_ops.glorot_uniform_initializer()
        return init_ops.zeros_initializer()
    raise ValueError(f"An initializer for variable {name} of {dtype.name} is required")


def _initial_value_function(name: str, initializer, shape, dtype) -> Callable[[], Any]:
    """A function of no arguments that builds the initial value: ``initializer(shape,
    dtype=dtype)`` when the shape is fully defined (an initializer class is instantiated
    first), else ``initializer`` itself if it takes no arguments."""
    if inspect.isclass(initializer):
        initializer = initializer()
    if shape.is_fully_defined():
        keywords = {"dtype": dtype}
        if "partition_info" in _parameters(initializer):
            keywords["partition_info"] = None
        return functools.partial(initializer, shape.as_list(), **keywords)
    if _needs_no_arguments(initializer):
        return initializer
    raise ValueError(
        f"The initializer passed is not valid. It should be a callable with no arguments and "
        f"the shape should not be provided or an instance of `tf.keras.initializers.*' and "
        f"`shape` should be fully defined (variable {name} of shape {shape}, at "
        f"{_user_location()})."
    )


def _parameters(function) -> dict:
    try:
        return dict(inspect.signature(function).parameters)
    except (TypeError, ValueError):  # a builtin without a signature
        return {}


def _needs_no_arguments(function) -> bool:
    return all(
        p.default is not inspect.Parameter.empty
        or p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        for p in _parameters(function).values()
    )


# -- the per-graph state ---------------------------------------------------------------------------
class _ScopeState(threading.local):
    """One thread's scope stack in one graph: the current scope and how often each scope name
    has been opened (what makes ``default_name`` scopes unique)."""

    def __init__(self):
        self.current_scope = VariableScope(False)
        self.scope_counts: dict[str, int] = {}

    def open_scope(self, name: str) -> None:
        self.scope_counts[name] = self.scope_counts.get(name, 0) + 1

    def close_subscopes(self, name: str) -> None:
        """Forgets the openings of the scopes inside ``name``: after ``a`` closes, a new ``a_1``
        starts its ``default_name`` scopes from the plain name again, as in TensorFlow."""
        prefix = name + "/"
        for key in self.scope_counts:
            if key.startswith(prefix):
                self.scope_counts[key] = 0

    def unique_name(self, prefix: str) -> str:
        base = self.current_scope.name
        full = base + "/" + prefix if base else prefix
        if not self.scope_counts.get(full):
            return prefix
        index = 1
        while self.scope_counts.get(f"{full}_{index}"):
            index += 1
        return f"{prefix}_{index}"


class _GraphScopes:
    """The variable store and the scope stacks of one graph."""

    def __init__(self):
        self.store = _VariableStore()
        self.state = _ScopeState()


_graph_scopes: weakref.WeakKeyDictionary[Graph, _GraphScopes] = weakref.WeakKeyDictionary()
_graph_scopes_lock = threading.Lock()


def _scopes_of(graph: Graph) -> _GraphScopes:
    with _graph_scopes_lock:
        scopes = _graph_scopes.get(graph)
        if scopes is None:
            scopes = _graph_scopes[graph] = _GraphScopes()
        return scopes


def get_variable_scope() -> VariableScope:
    """The current variable scope of the default graph (the root scope, named ``""``, outside
    every ``variable_scope``)."""
    return _scopes_of(get_default_graph()).state.current_scope


def _get_default_variable_store() -> _VariableStore:
    return _scopes_of(get_default_graph()).store


# -- entering scopes -------------------------------------------------------------------------------
class variable_scope:  # noqa: N801 - the name TensorFlow code uses
    """``with df.variable_scope("layer"):`` makes ``get_variable`` names ``"layer/..."`` and
    opens a name scope of the same name (``tf.compat.v1.variable_scope``).

    ``name_or_scope`` is a name (relative to the current scope) or a `VariableScope` to enter
    again (absolute); with neither, ``default_name`` is made unique (``"dense_1"``).
    ``reuse=True`` finds existing variables only, ``AUTO_REUSE`` finds or creates, and ``None``
    (or ``False``) inherits the enclosing scope's reuse.  ``initializer``, ``regularizer``,
    ``dtype``, ``constraint`` and ``custom_getter`` become the defaults of ``get_variable``
    inside (an outer custom getter is called by the inner one's ``getter``).
    """

    def __init__(
        self,
        name_or_scope: Union[str, VariableScope, None],
        default_name: Optional[str] = None,
        values=None,
        initializer=None,
        regularizer=None,
        caching_device=None,
        partitioner=None,
        custom_getter=None,
        reuse=None,
        dtype=None,
        use_resource=None,
        constraint=None,
        auxiliary_name_scope: bool = True,
    ):
        if name_or_scope is not None and not isinstance(name_or_scope, (str, VariableScope)):
            raise TypeError("VariableScope: name_or_scope must be a string or VariableScope.")
        if default_name is None and name_or_scope is None:
            raise TypeError("If default_name is None then name_or_scope is required")
        if name_or_scope is None and reuse:
            raise ValueError("reuse=True cannot be used without a name_or_scope")
        if reuse is False:  # TensorFlow does not let a scope turn reuse off again
            reuse = None
        if not isinstance(auxiliary_name_scope, bool):
            raise TypeError(
                f"The auxiliary_name_scope must be `True` or `False`, got {auxiliary_name_scope!r}"
            )
        _check_partitioner(partitioner)
        self._name_or_scope = name_or_scope
        self._default_name = default_name
        self._values = values
        self._defaults = dict(
            initializer=initializer,
            regularizer=regularizer,
            caching_device=caching_device,
            custom_getter=custom_getter,
            dtype=dtype,
            use_resource=use_resource,
            constraint=constraint,
        )
        self._reuse = reuse
        self._auxiliary_name_scope = auxiliary_name_scope
        self._exit_stack: Optional[contextlib.ExitStack] = None

    def __enter__(self) -> VariableScope:
        if self._exit_stack is not None:
            raise RuntimeError("A variable_scope object cannot be entered while it is open.")
        graph = _graph_of(self._values)
        stack = contextlib.ExitStack()
        try:
            stack.enter_context(graph.as_default())
            scope = self._enter(graph, stack)
        except BaseException:
            stack.close()
            raise
        self._exit_stack = stack
        return scope

    def __exit__(self, *exc_info):
        stack, self._exit_stack = self._exit_stack, None
        return stack.__exit__(*exc_info)

    def _enter(self, graph: Graph, stack: contextlib.ExitStack) -> VariableScope:
        state = _scopes_of(graph).state
        name_or_scope = self._name_or_scope
        if name_or_scope is None:
            relative_name = state.unique_name(self._default_name)
            name_scope = self._default_name
        elif isinstance(name_or_scope, str):
            relative_name = name_scope = name_or_scope
        else:
            relative_name = None
            name_scope = name_or_scope.name.split("/")[-1]
        opened_name_scope = None
        if self._auxiliary_name_scope and name_scope:
            opened_name_scope = stack.enter_context(graph.name_scope(name_scope))
        old = state.current_scope
        if relative_name is None:
            new = self._entered_again(name_or_scope)
        else:
            new = self._nested(old, relative_name, opened_name_scope, graph)
        state.open_scope(new.name)
        if relative_name is None:
            saved_counts = dict(state.scope_counts)

            def restore():
                state.scope_counts = saved_counts
        else:

            def restore():
                state.close_subscopes(new.name)

        state.current_scope = new

        def leave():
            state.current_scope = old
            restore()

        stack.callback(leave)
        return new

    def _entered_again(self, scope: VariableScope) -> VariableScope:
        """A copy of ``scope`` entered again: its own name and defaults (not the enclosing
        scope's), overridden by this ``variable_scope``'s arguments."""
        new = VariableScope(
            self._reuse if self._reuse else scope.reuse,
            name=scope.name,
            initializer=scope.initializer,
            regularizer=scope.regularizer,
            caching_device=scope.caching_device,
            custom_getter=scope.custom_getter,
            name_scope=scope.original_name_scope,
            dtype=scope.dtype,
            use_resource=scope.use_resource,
            constraint=scope.constraint,
        )
        self._apply_defaults(new, scope.custom_getter)
        return new

    def _nested(
        self, old: VariableScope, relative_name: str, opened_name_scope, graph: Graph
    ) -> VariableScope:
        """A scope inside ``old``: reuse and every default are inherited unless given."""
        if opened_name_scope is None:
            opened_name_scope = graph.get_name_scope()
            opened_name_scope = opened_name_scope + "/" if opened_name_scope else ""
        new = VariableScope(
            self._reuse or old.reuse,
            name=old.name + "/" + relative_name if old.name else relative_name,
            initializer=old.initializer,
            regularizer=old.regularizer,
            caching_device=old.caching_device,
            custom_getter=old.custom_getter,
            name_scope=opened_name_scope,
            dtype=old.dtype,
            use_resource=old.use_resource,
            constraint=old.constraint,
        )
        self._apply_defaults(new, old.custom_getter)
        return new

    def _apply_defaults(self, scope: VariableScope, outer_getter) -> None:
        defaults = self._defaults
        if defaults["initializer"] is not None:
            scope.set_initializer(defaults["initializer"])
        if defaults["regularizer"] is not None:
            scope.set_regularizer(defaults["regularizer"])
        if defaults["caching_device"] is not None:
            scope.set_caching_device(defaults["caching_device"])
        if defaults["dtype"] is not None:
            scope.set_dtype(defaults["dtype"])
        if defaults["use_resource"] is not None:
            scope.set_use_resource(defaults["use_resource"])
        if defaults["constraint"] is not None:
            scope._constraint = defaults["constraint"]
        if defaults["custom_getter"] is not None:
            scope.set_custom_getter(_wrap_custom_getter(defaults["custom_getter"], outer_getter))


def _wrap_custom_getter(custom_getter, outer_getter):
    """``custom_getter`` of an inner scope, whose ``getter`` argument calls ``outer_getter``
    (which calls the getter that makes the variable): the innermost custom getter runs first,
    and each sees what the inner ones asked for."""
    if outer_getter is None:
        return custom_getter

    def wrapped(getter, *args, **kwargs):
        return custom_getter(functools.partial(outer_getter, getter), *args, **kwargs)

    return wrapped


def _graph_of(values) -> Graph:
    """The graph of the tensors among ``values``, else the default graph."""
    graph = None
    for value in values or ():
        if isinstance(value, Tensor) or isinstance(value, Variable):
            if graph is None:
                graph = value.graph
            elif value.graph is not graph:
                raise ValueError(f"{value!r} must be from the same graph as {values[0]!r}.")
    return graph if graph is not None else get_default_graph()


# -- getting variables -----------------------------------------------------------------------------
def get_variable(
    name: str,
    shape=None,
    dtype=None,
    initializer=None,
    regularizer=None,
    trainable=None,
    collections=None,
    caching_device=None,
    partitioner=None,
    validate_shape: bool = True,
    use_resource=None,
    custom_getter=None,
    constraint=None,
    synchronization=VariableSynchronization.AUTO,
    aggregation=VariableAggregation.NONE,
) -> Variable:
    """The variable ``name`` in the current variable scope, made or found as the scope's
    ``reuse`` says (``tf.compat.v1.get_variable``).

    ``initializer`` is a function ``(shape, dtype=..., partition_info=...)`` (or a class of
    them, or a function of no arguments when ``shape`` is not given), or a value: a Tensor, a
    numpy array or a Python number or list, which gives the shape (then ``shape`` must be
    None).  Without one, the scope's is used, else Glorot uniform for floats and zeros for
    integers and bools.  A ``regularizer(variable)`` is built in ``"<name>/Regularizer/"`` and
    its loss added to ``GraphKeys.REGULARIZATION_LOSSES``.
    """
    return get_variable_scope().get_variable(
        _get_default_variable_store(),
        name,
        shape=shape,
        dtype=dtype,
        initializer=initializer,
        regularizer=regularizer,
        trainable=trainable,
        collections=collections,
        caching_device=caching_device,
        partitioner=partitioner,
        validate_shape=validate_shape,
        use_resource=use_resource,
        custom_getter=custom_getter,
        constraint=constraint,
        synchronization=synchronization,
        aggregation=aggregation,
    )


def get_local_variable(
    name: str,
    shape=None,
    dtype=None,
    initializer=None,
    regularizer=None,
    trainable=False,
    collections=None,
    caching_device=None,
    partitioner=None,
    validate_shape: bool = True,
    use_resource=None,
    custom_getter=None,
    constraint=None,
    synchronization=VariableSynchronization.AUTO,
    aggregation=VariableAggregation.NONE,
) -> Variable:
    """`get_variable` for a variable in ``GraphKeys.LOCAL_VARIABLES`` (not saved, not
    trained; ``local_variables_initializer`` initializes it)."""
    collections = list(collections or ()) + [GraphKeys.LOCAL_VARIABLES]
    return get_variable(
        name,
        shape=shape,
        dtype=dtype,
        initializer=initializer,
        regularizer=regularizer,
        trainable=trainable,
        collections=collections,
        caching_device=caching_device,
        partitioner=partitioner,
        validate_shape=validate_shape,
        use_resource=use_resource,
        custom_getter=custom_getter,
        constraint=constraint,
        synchronization=synchronization,
        aggregation=aggregation,
    )


def no_regularizer(_) -> None:
    """A regularizer that adds no loss: turns off a scope's regularizer for one variable."""
    return None
