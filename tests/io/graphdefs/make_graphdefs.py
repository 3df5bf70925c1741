"""Writes the frozen TensorFlow graphs that ``tests/io/test_graph_def_models.py`` imports.

Run it with TensorFlow (2.21 made the committed files) from the repository's root:

    TF_USE_LEGACY_KERAS=1 python tests/io/graphdefs/make_graphdefs.py

For each model it builds the model in TensorFlow's graph mode (``tf.compat.v1``, control flow v1,
so loops and conds are the ``Switch``/``Merge``/``Enter``/``Exit`` nodes of a TF1 frozen graph),
gives the variables seeded random values, freezes them into constants with
``tf.compat.v1.graph_util.convert_variables_to_constants`` and writes, next to this script:

- ``<model>.pb``: the frozen ``GraphDef``, binary;
- ``<model>.npz``: ``input`` (one seeded input batch) and ``input_name`` (the placeholder's tensor),
  ``output_names`` (the fetched tensors), ``output_0``, ``output_1``, ... (TensorFlow's results,
  strings as bytes) and ``output_keys`` (what each output checks: the op type, in ``op_zoo``).

The tests never import TensorFlow: they read these files.  The models are kept small (the whole
set is about 2 MB).  Keras' ResNet50 is made only when asked for, into a directory given, its
frozen graph being about 100 MB:

    TF_USE_LEGACY_KERAS=1 python tests/io/graphdefs/make_graphdefs.py --only resnet50 --out DIR

(``tests/io/test_graph_def_models.py`` does that when ``DATAFLOW_TENSORFLOW_PYTHON`` names a
Python with TensorFlow.)
"""

from __future__ import annotations

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # tf.compat.v1.nn.rnn_cell needs Keras 2
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

v1 = tf.compat.v1
HERE = os.path.dirname(os.path.abspath(__file__))


def _dense(x, units, name, activation=None):
    return v1.layers.dense(x, units, activation=activation, name=name)


def mlp():
    x = v1.placeholder(tf.float32, [None, 16], name="x")
    h = _dense(x, 32, "hidden1", tf.nn.relu)
    h = _dense(h, 32, "hidden2", tf.nn.tanh)
    y = tf.nn.softmax(_dense(h, 10, "logits"), name="probabilities")
    return x, y, np.random.RandomState(1).randn(4, 16).astype(np.float32)


def lenet():
    x = v1.placeholder(tf.float32, [None, 28, 28, 1], name="x")
    h = v1.layers.conv2d(x, 6, 5, padding="same", activation=tf.nn.relu, name="conv1")
    h = v1.layers.max_pooling2d(h, 2, 2, name="pool1")
    h = v1.layers.conv2d(h, 16, 5, activation=tf.nn.relu, name="conv2")
    h = v1.layers.average_pooling2d(h, 2, 2, name="pool2")
    h = tf.reshape(h, [-1, 5 * 5 * 16], name="flatten")
    h = _dense(h, 120, "fc1", tf.nn.relu)
    h = _dense(h, 84, "fc2", tf.nn.relu)
    y = tf.nn.softmax(_dense(h, 10, "fc3"), name="probabilities")
    return x, y, np.random.RandomState(2).rand(2, 28, 28, 1).astype(np.float32)


def nested_cond():
    x = v1.placeholder(tf.float32, [None, 4], name="x")
    w = v1.get_variable("w", [4, 4])
    total = tf.reduce_sum(x)

    def inner_true():
        return tf.matmul(x, w) * 2.0

    def inner_false():
        return v1.cond(total < -5.0, lambda: tf.nn.relu(x), lambda: tf.square(x) - 1.0)

    y = v1.cond(total > 0.0, inner_true, inner_false)
    y = tf.identity(y, name="y")
    return x, y, np.random.RandomState(3).randn(3, 4).astype(np.float32) - 0.3


def resnet_block():
    x = v1.placeholder(tf.float32, [None, 16, 16, 8], name="x")

    def conv_bn(h, filters, stride, name, relu=True):
        h = v1.layers.conv2d(
            h, filters, 3, stride, padding="same", use_bias=False, name=f"{name}/conv"
        )
        h = v1.layers.batch_normalization(h, training=False, fused=True, name=f"{name}/bn")
        return tf.nn.relu(h) if relu else h

    h = conv_bn(x, 16, 2, "a")
    h = conv_bn(h, 16, 1, "b", relu=False)
    shortcut = v1.layers.conv2d(x, 16, 1, 2, use_bias=False, name="shortcut")
    shortcut = tf.compat.v1.nn.fused_batch_norm(
        shortcut,
        scale=v1.get_variable("sc_scale", [16]),
        offset=v1.get_variable("sc_offset", [16]),
        mean=v1.get_variable("sc_mean", [16]),
        variance=v1.get_variable("sc_var", [16], initializer=v1.ones_initializer()),
        is_training=False,
        name="shortcut_bn",
    )[0]
    h = tf.nn.relu(h + shortcut)
    y = tf.reduce_mean(h, axis=[1, 2], name="pooled")
    return x, y, np.random.RandomState(4).randn(2, 16, 16, 8).astype(np.float32)


