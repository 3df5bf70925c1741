"""Compares dataflow's ``df.compat.v1`` with TensorFlow's listing of ``tf.compat.v1``
(``tensorflow_compat_v1.json``, written by ``make_snapshot.py``).

What is compared, for every name of every module that is not excluded (`EXCLUDED`):
- the name exists (``df.compat.v1.<module>.<name>``);
- for a function or class, each of TensorFlow's parameters exists, positional ones at the same
  position and of a kind that can be passed the same way; a parameter with a default in
  TensorFlow has one here, and a literal default (a number, string, None, bool) is the same.
  TensorFlow's ``*args``/``**kwargs`` are not compared.

A gap is written as ``module.name`` (the name is missing) or ``module.name(param): why``.
``python tests/tf1_surface/surface.py`` prints the gaps, one a line, as ``known_missing.txt``
holds them.
"""

from __future__ import annotations

import ast
import inspect
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SNAPSHOT = os.path.join(HERE, "tensorflow_compat_v1.json")
KNOWN_MISSING = os.path.join(HERE, "known_missing.txt")

# Whole modules left out of the comparison, each for a reason that holds for all of it.
EXCLUDED = {
    # Not graph building: TensorFlow's other front ends, formats and products.
    "lite": "TensorFlow Lite, a converter to another runtime",
    "mlir": "TensorFlow's MLIR compiler bridge",
    "xla": "the XLA compiler's options",
    "tpu": "TPU hardware",
    "mixed_precision": "float16 training on GPUs",
    "config.experimental": "GPU memory and device options of TensorFlow's runtime",
    "sysconfig": "the compile and link flags of TensorFlow's own C++ build",
    "test": "TensorFlow's unittest harness (TestCase, GPU probes), not an API of graphs",
    "profiler": "TensorFlow's profiler of its C++ runtime",
    "user_ops": "an example custom C++ op",
    "version": "TensorFlow's version numbers",
    "raw_ops": (
        "one Python function per C++ kernel, with the kernel's attribute names; dataflow's ops "
        "are reached through the API functions that TF1 programs call"
    ),
    "distributions": "tf.distributions, deprecated in TF 1.13 for TensorFlow Probability",
    "feature_column": "input columns of the Estimator API",
    "saved_model": "TensorFlow's SavedModel directory format (dataflow saves graphs as .dfg)",
    "quantization": "fake-quantization kernels for TensorFlow Lite conversion",
    "dtypes.experimental": "float8 and int4 types of accelerators",
    "distribute.experimental": "TPU and multi-worker strategies (TPUStrategy, CentralStorage)",
    "experimental": "TensorFlow 2 extension types, dispatchers and DTensor",
    "types": "TensorFlow 2's type annotations",
    "debugging.experimental": (
        "tfdbg2's dump files for TensorBoard's Debugger V2 plugin (dataflow's own debugger is "
        "dataflow.debug)"
    ),
    "data.experimental.service": (
        "the tf.data service: dispatcher and worker servers that run input pipelines for a "
        "cluster, a server of TensorFlow's, not an API of graphs"
    ),
}


# Single names left out, by category.
EXCLUDED_NAMES = {
    "facts about TensorFlow's own build": {
        "COMPILER_VERSION",
        "CXX11_ABI_FLAG",
        "CXX_VERSION",
        "GIT_VERSION",
        "MONOLITHIC_BUILD",
        "VERSION",
    },
    "loading TensorFlow's C++ kernel and file-system libraries": {
        "load_file_system_library",
        "load_library",
        "load_op_library",
    },
    "quantization for TensorFlow Lite, as the quantization module": {
        "dequantize",
        "fake_quant_with_min_max_args",
        "fake_quant_with_min_max_args_gradient",
        "fake_quant_with_min_max_vars",
        "fake_quant_with_min_max_vars_gradient",
        "fake_quant_with_min_max_vars_per_channel",
        "fake_quant_with_min_max_vars_per_channel_gradient",
        "quantize",
        "quantize_v2",
        "quantized_concat",
        "QUANTIZED_DTYPES",
        "nn.quantized_avg_pool",
        "nn.quantized_conv2d",
        "nn.quantized_max_pool",
        "nn.quantized_relu_x",
        "train.do_quantize_training_on_graphdef",
    },
    "Keras, which TensorFlow 2.21 no longer ships in compat.v1": {"keras"},
    "services this runtime does not talk to: TensorFlow 2's remote eager hosts, cloud "
    "schedulers' and TPUs' APIs, the tf.data service, and the performance model inside "
    "TensorFlow's own tf.data runtime": {
        "config.experimental_connect_to_cluster",
        "config.experimental_connect_to_host",
        "data.experimental.distributed_save",
        "data.experimental.get_model_proto",
        "distribute.cluster_resolver.GCEClusterResolver",
        "distribute.cluster_resolver.KubernetesClusterResolver",
        "distribute.cluster_resolver.KubernetesExecutableLocation",
        "distribute.cluster_resolver.SlurmClusterResolver",
        "distribute.cluster_resolver.TPUClusterResolver",
        "train.ServerDef",
    },
    "hardware and encodings this runtime does not have: GPUs (pinned memory, an op TensorFlow "
    "runs on GPUs only), the bfloat16 type (numpy has none), JPEG XL (no decoder available "
    "gives TensorFlow's lossy pixels), ICU's Unicode 13 script table, and LMDB files (liblmdb "
    "maps a file and trusts its structure, so a hostile file could crash the process, against "
    "the rule that files from elsewhere are untrusted)": {
        "LMDBReader",
        "check_pinned",
        "image.generate_bounding_box_proposals",
        "bfloat16",
        "dtypes.bfloat16",
        "to_bfloat16",
        "image.decode_jxl",
        "io.decode_jxl",
        "strings.unicode_script",
    },
    "TensorFlow 2's runtime beyond TF1's graphs: its summary writers, sharded checkpoints, the "
    "variant handle of a dataset, the switch between TF1's two kinds of variable (dataflow's "
    "Variable is the resource kind), and the Estimator's SDCA kernels": {
        "summary.initialize",
        "train.experimental.MaxShardSizePolicy",
        "train.experimental.ShardByTaskPolicy",
        "train.experimental.ShardableTensor",
        "train.experimental.ShardingCallback",
        "data.experimental.to_variant",
        "data.experimental.from_variant",
        "enable_resource_variables",
        "disable_resource_variables",
        "resource_variables_enabled",
        "train.sdca_fprint",
        "train.sdca_optimizer",
    },
}
# Parameters left out wherever they appear.
EXCLUDED_PARAMETERS = {
    "layout": "DTensor's layouts of a tensor across devices (TensorFlow 2)",
}
_EXCLUDED_NAME_SET = set().union(*EXCLUDED_NAMES.values())


