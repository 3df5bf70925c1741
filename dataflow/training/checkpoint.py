"""Object-based checkpoints (TF1's ``tf.train.Checkpoint``, ``CheckpointManager`` and
``CheckpointOptions``), written in dataflow's checkpoint format (`dataflow.io.saver`).

A `Checkpoint` saves the variables reachable from the objects it is given: a `Variable`, an
`Optimizer` (its non-slot variables, and the slots it holds for the variables reached), another
`Checkpoint`, a list, tuple or dict of those, or any object whose attributes hold them (a
layer, a model).  Each value is stored under its path in that object graph, the first one
found breadth-first, with TensorFlow's key format: ``model/dense/kernel/.ATTRIBUTES/
VARIABLE_VALUE``, a slot as ``<variable path>/.OPTIMIZER_SLOT/<optimizer path>/<slot>/
.ATTRIBUTES/VARIABLE_VALUE`` (names escaped as TensorFlow escapes them: ``.`` as ``..`` and
``/`` as ``.S``).  So restoring matches values to objects by where they sit in the program,
not by variable names: a program that builds the same objects under other names restores.

In a graph, values are written from and restored into a Session (the default one when none is
given), as TF1's; eagerly, from and into the variables themselves.
"""

from __future__ import annotations

import abc
import os
import time
from collections import OrderedDict, deque
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework import logging as _logging
from ..framework.errors import NotFoundError
from ..framework.graph import get_default_graph
from ..io.checkpoint_management import update_checkpoint_state
from ..io.checkpoint_utils import CheckpointReader
from ..io.saver import _checkpoint_file, checkpoint_exists, get_checkpoint_state
from ..ops.module import Module
from ..ops.variables import Variable
from .train import Optimizer

__all__ = ["Checkpoint", "CheckpointManager", "CheckpointOptions"]  # tf.train's names

_VALUE = ".ATTRIBUTES/VARIABLE_VALUE"
_PY_STATE = ".ATTRIBUTES/py_state"
_SLOT = ".OPTIMIZER_SLOT"


def _escape(name: str) -> str:
    return str(name).replace(".", "..").replace("/", ".S")


class CheckpointOptions:
    """Options of a checkpoint save or restore (``tf.train.CheckpointOptions``).

    ``experimental_io_device``: the device that reads and writes the files (every file here is
    read and written by the host, so any device name is accepted and the host does it);
    ``experimental_enable_async_checkpoint``/``enable_async``: a save may return before its
    file is written (here the file is always written before the save returns, which an
    asynchronous save allows); ``experimental_write_callbacks``: callables called with the
    path of each checkpoint written; ``experimental_skip_slot_variables``: leave the
    optimizers' slot variables out of saves and restores; ``experimental_sharding_callback``
    (a policy for splitting a checkpoint into shards) must be None: a checkpoint here is one
    file.
    """

    __slots__ = (
        "experimental_io_device",
        "experimental_enable_async_checkpoint",
        "experimental_write_callbacks",
        "enable_async",
        "experimental_skip_slot_variables",
        "experimental_sharding_callback",
    )

    def __init__(
        self,
        experimental_io_device=None,
        experimental_enable_async_checkpoint=False,
        experimental_write_callbacks=None,
        enable_async=False,
        experimental_skip_slot_variables=False,
        experimental_sharding_callback=None,
    ):
        if experimental_sharding_callback is not None:
            raise ValueError(
                "CheckpointOptions(experimental_sharding_callback=...): a checkpoint here is "
                "one file and cannot be split into shards; pass None"
            )
        self.experimental_io_device = experimental_io_device
        self.experimental_enable_async_checkpoint = experimental_enable_async_checkpoint
        self.experimental_write_callbacks = (
            list(experimental_write_callbacks) if experimental_write_callbacks else None
        )
        self.enable_async = enable_async or experimental_enable_async_checkpoint
        self.experimental_skip_slot_variables = experimental_skip_slot_variables
        self.experimental_sharding_callback = None

    def __copy__(self):
        copied = CheckpointOptions()
        for name in self.__slots__:
            setattr(copied, name, getattr(self, name))
        return copied


