"""Learning-rate schedules of `df.train`: TensorFlow's numbers and names at several steps, a
schedule driving an optimizer through the global step, and the schedules in control flow,
saved graphs and pictures."""

import numpy as np
import pytest
from autodiff.gradient_checking import check_gradients

import dataflow as df

STEPS = [0, 1, 5, 10, 15, 25, 100]
SCHEDULES = {
    "exponential": lambda s: df.train.exponential_decay(0.1, s, 10, 0.5),
    "exponential_staircase": lambda s: df.train.exponential_decay(0.1, s, 10, 0.5, staircase=True),
    "piecewise": lambda s: df.train.piecewise_constant(s, [5, 15], [1.0, 0.5, 0.1]),
    "polynomial": lambda s: df.train.polynomial_decay(
        0.1, s, 20, end_learning_rate=0.01, power=2.0
    ),
    "polynomial_cycle": lambda s: df.train.polynomial_decay(
        0.1, s, 20, end_learning_rate=0.01, power=0.5, cycle=True
    ),
    "cosine": lambda s: df.train.cosine_decay(0.1, s, 20, alpha=0.1),
    "inverse_time": lambda s: df.train.inverse_time_decay(0.1, s, 10, 0.5),
    "inverse_time_staircase": lambda s: df.train.inverse_time_decay(
        0.1, s, 10, 0.5, staircase=True
    ),
    "natural_exp": lambda s: df.train.natural_exp_decay(0.1, s, 10, 0.5),
    "natural_exp_staircase": lambda s: df.train.natural_exp_decay(0.1, s, 10, 0.5, staircase=True),
    "exponential_f64": lambda s: df.train.exponential_decay(
        df.constant(0.1, df.float64), s, 10, 0.5
    ),
}
# Each schedule built in this order on an int64 placeholder step, with the same arguments, in
# tensorflow.compat.v1 2.21 (tf.train.<schedule>): the result's name and its value at STEPS.
TENSORFLOW = {
    "exponential": (
        "ExponentialDecay:0",
        [
            0.10000000149011612,
            0.09330330044031143,
            0.0707106813788414,
            0.05000000074505806,
            0.0353553406894207,
            0.01767767034471035,
            9.765625145519152e-05,
        ],
    ),  # noqa: E501
    "exponential_staircase": (
        "ExponentialDecay_1:0",
        [
            0.10000000149011612,
            0.10000000149011612,
            0.10000000149011612,
            0.05000000074505806,
            0.05000000074505806,
            0.02500000037252903,
            9.765625145519152e-05,
        ],
    ),  # noqa: E501
    "piecewise": (
        "PiecewiseConstant/case/cond/Merge:0",
        [1.0, 1.0, 1.0, 0.5, 0.5, 0.10000000149011612, 0.10000000149011612],
    ),  # noqa: E501
    "polynomial": (
        "PolynomialDecay:0",
        [
            0.10000000149011612,
            0.09122499823570251,
            0.06062500178813934,
            0.032499998807907104,
            0.015625,
            0.009999999776482582,
            0.009999999776482582,
        ],
    ),  # noqa: E501
    "polynomial_cycle": (
        "PolynomialDecay_1:0",
        [
            0.10000000149011612,
            0.0977211520075798,
            0.08794228732585907,
            0.07363960891962051,
            0.054999999701976776,
            0.06511352211236954,
            0.009999999776482582,
        ],
    ),  # noqa: E501
    "cosine": (
        "CosineDecay/Mul_3:0",
        [
            0.10000000149011612,
            0.09944597631692886,
            0.08681981265544891,
            0.05499999597668648,
            0.023180196061730385,
            0.010000000707805157,
            0.010000000707805157,
        ],
    ),  # noqa: E501
    "inverse_time": (
        "InverseTimeDecay:0",
        [
            0.10000000149011612,
            0.0952381044626236,
            0.07999999821186066,
            0.06666667014360428,
            0.05714285746216774,
            0.04444444552063942,
            0.01666666753590107,
        ],
    ),  # noqa: E501
    "inverse_time_staircase": (
        "InverseTimeDecay_1:0",
        [
            0.10000000149011612,
            0.10000000149011612,
            0.10000000149011612,
            0.06666667014360428,
            0.06666667014360428,
            0.05000000074505806,
            0.01666666753590107,
        ],
    ),  # noqa: E501
    "natural_exp": (
        "ExponentialDecay_2:0",
        [
            0.10000000149011612,
            0.09512294828891754,
            0.07788007706403732,
            0.060653068125247955,
            0.04723665863275528,
            0.02865048125386238,
            0.0006737948278896511,
        ],
    ),  # noqa: E501
    "natural_exp_staircase": (
        "ExponentialDecay_3:0",
        [
            0.10000000149011612,
            0.10000000149011612,
            0.10000000149011612,
            0.060653068125247955,
            0.060653068125247955,
            0.03678794577717781,
            0.0006737948278896511,
        ],
    ),  # noqa: E501
    "exponential_f64": (
        "ExponentialDecay_4:0",
        [
            0.1,
            0.09330329915368074,
            0.07071067811865477,
            0.05,
            0.03535533905932738,
            0.01767766952966369,
            9.765625e-05,
        ],
    ),  # noqa: E501
}


