"""`df.train.ExponentialMovingAverage`: TensorFlow's shadow variables, names and numbers (with
num_updates and zero_debias), restoring averages with a Saver, and averages in control flow,
saved graphs and pictures."""

import numpy as np
import pytest

import dataflow as df


def program():
    """The program the TensorFlow numbers below were recorded with (``df`` in place of
    ``tf``)."""
    with df.name_scope("model"):
        w = df.Variable([1.0, 2.0], name="w")
    b = df.Variable(0.5, dtype=df.float64, name="b")
    t = df.placeholder(df.float32, [2], name="t")
    signal = df.identity(t * 2.0, name="signal")
    step = df.Variable(0, name="step", trainable=False)
    ema = df.train.ExponentialMovingAverage(0.9, num_updates=step)
    debiased = df.train.ExponentialMovingAverage(0.8, zero_debias=True, name="debiased")
    with df.name_scope("train"):
        moves = [df.assign_add(w, [1.0, -1.0]), df.assign_add(b, 1.0)]
        with df.control_dependencies(moves):
            apply = ema.apply([w, b])
        apply_debiased = debiased.apply([signal])
        count = df.assign_add(step, 1)
    return w, b, t, signal, ema, debiased, apply, apply_debiased, count


# tensorflow.compat.v1 2.21 on `program`: after each of three rounds of
# run(apply); run(count); run(apply_debiased, {t: [1 + i, -2]}), the shadows of w, b and signal.
TENSORFLOW_ROUNDS = [
    ([1.899999976158142, 1.100000023841858], 1.399999976158142, [2.0, -4.0]),
    (
        [2.799999952316284, 0.19999998807907104],
        2.299999989704652,
        [3.1111111640930176, -4.000000476837158],
    ),  # noqa: E501
    ([3.700000047683716, -0.7000000476837158], 3.199999997426163, [4.295081615447998, -4.0]),
]


def test_shadows_follow_tensorflow_numbers_with_num_updates_and_zero_debias():
    w, b, t, signal, ema, debiased, apply, apply_debiased, count = program()
    shadows = [ema.average(w), ema.average(b), debiased.average(signal)]
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        initial = session.run(shadows)
        np.testing.assert_array_equal(initial[0], [1.0, 2.0])
        assert initial[1] == 0.5 and initial[1].dtype == np.float64
        np.testing.assert_array_equal(initial[2], [0.0, 0.0])
        for i, expected in enumerate(TENSORFLOW_ROUNDS):
            session.run(apply)
            session.run(count)
            session.run(apply_debiased, {t: [1.0 + i, -2.0]})
            got = session.run(shadows)
            assert got[0].tolist() == expected[0]
            assert float(got[1]) == expected[1]
            assert got[2].tolist() == expected[2]


def test_shadows_are_named_and_collected_as_in_tensorflow():
    w, b, t, signal, ema, debiased, apply, apply_debiased, count = program()
    assert (apply.name, apply_debiased.name) == ("train/ExponentialMovingAverage", "train/debiased")
    assert ema.name == "ExponentialMovingAverage"
    assert ema.average(w).name == "model/w/ExponentialMovingAverage:0"
    assert ema.average(b).name == "b/ExponentialMovingAverage:0"
    assert debiased.average(signal).name == "signal/debiased:0"
    assert ema.average(signal) is None
    assert ema.average_name(w) == "model/w/ExponentialMovingAverage"
    assert ema.average_name(signal) == "signal/ExponentialMovingAverage"
    assert debiased.average_name(w) == "model/w/debiased"
    assert sorted(v.name for v in df.global_variables()) == [
        "b/ExponentialMovingAverage:0",
        "b:0",
        "model/w/ExponentialMovingAverage:0",
        "model/w:0",
        "signal/debiased/biased:0",
        "signal/debiased/local_step:0",
        "signal/debiased:0",
        "step:0",
    ]
    assert df.moving_average_variables() == [w, b]
    assert not ema.average(w).trainable and df.trainable_variables() == [w, b]
    assert sorted((k, v.name) for k, v in ema.variables_to_restore().items()) == [
        ("b/ExponentialMovingAverage", "b:0"),
        ("model/w/ExponentialMovingAverage", "model/w:0"),
        ("signal/debiased", "signal/debiased:0"),
        ("signal/debiased/biased", "signal/debiased/biased:0"),
        ("signal/debiased/local_step", "signal/debiased/local_step:0"),
        ("step", "step:0"),
    ]


