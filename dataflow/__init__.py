"""dataflow: a TensorFlow-1.x-style dataflow runtime on numpy.

``import dataflow as df`` is the one import a user needs.  The public names mirror
``tf.compat.v1``: build a `Graph` of ops (placeholders, constants, variables, math, in-graph
control flow with `cond` and `while_loop`), run it with a `Session`, render it with `render`.

Beside the top-level names, as in TensorFlow 1.x: ``df.train`` (optimizers, the global step,
``Saver``), ``df.nn``, ``df.errors``, ``df.io`` and ``df.graph_util`` (saved graphs); and
``df.passes`` (the graph passes a Session runs) and ``df.debug`` (watching values, traces, the
picture of a run).

Layers (see the README): ``dataflow`` holds the graph IR, the op library, autodiff, the
Session, the graph passes and rendering; ``primitives`` builds the control-flow ops and the
cond/while_loop helpers on top of it (and the backward loops of their gradients); ``executor``
runs the lowered program and knows nothing of either.

Layer: the package's face, the top of the house (``docs/architecture.md``).  It only
imports and re-exports, as TensorFlow 1.x spells the names; nothing below imports it.
"""

from .framework import dtypes, errors
from .framework import memory as _memory

_memory.tune_malloc()  # large arrays reused from the heap between steps
from .framework.dtypes import (
    DType,
    as_dtype,
    bool,  # noqa: A004 - mirrors tf.bool
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    resource,
    uint8,
)
from .framework.graph import (
    Graph,
    Operation,
    Tensor,
    control_dependencies,
    get_default_graph,
    name_scope,
    reset_default_graph,
)
from .framework.graph_keys import GraphKeys
from .framework.tensor_conversion import convert_to_tensor, register_tensor_conversion_function
from .framework.tensor_shape import TensorShape, dimension_value
from .ops.constant_op import constant, placeholder, placeholder_with_default

newaxis = None
# control flow (primitives)
# Imported last and from the submodules, so that `import primitives` (which imports dataflow
# first) and `import dataflow` both work without a cycle.
from primitives.control_flow_ops import case, cond, while_loop  # noqa: E402
from primitives.raw_ops import (  # noqa: E402
    enter,
    exit,  # noqa: A004 - mirrors TensorFlow's control_flow_ops.exit
    loop_cond,
    merge,
    next_iteration,
    set_merge_input,
    switch,
)

# ops library
from . import nn  # noqa: E402
from .client.session import (
    ConfigProto,
    GPUOptions,
    InteractiveSession,
    NodeExecStats,
    RunMetadata,
    RunOptions,
    Session,
    get_default_session,
)
from .ops import (  # noqa: E402, F401 - they register gradients
    array_grad,
    complex_grad,
    math_grad,
    overloads,  # noqa: E402, F401
)
from .ops.array_ops import *  # noqa: E402, F403
from .ops.gather_ops import *  # noqa: E402, F403
from .ops.math_ops import *  # noqa: E402, F403
from .ops.misc_ops import *  # noqa: E402, F403
from .ops.slice_ops import *  # noqa: E402, F403
from .ops.variables import (
    Variable,
    assign,
    assign_add,
    assign_sub,
    global_variables,
    global_variables_initializer,
    initialize_all_variables,
    local_variables,
    local_variables_initializer,
    trainable_variables,
    variable_creator_scope,
    variables_initializer,
)

# graph passes' options (the protos of TensorFlow 1.x's names: GraphOptions and
# OptimizerOptions as in tf.compat.v1, RewriterConfig from rewriter_config_pb2; the passes
# themselves are in df.passes)
from .passes.config import GraphOptions, OptimizerOptions, RewriterConfig

# rendering
from .render import render

# isort: split
# checkpoints and serialization (Saver and latest_checkpoint are attached to `train` at the end
# of train.py)
from . import io, passes
from .autodiff.gradients import AggregationMethod, UnconnectedGradients, gradients

# autodiff
from .framework.gradient_registry import NotDifferentiable, RegisterGradient
from .io import graph_util
from .io.meta_graph import MetaGraphDef, TensorInfo  # noqa: E402
from .training import train