def test_schedules_give_tensorflow_names_and_values_bit_for_bit():
    step = df.placeholder(df.int64, [], name="step")
    rates = {kind: make(step) for kind, make in SCHEDULES.items()}
    with df.Session() as session:
        for kind, rate in rates.items():
            name, values = TENSORFLOW[kind]
            assert rate.name == name
            got = [session.run(rate, {step: n}) for n in STEPS]
            assert got[0].dtype == (np.float64 if kind.endswith("f64") else np.float32)
            assert [float(v) for v in got] == values, kind


def test_a_schedule_drives_an_optimizer_through_the_global_step():
    x = df.Variable(0.0, name="x")
    global_step = df.train.get_or_create_global_step()
    rate = df.train.exponential_decay(1.0, global_step, 1, 0.5, staircase=True)
    train = df.train.GradientDescentOptimizer(rate).minimize(-x, global_step=global_step)
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        for _ in range(4):
            session.run(train)
        # Steps of 1, 1/2, 1/4, 1/8: each read the step before its increment.
        assert session.run(x.value()) == 1.875
        assert session.run(rate) == 0.0625


def test_piecewise_constant_promotes_int32_boundaries_and_checks_dtypes():
    step = df.placeholder(df.int64, [], name="step")
    rate = df.train.piecewise_constant(step, [df.constant(3)], [1.0, 2.0])
    with df.Session() as session:
        assert [session.run(rate, {step: n}) for n in (3, 4)] == [1.0, 2.0]
    with pytest.raises(ValueError, match="1 less than the length of values"):
        df.train.piecewise_constant(step, [1, 2], [1.0, 2.0])
    with pytest.raises(ValueError, match=r"Boundaries \(float32\) must have the same dtype"):
        df.train.piecewise_constant(step, [1.5], [1.0, 2.0])
    with pytest.raises(ValueError, match=r"same dtype \(float32 vs int32\).*test_learning"):
        df.train.piecewise_constant(step, [1], [1.0, 2])


@pytest.mark.parametrize(
    "schedule", ["exponential_decay", "natural_exp_decay", "inverse_time_decay", "polynomial_decay"]
)
def test_a_schedule_without_a_global_step_is_an_error(schedule):
    with pytest.raises(ValueError, match=f"global_step is required for {schedule}"):
        getattr(df.train, schedule)(0.1, None, 10, 0.5)
    with pytest.raises(ValueError, match=r"global_step is required for cosine_decay.*test_learn"):
        df.train.cosine_decay(0.1, None, 10)


def test_schedules_have_gradients_with_respect_to_the_rate():
    def schedules(rate, decay):
        step = df.constant(7, df.int64)
        return (
            df.train.exponential_decay(rate, step, 10, decay)
            + df.train.polynomial_decay(rate, step, 10, cycle=True)
            + df.train.cosine_decay(rate, step, 10)
            + df.train.inverse_time_decay(rate, step, 10, decay)
        )

    check_gradients(schedules, [np.array(0.1), np.array(0.5)])