class PythonState(abc.ABC):
    """A mixin for putting Python state in an object-based checkpoint
    (``tf.train.experimental.PythonState``): a subclass defines ``serialize()`` (returns a
    string or bytes) and ``deserialize(string_value)`` (gets the bytes back); an instance
    reachable from a `Checkpoint` is saved as ``<path>/.ATTRIBUTES/py_state`` and restored
    along with the variables."""

    @abc.abstractmethod
    def serialize(self):
        """The object's state, as a string."""

    @abc.abstractmethod
    def deserialize(self, string_value):
        """Restores the state ``serialize`` gave (as bytes)."""


# -- the object graph ------------------------------------------------------------------------------
def _children(obj) -> list:
    """The ``(name, child)`` dependencies of ``obj``, in a stable order."""
    if isinstance(obj, Checkpoint):
        return list(obj._dependencies.items())
    if isinstance(obj, Optimizer):
        graph = None if _eager() else get_default_graph()
        return sorted(
            (name, var)
            for (name, var_graph), var in obj._non_slot_dict.items()
            if graph is None or var_graph is graph
        )
    if isinstance(obj, (list, tuple)):
        return [(str(i), c) for i, c in enumerate(obj) if _is_trackable(c)]
    if isinstance(obj, dict):
        return [(str(k), c) for k, c in obj.items() if _is_trackable(c)]
    attributes = getattr(obj, "__dict__", {})
    return [
        (name, value)
        for name, value in attributes.items()
        if not name.startswith("__") and _is_trackable(value)
    ]


