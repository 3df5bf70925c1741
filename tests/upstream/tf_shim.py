"""TensorFlow's module names over dataflow, so that TensorFlow's own tests run unchanged.

A TensorFlow test file imports some forty modules (``from tensorflow.python.ops import
array_ops``, ...).  `run_upstream.py` replaces that import block, and nothing else, with
``from tf_shim import *``, which binds each of those names to a module made here.  Every name a
module offers is looked up in dataflow under its ``tf.compat.v1`` spelling when this file is
imported (``array_ops.gather`` is ``df.gather``, ``adam.AdamOptimizer`` is
``df.train.AdamOptimizer``); a name dataflow does not have is simply missing, so a test that
needs it fails with an AttributeError naming it.  Nothing here computes a value of its own: no
op is imitated.

Beside the op modules, ``test`` and ``test_util`` give TensorFlow's ``TestCase`` and decorators
in TF1 graph mode with control flow v1 (the mode ``tensorflow_passes.json`` was recorded in),
and ``parameterized`` stands in for absl's, which the project does not depend on.
"""

import collections  # noqa: F401 - the replaced import block provided these names
import contextlib
import functools
import io
import math  # noqa: F401
import re
import signal
import sys
import time  # noqa: F401
import types
import unittest

import numpy as np

import dataflow as df
import primitives

__all__ = ["collections", "math", "re", "sys", "time", "np", "parameterized"]

# How long one test may run before it fails as hanging (seconds of wall time).
TEST_TIMEOUT_S = 120


def _lookup(path: str):
    """The object at ``df.<path>`` (dotted), or None where dataflow has no such name.

    A path that starts with ``primitives.`` is looked up in that package instead: it holds
    TensorFlow functions that ``tf.compat.v1`` does not export at its top level."""
    value = df
    if path.startswith("primitives."):
        value, path = primitives, path.split(".", 1)[1]
    for part in path.split("."):
        value = getattr(value, part, None)
        if value is None:
            return None
    return value


def _module(tf_name: str, names, bind: str = "", **renamed) -> types.ModuleType:
    """A module named after TensorFlow's, holding the names dataflow has.

    ``names`` are looked up under the same name on ``df``; ``renamed`` maps a TensorFlow name to
    the dataflow path that provides it (``VariableV1="Variable"``).  The module is exported as
    the test file's import binds it: ``bind`` for ``import ... as bind``, else its last name.
    """
    module = types.ModuleType(tf_name)
    wanted = {name: name for name in names}
    wanted.update(renamed)
    for tf_attr, df_path in wanted.items():
        value = _lookup(df_path)
        if value is not None:
            setattr(module, tf_attr, value)
    binding = bind or tf_name.rsplit(".", 1)[-1]
    globals()[binding] = module
    __all__.append(binding)
    return module


# -- framework -------------------------------------------------------------------------------------
_DTYPES = [
    "DType", "as_dtype", "bool", "float16", "half", "float32", "float64", "double", "bfloat16",
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "string",
    "complex64", "complex128", "resource", "variant", "qint8", "quint8", "qint16", "quint16",
    "qint32",
    "int32_ref", "float32_ref",
]  # fmt: skip
_module("tensorflow.python.framework.dtypes", _DTYPES)
_module(
    "tensorflow.python.framework.constant_op",
    ["constant"],
)
_module(
    "tensorflow.python.framework.errors_impl",
    [name for name in dir(df.errors) if name.endswith("Error")],
    **{name: f"errors.{name}" for name in dir(df.errors) if name.endswith("Error")},
)
_module(
    "tensorflow.python.framework.ops",
    [
        "Graph", "Operation", "Tensor", "GraphKeys", "IndexedSlices", "convert_to_tensor",
        "get_default_graph", "reset_default_graph", "control_dependencies", "name_scope",
        "device", "colocate_with", "get_collection", "add_to_collection",
        "register_tensor_conversion_function", "get_default_session", "init_scope",
    ],
)  # fmt: skip
_module(
    "tensorflow.python.framework.tensor_shape",
    ["TensorShape", "Dimension", "dimension_value"],
    unknown_shape="tensor_shape.unknown_shape",
    as_shape="tensor_shape.as_shape",
    scalar="tensor_shape.scalar",
)
_module("tensorflow.python.framework.tensor", ["Tensor", "TensorSpec"], bind="tensor_lib")
_module("tensorflow.python.framework.indexed_slices", ["IndexedSlices", "IndexedSlicesValue"])
_module(
    "tensorflow.python.framework.sparse_tensor",
    ["SparseTensor", "SparseTensorValue", "SparseTensorSpec"],
)
_module("tensorflow.python.framework.function", ["Defun"])

