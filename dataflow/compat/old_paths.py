"""The import paths modules had before the package took one folder per layer.

``import dataflow.session``, ``from dataflow.graph import Tensor`` and ``df.train`` keep
working: `bind` makes each old dotted path name the module at its new path, in ``sys.modules``
(so an import by the old path finds it) and as an attribute of the old parent package (so
``df.graph`` reaches it), unless that attribute already names something else
(``df.gradients`` is the function, as it always was).  The package root calls `bind` once,
after everything is imported; the code of the package itself uses the new paths.
"""

from __future__ import annotations

import importlib
import sys
import types

OLD_PATHS = {
    "dataflow.app": "dataflow.compat.app",
    "dataflow.array_bounds": "dataflow.framework.array_bounds",
    "dataflow.audio": "dataflow.compat.audio",
    "dataflow.autograph": "dataflow.eager.autograph",
    "dataflow.autograph.ag_logging": "dataflow.eager.autograph.ag_logging",
    "dataflow.autograph.conversion": "dataflow.eager.autograph.conversion",
    "dataflow.autograph.experimental": "dataflow.eager.autograph.experimental",
    "dataflow.autograph.operators": "dataflow.eager.autograph.operators",
    "dataflow.autograph.transforms": "dataflow.eager.autograph.transforms",
    "dataflow.bitwise": "dataflow.compat.bitwise",
    "dataflow.checkpoint": "dataflow.training.checkpoint",
    "dataflow.checkpoint_management": "dataflow.io.checkpoint_management",
    "dataflow.checkpoint_utils": "dataflow.io.checkpoint_utils",
    "dataflow.compiler": "dataflow.client.compiler",
    "dataflow.compiler.codegen": "dataflow.client.compiler.codegen",
    "dataflow.compiler.compiled_region": "dataflow.client.compiler.compiled_region",
    "dataflow.compiler.conds": "dataflow.client.compiler.conds",
    "dataflow.compiler.loops": "dataflow.client.compiler.loops",
    "dataflow.compiler.native": "dataflow.client.compiler.native",
    "dataflow.compiler.regions": "dataflow.client.compiler.regions",
    "dataflow.composites": "dataflow.framework.composites",
    "dataflow.config": "dataflow.client.config",
    "dataflow.config._state": "dataflow.client.config._state",
    "dataflow.config.optimizer": "dataflow.client.config.optimizer",
    "dataflow.config.threading": "dataflow.client.config.threading",
    "dataflow.coordinator": "dataflow.training.coordinator",
    "dataflow.custom_gradient": "dataflow.eager.custom_gradient",
    "dataflow.debug.dump": "dataflow.client.debug_dump",
    "dataflow.debug.options": "dataflow.client.debug_options",
    "dataflow.debug.overlay": "dataflow.render.overlay",
    "dataflow.debug.timeline": "dataflow.client.timeline",
    "dataflow.debug.watcher": "dataflow.client.debug_watcher",
    "dataflow.debugging": "dataflow.compat.debugging",
    "dataflow.device": "dataflow.framework.device",
    "dataflow.device_lib": "dataflow.client.device_lib",
    "dataflow.distribute.placer": "dataflow.client.placer",
    "dataflow.dtypes": "dataflow.framework.dtypes",
    "dataflow.errors": "dataflow.framework.errors",
    "dataflow.flags": "dataflow.compat.flags",
    "dataflow.functional_ops": "primitives.functional_ops",
    "dataflow.gfile": "dataflow.framework.gfile",
    "dataflow.gradient_registry": "dataflow.framework.gradient_registry",
    "dataflow.gradients": "dataflow.autodiff.gradients",
    "dataflow.graph": "dataflow.framework.graph",
    "dataflow.graph_def": "dataflow.io.graph_def",
    "dataflow.graph_util": "dataflow.io.graph_util",
    "dataflow.hooks": "dataflow.training.hooks",
    "dataflow.image": "dataflow.ops.image_ops_impl",
    "dataflow.indexed_slices": "dataflow.framework.indexed_slices",
    "dataflow.init_ops": "dataflow.ops.init_ops",
    "dataflow.initializers": "dataflow.compat.initializers",
    "dataflow.input": "dataflow.training.input",
    "dataflow.layers": "dataflow.nn.layers",
    "dataflow.lazy": "dataflow.eager.lazy",
    "dataflow.lazy.recording": "dataflow.eager.lazy.recording",
    "dataflow.learning_rate_decay": "dataflow.training.learning_rate_decay",
    "dataflow.legacy": "dataflow.compat.legacy",
    "dataflow.linalg_experimental": "dataflow.linalg.experimental",
    "dataflow.linear_operator": "dataflow.linalg.linear_operator",
    "dataflow.linear_operator_circulant": "dataflow.linalg.linear_operator_circulant",
    "dataflow.logging": "dataflow.framework.logging",
    "dataflow.lookup": "dataflow.ops.lookup",
    "dataflow.lookup.experimental": "dataflow.ops.lookup.experimental",
    "dataflow.loss_scale": "dataflow.training.loss_scale",
    "dataflow.losses": "dataflow.nn.losses",
    "dataflow.manip": "dataflow.compat.manip",
    "dataflow.math": "dataflow.compat.math",
    "dataflow.meta_graph": "dataflow.io.meta_graph",
    "dataflow.metrics": "dataflow.nn.metrics",
    "dataflow.module": "dataflow.ops.module",
    "dataflow.monitored_session": "dataflow.training.monitored_session",
    "dataflow.moving_averages": "dataflow.training.moving_averages",
    "dataflow.nest": "dataflow.framework.nest",
    "dataflow.nn_experimental": "dataflow.nn.experimental",
    "dataflow.op_registry": "dataflow.framework.op_registry",
    "dataflow.ops.linalg_impl": "dataflow.linalg.linalg_impl",
    "dataflow.partitioned_variables": "dataflow.ops.partitioned_variables",
    "dataflow.profiler_hook": "dataflow.training.profiler_hook",
    "dataflow.protos": "dataflow.framework.protos",
    "dataflow.python_io": "dataflow.compat.python_io",
    "dataflow.queue": "dataflow.compat.queue",
    "dataflow.queue_runner": "dataflow.training.queue_runner",
    "dataflow.ragged": "dataflow.compat.ragged",
    "dataflow.ragged_tensor": "dataflow.framework.ragged_tensor",
    "dataflow.random": "dataflow.compat.random",
    "dataflow.random_experimental": "dataflow.ops.random_experimental",
    "dataflow.random_seed": "dataflow.framework.random_seed",
    "dataflow.random_streams": "dataflow.client.random_streams",
    "dataflow.ref_variables": "dataflow.ops.ref_variables",
    "dataflow.render_engine": "dataflow.render.engine",
    "dataflow.resource_containers": "dataflow.framework.resource_containers",
    "dataflow.resource_loader": "dataflow.framework.resource_loader",
    "dataflow.resource_variable_ops": "dataflow.ops.resource_variable_ops",
    "dataflow.rnn": "dataflow.nn.rnn",
    "dataflow.rnn_cell": "dataflow.nn.rnn_cell",
    "dataflow.saver": "dataflow.io.saver",
    "dataflow.session": "dataflow.client.session",
    "dataflow.session_run_hook": "dataflow.training.session_run_hook",
    "dataflow.session_stack": "dataflow.framework.session_stack",
    "dataflow.sets": "dataflow.compat.sets",
    "dataflow.signal": "dataflow.compat.signal",
    "dataflow.sparse": "dataflow.compat.sparse",
    "dataflow.sparse_tensor": "dataflow.framework.sparse_tensor",
    "dataflow.spectral": "dataflow.compat.spectral",
    "dataflow.step_stats": "dataflow.client.step_stats",
    "dataflow.strings": "dataflow.compat.strings",
    "dataflow.summary": "dataflow.io.summary",
    "dataflow.supervisor": "dataflow.training.supervisor",
    "dataflow.sync_replicas": "dataflow.training.sync_replicas",
    "dataflow.template": "dataflow.ops.template",
    "dataflow.tensor_shape": "dataflow.framework.tensor_shape",
    "dataflow.tensor_spec": "dataflow.framework.tensor_spec",
    "dataflow.tensorboard_protos": "dataflow.framework.tensorboard_protos",
    "dataflow.tfrecord": "dataflow.framework.tfrecord",
    "dataflow.traceback_utils": "dataflow.framework.traceback_utils",
    "dataflow.tracing": "dataflow.eager.tracing",
    "dataflow.tracing.breaks": "dataflow.eager.tracing.breaks",
    "dataflow.tracing.cond_v2": "dataflow.eager.tracing.cond_v2",
    "dataflow.tracing.defun_call": "dataflow.eager.tracing.defun_call",
    "dataflow.tracing.function_ops": "dataflow.eager.tracing.function_ops",
    "dataflow.tracing.legacy": "dataflow.eager.tracing.legacy",
    "dataflow.tracing.tape_calls": "dataflow.eager.tracing.tape_calls",
    "dataflow.tracing.tracing": "dataflow.eager.tracing.tracing",
    "dataflow.train": "dataflow.training.train",
    "dataflow.train_experimental": "dataflow.compat.train_experimental",
    "dataflow.train_protos": "dataflow.framework.train_protos",
    "dataflow.type_spec": "dataflow.framework.type_spec",
    "dataflow.variable_scope": "dataflow.ops.variable_scope",
    "dataflow.variables": "dataflow.ops.variables",
    "dataflow.warm_starting": "dataflow.training.warm_starting",
    "primitives.cond_v2": "dataflow.eager.tracing.cond_v2",
}


