"""Behaviour of tf.math.special, igamma/igammac, betainc, erfinv, erfcinv and ndtri, added to
close tf.compat.v1 surface gaps (expected values from TensorFlow 2.21)."""

import sys

import numpy as np
import pytest

import dataflow as df

tf = df.compat.v1
inf, nan = np.inf, np.nan

X = np.array([-3.5, -1.0, -0.2, 0.0, 0.3, 1.0, 2.5, 7.0, 30.0])

# name: (values at X, gradients at X), from TensorFlow in float64
EXPECTED = {
    "bessel_i0e": (
        [0.222802438010779, 0.46575960759364, 0.826938551634329, 1.0, 0.757580625182548]
        + [0.46575960759364, 0.270046441612203, 0.153737744672881, 0.073145946482237],
        [0.035402461407729, 0.257849192243932, 0.744655428105517, 0.0, -0.645203064542709]
        + [-0.257849192243932, -0.063461792080936, -0.011448509963283, -0.001229615883590],
    ),
    "bessel_i1": (
        [-6.205834922258364, -0.565159103992485, -0.100500834028125, 0.0, 0.151693840003593]
        + [0.565159103992485, 2.516716245288698, 156.039092869955, 768532038938.9568],
        [5.605107740151661, 0.700906773759523, 0.50752085765452, 1.0, 0.516980746006288]
        + [0.700906773759523, 2.283152645934644, 146.302609528867, 756054563192.6788],
    ),
    "bessel_j1": (
        [-0.137377527362327, -0.440050585744934, -0.099500832639236, 0.0, 0.148318816273104]
        + [0.440050585744934, 0.497094102464274, -0.004682823482346, -0.118751062616623],
        [-0.419378462090786, 0.325147100813033, 0.492520809043396, 0.5, 0.483230192294616]
        + [0.325147100813033, -0.247221417453908, 0.300748245302748, -0.082409614827153],
    ),
    "bessel_k0": (
        [inf, inf, inf, inf, 1.3724600605442978, 0.42102443824070823, 0.062347553200366196]
        + [0.0004247957418692318, 2.132477496463056e-14],
        [-inf, -inf, -inf, -inf, -3.055992033457325, -0.6019072301972348, -0.07389081634774707]
        + [-0.0004541824868848969, -2.1677320018915495e-14],
    ),
    "bessel_k1": (
        [inf, inf, inf, inf, 3.055992033457325, 0.6019072301972348, 0.07389081634774707]
        + [0.0004541824868848969, 2.1677320018915495e-14],
        [nan, nan, nan, -inf, -11.559100172068714, -1.022931668437943, -0.09190387973946502]
        + [-0.0004896789542813599, -2.204735229859441e-14],
    ),
    "dawsn": (
        [-0.14962159308075648, -0.5380795069127684, -0.1947510333680281, 0.0]
        + [0.28263166502131193, 0.5380795069127684, 0.22308372216743552, 0.0721809746582363]
        + [0.016675941401059175],
        [-0.047351151565295346, -0.0761590138255368, 0.9220995866527888, 1.0]
        + [0.8304210009872128, -0.0761590138255368, -0.11541861083717753]
        + [-0.010533645215308196, -0.0005564840635505774],
    ),
    "fresnel_cos": (
        [-0.5325724350280007, -0.779893400376823, -0.19992105759445308, 0.0]
        + [0.2994009760520472, 0.779893400376823, 0.45741300964177706, 0.5454670925469698]
        + [0.4999962473706091],
        [0.9238795325112875, 6.123233995736766e-17, 0.9980267284282716, 1.0]
        + [0.9900236577165575, 6.123233995736766e-17, -0.9238795325112867]
        + [8.329455176111767e-15, 1.0],
    ),
    "bessel_k1e": (
        [inf, inf, inf, inf, 4.12515776224447, 1.636153486263259, 0.900174423907878]
        + [0.498071575095476, 0.231654129377712],
        [nan, nan, nan, -inf, -11.47799541267578, -1.144463079806895, -0.219444035983373]
        + [-0.038926603154036, -0.003954340551132],
    ),
    "bessel_y1": (
        [-inf, -inf, -inf, -inf, -2.293105138388529, -0.781212821300289, 0.145918137966786]
        + [-0.302667237024185, 0.084425570661747],
        [-inf, -inf, -inf, nan, 6.836410216823912, 0.869469785515966, 0.439703104428518]
        + [0.017288432750531, -0.120109917375389],
    ),
    "expint": (
        [nan, nan, nan, -inf, -0.302668539265826, 1.895117816355937, 7.073765894578601]
        + [191.5047433355014, 368973209407.2742],
        [-0.008627823834948, -0.367879441171442, -4.093653765389909, inf, 4.499529358586678]
        + [2.718281828459046, 4.872997584281389, 156.6618797754941, 356215819384.1487],
    ),
    "fresnel_sin": (
        [-0.415248011972437, -0.438259147390355, -0.004187609161657, 0.0, 0.014116998006577]
        + [0.438259147390355, 0.619181755819593, 0.499704789453446, 0.489389674442194],
        [0.382683432365088, 1.0, 0.062790519529313, 0.0, 0.140901231937583, 1.0]
        + [-0.38268343236509, 1.0, -7.64253880344339e-14],
    ),
    "spence": (
        [nan, nan, nan, 1.644934066848226, 0.889377624286039, 0.0, -1.14738066037557]
        + [-3.089942051088032, -7.280084707384272],
        [nan, nan, nan, -inf, -1.719961149037051, -1.0, -0.610860487916103]
        + [-0.324318358175886, -0.117282668333178],
    ),
}


