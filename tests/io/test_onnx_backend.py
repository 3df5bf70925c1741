"""dataflow as an ONNX backend (``onnx.backend.base.Backend``): a sample of ONNX's own node test
cases, one or more per family of ops, run through it and compared with the outputs the onnx
package ships with them.  The whole suite, beside onnxruntime, is
``benchmarks/onnx_conformance.py``."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import helper, numpy_helper  # noqa: E402

from dataflow.io.onnx import backend  # noqa: E402

# One or more cases per family: elementwise math, comparisons, reductions with axes fed at run
# time, matrices, convolution and pooling, normalization, activations, shapes and indexing,
# casts, unsigned integers, control flow, and ops built from ONNX's function definitions.
SAMPLE = [
    "test_add_bcast",
    "test_div_int32_trunc",
    "test_mod_mixed_sign_int32",
    "test_pow_types_float32_int64",
    "test_bitshift_right_int8_shift_ge_width",
    "test_greater_uint32",
    "test_max_uint64",
    "test_reduce_sum_do_not_keepdims_random",
    "test_reduce_log_sum_exp_empty_set",
    "test_argmax_negative_axis_keepdims_random_select_last_index",
    "test_cumsum_1d_reverse_exclusive",
    "test_gemm_all_attributes",
    "test_matmul_4d",
    "test_einsum_transpose",
    "test_conv_with_strides_and_asymmetric_padding",
    "test_convtranspose_pads",
    "test_maxpool_2d_ceil",
    "test_averagepool_2d_pads_count_include_pad",
    "test_globalaveragepool",
    "test_batchnorm_epsilon",
    "test_instancenorm_example",
    "test_layer_normalization_4d_axis1",
    "test_lrn",
    "test_softmax_axis_0",
    "test_logsoftmax_large_number",
    "test_hardmax_axis_1",
    "test_selu_default",
    "test_gelu_tanh_2",
    "test_reshape_negative_extended_dims",
    "test_transpose_all_permutations_3",
    "test_slice_neg_steps",
    "test_split_equal_parts_2d",
    "test_gather_negative_indices",
    "test_gather_elements_negative_indices",
    "test_scatter_elements_with_duplicate_indices",
    "test_gathernd_example_float32",
    "test_constant_pad_negative_axes",
    "test_edge_pad",
    "test_expand_dim_changed",
    "test_tile",
    "test_onehot_negative_indices",
    "test_top_k_smallest",
    "test_tril_neg",
    "test_depthtospace_crd_mode_example",
    "test_nonzero_example",
    "test_castlike_FLOAT_to_DOUBLE",
    "test_cast_FLOAT_to_DOUBLE",
    "test_shape_start_negative_1",
    "test_range_int32_type_negative_delta",
    "test_constantofshape_int_zeros",
    "test_if",
    "test_loop11",
    "test_scan9_sum",
    "test_where_example",
    "test_clip_default_inbounds",
    "test_resize_upsample_sizes_cubic",
    "test_resize_tf_crop_and_resize",
    "test_gridsample_reflection_padding",
    "test_lstm_with_peepholes",
    "test_gru_seq_length",
    "test_qlinearmatmul_3D_int8_float32",
    "test_lppool_2d_pads",
    "test_affine_grid_2d",
    "test_batchnorm_example_training_mode",
    "test_convtranspose_output_shape",
    "test_unique_sorted_without_axis",
    "test_unique_not_sorted_without_axis",
]


@pytest.fixture(scope="module")
def node_cases():
    import onnx.backend.test.case.node as cases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {case.name: case for case in cases.collect_testcases()}


def _arrays(values):
    return [numpy_helper.to_array(v) if isinstance(v, onnx.TensorProto) else v for v in values]


@pytest.mark.parametrize("name", SAMPLE)
def test_a_node_case_matches_the_outputs_onnx_ships(node_cases, name):
    case = node_cases[name]
    rep = backend.prepare(case.model)
    try:
        for inputs, expected in case.data_sets:
            outputs = rep.run(_arrays(inputs))
            assert len(outputs) == len(expected)
            for got, want in zip(outputs, _arrays(expected)):
                assert got.dtype == want.dtype and got.shape == want.shape
                np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol)
    finally:
        rep.close()


def test_the_backend_runs_on_the_cpu_only():
    assert backend.supports_device("CPU")
    assert not backend.supports_device("CUDA")
    model = helper.make_model(
        helper.make_graph(
            [helper.make_node("Relu", ["x"], ["y"])],
            "g",
            [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])],
            [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])],
        )
    )
    with pytest.raises(ValueError, match="runs on the CPU, not 'CUDA'"):
        backend.prepare(model, "CUDA")


def test_inputs_go_in_order_or_by_name_and_outputs_come_in_order():
    node = helper.make_node("Sub", ["a", "b"], ["d"])
    (difference,) = backend.run_node(node, [np.float32([5, 7]), np.float32([1, 2])])
    np.testing.assert_array_equal(difference, [4, 5])
    model = helper.make_model(
        helper.make_graph(
            [node, helper.make_node("Neg", ["d"], ["n"])],
            "g",
            [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, [2]) for n in "ab"],
            [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, [2]) for n in "nd"],
        )
    )
    rep = backend.prepare(model)
    by_name = rep.run({"b": np.float32([1, 1]), "a": np.float32([3, 4])})
    np.testing.assert_array_equal(by_name[0], [-2, -3])  # "n" first, as the model lists it
    np.testing.assert_array_equal(by_name[1], [2, 3])
    with pytest.raises(ValueError, match="takes 2 inputs"):
        rep.run([np.float32([1, 1])])
    rep.close()


def test_a_light_model_of_the_onnx_package_matches_its_expected_output():
    # SqueezeNet, fed as ONNX's test runner feeds the light models (arange over the input's
    # size, divided by it), against the output stored beside it.
    light = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
    model = onnx.load(os.path.join(light, "light_squeezenet.onnx"))
    initializers = {t.name for t in model.graph.initializer}
    (data,) = [v for v in model.graph.input if v.name not in initializers]
    dims = [d.dim_value for d in data.type.tensor_type.shape.dim]
    count = int(np.prod(dims))
    x = (np.arange(count).reshape(dims) / count).astype(np.float32)
    expected = numpy_helper.to_array(
        onnx.load_tensor(os.path.join(light, "light_squeezenet_output_0.pb"))
    )
    (got,) = backend.run_model(model, [x])
    np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-7)