def mobilenet_v2():
    import tf_keras as keras

    keras.backend.set_learning_phase(0)
    model = keras.applications.MobileNetV2(
        input_shape=(96, 96, 3), alpha=0.35, weights=None, classes=10
    )
    x = model.inputs[0]
    return x, model.outputs[0], np.random.RandomState(5).rand(1, 96, 96, 3).astype(np.float32)


def resnet50():
    import tf_keras as keras

    keras.backend.set_learning_phase(0)
    model = keras.applications.ResNet50(input_shape=(64, 64, 3), weights=None, classes=10)
    x = model.inputs[0]
    return x, model.outputs[0], np.random.RandomState(10).rand(1, 64, 64, 3).astype(np.float32)


def lstm():
    x = v1.placeholder(tf.float32, [None, 7, 5], name="x")
    lengths = tf.constant([7, 4], tf.int32, name="lengths")
    cell = v1.nn.rnn_cell.LSTMCell(12)
    outputs, state = v1.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float32)
    y = tf.identity(tf.concat([outputs[:, -1], state.c, state.h], axis=1), name="y")
    return x, y, np.random.RandomState(6).randn(2, 7, 5).astype(np.float32)


def embedding():
    ids = v1.placeholder(tf.int32, [None, 6], name="ids")
    table = v1.get_variable("embeddings", [50, 8])
    with tf.control_dependencies([v1.assert_non_negative(ids, name="ids_non_negative")]):
        vectors = tf.gather(table, ids, name="lookup")
    pooled = tf.reduce_mean(vectors, axis=1)
    picked = tf.gather_nd(vectors, [[0, 1], [1, 2]], name="picked")
    scattered = tf.scatter_nd([[1], [3]], picked, [5, 8], name="scattered")
    y = tf.concat([_dense(pooled, 8, "head"), tf.reduce_sum(scattered, 0, keepdims=True)], 0)
    y = tf.identity(y, name="y")
    return ids, y, np.random.RandomState(7).randint(0, 50, (2, 6)).astype(np.int32)