def test_schedules_inside_a_while_loop_and_a_cond():
    def body(i, total):
        return i + 1, total + df.train.inverse_time_decay(1.0, i, 1, 1.0)

    _, harmonic = df.while_loop(lambda i, t: i < 4, body, [df.constant(0), df.constant(0.0)])
    late = df.placeholder(df.bool, [], name="late")
    step = df.constant(30, df.int64)
    chosen = df.cond(
        late,
        lambda: df.train.piecewise_constant(step, [10, 20], [1.0, 0.1, 0.01]),
        lambda: df.train.cosine_decay(1.0, step, 60),
    )
    with df.Session() as session:
        np.testing.assert_allclose(session.run(harmonic), 1 + 1 / 2 + 1 / 3 + 1 / 4, rtol=1e-6)
        assert session.run(chosen, {late: True}) == np.float32(0.01)
        np.testing.assert_allclose(session.run(chosen, {late: False}), 0.5, rtol=1e-6)


def test_a_saved_schedule_loads_and_renders(tmp_path):
    graph = df.Graph()
    with graph.as_default():
        step = df.placeholder(df.int64, [], name="step")
        rates = [make(step) for make in SCHEDULES.values()]
    df.io.save_graph(graph, tmp_path / "schedules.dfg")
    loaded = df.io.load_graph(tmp_path / "schedules.dfg")
    names = [r.name for r in rates]
    results = []
    for g in (graph, loaded):
        with df.Session(graph=g) as session:
            results.append([session.run(names, {"step:0": n}) for n in (0, 12, 40)])
    assert results[0] == results[1]
    assert "PiecewiseConstant" in df.render(loaded, format="dot").source


RESTART_STEPS = [0, 1, 5, 10, 15, 25, 31, 100]
# tensorflow.compat.v1 2.21, the same four schedules built in this order on an int64
# placeholder step: each result's name and its values at RESTART_STEPS.
TENSORFLOW_RESTARTS_AND_LINEAR_COSINE = {
    "SGDRDecay:0": [0.1, 0.09779754281044006, 0.05499999597668648, 0.1, 0.08681981265544891,
                    0.023180196061730385, 0.099861279129982, 0.07222075760364532],
    "SGDRDecay_1:0": [0.1, 0.0975528284907341, 0.04999999701976776, 0.05000000074505806,
                      0.02499999850988388, 0.01249999925494194, 0.012194102630019188,
                      9.765625145519152e-05],
    "LinearCosineDecay:0": [0.11100000143051147, 0.09597338736057281, 0.0010000000474974513,
                            0.061000000685453415, 0.0010000000474974513, 0.010999999940395355,
                            0.010999999940395355, 0.010999999940395355],
    "NoisyLinearCosineDecay:0": [0.10010000318288803, 0.09451519697904587, 0.06411650776863098,
                                 0.025099998340010643, 0.0037611653096973896,
                                 0.00010000000474974513, 0.00010000000474974513,
                                 0.00010000000474974513],
}  # fmt: skip


def test_restarts_and_linear_cosine_schedules_match_tensorflow():
    step = df.placeholder(df.int64, [])
    schedules = [
        df.train.cosine_decay_restarts(0.1, step, 10, alpha=0.1),
        df.train.cosine_decay_restarts(0.1, step, 10, t_mul=1.0, m_mul=0.5),
        df.train.linear_cosine_decay(0.1, step, 20, num_periods=2.0, alpha=0.1, beta=0.01),
        df.train.noisy_linear_cosine_decay(0.1, step, 20, initial_variance=0.0),
    ]
    assert [s.name for s in schedules] == list(TENSORFLOW_RESTARTS_AND_LINEAR_COSINE)
    with df.Session() as sess:
        values = np.array([sess.run(schedules, {step: s}) for s in RESTART_STEPS]).T
    for got, expected in zip(values, TENSORFLOW_RESTARTS_AND_LINEAR_COSINE.values()):
        np.testing.assert_allclose(got, expected, rtol=2e-6)


def test_noisy_linear_cosine_decay_draws_noise_of_the_scheduled_variance():
    step = df.placeholder(df.int64, [])
    noisy = df.train.noisy_linear_cosine_decay(1.0, step, 100, initial_variance=1.0, beta=0.0)
    plain = df.train.linear_cosine_decay(1.0, step, 100, beta=0.0)
    with df.Session() as sess:
        expected = sess.run(plain, {step: 0})
        draws = np.array([sess.run(noisy, {step: 0}) for _ in range(400)])
    # At step 0 the cosine factor is 1, so the noise (variance 1) shows undamped.
    assert abs(draws.mean() - expected) < 0.2
    assert 0.8 < draws.std() < 1.2