# -- ops -------------------------------------------------------------------------------------------
_module(
    "tensorflow.python.ops.array_ops",
    [
        "placeholder", "placeholder_with_default", "identity", "stop_gradient", "gather",
        "gather_nd", "concat", "stack", "unstack", "split", "slice", "strided_slice",
        "expand_dims", "squeeze", "reshape", "transpose", "tile", "pad", "fill", "zeros",
        "ones", "zeros_like", "ones_like", "shape", "size", "rank", "where", "one_hot",
        "reverse", "boolean_mask", "sequence_mask", "matrix_diag",
    ],
)  # fmt: skip
_module("tensorflow.python.ops.array_ops_stack", ["stack", "unstack"])
_module("tensorflow.python.ops.cond", ["cond"], bind="tf_cond")
_module("tensorflow.python.ops.control_flow_assert", ["Assert"])
_module("tensorflow.python.ops.control_flow_case", ["case"])
_module("tensorflow.python.ops.control_flow_switch_case", ["switch_case"])
_module(
    "tensorflow.python.ops.control_flow_ops",
    [
        "switch", "merge", "exit", "next_iteration", "loop_cond", "group", "tuple", "no_op",
        "XLAControlFlowContext",
    ],
    ref_switch="primitives.raw_ops.ref_switch",
    ref_merge="primitives.raw_ops.ref_merge",
    ref_select="ref_variables.ref_select",
    _Identity="ref_variables.forwarding_identity",
    _Enter="enter",
    _SwitchRefOrTensor="switch",
    with_dependencies="primitives.control_flow_ops.with_dependencies",
)  # fmt: skip
_control_flow_util = _module("tensorflow.python.ops.control_flow_util", [])
# The tests branch on this flag; dataflow's control flow is TensorFlow's v1 design.
_control_flow_util.ENABLE_CONTROL_FLOW_V2 = False
_module("tensorflow.python.ops.data_flow_ops", ["FIFOQueue", "RandomShuffleQueue"])
_module("tensorflow.python.ops.functional_ops", ["scan", "foldl", "foldr", "map_fn"])
_module(
    "tensorflow.python.ops.gen_array_ops",
    ["identity"],
    ref_identity="ref_variables.ref_identity",
)
_module(
    "tensorflow.python.ops.gen_control_flow_ops",
    ["enter", "exit", "merge", "switch", "next_iteration", "loop_cond"],
)
_module(
    "tensorflow.python.ops.gen_data_flow_ops",
    [],
    stack_v2="ops.stack_ops.stack_v2",
    stack_push_v2="ops.stack_ops.stack_push_v2",
    stack_pop_v2="ops.stack_ops.stack_pop_v2",
    stack_close_v2="ops.stack_ops.stack_close_v2",
)
_module("tensorflow.python.ops.gen_logging_ops", [], _assert="ops.misc_ops.raw_assert")
_module("tensorflow.python.ops.gen_state_ops", [], variable="ref_variables.variable")
_gradient_checker = _module("tensorflow.python.ops.gradient_checker_v2", [])


def _to_numpy(value):
    """A fetched value as a dense array, an IndexedSlicesValue made dense (a test helper of
    TensorFlow's gradient checker, not an op)."""
    if isinstance(value, df.IndexedSlicesValue):
        dense = np.zeros(value.dense_shape, dtype=value.values.dtype)
        np.add.at(dense, value.indices, value.values)
        return dense
    return value