def load_snapshot() -> dict:
    with open(SNAPSHOT) as f:
        return json.load(f)


def is_excluded(module: str) -> bool:
    return any(module == m or module.startswith(m + ".") for m in EXCLUDED)


def _default_text(value) -> str:
    text = repr(value)
    try:
        ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return "<object>"
    return text


def _our_parameters(obj):
    target = obj.__init__ if inspect.isclass(obj) else obj
    try:
        params = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):
        return None
    if inspect.isclass(obj) and params and params[0].name == "self":
        params = params[1:]
    return params


_POSITIONAL = ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")


def _parameter_gaps(where: str, theirs: list, obj) -> list[str]:
    ours = _our_parameters(obj)
    if ours is None:
        return []
    by_name = {p.name: p for p in ours}
    positional = [p.name for p in ours if p.kind.name in _POSITIONAL]
    gaps = []
    keywords_only = False  # after TF1's ``_sentinel``, which refuses positional arguments
    for position, param in enumerate(theirs):
        name, kind = param["name"], param["kind"]
        if kind in ("VAR_POSITIONAL", "VAR_KEYWORD") or name in EXCLUDED_PARAMETERS:
            continue
        if name.startswith("_"):
            keywords_only = True
            continue
        mine = by_name.get(name)
        if mine is None:
            gaps.append(f"{where}({name}): missing")
            continue
        if (
            kind in _POSITIONAL
            and not keywords_only
            and (position >= len(positional) or positional[position] != name)
        ):
            gaps.append(f"{where}({name}): not at position {position}")
            continue
        if kind == "KEYWORD_ONLY" and mine.kind.name == "POSITIONAL_ONLY":
            gaps.append(f"{where}({name}): not a keyword")
            continue
        if "default" in param:
            if mine.default is inspect.Parameter.empty:
                gaps.append(f"{where}({name}): no default")
            elif param["default"] != "<object>" and _default_text(mine.default) != param["default"]:
                gaps.append(
                    f"{where}({name}): default {_default_text(mine.default)} "
                    f"is not {param['default']}"
                )
    return gaps


def _resolve(root, module: str):
    obj = root
    for part in module.split(".") if module else ():
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def gaps(snapshot: dict) -> list[str]:
    """Every gap between ``df.compat.v1`` and the snapshot, sorted."""
    import dataflow.compat.v1 as ours

    found = []
    for module, names in snapshot["modules"].items():
        if is_excluded(module):
            continue
        namespace = _resolve(ours, module)
        for name, entry in names.items():
            if name.startswith("<"):
                continue
            where = f"{module}.{name}" if module else name
            if entry["kind"] == "module" and is_excluded(where) or where in _EXCLUDED_NAME_SET:
                continue
            try:
                obj = getattr(namespace, name, None) if namespace is not None else None
            except ImportError:  # there, but needs an optional extra that is not installed
                continue
            if obj is None and not (namespace is not None and hasattr(namespace, name)):
                found.append(where)
                continue
            if entry["kind"] in ("function", "class") and entry.get("params") is not None:
                found.extend(_parameter_gaps(where, entry["params"], obj))
    return sorted(found)


def read_known_missing() -> list[str]:
    with open(KNOWN_MISSING) as f:
        return [line.rstrip("\n") for line in f if line.strip() and not line.startswith("#")]


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
    for gap in gaps(load_snapshot()):
        print(gap)