def image_ops():
    x = v1.placeholder(tf.float32, [None, 10, 12, 3], name="x")
    a = tf.image.resize(x, [15, 9], method="bilinear")  # half_pixel_centers
    b = v1.image.resize_bilinear(x, [15, 9], align_corners=True)
    c = v1.image.resize_nearest_neighbor(x, [15, 9])
    d = tf.image.resize(x, [15, 9], method="nearest")
    h = tf.concat([a, b, c, d], axis=3)
    h = tf.pad(h, [[0, 0], [1, 2], [2, 1], [0, 0]])
    h = tf.pad(h, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
    h = tf.pad(h, [[0, 0], [2, 0], [0, 2], [0, 0]], mode="SYMMETRIC")
    h = tf.pad(h, [[0, 0], [1, 0], [0, 1], [0, 0]], constant_values=0.5)
    y = tf.identity(h, name="y")
    return x, y, np.random.RandomState(8).rand(2, 10, 12, 3).astype(np.float32)


def transformer_block():
    x = v1.placeholder(tf.float32, [None, 6, 16], name="x")
    heads, depth = 2, 8

    def layer_norm(h, name):
        with v1.variable_scope(name):
            mean, variance = tf.nn.moments(h, axes=[-1], keepdims=True)
            gamma = v1.get_variable("gamma", [16], initializer=v1.random_normal_initializer(1.0))
            beta = v1.get_variable("beta", [16], initializer=v1.random_normal_initializer())
            return (h - mean) * tf.math.rsqrt(variance + 1e-6) * gamma + beta

    qkv = tf.einsum("btd,de->bte", x, v1.get_variable("wqkv", [16, 48]))
    q, k, v = tf.split(qkv, 3, axis=-1)
    q, k, v = (tf.transpose(tf.reshape(t, [-1, 6, heads, depth]), [0, 2, 1, 3]) for t in (q, k, v))
    scores = tf.matmul(q, k, transpose_b=True) / np.sqrt(depth).astype(np.float32)
    attention = tf.matmul(tf.nn.softmax(scores), v)
    attention = tf.reshape(tf.transpose(attention, [0, 2, 1, 3]), [-1, 6, 16])
    h = layer_norm(x + attention, "ln1")
    a, b = tf.split(h, [10, 6], axis=-1)
    ff = tf.nn.gelu(_dense(tf.concat([b, a], -1), 32, "ff1"), approximate=False)
    ff = _dense(ff, 16, "ff2")
    y = tf.identity(layer_norm(h + ff, "ln2"), name="y")
    return x, y, np.random.RandomState(9).randn(2, 6, 16).astype(np.float32)


def op_zoo():
    """One node (or a few) of each op type a frozen graph may hold beyond the models above,
    each fetched: the special functions, index ops, TensorFlow's older spellings (raw ops),
    TensorArray V3's split and concat, and string ops."""
    raw = tf.raw_ops
    x = v1.placeholder(tf.float32, [3, 4], name="x")  # fed values in (0.1, 0.9)
    outputs = {}
    for op in (
        "Erf Erfc Erfinv Ndtri Lgamma Digamma Expm1 Log1p Reciprocal Floor Ceil Round Rint Atan "
        "Asin Acos Sinh Cosh Asinh Atanh BesselI0e BesselI1e Elu Softplus Relu6 Sign IsNan "
        "IsFinite"
    ).split():
        argument = "features" if op in ("Elu", "Softplus", "Relu6") else "x"
        value = x * 4.0 - 2.0 if op in ("Round", "Rint", "Sign", "Elu", "Relu6") else x
        outputs[op] = getattr(raw, op)(**{argument: value})
    outputs["Acosh"] = tf.math.acosh(x + 1.0)
    y = x[::-1] + 0.5
    for op in "Atan2 FloorDiv FloorMod TruncateDiv DivNoNan SquaredDifference Pow".split():
        outputs[op] = getattr(raw, op)(x=x, y=y) if op != "Atan2" else raw.Atan2(y=x, x=y)
    outputs["Igamma"] = tf.math.igamma(y, x)
    outputs["Igammac"] = tf.math.igammac(y, x)
    outputs["Zeta"] = tf.math.zeta(x + 1.5, y)
    outputs["Polygamma"] = tf.math.polygamma(tf.ones_like(x), y)
    outputs["Betainc"] = tf.math.betainc(y, y + 1.0, x)
    outputs["LeakyRelu"] = tf.nn.leaky_relu(x - 0.5, alpha=0.1)
    outputs["ClipByValue"] = tf.clip_by_value(x, 0.3, 0.6)
    outputs["L2Loss"] = tf.nn.l2_loss(x)
    outputs["LogSoftmax"] = tf.nn.log_softmax(x)
    outputs["Unpack"] = tf.unstack(x, axis=1)[2]
    outputs["Split"] = tf.split(x, 2, axis=1)[1]
    outputs["SplitV"] = tf.split(x, [1, -1], axis=0)[1]
    values, indices = tf.math.top_k(x, k=2)
    outputs["TopKV2"], outputs["TopKV2:1"] = values, indices
    outputs["Cumsum"] = tf.cumsum(x, axis=1, exclusive=True, reverse=True)
    ids = tf.cast(tf.floor(x * 3.0), tf.int32)
    outputs["OneHot"] = tf.one_hot(ids[0], 3, on_value=5.0, off_value=-1.0, axis=0)
    outputs["ReverseV2"] = tf.reverse(x, axis=[1])
    outputs["Where"] = tf.where(x > 0.5)
    outputs["ArgMin"] = tf.argmin(x, axis=1, output_type=tf.int32)
    outputs["Tile"] = tf.tile(x[:1], [2, 1])
    outputs["Squeeze"] = tf.squeeze(tf.expand_dims(x, 0), axis=[0])
    outputs["IdentityN"] = tf.identity_n([x, y])[1]
    outputs["GatherV2"] = tf.gather(x, [3, 0], axis=1)
    outputs["Fill"] = tf.fill(tf.shape(x), 2.5)
    outputs["SelectV2"] = tf.where(x > 0.5, x, -x)
    outputs["Cast"] = tf.cast(x * 10.0, tf.int64)
    # TensorFlow's older spellings, still in graphs frozen years ago
    images = tf.reshape(x, [1, 3, 2, 2])
    scale, offset = tf.constant([0.5, 2.0]), tf.constant([0.1, -0.1])
    mean, variance = tf.constant([0.2, 0.4]), tf.constant([1.5, 0.5])
    outputs["FusedBatchNorm"] = raw.FusedBatchNorm(
        x=images, scale=scale, offset=offset, mean=mean, variance=variance, is_training=False
    )[0]
    outputs["FusedBatchNormV2"] = raw.FusedBatchNormV2(
        x=images,
        scale=scale,
        offset=offset,
        mean=mean,
        variance=variance,
        epsilon=0.01,
        is_training=False,
    )[0]
    batch = tf.reshape(x, [2, 2, 3])
    outputs["BatchMatMul"] = raw.BatchMatMul(x=batch, y=batch, adj_y=True)
    outputs["BatchMatMulV3"] = raw.BatchMatMulV3(x=batch, y=batch, Tout=tf.float32, adj_x=True)
    outputs["Einsum"] = tf.einsum("...ij,...kj->...ik", batch, batch)
    # TensorArray V3: split, concat, size, unstack (scatter) and gather
    array = tf.TensorArray(tf.float32, size=2, infer_shape=False).split(x, [1, 2])
    outputs["TensorArrayConcatV3"] = array.concat()
    outputs["TensorArraySizeV3"] = array.size()
    rows = tf.TensorArray(tf.float32, size=3, clear_after_read=False).unstack(x)
    outputs["TensorArrayGatherV3"] = rows.gather([2, 0])
    # strings
    words = tf.strings.as_string(x, precision=2)
    outputs["StringJoin"] = tf.strings.join([words, words], separator="|")
    outputs["StringUpper"] = tf.strings.upper(tf.strings.regex_replace(words, "0", "o"))
    outputs["StringLength"] = tf.strings.length(words)
    value = np.random.RandomState(10).uniform(0.1, 0.9, (3, 4)).astype(np.float32)
    return x, outputs, value


MODELS = {
    "mlp": mlp,
    "lenet": lenet,
    "nested_cond": nested_cond,
    "resnet_block": resnet_block,
    "mobilenet_v2": mobilenet_v2,
    "lstm": lstm,
    "embedding": embedding,
    "image_ops": image_ops,
    "transformer_block": transformer_block,
    "op_zoo": op_zoo,
}


# Made only when named with --only: too large to commit.
LARGE_MODELS = {"resnet50": resnet50}


def _randomize(sess, seed: int) -> None:
    """Seeded random values for every variable (batch norm's statistics included, so that
    the moving mean and variance are not the trivial 0 and 1)."""
    rng = np.random.RandomState(seed)
    for variable in v1.global_variables():
        shape = variable.shape.as_list()
        value = rng.uniform(-0.5, 0.5, shape).astype(variable.dtype.as_numpy_dtype)
        if "variance" in variable.name or variable.name.startswith("sc_var"):
            value = np.abs(value) + 0.5
        variable.load(value, sess)


def make(name: str, builder, seed: int, directory: str = HERE) -> None:
    v1.disable_eager_execution()
    v1.disable_control_flow_v2()
    graph = tf.Graph()
    with graph.as_default():
        v1.set_random_seed(seed)
        x, y, value = builder()
        fetched = y if isinstance(y, dict) else {"output": y}
        fetched = (
            {key: tf.identity(t, name=f"fetch_{i}") for i, (key, t) in enumerate(fetched.items())}
            if isinstance(y, dict)
            else fetched
        )
        with v1.Session(graph=graph) as sess:
            sess.run(v1.global_variables_initializer())
            _randomize(sess, seed)
            results = sess.run(fetched, {x: value})
            output_nodes = [t.op.name for t in fetched.values()]
            frozen = v1.graph_util.convert_variables_to_constants(
                sess, graph.as_graph_def(), output_nodes
            )
    frozen = v1.graph_util.remove_training_nodes(frozen, protected_nodes=output_nodes)
    with open(os.path.join(directory, f"{name}.pb"), "wb") as f:
        f.write(frozen.SerializeToString())
    arrays = {
        f"output_{i}": np.asarray(r, dtype=bytes) if np.asarray(r).dtype == object else r
        for i, r in enumerate(results.values())
    }
    np.savez(
        os.path.join(directory, f"{name}.npz"),
        input=value,
        input_name=x.name,
        output_names=np.array([t.name for t in fetched.values()]),
        output_keys=np.array(list(fetched)),
        **arrays,
    )
    types = sorted({n.op for n in frozen.node})
    print(f"{name}: {len(frozen.node)} nodes, {frozen.ByteSize()} bytes: {' '.join(types)}")


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="*", help="the models to make (default: the small ones)")
    parser.add_argument("--out", default=HERE, help="the directory to write them to")
    args = parser.parse_args()
    every = {**MODELS, **LARGE_MODELS}
    for name in args.only or MODELS:
        if name not in every:
            parser.error(f"no model {name!r}; the models: {', '.join(every)}")
        make(name, every[name], list(every).index(name), args.out)
