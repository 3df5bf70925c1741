"""The option records that mirror TensorFlow's protos (`dataflow.framework.protos.Message`): each
field takes only values of its type, in the constructor and when assigned, as protobuf does."""

import numpy as np
import pytest

import dataflow as df

BAD_FIELDS = [
    (df.RunOptions, "timeout_in_ms", "5", "an int"),
    (df.RunOptions, "timeout_in_ms", 5.0, "an int"),
    (df.RunOptions, "timeout_in_ms", True, "an int"),
    (df.RunOptions, "trace_level", "FULL_TRACE", "an int"),
    (df.RunOptions, "debug_options", [], "a DebugOptions"),
    (df.RunOptions, "rewrite_options", 1, "a RewriterConfig"),
    (df.ConfigProto, "inter_op_parallelism_threads", "2", "an int"),
    (df.ConfigProto, "operation_timeout_in_ms", 1.5, "an int"),
    (df.ConfigProto, "allow_soft_placement", "yes", "a bool"),
    (df.ConfigProto, "device_count", [1], "a dict"),
    (df.ConfigProto, "graph_options", df.RewriterConfig(), "a GraphOptions"),
    (df.GraphOptions, "rewrite_options", "off", "a RewriterConfig"),
    (df.RewriterConfig, "constant_folding", "OFF", "an int"),
    (df.RewriterConfig, "optimizers", "pruning", "a list"),
    (df.OptimizerOptions, "opt_level", None, "an int"),
    (df.DebugTensorWatch, "output_slot", "0", "an int"),
    (df.DebugTensorWatch, "node_name", 3, "a str"),
    (df.RunMetadata, "step_stats", {}, "a list"),
]


@pytest.mark.parametrize(
    "message, name, value, expected",
    BAD_FIELDS,
    ids=[f"{m.__name__}.{n}={v!r}" for m, n, v, _ in BAD_FIELDS],
)
def test_a_field_refuses_a_value_of_another_type_when_built_and_when_assigned(
    message, name, value, expected
):
    with pytest.raises(TypeError) as built:
        message(**{name: value})
    assert f"{message.__name__}.{name} must be {expected}" in str(built.value)
    assert f"got {value!r} of type {type(value).__name__}" in str(built.value)
    record = message()
    with pytest.raises(TypeError, match=f"{message.__name__}.{name} must be {expected}"):
        setattr(record, name, value)
    assert getattr(record, name) == getattr(message(), name)  # unchanged


def test_elements_of_repeated_and_map_fields_are_checked_too():
    with pytest.raises(TypeError, match=r"RewriterConfig.optimizers\[1\] must be a str"):
        df.RewriterConfig(optimizers=["pruning", 3])
    with pytest.raises(TypeError, match=r"ConfigProto.device_count\['CPU'\] must be an int"):
        df.ConfigProto(device_count={"CPU": "one"})
    options = df.RunOptions()
    with pytest.raises(TypeError, match="DebugTensorWatch.output_slot must be an int"):
        options.debug_options.debug_tensor_watch_opts.add(node_name="x", output_slot="0")


def test_a_name_that_is_no_field_is_refused():
    with pytest.raises(TypeError, match="timeout_ms"):
        df.RunOptions(timeout_ms=5)
    options = df.RunOptions()
    with pytest.raises(AttributeError, match="RunOptions has no field 'timeout_ms'"):
        options.timeout_ms = 5


def test_values_protobuf_converts_are_accepted():
    options = df.RunOptions(timeout_in_ms=np.int64(5), trace_level=df.RunOptions.FULL_TRACE)
    assert options.timeout_in_ms == 5 and type(options.timeout_in_ms) is int
    config = df.ConfigProto(
        allow_soft_placement=0,
        device_count={"CPU": np.int32(1)},
        graph_options={"rewrite_options": {"constant_folding": df.RewriterConfig.OFF}},
    )
    assert config.allow_soft_placement is False and config.device_count == {"CPU": 1}
    assert config.graph_options.rewrite_options.constant_folding == df.RewriterConfig.OFF
    watches = df.DebugOptions(debug_tensor_watch_opts=[df.DebugTensorWatch(node_name="x")])
    assert watches.debug_tensor_watch_opts.add(node_name="y").node_name == "y"