# isort: split
# debugging a static graph (df.debug; DebugOptions/DebugTensorWatch are TensorFlow 1.x's
# debug_pb2 protos, which RunOptions.debug_options holds)
from . import debug
from .debug import DebugOptions, DebugTensorWatch

# isort: split
# input pipelines: queues, the threads that feed them, and their coordinator (reached as TF1
# spells them: df.FIFOQueue, df.train.Coordinator, df.train.shuffle_batch, ...)
from .ops.queue_ops import (  # noqa: E402
    FIFOQueue,
    PaddingFIFOQueue,
    PriorityQueue,
    QueueBase,
    RandomShuffleQueue,
)
from .ops.reader_ops import (  # noqa: E402
    FixedLengthRecordReader,
    IdentityReader,
    ReaderBase,
    TextLineReader,
    TFRecordReader,
    WholeFileReader,
)
from .training import coordinator as _coordinator  # noqa: E402
from .training import input as _input  # noqa: E402
from .training import queue_runner as _queue_runner  # noqa: E402

for _module in (_coordinator, _queue_runner, _input):
    for _name in _module.__all__:
        setattr(train, _name, getattr(_module, _name))
train.queue_runner = _queue_runner
count_up_to = _input.count_up_to
from . import data  # noqa: E402
from .compat import (
    python_io,  # noqa: E402
    sets,  # noqa: E402
)
from .ops.csv_ops import decode_csv  # noqa: E402
from .ops.io_ops import (  # noqa: E402
    decode_base64,
    encode_base64,
    matching_files,
    read_file,
    write_file,
)
from .ops.parsing_ops import (  # noqa: E402
    FixedLenFeature,
    FixedLenSequenceFeature,
    RaggedFeature,
    SparseFeature,
    VarLenFeature,
    decode_compressed,
    decode_json_example,
    parse_example,
    parse_sequence_example,
    parse_single_example,
    parse_single_sequence_example,
)
from .ops.tensor_proto_ops import (  # noqa: E402
    deserialize_many_sparse,
    parse_tensor,
    serialize_many_sparse,
    serialize_sparse,
    serialize_tensor,
)

# isort: split
# strings, summaries and GraphDef exchange (df.strings as tf.strings; df.summary, whose protos
# and event files need the "tensorboard" extra; df.io.export_graph_def/import_graph_def)
from .compat import (
    audio,  # noqa: E402
    strings,  # noqa: E402
)
from .framework.dtypes import string  # noqa: E402
from .io import summary  # noqa: E402
from .io.graph_def import import_graph_def  # noqa: E402
from .ops.string_ops import (  # noqa: E402
    as_string,
    decode_raw,
    reduce_join,
    regex_replace,
    string_join,
    string_split,
    string_strip,
    string_to_hash_bucket,
    string_to_hash_bucket_fast,
    string_to_hash_bucket_strong,
    string_to_number,
    substr,
)

