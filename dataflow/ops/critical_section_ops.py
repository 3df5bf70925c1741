"""``CriticalSection``: ops that run in one run at a time (TensorFlow's mutex ops).

A critical section is a mutex in the Session (``MutexV2``).  ``execute(fn)`` builds ``fn``'s
ops after a ``MutexLock`` of it (which waits while another run holds the mutex, until the
run's deadline) and returns ``fn``'s results through identities that wait for
``ConsumeMutexLock``.  The mutex is given back when the run ends, after its variable writes are
committed (or when it fails), so that another run's section sees them: as in TensorFlow, the
bodies of one section never interleave.

``exclusive_resource_access`` (the default) makes sure that no other critical section, and no
``execute`` of this one that allows shared access, uses the resources (variables) the body
uses: building it otherwise is a ``ValueError``, as in TensorFlow.
"""

from __future__ import annotations

import threading

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.graph import Tensor, control_dependencies, get_default_graph, name_scope
from ..framework.op_registry import apply_op, define_op
from ..framework.resource_containers import current_container, resource_key
from ..framework.tensor_shape import TensorShape

__all__ = ["CriticalSection"]

_POLL_SECONDS = 0.05


class _Mutex:
    """The run-time mutex behind a handle."""

    def __init__(self, name: str):
        self.name = name
        self.held = False
        self.changed = threading.Condition()

    def cancel(self) -> None:
        with self.changed:
            self.changed.notify_all()

    def acquire(self, context) -> None:
        with self.changed:
            while self.held:
                context.check_not_stopped(f"the critical section '{self.name}'")
                self.changed.wait(_POLL_SECONDS)
            # A run past its deadline (or whose Session closed) while it waited takes nothing.
            context.check_not_stopped(f"the critical section '{self.name}'")
            self.held = True

    def release(self) -> None:
        with self.changed:
            self.held = False
            self.changed.notify_all()


class _Lock:
    """A held mutex (the value of ``MutexLock``): given back once, at the end of the run."""

    def __init__(self, mutex: _Mutex):
        self.mutex = mutex
        self.released = threading.Event()

    def release(self) -> None:
        with self.mutex.changed:
            if self.released.is_set():
                return
            self.released.set()
        self.mutex.release()


def _mutex_kernel(attrs):
    key = resource_key(attrs)

    def mutex(context):
        return context.resource(key, lambda: _Mutex(attrs["shared_name"]))

    return mutex


def _lock_kernel(attrs):
    def lock(context, mutex):
        mutex.acquire(context)
        held = _Lock(mutex)
        context.defer(held.release)
        return np.array(held, dtype=object)

    return lock


def _consume_kernel(attrs):
    def consume(lock):
        return ()  # the lock is given back when the run ends (see the module docstring)

    return consume


define_op(
    "MutexV2",
    lambda op: [(_dtypes.resource, TensorShape([]))],
    _mutex_kernel,
    stateful=True,
    inline=True,
    wants_context=True,
)
define_op(
    "MutexLock",
    lambda op: [(_dtypes.variant, TensorShape([]))],
    _lock_kernel,
    stateful=True,
    wants_context=True,
)
define_op("ConsumeMutexLock", lambda op: [], _consume_kernel, stateful=True, inline=True)


class CriticalSection:
    """A section of ops that runs in one run at a time (see the module docstring)."""

    def __init__(self, name=None, shared_name=None, critical_section_def=None, import_scope=None):
        if critical_section_def is not None or import_scope is not None:
            raise ValueError(
                "CriticalSection(critical_section_def=..., import_scope=...) rebuilds one from "
                "TensorFlow's protocol buffer, which dataflow's graphs do not use; pass None"
            )
        with name_scope(name, "CriticalSection") as scope:
            op_name = scope[:-1]
            attrs = {"shared_name": shared_name or op_name, "container": current_container()}
            self._handle = apply_op("MutexV2", [], attrs, name=op_name + "/").outputs[0]
        self._name = self._handle.op.name

    @property
    def name(self) -> str:
        return self._name

    def execute(self, fn, exclusive_resource_access=True, name=None):
        """``fn()``'s results, its ops run while this section is held."""
        from ..framework import nest
        from .array_ops import identity

        graph = get_default_graph()
        active = _active(graph)
        if self._handle in active:
            raise ValueError(
                f"Attempting to lock a CriticalSection ({self._name}) in which we are already "
                "running. This is illegal and may cause deadlocks."
            )
        with name_scope(name, "critical_section_execute"):
            lock = apply_op("MutexLock", [self._handle], {}, "MutexLock").outputs[0]
            first = len(graph.get_operations())
            active.append(self._handle)
            try:
                with control_dependencies([lock]):
                    result = fn()
            finally:
                active.remove(self._handle)
            body = graph.get_operations()[first:]
            self._check_resources(graph, body, exclusive_resource_access)
            flat = nest.flatten(result)
            waits = [t.op if isinstance(t, Tensor) else t for t in flat if t is not None]
            with control_dependencies(waits + [lock.op]):
                consumed = apply_op("ConsumeMutexLock", [lock], {}, "ConsumeMutexLock")
            outputs = []
            with control_dependencies([consumed]):
                for value in flat:
                    outputs.append(identity(value) if isinstance(value, Tensor) else value)
            return nest.pack_sequence_as(result, outputs)

    def _check_resources(self, graph, ops, exclusive: bool) -> None:
        resources = {
            t.op.name
            for op in ops
            for t in op.inputs
            if t.dtype == _dtypes.resource and t.op.type == "VarHandleOp"
        }
        claims = _claims(graph)
        for resource in sorted(resources):
            for section, its_exclusive in claims.get(resource, []):
                if section is not self._handle and (exclusive or its_exclusive):
                    raise ValueError(
                        f"This execution would access resources: [{resource}]. Either this "
                        f"lock (CriticalSection: {self._name}) or lock '{section.op.name}' "
                        f"(CriticalSection: {section.op.name}) requested exclusive resource "
                        "access of this resource. Did you mean to call execute with keyword "
                        "argument exclusive_resource_access=False?"
                    )
        for resource in resources:
            claims.setdefault(resource, []).append((self._handle, exclusive))


def _active(graph) -> list:
    if not hasattr(graph, "_critical_sections_running"):
        graph._critical_sections_running = []
    return graph._critical_sections_running


def _claims(graph) -> dict:
    if not hasattr(graph, "_critical_section_resources"):
        graph._critical_section_resources = {}
    return graph._critical_section_resources


from ..framework.gradient_registry import NotDifferentiable  # noqa: E402

for _type in ("MutexV2", "MutexLock", "ConsumeMutexLock"):
    NotDifferentiable(_type)
