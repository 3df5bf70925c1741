"""``df.data.Options`` and its parts: settings attached to a dataset by
``Dataset.with_options`` and read back by ``Dataset.options()``, as TensorFlow's.

Every option starts unset (None, or its default); setting one checks its type, and an unknown
name is refused.  A dataset made from others carries their options merged (the later setting
wins).  dataflow runs a pipeline's stages one element at a time in the reading Session's
thread, in order: ``deterministic`` (or ``False``) is always honoured, since an ordered result
is one of the orders a non-deterministic pipeline may give.  ``threading`` sets the threads
of the Sessions that run the pipeline's functions: ``private_threadpool_size`` their
inter-op threads, ``max_intra_op_parallelism`` the threads one of their ops may use.  The
autotuning, optimization and distribution settings tune TensorFlow's runtime and change no
element.
"""

from __future__ import annotations

import enum
import logging

__all__ = [
    "AutoShardPolicy",
    "AutotuneAlgorithm",
    "AutotuneOptions",
    "DistributeOptions",
    "ExternalStatePolicy",
    "OptimizationOptions",
    "Options",
    "ServiceOptions",
    "ThreadingOptions",
]

_log = logging.getLogger("dataflow.data")


class AutotuneAlgorithm(enum.Enum):
    """The autotuning algorithm TensorFlow's runtime uses (``AutotuneOptions``)."""

    DEFAULT = 0
    HILL_CLIMB = 1
    GRADIENT_DESCENT = 2
    MAX_PARALLELISM = 3
    STAGE_BASED = 4


class AutoShardPolicy(enum.IntEnum):
    """How a distribution strategy splits a dataset among workers (``DistributeOptions``)."""

    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2
    HINT = 3


class ExternalStatePolicy(enum.Enum):
    """What saving an iterator does with state outside the pipeline (``Options``)."""

    WARN = 0
    IGNORE = 1
    FAIL = 2


class _Option:
    """A type-checked option: unset until given, then ``default_factory()`` when read."""

    def __init__(self, ty, doc: str, default_factory=lambda: None):
        self.ty = ty
        self.default_factory = default_factory
        self.__doc__ = doc

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        if self.name not in instance._options:
            instance._options[self.name] = self.default_factory()
        return instance._options[self.name]

    def __set__(self, instance, value):
        if not isinstance(value, self.ty):
            raise TypeError(
                f'Property "{self.name}" must be of type {self.ty}, got: {value} '
                f"(type: {type(value)})"
            )
        instance._options[self.name] = value


class OptionsBase:
    """A set of options; equal when every option is equal."""

    def __init__(self):
        object.__setattr__(self, "_options", {})
        object.__setattr__(self, "_mutable", True)

    def __eq__(self, other):
        if not isinstance(other, self.__class__):
            return NotImplemented
        return all(
            getattr(self, name) == getattr(other, name)
            for name in set(self._options) | set(other._options)
        )

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None

    def __setattr__(self, name, value):
        if not self._mutable:
            raise ValueError(
                "Mutating `tf.data.Options()` returned by `tf.data.Dataset.options()` has no "
                "effect. Use `tf.data.Dataset.with_options(options)` to set or update dataset "
                "options."
            )
        if not isinstance(getattr(type(self), name, None), _Option):
            raise AttributeError(f"Cannot set the property {name} on {type(self).__name__}.")
        object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        set_ = ", ".join(f"{k}={v!r}" for k, v in sorted(self._options.items()) if v is not None)
        return f"{type(self).__name__}({set_})"

    def _set_mutable(self, mutable: bool) -> None:
        object.__setattr__(self, "_mutable", mutable)
        for value in self._options.values():
            if isinstance(value, OptionsBase):
                value._set_mutable(mutable)


def merge_options(*options_list):
    """A new options object: the options set in ``options_list``, a later setting winning
    (options objects within are merged the same way)."""
    if not options_list:
        raise ValueError("At least one options should be provided")
    result_type = type(options_list[0])
    for options in options_list:
        if not isinstance(options, result_type):
            raise TypeError(
                f"Could not merge incompatible options of type {type(options)} and {result_type}."
            )
    if not isinstance(options_list[0], OptionsBase):
        raise TypeError(
            "All options to be merged should inherit from `OptionsBase` but found option of "
            f"type {result_type} which does not."
        )
    default = result_type()
    result = result_type()
    for options in options_list:
        for name in options._options:
            this, that, unset = (
                getattr(result, name),
                getattr(options, name),
                getattr(default, name),
            )
            if that == unset:
                continue
            if this == unset:
                setattr(result, name, that)
            elif isinstance(this, OptionsBase):
                setattr(result, name, merge_options(this, that))
            elif name == "framework_type":
                setattr(result, name, this + that)
            elif this != that:
                _log.warning("Changing the value of option %s from %r to %r.", name, this, that)
                setattr(result, name, that)
    return result


