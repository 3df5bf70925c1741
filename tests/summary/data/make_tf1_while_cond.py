"""Makes tf1_while_cond.pb with TensorFlow (not part of the suite, which never imports it):
a frozen TF1 graph with a while_loop and a cond; prints the values the tests pin.

Run: python make_tf1_while_cond.py tf1_while_cond.pb (TensorFlow 2.x with its v1 API)."""

import sys

import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
tf.disable_control_flow_v2()
x = tf.placeholder(tf.float32, [3], name="x")
n = tf.placeholder(tf.int32, [], name="n")
w = tf.Variable([[1.0, 0.5, 0.0], [0.0, 1.0, -0.5], [0.25, 0.0, 1.0]], name="w")


def body(i, v):
    v2 = tf.cond(
        tf.reduce_sum(v) > 10.0, lambda: v * 0.5, lambda: tf.matmul(v[None, :], w)[0] + 1.0
    )
    return i + 1, v2


_, y = tf.while_loop(lambda i, v: i < n, body, [tf.constant(0), x], name="loop")
out = tf.identity(tf.reduce_mean(y, axis=0, keepdims=False) * 2.0, name="out")
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    frozen = tf.graph_util.convert_variables_to_constants(sess, sess.graph_def, ["out"])
    for xv, nv in (([1.0, 2.0, 3.0], 4), ([0.0, -1.0, 0.5], 7), ([5.0, 5.0, 5.0], 0)):
        print(xv, nv, repr(sess.run([y, out], {x: xv, n: nv})))
open(sys.argv[1], "wb").write(frozen.SerializeToString())
print(sorted({node.op for node in frozen.node}))