# Modules whose definitions moved out to modules that import them (which therefore cannot
# import back): the names stay reachable where they were, ``from dataflow.graph import
# convert_to_tensor`` included.
MOVED_OUT = {
    "dataflow.data.dataset_ops": ("dataflow.data.file_datasets",),
    "dataflow.framework.graph": (
        "dataflow.framework.source_location",
        "dataflow.framework.tensor_conversion",
        "dataflow.framework.graph_walk",
        "dataflow.framework.graph_keys",
    ),
    "dataflow.ops.array_ops": ("dataflow.ops.slice_ops", "dataflow.ops.gather_ops"),
    "dataflow.linalg.linear_operator": (
        "dataflow.linalg.linear_operator_identity",
        "dataflow.linalg.linear_operator_blocks",
        "dataflow.linalg.linear_operator_structured",
    ),
}


def _defined_in(module) -> dict:
    """The top-level names ``module`` defines itself (not those it imports)."""
    return {
        name: value
        for name, value in vars(module).items()
        if not name.startswith("__")
        and not isinstance(value, types.ModuleType)
        and getattr(value, "__module__", module.__name__) == module.__name__
    }


def bind() -> None:
    """Makes every old path of `OLD_PATHS` name its module, and every name of `MOVED_OUT`
    reachable in the module it left."""
    for home, sources in MOVED_OUT.items():
        target = importlib.import_module(home)
        for source in sources:
            for name, value in _defined_in(importlib.import_module(source)).items():
                if not hasattr(target, name):
                    setattr(target, name, value)
    for old, new in OLD_PATHS.items():
        module = importlib.import_module(new)
        sys.modules.setdefault(old, module)
        parent, _, attribute = old.rpartition(".")
        if not hasattr(sys.modules[parent], attribute):
            setattr(sys.modules[parent], attribute, module)
