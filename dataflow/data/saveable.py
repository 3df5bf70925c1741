"""``make_saveable_from_iterator``: an iterator's position saved and restored by ``df.train.Saver``.

An iterator's state is a running pipeline of Python generators, which cannot be written to a
file; what is saved is how far it has read (how many reads since its start).  Restoring, as in
TensorFlow, needs the iterator started first (its initializer run; a one-shot iterator starts
itself): the pipeline then runs again from its start and is read that many times.  This gives
the same position when the pipeline gives the same elements each time it runs; a pipeline
with state of its own that a new run does not repeat (an unseeded shuffle, random ops in its
functions) is TensorFlow's "external state", which ``external_state_policy`` handles: FAIL
(the default) refuses to save, WARN saves with a warning, IGNORE saves.
"""

from __future__ import annotations

import logging

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import FailedPreconditionError, InvalidArgumentError
from ..framework.tensor_shape import TensorShape
from .dataset_ops import Iterator, _describe_pipeline, _IteratorState
from .options import ExternalStatePolicy

__all__ = ["make_saveable_from_iterator"]

_log = logging.getLogger("dataflow.data")

# Ops that are stateful only as placeholders are: they hold no state a new run would lose.
_NOT_STATE = {"Placeholder", "PlaceholderWithDefault", "PlaceholderV2"}


def _policy(value) -> ExternalStatePolicy:
    if isinstance(value, ExternalStatePolicy):
        return value
    named = {"warn": ExternalStatePolicy.WARN, "ignore": ExternalStatePolicy.IGNORE,
             "fail": ExternalStatePolicy.FAIL}  # fmt: skip
    if value not in named:
        raise ValueError(
            "Invalid `ExternalStatePolicy.` Supported values include 'warn', 'ignore', and "
            f"'fail.' Received {value}."
        )
    return named[value]


def _external_state(records) -> list[str]:
    """What in the pipeline ``records`` describe a new run would not repeat."""
    from ..framework.op_registry import get_op_def

    found = []
    for kind, _, _, params, function in records:
        if kind in ("shuffle", "random", "list_files") and params.get("seed") is None:
            found.append(f"an unseeded {kind}")
        if kind == "sample" and params.get("seed") is None:
            found.append("an unseeded sample_from_datasets")
        functions = function if isinstance(function, tuple) else (function,)
        for f in functions:
            if f is None:
                continue
            for op in f.graph.get_operations():
                if op.type in _NOT_STATE:
                    continue
                try:
                    stateful = get_op_def(op.type).stateful
                except KeyError:
                    stateful = False
                if stateful:
                    found.append(f"the stateful op {op.type} in {f!r}")
            if f.dataset is not None:
                found.extend(_external_state(f.records))
    return found


class _IteratorSaveable:
    """What a Saver saves of an iterator: an int64 vector (reads since the start, stages of
    the pipeline)."""

    _is_saveable = True
    dtype = _dtypes.int64
    shape = TensorShape([2])

    def __init__(self, iterator: Iterator, policy: ExternalStatePolicy):
        self._iterator = iterator
        self._policy = policy
        if iterator._one_shot_dataset is not None:
            self._key = iterator._one_shot_key
            self.op = None
            self.name = iterator._one_shot_key
        else:
            self._key = iterator._handle.op.attrs["shared_name"]
            self.op = iterator._handle.op
            self.name = iterator._handle.name

    def __repr__(self) -> str:
        return f"<the saveable state of the iterator {self.name}>"

    def _started_state(self, sess, what: str) -> _IteratorState:
        state = sess._resources.get(self._key)
        if state is None and self._iterator._one_shot_dataset is not None:
            records, tensors = _describe_pipeline(self._iterator._one_shot_dataset._stage)
            state = sess._resources.setdefault(self._key, _IteratorState(self._key))
            state.start(records, sess.run(tensors) if tensors else [], only_once=True)
        if state is None or state.elements is None:
            raise FailedPreconditionError(
                None,
                self.op,
                f"{what}() failed because the iterator has not been initialized. Ensure that "
                "you have run the initializer operation for this iterator before "
                f"{'saving' if what == 'Save' else 'restoring'} it.",
            )
        return state

    def _save_value(self, sess) -> np.ndarray:
        state = self._started_state(sess, "Save")
        if self._policy != ExternalStatePolicy.IGNORE:
            external = _external_state(state.records)
            if external and self._policy == ExternalStatePolicy.FAIL:
                raise FailedPreconditionError(
                    None,
                    self.op,
                    f"Cannot save the iterator {self.name}: its pipeline has state a new run "
                    f"would not repeat ({'; '.join(external)}); pass "
                    "external_state_policy='warn' or 'ignore' to save it anyway",
                )
            if external:
                _log.warning(
                    "Saving the iterator %s, whose pipeline has state a restore will not "
                    "repeat: %s",
                    self.name,
                    "; ".join(external),
                )
        return np.array([state.consumed, len(state.records)], np.int64)

    def _restore_value(self, sess, value) -> None:
        state = self._started_state(sess, "Restore")
        consumed, stages = (int(v) for v in np.ravel(value))
        if stages != len(state.records):
            raise InvalidArgumentError(
                None,
                self.op,
                f"Failed to restore dataset iterator from checkpoint: the checkpoint is of a "
                f"pipeline of {stages} stages, this iterator's has {len(state.records)}. Make "
                "sure the dataset definition has not changed between the process that saved "
                "the checkpoint and the process that is restoring it.",
            )
        state.replay(consumed)


def make_saveable_from_iterator(iterator, external_state_policy=None):
    """The object through which ``df.train.Saver`` saves and restores ``iterator``'s position:
    put it in ``var_list`` or in the graph's ``GraphKeys.SAVEABLE_OBJECTS`` collection (see the
    module docstring for how, and for ``external_state_policy``: 'fail' (None), 'warn' or
    'ignore', or an `ExternalStatePolicy`)."""
    if not isinstance(iterator, Iterator):
        raise TypeError(f"make_saveable_from_iterator takes an Iterator, got {type(iterator)}")
    policy = _policy("fail" if external_state_policy is None else external_state_policy)
    return _IteratorSaveable(iterator, policy)