# isort: split
# sparse values: IndexedSlices (sparse gradients), segment sums
from .autodiff.gradients import hessians  # noqa: E402
from .compat import sparse  # noqa: E402
from .eager.scopes import executing_eagerly_outside_functions, init_scope  # noqa: E402
from .eager.tracing.function_ops import (  # noqa: E402
    nondifferentiable_batch_function,
    vectorized_map,
)
from .framework.indexed_slices import (  # noqa: E402
    IndexedSlices,
    IndexedSlicesValue,
    convert_to_tensor_or_indexed_slices,
)
from .framework.sparse_tensor import SparseTensor, SparseTensorValue  # noqa: E402
from .ops.assorted_ops import (  # noqa: E402
    bitcast,
    broadcast_dynamic_shape,
    broadcast_static_shape,
    convert_to_tensor_or_sparse_tensor,
    dimension_at_index,
    fingerprint,
    floor_div,
    guarantee_const,
    is_symbolic_tensor,
    searchsorted,
    timestamp,
)
from .ops.nd_index_ops import (  # noqa: E402
    gather_nd,
    scatter_nd,
    tensor_scatter_add,
    tensor_scatter_nd_add,
    tensor_scatter_nd_max,
    tensor_scatter_nd_min,
    tensor_scatter_nd_sub,
    tensor_scatter_nd_update,
    tensor_scatter_sub,
    tensor_scatter_update,
)
from .ops.segment_ops import segment_sum, unique, unsorted_segment_sum  # noqa: E402
from .ops.space_batch_ops import (  # noqa: E402
    batch_to_space,
    batch_to_space_nd,
    parallel_stack,
    required_space_to_batch_paddings,
    space_to_batch,
    space_to_batch_nd,
)
from .ops.sparse_extra_ops import (  # noqa: E402
    sparse_concat,
    sparse_fill_empty_rows,
    sparse_mask,
    sparse_maximum,
    sparse_merge,
    sparse_minimum,
    sparse_reduce_max,
    sparse_reduce_max_sparse,
    sparse_reduce_sum_sparse,
    sparse_reset_shape,
    sparse_reshape,
    sparse_retain,
    sparse_segment_mean,
    sparse_segment_sqrt_n,
    sparse_segment_sum,
    sparse_slice,
    sparse_softmax,
    sparse_split,
    sparse_to_indicator,
    sparse_transpose,
)
from .ops.sparse_ops import (  # noqa: E402
    sparse_add,
    sparse_placeholder,  # noqa: E402
    sparse_reduce_sum,
    sparse_reorder,
    sparse_tensor_dense_matmul,
    sparse_tensor_to_dense,
    sparse_to_dense,
)

# isort: split
# training: clipping by norm, df.losses and df.metrics (df.train holds the optimizers,
# schedules and moving averages)
from .nn import losses, metrics
from .ops.clip_ops import (
    clip_by_average_norm,
    clip_by_global_norm,
    clip_by_norm,
    global_norm,
)

# isort: split
# random ops and their seeds (graph and op seeds: dataflow.framework.random_seed; the Session's
# streams: dataflow.client.random_streams)
# initializers (tf.compat.v1's classes and lowercase names; df.initializers as tf.initializers)
from . import linalg  # noqa: E402
from .compat import (
    initializers,  # noqa: E402
    random,  # noqa: E402
)
from .framework.random_seed import get_seed, set_random_seed  # noqa: E402
from .linalg.linalg_impl import (  # noqa: E402
    cross,
    matrix_solve_ls,
    matrix_square_root,
    matrix_triangular_solve,
    self_adjoint_eig,
    self_adjoint_eigvals,
    svd,
)
from .ops.approx_top_k_ops import approx_top_k  # noqa: E402
from .ops.init_ops import (  # noqa: E402
    constant_initializer,
    glorot_normal_initializer,
    glorot_uniform_initializer,
    identity_initializer,
    ones_initializer,
    orthogonal_initializer,
    random_normal_initializer,
    random_uniform_initializer,
    truncated_normal_initializer,
    uniform_unit_scaling_initializer,
    variance_scaling_initializer,
    zeros_initializer,
)
from .ops.linalg_ops import norm, qr  # noqa: E402
from .ops.random_ops import (  # noqa: E402
    multinomial,
    random_gamma,
    random_normal,
    random_poisson,
    random_shuffle,
    random_uniform,
    truncated_normal,
)
from .ops.stateless_random_ops import random_index_shuffle  # noqa: E402