_gradient_checker._to_numpy = _to_numpy
_module("tensorflow.python.ops.gradients_impl", ["gradients"])
_module(
    "tensorflow.python.ops.init_ops",
    [
        "constant_initializer", "ones_initializer", "zeros_initializer",
        "random_normal_initializer", "random_uniform_initializer",
        "truncated_normal_initializer", "glorot_uniform_initializer",
    ],
)  # fmt: skip
_module("tensorflow.python.ops.linalg_ops", ["norm"])
_module("tensorflow.python.ops.logging_ops", ["Print"], print_v2="print")
_module("tensorflow.python.ops.map_fn", ["map_fn"])
_module(
    "tensorflow.python.ops.math_ops",
    [
        "add", "add_n", "subtract", "multiply", "divide", "truediv", "floordiv", "mod", "pow",
        "negative", "abs", "sign", "square", "sqrt", "rsqrt", "exp", "log", "log1p", "sin",
        "cos", "tanh", "sigmoid", "maximum", "minimum", "less", "less_equal", "greater",
        "greater_equal", "equal", "not_equal", "logical_and", "logical_or", "logical_not",
        "logical_xor", "cast", "matmul", "reduce_sum", "reduce_mean", "reduce_max",
        "reduce_min", "reduce_prod", "reduce_any", "reduce_all", "argmax", "argmin", "range",
        "cumsum", "squared_difference", "clip_by_value",
    ],
)  # fmt: skip
_module("tensorflow.python.ops.nn_grad", [])
_module("tensorflow.python.ops.nn_ops", [], conv2d="nn.conv2d", relu="nn.relu")
_module(
    "tensorflow.python.ops.random_ops",
    ["random_normal", "random_uniform", "truncated_normal"],
)
# dataflow's variables are resource variables (a handle, reads and writes through it).
_module(
    "tensorflow.python.ops.resource_variable_ops",
    [],
    ResourceVariable="Variable",
    assign_variable_op="resource_variable_ops.assign_variable_op",
    read_variable_op="resource_variable_ops.read_variable_op",
)
_module("tensorflow.python.ops.script_ops", ["py_func", "numpy_function"])
_module("tensorflow.python.ops.sparse_ops", [], sparse_add="sparse.add")
_module(
    "tensorflow.python.ops.state_ops",
    [
        "assign", "assign_add", "assign_sub", "scatter_update", "scatter_add",
        "scatter_nd_update", "is_variable_initialized",
    ],
)  # fmt: skip
_module("tensorflow.python.ops.tensor_array_grad", [])
_module("tensorflow.python.ops.tensor_array_ops", ["TensorArray"])
_module("tensorflow.python.ops.variable_scope", ["get_variable", "variable_scope"])
_module(
    "tensorflow.python.ops.variables",
    [
        "Variable", "global_variables", "global_variables_initializer", "local_variables",
        "local_variables_initializer", "trainable_variables", "variables_initializer",
        "initialize_all_variables",
    ],
)  # fmt: skip
_module("tensorflow.python.ops.variable_v1", [], VariableV1="Variable")
_module("tensorflow.python.ops.while_loop", ["while_loop"], bind="while_loop_tf")
_module("tensorflow.python.ops.while_v2", [])
_module("tensorflow.python.ops.ragged.ragged_factory_ops", [], constant="ragged.constant")
_module(
    "tensorflow.python.ops.ragged.ragged_tensor",
    ["RaggedTensor", "RaggedTensorSpec"],
)

# -- training, sessions, protos --------------------------------------------------------------------
_module("tensorflow.python.training.adam", [], AdamOptimizer="train.AdamOptimizer")
_module(
    "tensorflow.python.training.gradient_descent",
    [],
    GradientDescentOptimizer="train.GradientDescentOptimizer",
)
_module(
    "tensorflow.python.util.nest",
    [],
    flatten="nest.flatten",
    pack_sequence_as="nest.pack_sequence_as",
    map_structure="nest.map_structure",
    assert_same_structure="nest.assert_same_structure",
)
_module("tensorflow.python.client.session", ["Session", "InteractiveSession"])
_module(
    "tensorflow.python.client.device_lib",
    [],
    list_local_devices="device_lib.list_local_devices",
)
_module(
    "tensorflow.core.protobuf.config_pb2",
    ["ConfigProto", "RunOptions", "RunMetadata", "GraphOptions", "OptimizerOptions"],
)
_module("tensorflow.core.protobuf.rewriter_config_pb2", ["RewriterConfig"])
_module("tensorflow.python.data.ops.dataset_ops", [], Dataset="data.Dataset")
_module("tensorflow.python.data.experimental.ops.cardinality", [])

