"""The programs of TensorFlow 1.x's control-flow gradient tests (``control_flow_ops_py_test.py``,
control flow v1) give the values TensorFlow gives, with the Session's default passes."""

import pytest

import dataflow as df


def run(fetches, feed_dict=None):
    with df.Session() as sess:
        return sess.run(fetches, feed_dict)


# -- conds inside loops ----------------------------------------------------------------------------
@pytest.mark.parametrize("known_shape", [True, False])
def test_a_cond_on_a_constant_predicate_in_a_loop_body_passes_its_gradient(known_shape):
    # testWhileCondGrad_Simple and testWhileCondGrad_UnknownShape: x -> x*x from 2 to 256.
    v = df.convert_to_tensor(2.0, name="v") if known_shape else df.placeholder(df.float32)
    n = df.convert_to_tensor(100.0, name="n")
    one = df.convert_to_tensor(1.0, name="one")

    def body(x):
        return df.cond(df.constant(True), lambda: df.square(x), lambda: df.subtract(x, one))

    r = df.while_loop(lambda x: df.less(x, n), body, [v])
    (grad,) = df.gradients(r, v)
    assert run(grad, None if known_shape else {v: 2.0}) == 1024.0