def _run(*tensors):
    with tf.Session(graph=tensors[0].graph) as sess:
        out = sess.run(list(tensors))
    return out[0] if len(out) == 1 else out


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_special_function_does_match_tensorflow_with_its_gradient(name):
    values, grads = EXPECTED[name]
    with tf.Graph().as_default():
        x = tf.constant(X)
        y = getattr(tf.math.special, name)(x)
        got, grad = _run(y, tf.gradients(y, x)[0])
    np.testing.assert_allclose(got, values, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(grad, grads, rtol=1e-9, atol=1e-14)


def test_the_bessel_names_are_the_same_under_math_and_math_special():
    for name in ("bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e"):
        assert getattr(tf.math, name) is getattr(tf.math.special, name)
    assert tf.igamma is tf.math.igamma and tf.betainc is tf.math.betainc


def test_bessel_functions_do_keep_float32_and_reject_integers():
    with tf.Graph().as_default():
        y = tf.math.special.bessel_j0(tf.constant([0.0, 1.0, 2.5], tf.float32))
        i0 = tf.math.bessel_i0(tf.constant([-1.0, 0.0, 7.0], tf.float32))
        assert y.dtype == tf.float32
        got, got_i0 = _run(y, i0)
    np.testing.assert_allclose(got, [1.0, 0.7651977, -0.04838378], rtol=1e-6)
    np.testing.assert_allclose(got_i0, [1.2660658, 1.0, 168.59391], rtol=1e-6)
    with tf.Graph().as_default(), pytest.raises(TypeError, match="BesselK0"):
        tf.math.special.bessel_k0(tf.constant([1, 2]))


def test_erfinv_ndtri_and_erfcinv_do_invert_with_tensorflows_edges():
    u = np.array([-0.5, 0.0, 0.1, 0.5, 0.9, 1.0, 1.5])
    with tf.Graph().as_default():
        x = tf.constant(u)
        erfinv, ndtri, erfcinv = tf.math.erfinv(x), tf.math.ndtri(x), tf.math.erfcinv(2 * x)
        grads = [tf.gradients(y, x)[0] for y in (erfinv, ndtri)]
        erfinv, ndtri, erfcinv, d_erfinv, d_ndtri = _run(erfinv, ndtri, erfcinv, *grads)
    np.testing.assert_allclose(
        erfinv,
        [-0.476936276204470, 0.0, 0.088855990494258, 0.47693627620447, 1.16308715367667]
        + [inf, nan],
        rtol=1e-12,
    )
    np.testing.assert_allclose(
        ndtri, [nan, -inf, -1.2815515655446, 0.0, 1.2815515655446, inf, nan], rtol=1e-12
    )
    np.testing.assert_allclose(
        erfcinv, [nan, inf, 0.906193802436823, -0.0, -0.906193802436823, -inf, nan], rtol=1e-12
    )
    np.testing.assert_allclose(
        d_erfinv[:5],
        [1.11258481897195, 0.886226925452758]
        + [0.893251725305187, 1.11258481897195, 3.42804281145184],
        rtol=1e-9,
    )
    np.testing.assert_allclose(d_ndtri[2:5], [5.698059856117003, 2.506628274631, 5.698059856117])


def test_igamma_and_igammac_do_match_tensorflow_with_both_gradients():
    a = np.array([-1.0, 0.0, 0.5, 1.0, 3.0, 3.0, 10.0, 2.0])
    x = np.array([1.0, 1.0, 0.0, 2.0, 0.5, -1.0, 12.0, inf])
    with tf.Graph().as_default():
        ta, tx = tf.constant(a), tf.constant(x)
        p, q = tf.igamma(ta, tx), tf.math.igammac(ta, tx)
        dp = tf.gradients(p, [ta, tx])
        dq = tf.gradients(q, [ta, tx])
        p, q, (dpa, dpx), (dqa, dqx) = _run(p, q, tf.stack(dp), tf.stack(dq))
    expected_p = [nan, nan, 0.0, 0.864664716763387, 0.014387677966971, nan, 0.757607838329488, 1]
    np.testing.assert_allclose(p, expected_p, rtol=1e-12)
    np.testing.assert_allclose(q, 1 - np.array(expected_p), rtol=1e-12, atol=1e-15)
    expected_da = [nan, nan, 0.0, -0.220825426211859, -0.028520235878829, nan]
    np.testing.assert_allclose(dpa[:6], expected_da, rtol=1e-8)
    np.testing.assert_allclose(dpa[6], -0.09717797203717947, rtol=1e-8)
    expected_dx = [0.0, 0.0, inf, 0.135335283236613, 0.075816332464079, nan, 0.087364379903049]
    np.testing.assert_allclose(dpx[:7], expected_dx, rtol=1e-10)
    np.testing.assert_allclose(dqa[:6], -np.array(expected_da), rtol=1e-8)
    np.testing.assert_allclose(dqx[:7], -np.array(expected_dx), rtol=1e-10)


def test_igamma_does_broadcast_and_take_python_numbers():
    with tf.Graph().as_default():
        p = tf.igamma(2.0, tf.constant([[0.5], [3.0]], tf.float32))
        assert p.dtype == tf.float32 and p.shape.as_list() == [2, 1]
        got = _run(p)
    np.testing.assert_allclose(got[:, 0], [0.09020401, 0.80085173], rtol=1e-6)
    with tf.Graph().as_default(), pytest.raises(TypeError, match="Igamma"):
        tf.igamma(tf.constant([1.0], tf.float32), tf.constant([1.0], tf.float64))


def test_betainc_does_match_tensorflow_and_differentiate_only_x():
    a = np.array([2.0, 0.5, 3.0, 1.0, 2.0, 2.0, 0.0, 1.0])
    b = np.array([1.0, 2.0, 0.5, 0.0, 3.0, 2.0, 5.0, 1.0])
    x = np.array([0.5, 0.2, 0.9, 0.5, 1.0, -0.1, 0.3, 0.0])
    with tf.Graph().as_default():
        ta, tb, tx = tf.constant(a), tf.constant(b), tf.constant(x)
        y = tf.betainc(ta, tb, tx)
        da, db, dx = tf.gradients(y, [ta, tb, tx])
        assert da is None and db is None
        got, dx = _run(y, dx)
    np.testing.assert_allclose(
        got, [0.25, 0.626099033699941, 0.44541555534797, nan, 1.0, nan, nan, 0.0], rtol=1e-12
    )
    np.testing.assert_allclose(
        dx, [1.0, 1.341640786499874, 2.401354598190364, 0.0, 0.0, nan, 0.0, 1.0], rtol=1e-12
    )


def test_special_functions_do_name_the_extra_without_scipy(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy.special", None)
    monkeypatch.setitem(sys.modules, "scipy", None)
    with tf.Graph().as_default():
        with pytest.raises(ImportError, match=r"bessel_j0 at .*test_special_ops.*'special'"):
            tf.math.special.bessel_j0([1.0])
        with pytest.raises(ImportError, match="betainc.*special"):
            tf.betainc(1.0, 1.0, 0.5)
        # bessel_i0 needs only numpy
        np.testing.assert_allclose(_run(tf.math.bessel_i0([1.0])), [1.266065877752008])