# -- eager execution and functions -----------------------------------------------------------------
_module("tensorflow.python.eager.context", ["eager_mode", "executing_eagerly", "graph_mode"])
_module("tensorflow.python.eager.def_function", [], bind="eager_def_function", function="function")
_module("tensorflow.python.eager.wrap_function", ["wrap_function"])
_tf2 = _module("tensorflow.python.tf2", [])
_tf2.enabled = lambda: False


# -- variants of one test method, as absl's parameterized and test_util make them ------------------
def _expand_variants(cls) -> None:
    """Replaces each method marked with ``_variants`` by one method per variant, ``name+suffix``."""
    for name, method in list(vars(cls).items()):
        variants = getattr(method, "_variants", None)
        if variants is None:
            continue
        delattr(cls, name)
        for suffix, variant in variants:
            setattr(cls, f"{name}{suffix}", variant)


class _VariantsTestCase(unittest.TestCase):
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _expand_variants(cls)


def _called_with(method, case):
    @functools.wraps(method)
    def run(self):
        if isinstance(case, dict):
            return method(self, **case)
        if isinstance(case, tuple):
            return method(self, *case)
        return method(self, case)

    run.__dict__.pop("_variants", None)
    return run


def _parameters(*cases):
    """absl's ``parameterized.parameters``: ``name0``, ``name1``, ... called with each case (a
    tuple spread over the arguments, a dict passed by keyword)."""

    def mark(method):
        method._variants = [(str(i), _called_with(method, case)) for i, case in enumerate(cases)]
        return method

    return mark


# absl's module as the tests use it; the project does not depend on absl.
parameterized = types.ModuleType("absl.testing.parameterized")
parameterized.parameters = _parameters
parameterized.TestCase = _VariantsTestCase


# -- test and test_util ----------------------------------------------------------------------------
def _is_graph_value(value) -> bool:
    return isinstance(value, (df.Tensor, df.Variable, df.Operation))


class _CapturedWrites:
    def __init__(self):
        self._buffer = io.StringIO()

    def write(self, text):
        return self._buffer.write(text)

    def flush(self):
        pass

    def contents(self) -> str:
        return self._buffer.getvalue()


class _TestTimeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise _TestTimeout(f"the test ran longer than {TEST_TIMEOUT_S} s")