def test_apply_defaults_to_the_trainable_variables_and_keeps_one_shadow_each():
    w = df.Variable([1.0, 2.0], name="w")
    df.Variable(3.0, name="frozen", trainable=False)
    ema = df.train.ExponentialMovingAverage(0.5)
    first, second = ema.apply(), ema.apply()
    assert [v.name for v in df.moving_average_variables()] == ["w:0"]
    assert [v.name for v in df.global_variables()] == [
        "w:0",
        "frozen:0",
        "w/ExponentialMovingAverage:0",
    ]
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        session.run(w.assign([3.0, 6.0]))
        session.run(first)
        session.run(second)
        np.testing.assert_array_equal(session.run(ema.average(w)), [2.5, 5.0])


def test_a_saver_restores_the_averages_into_the_variables(tmp_path):
    w = df.Variable([0.0, 0.0], name="w")
    ema = df.train.ExponentialMovingAverage(0.5)
    with df.control_dependencies([w.assign_add([4.0, 8.0])]):
        step = ema.apply([w])
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        session.run(step)
        path = df.train.Saver().save(session, str(tmp_path / "model"))
    with df.Graph().as_default():
        w = df.Variable([9.0, 9.0], name="w")
        restorer = df.train.Saver(df.train.ExponentialMovingAverage(0.5).variables_to_restore())
        with df.Session() as session:
            restorer.restore(session, path)
            np.testing.assert_array_equal(session.run(w.value()), [2.0, 4.0])


def test_bad_items_are_errors_naming_the_line():
    with pytest.raises(TypeError, match=r"half, float, or double: n:0 \(at .*test_moving_av"):
        df.train.ExponentialMovingAverage(0.9).apply([df.Variable(1, name="n")])
    with pytest.raises(TypeError, match="takes Variables and Tensors"):
        df.train.ExponentialMovingAverage(0.9).apply([np.ones(2)])


def test_averaging_inside_a_while_loop_and_a_cond():
    x = df.Variable(0.0, name="x")
    ema = df.train.ExponentialMovingAverage(0.5)

    def body(i):
        with df.control_dependencies([x.assign_add(4.0)]):
            with df.control_dependencies([ema.apply([x])]):
                return i + 1

    loop = df.while_loop(lambda i: i < 2, body, [df.constant(0)])
    average_now = df.placeholder(df.bool, [], name="average_now")
    debiased = df.train.ExponentialMovingAverage(0.5, zero_debias=True, name="mean")
    signal = df.constant([2.0, 4.0], name="signal")
    branch = df.cond(average_now, lambda: df.group(debiased.apply([signal])), df.no_op)
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        session.run(loop)
        # x goes 4 then 8; its shadow 0 -> 2 -> 5.
        assert session.run(ema.average(x)) == 5.0
        session.run(branch, {average_now: False})
        np.testing.assert_array_equal(session.run(debiased.average(signal)), [0.0, 0.0])
        session.run(branch, {average_now: True})
        np.testing.assert_array_equal(session.run(debiased.average(signal)), [2.0, 4.0])


def test_a_saved_graph_with_averages_updates_them_the_same_and_renders(tmp_path):
    graph = df.Graph()
    with graph.as_default():
        w, b, t, signal, ema, debiased, apply, apply_debiased, count = program()
        init = df.global_variables_initializer()
    df.io.save_graph(graph, tmp_path / "ema.dfg")
    loaded = df.io.load_graph(tmp_path / "ema.dfg")
    results = []
    for g in (graph, loaded):
        with df.Session(graph=g) as session:
            session.run(init.name)
            for i in range(2):
                session.run([apply.name, count.name])
                session.run(apply_debiased.name, {"t:0": [1.0 + i, -2.0]})
            results.append(session.run(["model/w/ExponentialMovingAverage:0", "signal/debiased:0"]))
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
    assert loaded.get_collection(df.GraphKeys.MOVING_AVERAGE_VARIABLES)[0].name == "model/w:0"
    source = df.render(apply_debiased, format="dot", max_depth=None).source
    assert "AssignMovingAvg" in source
