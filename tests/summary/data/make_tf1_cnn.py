"""Makes tf1_cnn.pb with TensorFlow (not part of the suite, which never imports it): a frozen
TF1 convolutional classifier with fixed weights (Conv2D, BiasAdd, Relu, MaxPool, AvgPool,
depthwise convolution, Reshape, MatMul, Softmax, ArgMax); prints the values the tests pin.

Run: python make_tf1_cnn.py tf1_cnn.pb (TensorFlow 2.x with its v1 API)."""

import sys

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
tf.disable_control_flow_v2()
rng = np.random.default_rng(7)
images = tf.placeholder(tf.float32, [None, 8, 8, 1], name="images")
k1 = tf.Variable(rng.normal(size=(3, 3, 1, 4)).astype(np.float32), name="k1")
b1 = tf.Variable(rng.normal(size=4).astype(np.float32), name="b1")
k2 = tf.Variable(rng.normal(size=(3, 3, 4, 2)).astype(np.float32), name="k2")
w = tf.Variable(rng.normal(size=(2 * 2 * 8, 3)).astype(np.float32), name="w")
h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(images, k1, [1, 1, 1, 1], "SAME"), b1))
h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
h = tf.nn.depthwise_conv2d(h, k2, [1, 1, 1, 1], "SAME")
h = tf.nn.avg_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
logits = tf.matmul(tf.reshape(h, [-1, 2 * 2 * 8]), w, name="logits")
probabilities = tf.nn.softmax(logits, name="probabilities")
label = tf.argmax(probabilities, 1, name="label")
batch = np.linspace(-1.0, 1.0, 2 * 8 * 8, dtype=np.float32).reshape(2, 8, 8, 1)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    frozen = tf.graph_util.convert_variables_to_constants(
        sess, sess.graph_def, ["probabilities", "label"]
    )
    np.set_printoptions(precision=8)
    print(repr(sess.run([probabilities, label], {images: batch})))
open(sys.argv[1], "wb").write(frozen.SerializeToString())
print(sorted({node.op for node in frozen.node}))