class TestCase(_VariantsTestCase):
    """TensorFlow's ``test.TestCase`` in TF1 graph mode, on dataflow's Graph and Session.

    Each test starts with a fresh default graph.  ``cached_session`` is one Session per test
    (closed at its end); ``evaluate`` runs in the default session, or else in that cached one,
    so variable values persist from one ``evaluate`` to the next as in TensorFlow.
    """

    def setUp(self):
        super().setUp()
        df.reset_default_graph()
        self._cached_session = None
        self._graph_contexts = contextlib.ExitStack()
        if hasattr(signal, "SIGALRM"):
            self._previous_alarm = signal.signal(signal.SIGALRM, _on_alarm)
            signal.alarm(TEST_TIMEOUT_S)

    def tearDown(self):
        if hasattr(signal, "SIGALRM"):
            signal.alarm(0)
            signal.signal(signal.SIGALRM, self._previous_alarm)
        self._graph_contexts.close()
        if self._cached_session is not None:
            self._cached_session.close()
            self._cached_session = None
        super().tearDown()

    # -- sessions ----------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _as_default(self, sess):
        with sess.graph.as_default(), sess.as_default():
            yield sess

    @contextlib.contextmanager
    def session(self, graph=None, config=None, use_gpu=True, force_gpu=False):
        """A new Session, the default (with its graph) inside the block, closed at its end."""
        sess = df.Session(graph=graph, config=config)
        try:
            with self._as_default(sess):
                yield sess
        finally:
            sess.close()

    def cached_session(self, graph=None, config=None, use_gpu=True, force_gpu=False):
        """The test's one Session (made on first use), the default inside the block."""
        graph = graph if graph is not None else df.get_default_graph()
        if self._cached_session is None:
            self._cached_session = df.Session(graph=graph, config=config)
        elif self._cached_session.graph is not graph:
            raise ValueError(
                "The graph used to get the cached session is different than the one that was "
                "used to create the session. Use self.session() for a new session."
            )
        return self._as_default(self._cached_session)

    def evaluate(self, tensors):
        """The values of ``tensors``: run in the default (or cached) Session, or, in eager mode,
        the numpy values the eager tensors already hold, as TensorFlow's TestCase gives."""
        if df.executing_eagerly():
            return df.nest.map_structure(lambda t: t.numpy() if hasattr(t, "numpy") else t, tensors)
        sess = df.get_default_session()
        if sess is not None:
            return sess.run(tensors)
        with self.cached_session() as sess:
            return sess.run(tensors)

    # -- assertions --------------------------------------------------------------------------------
    def _as_array(self, value):
        if _is_graph_value(value):
            value = self.evaluate(value)
        return value if isinstance(value, np.ndarray) else np.array(value)

    def _holds_graph_values(self, value) -> bool:
        if _is_graph_value(value):
            return True
        if isinstance(value, (list, tuple, dict)):
            items = value.values() if isinstance(value, dict) else value
            return any(self._holds_graph_values(item) for item in items)
        return False

    def assertAllEqual(self, a, b, msg=None):
        a, b = self._as_array(a), self._as_array(b)
        self.assertEqual(a.shape, b.shape, f"Shape mismatch: {a.shape} vs {b.shape}. {msg or ''}")
        same = a == b
        if a.dtype.kind == "f" and b.dtype.kind == "f":
            same = np.logical_or(same, np.logical_and(np.isnan(a), np.isnan(b)))
        if not np.all(same):
            self.fail(f"Arrays differ:\n{a!r}\n{b!r}\n{msg or ''}")

    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):
        self._assert_all_close(a, b, rtol, atol, "", msg)

    def _assert_all_close(self, a, b, rtol, atol, path, msg):
        if isinstance(a, dict) or isinstance(b, dict):
            self.assertIsInstance(a, dict, f"{path}: {a!r} is not a dict like {b!r}")
            self.assertIsInstance(b, dict, f"{path}: {b!r} is not a dict like {a!r}")
            self.assertEqual(set(a), set(b), f"{path}: keys differ")
            for key in a:
                self._assert_all_close(a[key], b[key], rtol, atol, f"{path}[{key!r}]", msg)
            return
        nested = isinstance(a, (list, tuple)) and isinstance(b, (list, tuple))
        if nested and (self._holds_graph_values(a) or self._holds_graph_values(b)):
            self.assertEqual(len(a), len(b), f"{path}: lengths differ")
            for index, (x, y) in enumerate(zip(a, b)):
                self._assert_all_close(x, y, rtol, atol, f"{path}[{index}]", msg)
            return
        a, b = self._as_array(a), self._as_array(b)
        self.assertEqual(a.shape, b.shape, f"{path}: shape mismatch {a.shape} vs {b.shape}")
        if a.dtype == np.float16 or b.dtype == np.float16:
            rtol, atol = max(rtol, 1e-3), max(atol, 1e-3)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg=msg or "")

    def assertLen(self, container, expected_len, msg=None):
        self.assertEqual(len(container), expected_len, msg)

    @contextlib.contextmanager
    def assertRaisesWithPredicateMatch(self, exception_type, expected_err_re_or_predicate):
        if callable(expected_err_re_or_predicate):
            predicate = expected_err_re_or_predicate
        else:

            def predicate(e):
                return re.search(expected_err_re_or_predicate, str(e)) is not None

        try:
            yield
        except exception_type as e:
            if not predicate(e):
                raise AssertionError(f"Exception {type(e).__name__} does not match: {e}") from e
        else:
            self.fail(f"{exception_type.__name__} not raised")

    def assertRaisesOpError(self, expected_err_re_or_predicate):
        return self.assertRaisesWithPredicateMatch(df.errors.OpError, expected_err_re_or_predicate)

    def assertDeviceEqual(self, device1, device2, msg=None):
        canonical = _lookup("DeviceSpec.from_string")
        if canonical is None:
            raise AttributeError("dataflow has no 'DeviceSpec' to compare device names with")
        self.assertEqual(
            canonical(device1 or "").to_string(), canonical(device2 or "").to_string(), msg
        )

    @contextlib.contextmanager
    def captureWritesToStream(self, stream):
        """Collects what is written to ``sys.stderr`` or ``sys.stdout`` inside the block."""
        which = "stderr" if stream is sys.stderr else "stdout"
        captured = _CapturedWrites()
        previous = getattr(sys, which)
        setattr(sys, which, captured)
        try:
            yield captured
        finally:
            setattr(sys, which, previous)