class AutotuneOptions(OptionsBase):
    """How TensorFlow's runtime tunes a pipeline's parallelism and buffers (``autotune``)."""

    enabled = _Option(bool, "Whether to tune performance knobs automatically (None: True).")
    cpu_budget = _Option(int, "The CPU budget of the tuning (None: the cores).")
    ram_budget = _Option(int, "The RAM budget of the tuning, in bytes (None: half the RAM).")
    autotune_algorithm = _Option(AutotuneAlgorithm, "The tuning algorithm.")
    initial_parallelism = _Option(int, "The parallelism a tuned stage starts with.")
    min_parallelism = _Option(int, "The least parallelism a tuned stage gets.")


class DistributeOptions(OptionsBase):
    """How a distribution strategy shards a dataset (``experimental_distribute``)."""

    auto_shard_policy = _Option(
        AutoShardPolicy, "The type of sharding to use.", lambda: AutoShardPolicy.AUTO
    )
    num_devices = _Option(int, "The number of devices attached to this input pipeline.")


class OptimizationOptions(OptionsBase):
    """Which of TensorFlow's static rewrites of a pipeline to apply
    (``experimental_optimization``); none changes an element."""

    apply_default_optimizations = _Option(bool, "Whether to apply the default rewrites.")
    filter_fusion = _Option(bool, "Whether to fuse filter transformations.")
    filter_parallelization = _Option(bool, "Whether to parallelize stateless filters.")
    inject_prefetch = _Option(bool, "Whether to inject a prefetch after the last map.")
    seq_interleave_prefetch = _Option(bool, "Whether to prefetch sequential interleaves.")
    map_and_batch_fusion = _Option(bool, "Whether to fuse map and batch transformations.")
    map_and_filter_fusion = _Option(bool, "Whether to fuse map and filter transformations.")
    map_fusion = _Option(bool, "Whether to fuse map transformations.")
    map_parallelization = _Option(bool, "Whether to parallelize stateless maps.")
    noop_elimination = _Option(bool, "Whether to remove transformations that do nothing.")
    parallel_batch = _Option(bool, "Whether to copy the elements of a batch in parallel.")
    shuffle_and_repeat_fusion = _Option(bool, "Whether to fuse shuffle and repeat.")


class ServiceOptions(OptionsBase):
    """Options of the tf.data service (``experimental_service``)."""

    pinned = _Option(bool, "Whether to pin the service's buffers in memory.")


class ThreadingOptions(OptionsBase):
    """The threads TensorFlow's runtime gives a pipeline (``threading``)."""

    max_intra_op_parallelism = _Option(int, "The most threads one op of the pipeline uses.")
    private_threadpool_size = _Option(int, "The size of the pipeline's own thread pool.")


class Options(OptionsBase):
    """Options of a dataset, given by ``Dataset.with_options`` (see the module docstring)."""

    autotune = _Option(AutotuneOptions, "The autotuning options.", AutotuneOptions)
    deterministic = _Option(bool, "Whether elements come in a fixed order (None: True).")
    experimental_distribute = _Option(
        DistributeOptions, "The distribution options.", DistributeOptions
    )
    experimental_external_state_policy = _Option(
        ExternalStatePolicy, "What saving an iterator does with state outside the pipeline."
    )
    experimental_optimization = _Option(
        OptimizationOptions, "The static rewrites to apply.", OptimizationOptions
    )
    experimental_slack = _Option(bool, "Whether to add slack to the last prefetch.")
    experimental_symbolic_checkpoint = _Option(bool, "Whether to checkpoint by cursors.")
    experimental_service = _Option(ServiceOptions, "The tf.data service options.", ServiceOptions)
    experimental_warm_start = _Option(bool, "Whether to start threads with the iterator.")
    dataset_name = _Option(str, "A name for the dataset, to help in debugging.")
    framework_type = _Option(list, "The frameworks that made the pipeline.")
    threading = _Option(ThreadingOptions, "The threading options.", ThreadingOptions)

    _RENAMED = {
        "experimental_threading": "threading",
        "experimental_deterministic": "deterministic",
    }

    def __getattr__(self, name):  # only for names not found otherwise: the deprecated ones
        renamed = Options._RENAMED.get(name)
        if renamed is None:
            raise AttributeError(f"'Options' object has no attribute '{name}'")
        return getattr(self, renamed)

    def __setattr__(self, name, value):
        super().__setattr__(Options._RENAMED.get(name, name), value)

    def merge(self, options) -> Options:
        """A new `Options`: these merged with ``options`` (whose settings win)."""
        return merge_options(self, options)