# isort: split
# variable scopes, collections, variables' fields and ops, devices, TF1's small names
from . import compat
from .client import config
from .compat import app, bitwise, flags, manip, queue
from .compat.legacy import (
    NoGradient,
    all_variables,
    arg_max,
    arg_min,
    batch_gather,
    disable_eager_execution,
    disable_v2_behavior,
    disable_v2_tensorshape,
    enable_v2_behavior,
    enable_v2_tensorshape,
    initialize_all_tables,
    initialize_local_variables,
    initialize_variables,
    no_gradient,
    op_scope,
    saturate_cast,
    tables_initializer,
    variable_op_scope,
)
from .framework import gfile, logging, resource_loader
from .framework.device import DeviceSpec
from .framework.graph import (
    add_to_collection,
    add_to_collections,
    colocate_with,
    device,
    get_collection,
    get_collection_ref,
)
from .framework.logging import get_logger
from .framework.resource_containers import container
from .framework.tensor_shape import Dimension
from .io.graph_def import make_ndarray, make_tensor_proto
from .ops import lookup
from .ops.accumulator_ops import (
    ConditionalAccumulator,
    ConditionalAccumulatorBase,
    SparseConditionalAccumulator,
)
from .ops.critical_section_ops import CriticalSection
from .ops.extra_nn_ops import depth_to_space, space_to_depth
from .ops.module import Module
from .ops.partitioned_variables import (
    create_partitioned_variables,
    fixed_size_partitioner,
    min_max_variable_partitioner,
    variable_axis_size_partitioner,
)
from .ops.session_ops import (
    delete_session_tensor,
    get_session_handle,
    get_session_tensor,
)
from .ops.state_ops import *  # noqa: F403
from .ops.template import make_template
from .ops.variable_scope import (
    AUTO_REUSE,
    VariableScope,
    get_local_variable,
    get_variable,
    get_variable_scope,
    no_regularizer,
    variable_scope,
)
from .ops.variables import (
    VariableAggregation,
    VariableSynchronization,
    assert_variables_initialized,
    model_variables,
    moving_average_variables,
)

# isort: split
# TensorArray, the functional ops built on it (map_fn, scan, foldl, foldr) and RNNs
from primitives.functional_ops import foldl, foldr, map_fn, scan  # noqa: E402

from .nn import rnn as _rnn  # noqa: E402
from .nn import rnn_cell as _rnn_cell  # noqa: E402
from .ops.reverse_ops import reverse, reverse_sequence, reverse_v2  # noqa: E402
from .ops.tensor_array_ops import TensorArray  # noqa: E402

nn.rnn_cell = _rnn_cell
for _name in _rnn.__all__:
    setattr(nn, _name, getattr(_rnn, _name))

# isort: split
# layers (tf.compat.v1.layers): dense, convolutions, pooling, dropout, flatten, batch norm
from .nn import layers  # noqa: E402

# isort: split
# tracing (df.function): concrete functions, TensorSpec, TF1's Defun and wrap_function
from .data.structures import OptionalSpec  # noqa: E402
from .eager.tracing import ConcreteFunction, Defun, function, wrap_function  # noqa: E402
from .framework.tensor_spec import TensorSpec  # noqa: E402
from .framework.type_spec import (  # noqa: E402
    IndexedSlicesSpec,
    NoneTensorSpec,
    TypeSpec,
    type_spec_from_value,
)
from .ops.tensor_array_ops import TensorArraySpec  # noqa: E402

# isort: split
# df.types (tf.types): the tracing protocol (df.types.experimental.TraceType) and function types
from .compat import types  # noqa: E402

# isort: split
# eager execution: modes, eager tensors, gradient tapes, custom gradients
from .eager import (  # noqa: E402
    EagerTensor,
    GradientTape,
    eager_mode,
    enable_eager_execution,
    executing_eagerly,
    graph_mode,
)
from .eager.custom_gradient import custom_gradient, grad_pass_through, recompute_grad  # noqa: E402
from .eager.py_function import py_function  # noqa: E402
from .framework.tensor_equality import disable_tensor_equality, enable_tensor_equality  # noqa: E402

# isort: split
# TF1's reference variables and the dtypes they and TF1's quantized ops use
from .framework.dtypes import (  # noqa: E402
    qint8,
    qint16,
    qint32,
    quint8,
    quint16,
    uint16,
    uint32,
    uint64,
)
from .ops import ref_variables  # noqa: E402
from .ops.ref_variables import is_variable_initialized  # noqa: E402

for _value_dtype in dtypes._VALUES:
    globals()[_value_dtype._as_ref.name] = _value_dtype._as_ref
variant = dtypes.variant

# isort: split
# ragged tensors: df.RaggedTensor, df.ragged (constant, map_flat_values, ...); concat and
# reduce_sum take them through dataflow.ops.ragged_ops
from .compat import ragged  # noqa: E402
from .framework.ragged_tensor import RaggedTensor, RaggedTensorSpec  # noqa: E402
from .ops.ragged_extra_ops import (  # noqa: E402
    ragged_fill_empty_rows,
    ragged_fill_empty_rows_grad,
)