class Benchmark:
    """TensorFlow's benchmark base; the runner runs tests only, so it only has to exist."""


def _no_gpu_name() -> str:
    return ""


def _no_gpu(*args, **kwargs) -> bool:
    return False


_test = _module("tensorflow.python.platform.test", [])
_test.TestCase = TestCase
_test.Benchmark = Benchmark
_test.main = unittest.main
_test.gpu_device_name = _no_gpu_name
_test.is_gpu_available = _no_gpu


def _decorator_with_optional_reason(wrap):
    """Makes ``wrap(fn)`` usable as ``@name``, ``@name("reason")`` and ``@name(fn=...)``."""

    def decorator(reason=None, func=None):
        if callable(reason) and func is None:
            return wrap(reason)
        if func is not None:
            return wrap(func)
        return wrap

    return decorator


def _as_is(fn):
    return fn


def _in_cached_session(fn):
    """Runs the test with the cached session as default, as TensorFlow's graph-mode half does."""

    @functools.wraps(fn)
    def run(self, *args, **kwargs):
        with self.cached_session():
            return fn(self, *args, **kwargs)

    return run


def _with_control_flow_v2_enabled(fn):
    """TensorFlow's ``test_util.enable_control_flow_v2``: the test builds with control flow v2
    (``df.enable_control_flow_v2``), and the setting is restored after it."""

    @functools.wraps(fn)
    def run(self, *args, **kwargs):
        was_enabled = df.control_flow_v2_enabled()
        df.enable_control_flow_v2()
        try:
            return fn(self, *args, **kwargs)
        finally:
            if not was_enabled:
                df.disable_control_flow_v2()

    return run


def _needs_gpu(fn):
    @functools.wraps(fn)
    def run(self, *args, **kwargs):
        self.skipTest("Test requires GPU")

    return run


def _as_v1_graph_and_function(fn):
    """``name_v1_graph`` runs the test in a TF1 graph; ``name_function`` would build it inside a
    ``tf.function``, which dataflow does not have."""

    @functools.wraps(fn)
    def in_function(self, *args, **kwargs):
        return df.function(lambda: fn(self, *args, **kwargs))()

    fn._variants = [("_v1_graph", _without_variants(fn)), ("_function", in_function)]
    return fn


def _without_variants(fn):
    @functools.wraps(fn)
    def run(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    run.__dict__.pop("_variants", None)
    return run


def _disable_v2(unused_reason):
    return _as_is


def _run_in_graph_and_eager_modes(func=None, config=None, use_gpu=True, **unused):
    return _in_cached_session(func) if func is not None else _in_cached_session


_test_util = _module("tensorflow.python.framework.test_util", [])
_test_util.run_v1_only = _decorator_with_optional_reason(_as_is)
_test_util.run_deprecated_v1 = _as_is
_test_util.deprecated_graph_mode_only = _as_is
_test_util.build_as_function_and_v1_graph = _as_v1_graph_and_function
_test_util.run_in_graph_and_eager_modes = _run_in_graph_and_eager_modes
_test_util.with_control_flow_v2 = _as_is
_test_util.with_eager_op_as_function = _decorator_with_optional_reason(_as_is)
_test_util.disable_control_flow_v2 = _disable_v2
_test_util.disable_tfrt = _disable_v2
_test_util.enable_control_flow_v2 = _with_control_flow_v2_enabled
_test_util.enable_output_all_intermediates = _as_is
_test_util.run_gpu_only = _needs_gpu
_test_util.is_gpu_available = _no_gpu