def _is_trackable(value, depth: int = 0) -> bool:
    if isinstance(value, (Variable, Optimizer, Checkpoint, PythonState, Module)):
        return True  # a Module is, even before it has made its variables (as in TensorFlow)
    if depth > 8 or isinstance(value, (str, bytes, int, float, bool, type(None), np.ndarray)):
        return False
    if isinstance(value, (list, tuple)):
        return any(_is_trackable(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return any(_is_trackable(v, depth + 1) for v in value.values())
    attributes = getattr(value, "__dict__", None)
    if not attributes or isinstance(value, type):
        return False
    return any(_is_trackable(v, depth + 1) for k, v in attributes.items() if not k.startswith("__"))


def _eager() -> bool:
    return get_default_graph()._eager


def _object_graph_keys(root, skip_slots: bool = False) -> OrderedDict[str, Variable]:
    """Each variable reachable from ``root``, by its checkpoint key (see the module doc)."""
    paths: dict[int, str] = {id(root): ""}
    queue = deque([root])
    keys: OrderedDict = OrderedDict()
    variable_paths: dict[int, str] = {}
    optimizers = []
    while queue:
        obj = queue.popleft()
        if isinstance(obj, (Variable, PythonState)):
            continue
        if isinstance(obj, Optimizer):
            optimizers.append(obj)
        for name, child in _children(obj):
            if id(child) in paths:
                continue
            path = _escape(name) if not paths[id(obj)] else f"{paths[id(obj)]}/{_escape(name)}"
            paths[id(child)] = path
            if isinstance(child, Variable):
                keys[f"{path}/{_VALUE}"] = child
                variable_paths[id(child)] = path
            elif isinstance(child, PythonState):
                keys[f"{path}/{_PY_STATE}"] = child
            else:
                queue.append(child)
    if not skip_slots:
        for optimizer in optimizers:
            for slot_name in sorted(optimizer._slots):
                for var_ref, slot in optimizer._slots[slot_name].items():
                    var = var_ref.deref()
                    if id(var) in variable_paths:
                        key = (
                            f"{variable_paths[id(var)]}/{_SLOT}/{paths[id(optimizer)]}/"
                            f"{_escape(slot_name)}/{_VALUE}"
                        )
                        keys[key] = slot
    return keys


def _session(session):
    from ..framework.session_stack import get_default_session

    session = session or get_default_session()
    if session is None:
        raise ValueError(
            "A Checkpoint in a graph reads and writes variables through a Session: pass "
            "session=..., or call it inside `with sess.as_default():`"
        )
    return session


# -- Checkpoint ------------------------------------------------------------------------------------
class Checkpoint:
    """Groups objects whose variables are saved and restored together
    (``tf.compat.v1.train.Checkpoint(**kwargs)``): ``Checkpoint(model=model,
    optimizer=opt)``; each keyword names a dependency (see the module docstring).  `save`
    numbers the files with the ``save_counter`` variable; `write` writes one file; `restore`
    returns a status whose ``run_restore_ops``/``initialize_or_restore`` load the values."""

    def __init__(self, **kwargs):
        dependencies = OrderedDict()
        for name, value in sorted(kwargs.items()):
            if not _is_trackable(value):
                raise ValueError(
                    f"`Checkpoint` was expecting a trackable object (an object derived from "
                    f"`Trackable`), got {value}. If you believe this object should be "
                    "trackable (i.e. it is part of the TensorFlow Python API and manages "
                    "state), please open an issue."
                )
            dependencies[name] = value
        object.__setattr__(self, "_dependencies", dependencies)
        object.__setattr__(self, "_save_counter", None)
        object.__setattr__(self, "_save_assign_op", None)

    def __setattr__(self, name: str, value) -> None:
        if not name.startswith("_") and _is_trackable(value):
            self._dependencies[name] = value
        object.__setattr__(self, name, value)

    def __getattr__(self, name: str):
        dependencies = self.__dict__.get("_dependencies", {})
        if name in dependencies:
            return dependencies[name]
        raise AttributeError(f"'Checkpoint' object has no attribute '{name}'")

    @property
    def save_counter(self) -> Variable:
        """The number of `save` calls (an int64 variable, made on first use)."""
        self._maybe_create_save_counter()
        return self._save_counter

    def _maybe_create_save_counter(self) -> None:
        if self._save_counter is None:
            graph = get_default_graph()
            from ..framework.graph import control_dependencies

            with control_dependencies(None), graph.name_scope(None):
                counter = Variable(
                    np.int64(0), name="save_counter", dtype=_dtypes.int64, trainable=False
                )
            object.__setattr__(self, "_save_counter", counter)
            self._dependencies["save_counter"] = counter

    def _keys(self, skip_slots: bool = False) -> OrderedDict[str, Variable]:
        return _object_graph_keys(self, skip_slots)

    def write(self, file_prefix, session=None, options=None) -> str:
        """Writes the values of the object graph to ``file_prefix`` (no numbering, no index
        file) and returns the path."""
        file_prefix = os.fspath(file_prefix)
        options = options or CheckpointOptions()
        keys = self._keys(options.experimental_skip_slot_variables)
        variables = {k: v for k, v in keys.items() if isinstance(v, Variable)}
        if _eager() or not variables:
            values = {k: np.asarray(v.value()) for k, v in variables.items()}
        else:
            values = _session(session).run(variables)
        for key, obj in keys.items():
            if isinstance(obj, PythonState):
                state = obj.serialize()
                values[key] = np.array(state.encode() if isinstance(state, str) else bytes(state))
        _write_values(values, file_prefix)
        for callback in options.experimental_write_callbacks or ():
            callback(file_prefix)
        return file_prefix

    def _write(self, file_prefix, options=None, session=None) -> str:
        return self.write(file_prefix, session=session, options=options)

    def save(self, file_prefix, session=None) -> str:
        """Increments ``save_counter``, writes ``<file_prefix>-<counter>`` and records it in
        the directory's index file; returns its path."""
        file_prefix = os.fspath(file_prefix)
        if _eager():
            self.save_counter.assign_add(1)
            number = int(np.asarray(self.save_counter.value()))
        else:
            session = _session(session)
            if self._save_counter is None:
                session.run(self.save_counter.initializer)
            if self._save_assign_op is None:
                object.__setattr__(
                    self, "_save_assign_op", self.save_counter.assign_add(1, read_value=True)
                )
            number = int(session.run(self._save_assign_op))
        file_path = self.write(f"{file_prefix}-{number}", session=session)
        update_checkpoint_state(os.path.dirname(file_prefix) or ".", file_path, [file_path])
        return file_path

    def restore(self, save_path):
        """The status of restoring ``save_path`` into the object graph: eagerly the values are
        loaded at once; in a graph, by the status's ``run_restore_ops`` or
        ``initialize_or_restore``.  ``save_path`` None gives a status that only initializes."""
        if save_path is None:
            return InitializationOnlyStatus(self)
        save_path = os.fspath(save_path)
        if not checkpoint_exists(save_path):
            raise NotFoundError(
                None,
                None,
                f"Failed to restore from checkpoint {save_path}: no checkpoint file "
                f"{_checkpoint_file(save_path)}",
            )
        self._maybe_create_save_counter()
        status = CheckpointLoadStatus(self, save_path)
        if _eager():
            status.run_restore_ops()
        return status


def _write_values(values: dict, file_prefix: str) -> None:
    """Writes ``values`` (arrays by key) as the checkpoint ``file_prefix`` (`dataflow.io.saver`'s
    format), atomically."""
    import io as _io
    import zipfile

    from ..io.dfg import _atomic_write

    def write(f) -> None:
        with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED) as archive:
            for name, value in values.items():
                buffer = _io.BytesIO()
                np.lib.format.write_array(buffer, np.asarray(value), allow_pickle=False)
                archive.writestr(name + ".npy", buffer.getvalue())

    directory = os.path.dirname(os.path.abspath(file_prefix))
    os.makedirs(directory, exist_ok=True)
    _atomic_write(_checkpoint_file(file_prefix), write)


class CheckpointLoadStatus:
    """The status of a `Checkpoint.restore` (TensorFlow's ``CheckpointLoadStatus``)."""

    def __init__(self, checkpoint: Checkpoint, save_path: str):
        self._checkpoint = checkpoint
        self._save_path = save_path
        self._stored = set(CheckpointReader(save_path).get_variable_to_shape_map())
        self._restored: set = set()

    def _matches(self):
        keys = self._checkpoint._keys()
        return keys, {k: v for k, v in keys.items() if k in self._stored}

    def assert_consumed(self):
        """``AssertionError`` unless every value of the checkpoint was matched to an object
        and every variable of the object graph got a value."""
        keys, matched = self._matches()
        unused = sorted(self._stored - set(matched))
        if unused:
            raise AssertionError(f"Unresolved object in checkpoint {self._save_path}: {unused}")
        return self.assert_existing_objects_matched()

    def assert_existing_objects_matched(self):
        """``AssertionError`` unless every variable of the object graph has a value in the
        checkpoint."""
        keys, matched = self._matches()
        missing = [k for k in keys if k not in matched]
        if missing:
            raise AssertionError(
                f"Some objects had attributes which were not restored: "
                f"{[keys[k].name for k in missing]} (checkpoint keys {missing})"
            )
        return self

    def assert_nontrivial_match(self):
        """``AssertionError`` unless something besides the save counter was matched."""
        _, matched = self._matches()
        if not [k for k in matched if not k.startswith("save_counter/")]:
            raise AssertionError(
                f"Nothing except the root object matched a checkpointed value ({self._save_path})."
            )
        return self

    def expect_partial(self):
        """Silences the warnings about values left unused (there are none here)."""
        return self

    def run_restore_ops(self, session=None) -> None:
        """Loads the checkpoint's values into the matched variables (in ``session``, or the
        default one, in a graph)."""
        from ..io.saver import Saver

        _, matched = self._matches()
        variables = {k: v for k, v in matched.items() if isinstance(v, Variable)}
        reader = CheckpointReader(self._save_path)
        if _eager():
            for key, var in variables.items():
                var.assign(reader.get_tensor(key))
        elif variables:
            Saver(var_list=variables, max_to_keep=None).restore(_session(session), self._save_path)
        for key, obj in matched.items():
            if isinstance(obj, PythonState):
                obj.deserialize(bytes(reader.get_tensor(key).item()))
        self._restored |= set(matched)

    def initialize_or_restore(self, session=None) -> None:
        """`run_restore_ops`, and the initializers of the variables it left alone."""
        keys, matched = self._matches()
        self.run_restore_ops(session)
        _initialize(
            [v for k, v in keys.items() if k not in matched and isinstance(v, Variable)], session
        )


class InitializationOnlyStatus:
    """The status of ``restore(None)``: nothing to load; `initialize_or_restore` initializes
    the object graph's variables."""

    def __init__(self, checkpoint: Checkpoint):
        self._checkpoint = checkpoint

    def assert_consumed(self):
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being restored.")

    assert_existing_objects_matched = assert_consumed
    assert_nontrivial_match = assert_consumed

    def expect_partial(self):
        return self

    def run_restore_ops(self, session=None) -> None:
        """Nothing to restore."""

    def initialize_or_restore(self, session=None) -> None:
        _initialize(
            [v for v in self._checkpoint._keys().values() if isinstance(v, Variable)], session
        )


def _initialize(variables: list, session) -> None:
    if not variables or _eager():
        return
    _session(session).run([v.initializer for v in variables])


# -- CheckpointManager -----------------------------------------------------------------------------
class CheckpointManager:
    """Keeps the last ``max_to_keep`` checkpoints of a `Checkpoint` in ``directory``
    (``tf.train.CheckpointManager``): `save` writes ``<directory>/<checkpoint_name>-<n>``
    (``n`` the checkpoint's save counter, or ``checkpoint_number``), deletes the oldest beyond
    ``max_to_keep`` (None keeps all) except one every ``keep_checkpoint_every_n_hours``, and
    keeps the directory's index file (with each checkpoint's time).  With
    ``checkpoint_interval``, a save is skipped unless ``step_counter`` advanced that much since
    the last.  A manager made on a directory takes over the checkpoints its index lists."""

    def __init__(
        self,
        checkpoint,
        directory,
        max_to_keep,
        keep_checkpoint_every_n_hours=None,
        checkpoint_name="ckpt",
        step_counter=None,
        checkpoint_interval=None,
        init_fn=None,
        last_checkpoint_step=None,
    ):
        self._checkpoint = checkpoint
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError(
                f"Expected a positive integer or `None` for `max_to_keep`, got {max_to_keep}."
            )
        self._max_to_keep = max_to_keep
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._directory = os.fspath(directory)
        self._checkpoint_prefix = os.path.join(self._directory, checkpoint_name)
        self._init_fn = init_fn
        if checkpoint_interval is not None:
            if step_counter is None:
                raise ValueError(
                    "`step_counter` should be passed if `checkpoint_interval` is not None."
                )
            self._last_checkpoint_step = last_checkpoint_step
            self._step_counter = step_counter
        self._checkpoint_interval = checkpoint_interval
        recovered = get_checkpoint_state(self._directory)
        current_clock = time.time()
        self._maybe_delete: OrderedDict = OrderedDict()
        if recovered is None:
            self._latest_checkpoint = None
            self._last_preserved_timestamp = current_clock - 1.0
        else:
            self._latest_checkpoint = recovered.model_checkpoint_path
            self._last_preserved_timestamp = recovered.last_preserved_timestamp
            if current_clock < self._last_preserved_timestamp:
                _logging.warning(
                    "time.time() returned a value %f seconds behind the last preserved "
                    "checkpoint timestamp.",
                    self._last_preserved_timestamp - current_clock,
                )
                self._last_preserved_timestamp = current_clock
            paths = list(recovered.all_model_checkpoint_paths)
            timestamps = list(recovered.all_model_checkpoint_timestamps)
            if len(timestamps) != len(paths):
                timestamps = [self._last_preserved_timestamp] * len(paths)
            for filename, timestamp in zip(paths, timestamps):
                timestamp = min(timestamp, current_clock)
                if timestamp > self._last_preserved_timestamp:
                    self._maybe_delete[filename] = timestamp

    @property
    def directory(self) -> str:
        return self._directory

    @property
    def checkpoint_interval(self):
        return self._checkpoint_interval

    @property
    def latest_checkpoint(self) -> Optional[str]:
        """The newest checkpoint's prefix, or None."""
        return self._latest_checkpoint

    @property
    def checkpoints(self) -> list:
        """The prefixes of the checkpoints kept, oldest first (those kept for good by
        ``keep_checkpoint_every_n_hours`` are not listed)."""
        return list(self._maybe_delete)

    @property
    def checkpoint(self):
        return self._checkpoint

    def _sweep(self) -> None:
        if not self._max_to_keep:
            return
        while len(self._maybe_delete) > self._max_to_keep:
            filename, timestamp = self._maybe_delete.popitem(last=False)
            if self._keep_checkpoint_every_n_hours and (
                timestamp - self._keep_checkpoint_every_n_hours * 3600.0
                >= self._last_preserved_timestamp
            ):
                self._last_preserved_timestamp = timestamp
                continue
            for path in (_checkpoint_file(filename),):
                try:
                    os.remove(path)
                except FileNotFoundError:
                    pass

    def _record_state(self) -> None:
        filenames, timestamps = zip(*self._maybe_delete.items())
        update_checkpoint_state(
            self._directory,
            os.path.relpath(self._latest_checkpoint, self._directory),
            [os.path.relpath(f, self._directory) for f in filenames],
            all_model_checkpoint_timestamps=list(timestamps),
            last_preserved_timestamp=self._last_preserved_timestamp,
        )

    def _current_step(self, session) -> int:
        value = self._step_counter
        if isinstance(value, (int, np.integer)):
            return int(value)
        if _eager():
            return int(np.asarray(value.value() if isinstance(value, Variable) else value))
        return int(_session(session).run(value))

    def save(self, checkpoint_number=None, check_interval=True, options=None) -> Optional[str]:
        """Writes a checkpoint and keeps the directory's checkpoints in order; returns its
        path, or None when ``checkpoint_interval`` says it is too soon."""
        session = None
        if self._checkpoint_interval is not None:
            current_step = self._current_step(None)
            if self._last_checkpoint_step is not None:
                if current_step == self._last_checkpoint_step:
                    return None
                if check_interval and current_step < (
                    self._last_checkpoint_step + self._checkpoint_interval
                ):
                    return None
            self._last_checkpoint_step = current_step
        checkpoint = self._checkpoint
        if _eager():
            checkpoint.save_counter.assign_add(1)
            counter_value = int(np.asarray(checkpoint.save_counter.value()))
        else:
            session = _session(None)
            if checkpoint._save_counter is None:
                session.run(checkpoint.save_counter.initializer)
            if getattr(self, "_save_counter_assign", None) is None:
                self._save_counter_assign = checkpoint.save_counter.assign_add(1, read_value=True)
            counter_value = int(session.run(self._save_counter_assign))
        if checkpoint_number is None:
            checkpoint_number = counter_value
        elif not isinstance(checkpoint_number, (int, np.integer)):
            if _eager():
                checkpoint_number = int(np.asarray(checkpoint_number.value()))
            else:
                checkpoint_number = int(session.run(checkpoint_number))
        prefix = f"{self._checkpoint_prefix}-{int(checkpoint_number)}"

        def record_and_sweep(save_path: str) -> None:
            self._maybe_delete[save_path] = time.time()
            self._latest_checkpoint = save_path
            self._record_state()
            self._sweep()
            self._record_state()

        import copy

        options = copy.copy(options) if options is not None else CheckpointOptions()
        options.experimental_write_callbacks = list(options.experimental_write_callbacks or ()) + [
            record_and_sweep
        ]
        return checkpoint.write(prefix, session=session, options=options)

    def restore_or_initialize(self) -> Optional[str]:
        """Restores the newest checkpoint (returning its path) if there is one; else calls
        ``init_fn`` if given, and returns None."""
        if self._latest_checkpoint is not None:
            self._checkpoint.restore(self._latest_checkpoint)
            if self._checkpoint_interval is not None:
                self._last_checkpoint_step = self._current_step(None)
            return self._latest_checkpoint
        if self._init_fn is not None:
            self._init_fn()
            _logging.info("Customized initialization is done through the passed `init_fn`.")
        return None

    def sync(self) -> None:
        """Waits for pending saves (every save here has finished when it returns)."""