# isort: split
# TF1's remaining everyday names: more math and nn, df.math, df.image, matrices and checks
from .compat import (
    debugging,  # noqa: E402
    math,  # noqa: E402
)
from .ops import image_ops_impl as image  # noqa: E402
from .ops.check_ops import *  # noqa: E402, F403
from .ops.extra_array_ops import *  # noqa: E402, F403
from .ops.extra_math_ops import *  # noqa: E402, F403
from .ops.extra_segment_ops import *  # noqa: E402, F403
from .ops.image_ops_impl import extract_image_patches, random_crop  # noqa: E402
from .ops.matrix_ops import *  # noqa: E402, F403
from .ops.special_ops import betainc, igamma, igammac  # noqa: E402

# isort: split
# complex numbers (df.complex64, df.complex, df.real, ...; df.dtypes.complex as tf.dtypes.complex)
from .framework.dtypes import complex64, complex128  # noqa: E402
from .ops.complex_ops import (  # noqa: E402
    angle,
    complex,  # noqa: A004 - mirrors tf.complex
    conj,
    imag,
    real,
    to_complex64,
    to_complex128,
)

dtypes.complex = complex

# isort: split
# Fourier transforms and signal processing (df.signal, and TF1's df.spectral; the FFTs also at
# the top level, as in tf.compat.v1)
from .compat import signal, spectral  # noqa: E402
from .ops.spectral_ops import (  # noqa: E402
    fft,
    fft2d,
    fft3d,
    fftnd,
    ifft,
    ifft2d,
    ifft3d,
    ifftnd,
    irfftnd,
    rfftnd,
)

# isort: split
# autograph: source conversion of Python control flow (df.autograph.to_graph, to_code)
from .eager import autograph  # noqa: E402

# isort: split
# monitored sessions and their hooks (df.train.MonitoredTrainingSession, df.train.Scaffold,
# df.train.StopAtStepHook, ...): the session-side helpers of TF1 training loops
from .training import hooks as _hooks  # noqa: E402
from .training import monitored_session as _monitored_session  # noqa: E402
from .training import supervisor as _supervisor  # noqa: E402
from .training.monitored_session import report_uninitialized_variables  # noqa: E402

for _module in (_monitored_session, _hooks, _supervisor):
    for _name in _module.__all__:
        if _name != "report_uninitialized_variables":
            setattr(train, _name, getattr(_module, _name))

# isort: split
# TF1's raw stack, Assert and resource-variable ops that its own tests call
from .ops import (
    resource_variable_ops,  # noqa: E402, F401
    stack_ops,  # noqa: E402, F401
)

# isort: split
# switch_case, and the type specs while_loop takes as shape invariants
from primitives.switch_case import switch_case  # noqa: E402

from .framework.sparse_tensor import SparseTensorSpec  # noqa: E402

# isort: split
# lazy tensors: ops record into a graph that runs, with the graph passes, when a value is needed
from .eager.lazy import LazyTensor, lazy_mode  # noqa: E402

# isort: split
# control flow v2: cond as a functional If op (lowered to Switch/Merge by a Session unless
# ConfigProto.experimental.executor_type is SINGLE_THREADED_EXECUTOR)
from primitives.control_flow_ops import (  # noqa: E402
    control_flow_v2_enabled,
    disable_control_flow_v2,
    enable_control_flow_v2,
)

from .eager.tracing import cond_v2 as _cond_v2  # noqa: E402 - registers cond's functional form

# isort: split
# the devices this process offers, as TensorFlow's client.device_lib lists them
from .client import device_lib  # noqa: E402, F401

# isort: split
# clusters on Ray (issue 13): df.distribute.RayCluster, Session(cluster.target), train.Server
from . import distribute  # noqa: E402, F401
from .client.session import register_target as _register_target  # noqa: E402
from .distribute import ray_cluster as _ray_cluster  # noqa: E402
from .distribute import task_processes as _task_processes  # noqa: E402

_register_target(_ray_cluster.TARGET_PREFIX, _ray_cluster.master_for_target)
# one process per task (issue 27): Session("grpc://host:port") of a train.Server's target
_register_target(_task_processes.TARGET_PREFIX, _task_processes.master_for_address)

# tf.dtypes' functions, which dataflow.framework.dtypes (imported by everything) cannot import
# itself
dtypes.as_string, dtypes.saturate_cast = as_string, saturate_cast
dtypes.cast = math.cast
train.Server = _task_processes.Server

# isort: split
# tf.train.experimental: loss scales for reduced-precision training
from .compat import train_experimental as _train_experimental  # noqa: E402

train.experimental = _train_experimental

# object-based checkpoints: tf.train.Checkpoint, CheckpointManager, CheckpointOptions
from .training import checkpoint as _checkpoint  # noqa: E402

for _name in _checkpoint.__all__:
    setattr(train, _name, getattr(_checkpoint, _name))

# warm-starting from a checkpoint: tf.train.warm_start, tf.train.VocabInfo
from .training import warm_starting as _warm_starting  # noqa: E402

train.warm_start = _warm_starting.warm_start
train.VocabInfo = _warm_starting.VocabInfo

# synchronous replicas: tf.train.SyncReplicasOptimizer
from .training.sync_replicas import SyncReplicasOptimizer as _SyncReplicasOptimizer  # noqa: E402

train.SyncReplicasOptimizer = _SyncReplicasOptimizer

# tf.train.ProfilerHook: timelines of traced runs
from .training.profiler_hook import ProfilerHook as _ProfilerHook  # noqa: E402

train.ProfilerHook = _ProfilerHook

# isort: split
# partitioned execution: _Send/_Recv, the partitioning pass, in-process runs of several devices
from .distribute import local as _distribute_local  # noqa: E402, F401
from .distribute import sendrecv as _distribute_sendrecv  # noqa: E402, F401

# the GraphDef versions this library writes and reads (TensorFlow 1.15's), and OpError at the
# top level as TF1 has it
from .framework.errors import OpError  # noqa: E402
from .io.graph_def import _PRODUCER as GRAPH_DEF_VERSION  # noqa: E402

GRAPH_DEF_VERSION_MIN_CONSUMER = 0
GRAPH_DEF_VERSION_MIN_PRODUCER = 0

# TensorFlow's protocol buffer messages (tf.GraphDef, tf.Summary, ...), from the optional
# tensorboardX, which is imported the first time one of them is asked for.
_PROTO_NAMES = frozenset(
    ("AttrValue", "Event", "GraphDef", "HistogramProto", "NodeDef", "SessionLog", "Summary")
    + ("NameAttrList", "SummaryMetadata")
)


def __getattr__(name: str):
    if name in _PROTO_NAMES:
        from .framework.tensorboard_protos import protos

        return getattr(protos(), name)
    if name == "LogMessage":
        from .framework.train_protos import messages

        return messages().LogMessage
    raise AttributeError(f"module 'dataflow' has no attribute '{name}'")


# isort: split
# ONNX models (df.onnx.import_model); the ``onnx`` package itself is imported only when a model
# is read (the "onnx" extra), never by ``import dataflow``.
from .io import onnx  # noqa: E402

# isort: split
# TensorFlow's generic convolution op and the 2-d backward ops taking tensors for sizes
from .ops.conv_nd_ops import (  # noqa: E402
    conv,
    conv2d_backprop_filter_v2,
    conv2d_backprop_input_v2,
    extract_volume_patches,
)
from .ops.ctc_ops import edit_distance  # noqa: E402

# isort: split
# ``dataflow.compat.v1`` is this package: ``import dataflow.compat.v1 as tf`` works as
# ``import tensorflow.compat.v1 as tf`` does, with every name above.
import sys as _sys  # noqa: E402

compat.v1 = _sys.modules[__name__]
_sys.modules[__name__ + ".compat.v1"] = _sys.modules[__name__]
# Modules that moved keep their old import paths (``dataflow.client.session``,
# ``dataflow.framework.graph``, ...).
from .compat import old_paths as _old_paths  # noqa: E402

_old_paths.bind()
