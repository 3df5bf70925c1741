"""Behaviour of the complex numbers and tf.signal / tf.spectral names added to close
tf.compat.v1 surface gaps (expected values from TF 2.21, graph mode)."""

import numpy as np
import pytest

import dataflow as df

tf = df.compat.v1

X = np.array([[0.5, -1.0, 2.0, 0.25, -0.75, 1.5], [1.0, 0.0, -2.0, 3.0, 0.5, -0.5]], np.float32)
Z = (X + 1j * X[::-1]).astype(np.complex64)
SIG = np.sin(np.arange(20, dtype=np.float32) * 0.7) + 0.1 * np.arange(20, dtype=np.float32)
W = np.cos(np.arange(12).reshape(2, 6)).astype(np.float32)

# What TensorFlow 2.21 computes for X, Z, SIG and W.
FFT_Z = np.array(
    [
        [
            2.5 + 2.0j,
            -1.857051 - 1.716506j,
            2.473076 + 9.546633j,
            1.0 - 3.0j,
            -2.723076 + 0.453367j,
            1.607051 - 1.283494j,
        ],
        [
            2.0 + 2.5j,
            -1.283494 + 1.607051j,
            0.453367 - 2.723076j,
            -3.0 + 1.0j,
            9.546633 + 2.473076j,
            -1.716506 - 1.857051j,
        ],
    ]
)
IFFT2D_Z = np.array(
    [
        [
            0.375 + 0.375j,
            -0.009121 - 0.261712j,
            0.56863 + 0.24387j,
            -0.166667 - 0.166667j,
            0.24387 + 0.56863j,
            -0.261712 - 0.009121j,
        ],
        [
            0.041667 - 0.041667j,
            0.276963 + 0.047796j,
            -1.022476 - 0.168309j,
            0.333333 - 0.333333j,
            0.168309 + 1.022476j,
            -0.047796 - 0.276963j,
        ],
    ]
)
RFFT_X = np.array(
    [
        [2.5 + 0.0j, -0.125 - 0.216506j, -0.125 + 4.546633j, 1.0 + 0.0j],
        [2.0 + 0.0j, -1.5 + 1.732051j, 5.0 - 2.598076j, -3.0 + 0.0j],
    ]
)
RFFT_X_8 = np.array(
    [
        [2.5 + 0.0j, -0.694544 - 0.40901j, -2.25 - 0.25j, 3.194544 + 3.59099j, 1.0 + 0.0j],
        [2.0 + 0.0j, -1.267767 - 0.474874j, 3.5 + 3.5j, 2.267767 - 4.474874j, -3.0 + 0.0j],
    ]
)
RFFT_X_4 = np.array(
    [[1.75 + 0.0j, -1.5 + 1.25j, 3.25 + 0.0j], [2.0 + 0.0j, 3.0 + 3.0j, -4.0 + 0.0j]]
)
IRFFT_Z = np.array(
    [
        [
            0.3,
            -0.281285,
            0.410677,
            -0.345254,
            -0.270065,
            0.3,
            1.514492,
            -0.390157,
            -0.955104,
            0.216695,
        ],
        [
            0.35,
            -0.462169,
            -0.239074,
            1.587292,
            0.393161,
            -0.75,
            -0.331357,
            0.392546,
            0.07727,
            -0.017668,
        ],
    ]
)
IRFFT_Z_5 = np.array(
    [
        [0.5, -0.200592, -0.090025, 1.431666, -1.141049],
        [-0.6, 0.757408, 0.948746, -1.043173, 0.937019],
    ]
)
RFFT2D_X = np.array(
    [
        [4.5 + 0.0j, -1.625 + 1.515544j, 4.875 + 1.948557j, -2.0 + 0.0j],
        [0.5 + 0.0j, 1.375 - 1.948557j, -5.125 + 7.14471j, 4.0 + 0.0j],
    ]
)
IRFFT2D_Z_3_4 = np.array(
    [
        [-0.041667, 0.291667, 0.291667, -0.041667],
        [0.047249, -0.22508, 0.091907, -0.058413],
        [0.119418, -0.441587, 0.741426, -0.27492],
    ]
)
GRAD_FFT = np.array(
    [
        [
            -0.235818 + 0.177204j,
            4.186586 - 2.314815j,
            0.181336 - 0.145583j,
            0.096238 - 0.128401j,
            0.084505 - 0.17874j,
            1.687154 - 3.170685j,
        ],
        [
            -0.177204 + 0.235818j,
            3.170685 - 1.687154j,
            0.17874 - 0.084505j,
            0.128401 - 0.096238j,
            0.145583 - 0.181336j,
            2.314815 - 4.186586j,
        ],
    ]
)
GRAD_IFFT = np.array(
    [
        [
            -0.039303 + 0.029534j,
            0.281192 - 0.528448j,
            0.014084 - 0.02979j,
            0.01604 - 0.0214j,
            0.030223 - 0.024264j,
            0.697764 - 0.385803j,
        ],
        [
            -0.029534 + 0.039303j,
            0.385803 - 0.697764j,
            0.024264 - 0.030223j,
            0.0214 - 0.01604j,
            0.02979 - 0.014084j,
            0.528448 - 0.281192j,
        ],
    ]
)
GRAD_RFFT = np.array(
    [
        [0.134163, 2.995109, 0.726835, 1.033543, -0.830975, 1.941325],
        [0.657442, 2.428524, 0.573148, 0.971898, -1.08347, 2.21348],
    ]
)
GRAD_RFFT_8 = np.array(
    [
        [-0.181629, 3.710723, -1.263696, 0.523718, 0.132827, 0.720054],
        [-0.519481, 2.992403, -0.902529, 0.537239, 0.3799, 0.605885],
    ]
)
GRAD_IRFFT = np.array(
    [
        [
            0.042162 + 0.0j,
            0.013549 + 0.402278j,
            0.381835 - 0.756235j,
            0.237807 - 0.205937j,
            0.217834 - 0.080113j,
            0.106814 + 0.0j,
        ],
        [
            0.07099 + 0.0j,
            0.331529 - 0.272802j,
            -0.654794 + 0.512836j,
            -0.269066 + 0.139655j,
            -0.215576 + 0.054328j,
            -0.102155 + 0.0j,
        ],
    ]
)
GRAD_IRFFT_12 = np.array(
    [
        [
            -0.034419 + 0.0j,
            -0.102503 + 0.019974j,
            0.946603 - 0.279609j,
            0.082651 - 0.024083j,
            0.04918 - 0.010832j,
            0.039767 - 0.004626j,
        ],
        [
            -0.010658 + 0.0j,
            -0.044468 + 0.053685j,
            0.677011 - 0.751506j,
            0.082864 - 0.064728j,
            0.059846 - 0.029114j,
            0.053372 - 0.012434j,
        ],
    ]
)
GRAD_RFFT2D = np.array(
    [
        [2.190954, 0.84156, 3.046577, 2.500456, 0.762468, 2.657984],
        [-1.796426, -0.325638, -3.782327, 4.819302, -0.421248, 1.506337],
    ]
)
FRAME_PAD = np.array(
    [
        [0.0, 0.744218, 1.18545, 1.163209],
        [1.163209, 0.734988, 0.149217, -0.271576],
        [-0.271576, -0.282453, 0.168733, 0.916814],
        [0.916814, -1.0, -1.0, -1.0],
    ]
)
OAA = np.array([[0.5, -1.0, 2.0, -0.5, 1.5, 1.0, -2.0, 3.0, 0.5, -0.5]])
GRAD_FRAME = np.array(
    [
        1.0,
        0.540302,
        -0.416147,
        -0.989992,
        0.306527,
        1.037565,
        -0.1455,
        -0.91113,
        0.004782,
        0.911873,
        0.136737,
        -0.759688,
        -0.297343,
        0.713541,
        0.408082,
        -0.547729,
        -0.575782,
        0.45837,
        0.646919,
        -0.292139,
    ]
)
HANN_5 = np.array([0.0, 0.5, 1.0, 0.5, 0.0])
HANN_5_SYM = np.array([0.0, 0.5, 1.0, 0.5, 0.0])
HAMMING_6 = np.array([0.08, 0.31, 0.77, 1.0, 0.77, 0.31])
KAISER_6 = np.array([0.036711, 0.414904, 0.913812, 0.913812, 0.414904, 0.036711])
KBD_8 = np.array([0.006072, 0.388206, 0.921573, 0.999982, 0.999982, 0.921573, 0.388206, 0.006072])
VORBIS_6 = np.array([0.105029, 0.707107, 0.994469, 0.994469, 0.707107, 0.105029])
STFT_SIG = np.array(
    [
        [
            2.379775 + 0.0j,
            -1.47929 - 1.446826j,
            0.278051 + 0.715145j,
            0.009314 + 0.010199j,
            0.004076 + 0.0j,
        ],
        [
            1.730557 + 0.0j,
            -0.319916 + 1.888887j,
            -0.523972 - 0.739685j,
            -0.017551 - 0.039675j,
            -0.007679 + 0.0j,
        ],
        [
            6.789309 + 0.0j,
            -4.132958 - 0.625546j,
            0.709345 + 0.356953j,
            0.023761 - 0.00208j,
            0.010397 + 0.0j,
        ],
        [
            4.1207 + 0.0j,
            -1.21442 + 0.77705j,
            -0.812749 - 0.254772j,
            -0.027224 - 0.023052j,
            -0.011913 + 0.0j,
        ],
    ]
)
STFT_SIG_PAD = np.array(
    [
        [2.826896, 2.215847, 0.998729, 0.170518, 0.05376],
        [0.990857, 1.226961, 0.91682, 0.227583, 0.039315],
        [4.612307, 3.381155, 1.213998, 0.175533, 0.019873],
        [4.727403, 3.822986, 2.015452, 0.949766, 0.749746],
    ]
)
GRAD_STFT = np.array(
    [
        0.0,
        -0.284414,
        1.537634,
        1.610355,
        2.402953,
        0.496204,
        -0.561229,
        0.820788,
        -0.006495,
        2.056504,
        1.823842,
        1.930035,
        2.885824,
        1.010982,
        0.406664,
        1.400046,
        0.651282,
        1.945475,
        1.06969,
        0.229787,
    ]
)
ISTFT_WINDOW = np.array([0.0, 0.140423, 0.510958, 0.87226, 0.958871, 0.87226, 0.510958, 0.140423])
DCT1 = np.array(
    [
        [3.0, -0.322949, -2.722136, -3.677051, 6.222136, 3.0],
        [3.5, -2.399187, -0.809017, 9.899187, 0.309017, -7.5],
    ]
)
DCT1_N4 = np.array([[2.75, -2.75, -0.25, 6.25], [0.0, 0.0, 6.0, -6.0]])
GRAD_DCT1_N8 = np.array(
    [
        [1.478254, -1.286717, 8.399554, 1.985769, 1.02918, 0.721127],
        [-0.762926, -3.21127, -4.335005, 4.955898, -0.531159, 1.799721],
    ]
)
DCT2 = np.array(
    [
        [5.0, -1.379538, -0.433013, -3.535533, 7.75, 3.216655],
        [4.0, -0.39752, -0.866025, 9.899494, 0.5, -8.175694],
    ]
)
DCT2_N4 = np.array([[3.5, -1.834161, -0.353553, 5.734619], [4.0, -2.164784, 8.485281, -5.226252]])
GRAD_DCT2_N8 = np.array(
    [
        [1.064442, 0.722374, 8.923725, 1.413382, 0.805948, 1.110395],
        [-1.611359, -4.832027, -2.519856, 4.986925, -0.29065, 1.340787],
    ]
)
DCT3 = np.array(
    [
        [2.41226, -1.889087, -1.687516, -5.740688, 5.889088, 4.015943],
        [2.01972, -3.535534, -0.244465, 10.172668, 3.535534, -5.947923],
    ]
)
DCT3_N4 = np.array(
    [[1.67201, -3.555734, -1.10112, 4.984844], [0.467674, -1.71485, 9.371704, -4.124527]]
)
GRAD_DCT3_N8 = np.array(
    [
        [1.478254, -1.1243, 7.527644, 2.319525, -1.778687, 0.26467],
        [-0.762926, -2.805923, -3.885012, 5.788857, 0.917979, 0.660539],
    ]
)
DCT4 = np.array(
    [
        [2.439033, -1.596392, -2.031857, 0.624104, 9.080283, -1.425892],
        [2.714202, -2.70598, 5.084447, 8.098966, -6.532814, -5.018788],
    ]
)
DCT4_N4 = np.array(
    [[1.637672, -2.979276, 3.713237, 4.141716], [0.909832, 2.25266, 5.319596, -8.820409]]
)
GRAD_DCT4_N8 = np.array(
    [
        [0.903214, 2.117384, 7.769119, -2.147427, 0.242962, -0.687363],
        [-1.649875, -4.668086, 1.07087, 5.169927, -1.029318, 1.768947],
    ]
)
DCT2_ORTHO = np.array(
    [
        [1.020621, -0.398238, -0.125, -1.020621, 2.237232, 0.928568],
        [0.816497, -0.114754, -0.25, 2.857738, 0.144337, -2.36012],
    ]
)
IDCT2_ORTHO = np.array(
    [
        [0.756146, -0.485546, -0.427357, -1.597407, 1.75982, 1.219089],
        [0.702616, -0.901048, 0.049002, 3.05617, 1.140194, -1.597444],
    ]
)
IDCT3 = np.array(
    [
        [5.0, -1.379538, -0.433013, -3.535533, 7.75, 3.216655],
        [4.0, -0.39752, -0.866025, 9.899494, 0.5, -8.175694],
    ]
)
DCT4_ORTHO = np.array(
    [
        [0.704088, -0.460839, -0.586547, 0.180163, 2.621252, -0.41162],
        [0.783523, -0.781149, 1.467754, 2.33797, -1.885861, -1.448799],
    ]
)
MDCT_SIG = np.array(
    [
        [-2.766754, 3.328252, -0.220389, 0.240415],
        [-3.110587, -3.502182, -0.541909, -0.35788],
        [-9.937202, 2.85468, -0.567894, 0.161174],
    ]
)
MEL_6_9 = np.array(
    [
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [0.397105, 0.602895, 0.0, 0.0, 0.0, 0.0],
        [0.0, 0.02017, 0.97983, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.000914, 0.999086, 0.0, 0.0],
        [0.0, 0.0, 0.0, 0.191316, 0.808684, 0.0],
        [0.0, 0.0, 0.0, 0.0, 0.519667, 0.480333],
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.945729],
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.444651],
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    ]
)
MFCC_X = np.array(
    [
        [1.443376, -0.398238, -0.125, -1.020621, 2.237232, 0.928568],
        [1.154701, -0.114754, -0.25, 2.857738, 0.144337, -2.36012],
    ]
)
ANGLE_GRAD = np.array(
    [[-0.8, 0.0, 0.25, -0.331035, -0.615385, 0.2], [0.4, -1.0, 0.25, 0.027586, -0.923077, 0.6]]
)
ABS_GRAD = np.array([[1.0, -2.0, 4.0, 0.5, -1.5, 3.0], [2.0, 0.0, -4.0, 6.0, 1.0, -1.0]])


def _run(fetches, feed_dict=None, graph=None):
    with tf.Session(graph=graph) as sess:
        return sess.run(fetches, feed_dict)


def _close(actual, expected, atol=2e-5):
    np.testing.assert_allclose(actual, expected, rtol=2e-5, atol=atol)


# -- complex dtypes and numbers --------------------------------------------------------------------
def test_complex_dtypes_does_mirror_tensorflow():
    assert tf.complex64 is tf.dtypes.complex64 and tf.complex128 is tf.dtypes.complex128
    assert tf.as_dtype(np.complex64) is tf.complex64 and tf.as_dtype("complex128") is tf.complex128
    assert tf.complex64.as_datatype_enum == 8 and tf.complex128.as_datatype_enum == 18
    assert tf.complex64.real_dtype is tf.float32 and tf.complex128.real_dtype is tf.float64
    assert tf.float32.real_dtype is tf.float32
    assert tf.complex64.is_complex and not tf.complex64.is_floating and tf.complex64.is_numeric
    assert tf.complex64.size == 8 and tf.complex64.as_numpy_dtype is np.complex64
    with pytest.raises(TypeError):
        _ = tf.complex64.min
    with pytest.raises(TypeError):
        tf.as_dtype(complex)  # as in TensorFlow, Python's complex names no width


def test_constant_does_make_complex_tensors_from_python_and_numpy_values():
    with tf.Graph().as_default():
        assert tf.constant(1 + 2j).dtype is tf.complex128
        assert tf.constant([1 + 2j, 3]).dtype is tf.complex128
        assert tf.constant(np.complex64(1)).dtype is tf.complex64
        c = tf.constant([1.0, 2], dtype=tf.complex64)
        assert c.dtype is tf.complex64
        np.testing.assert_array_equal(_run(c), np.array([1, 2], np.complex64))
        with pytest.raises(TypeError):
            tf.constant(1 + 2j, dtype=tf.float32)
        p = tf.placeholder(tf.complex128, [2])
        np.testing.assert_array_equal(_run(p * 2, {p: [1 + 1j, -2j]}), [2 + 2j, -4j])


def test_complex_parts_does_give_tensorflows_values():
    x = np.array([1.5 + 2j, -3 - 4j], np.complex64)
    with tf.Graph().as_default():
        t = tf.constant(x)
        re, im, ang, cj, ab = _run([tf.real(t), tf.imag(t), tf.angle(t), tf.conj(t), tf.abs(t)])
        assert re.dtype == np.float32 and ab.dtype == np.float32 and cj.dtype == np.complex64
        _close(re, [1.5, -3.0])
        _close(im, [2.0, -4.0])
        _close(ang, [0.9272952, -2.2142975])
        _close(cj, [1.5 - 2j, -3 + 4j])
        _close(ab, [2.5, 5.0])
        assert tf.math.real is tf.real and tf.math.imag is tf.imag
        assert tf.math.angle is tf.angle and tf.math.conj is tf.conj


def test_complex_parts_does_take_real_tensors_as_tensorflow():
    with tf.Graph().as_default():
        r = tf.constant([1.0, -2.0])
        assert tf.real(r) is r
        i = tf.constant([1, 2])
        assert tf.conj(i) is i
        im, ang = _run([tf.imag(r), tf.angle(r)])
        _close(im, [0.0, 0.0])
        _close(ang, [0.0, np.pi])
        with pytest.raises(TypeError, match="numeric"):
            tf.conj(tf.constant(["a"]))


def test_complex_does_build_and_check_dtypes():
    with tf.Graph().as_default():
        c = tf.complex(tf.constant([1.0, 2.0]), tf.constant(3.0))
        assert c.dtype is tf.complex64 and tf.dtypes.complex is tf.complex
        _close(_run(c), [1 + 3j, 2 + 3j])
        assert tf.complex(tf.constant(1.0, tf.float64), tf.constant(2.0, tf.float64)).dtype is (
            tf.complex128
        )
        with pytest.raises(TypeError, match="incorrect types"):
            tf.complex(tf.constant(1.0), tf.constant(1.0, tf.float64))
        with pytest.raises(TypeError):
            tf.complex(tf.constant(1), tf.constant(2))


def test_to_complex_does_cast_with_tf1_names():
    with tf.Graph().as_default():
        a = tf.to_complex64(tf.constant([1, 2]))
        b = tf.to_complex128(tf.constant([1.5]))
        assert a.name == "ToComplex64:0" and a.dtype is tf.complex64
        assert b.name == "ToComplex128:0" and b.dtype is tf.complex128
        back = tf.cast(tf.constant([1.5 + 2j, -3 - 4j], tf.complex64), tf.int32)
        _close(_run(a), [1, 2])
        np.testing.assert_array_equal(_run(back), [1, -3])  # the imaginary part is dropped


def test_complex_gradients_does_match_tensorflow():
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [3])
        b = tf.placeholder(tf.float32, [3])
        z = tf.complex(a, b)
        loss = (
            tf.reduce_sum(tf.abs(z * z))
            + tf.reduce_sum(tf.real(z) * tf.imag(z))
            + tf.reduce_sum(tf.angle(z))
        )
        ga, gb = _run(tf.gradients(loss, [a, b]), {a: [1, 2, 3], b: [-1, 0.5, 2]})
        _close(ga, [1.5, 4.382353, 7.8461537])
        _close(gb, [-0.5, 3.4705882, 7.230769])
        loss2 = tf.real(tf.reduce_sum(tf.exp(z) * tf.conj(z)))
        ga, gb = _run(tf.gradients(loss2, [a, b]), {a: [1, 2, 3], b: [-1, 0.5, 2]})
        _close(ga, [5.224743, 21.224771, 3.0933218], atol=1e-4)
        _close(gb, [-1.4686939, -0.3002491, -53.244522], atol=1e-4)
        c = tf.constant([1.0, 2.0])
        zc = tf.cast(c, tf.complex64)
        (gc,) = _run(tf.gradients(tf.reduce_sum(tf.real(zc**2 + tf.log(zc))), c))
        _close(gc, [3.0, 4.5])
        a, b = tf.constant([1.0, -2.0]), tf.constant([0.5, 1.5])
        power = tf.complex(a, b) ** tf.complex(b, a)
        ga, gb = _run(tf.gradients(tf.reduce_sum(tf.abs(power)), [a, b]))
        np.testing.assert_allclose(ga, [0.2236982, -2020.9774], rtol=1e-4)
        np.testing.assert_allclose(gb, [-0.32483938, 371.86102], rtol=1e-4)


COMPLEX_GRADS = {
    "sqrt": [[0.85915, -0.03869, 0.52198], [0.57769, 0.66962, 0.03677]],
    "rsqrt": [[-0.75373, 0.21881, -0.20814], [-1.60762, 0.43037, 0.09609]],
    "log1p": [[0.89744, -1.22642, 0.49461], [0.51282, 1.79245, -0.01469]],
    "sin": [[1.30306, 1.03575, -0.43427], [0.67768, -0.83313, -2.16893]],
    "cos": [[-0.88536, 1.61736, -2.55368], [0.15028, 0.99725, 0.07515]],
    "tan": [[1.83236, -1.52376, -0.16867], [0.01119, 1.63804, -0.79008]],
    "tanh": [[1.09764, 0.3421, -0.03242], [0.7602, -0.43343, -0.11382]],
    "sinh": [[1.69289, 1.59109, 0.94363], [0.30764, 2.15107, 5.70169]],
    "cosh": [[0.91335, -1.14852, 0.79125], [-0.25094, -2.32693, 5.85191]],
    "expm1": [[2.60624, 0.44257, 1.73488], [0.0567, -0.17587, 11.5536]],
    "reciprocal": [[-0.77855, -0.60807, -0.23523], [-4.58477, 0.54901, 0.19175]],
    "sign": [[0.30264, 0.43077, 0.24512], [-0.50441, 0.73846, 0.44568]],
    "cumsum": [[4.5, 3.0, 1.5], [1.5, 1.0, 0.5]],
    "log": [[1.76471, -1.11399, 0.68138], [2.05882, 0.23316, -0.12476]],
    "div": [[-2.02422, -0.21987, 0.16088], [3.3737, -0.37692, 0.29251]],
    "matmul": [[0.4, 3.3, -5.3], [1.8, -2.9, 4.9]],
    "norm": [[0.27423, -0.65815, 1.09691], [0.16454, 0.38392, -0.6033]],
    "pow": [[0.28972, -104.25053, -2.07647], [-0.33472, -74.94223, 2.0819]],
    "transpose": [[1.5, 1.5, 1.5], [-0.5, -0.5, -0.5]],
}


def test_complex_math_does_take_tensorflows_gradients():
    a = tf.constant(np.array([0.5, -1.2, 2.0], np.float32))
    b = tf.constant(np.array([0.3, 0.7, -1.1], np.float32))
    z, w = tf.complex(a, b), tf.complex(b, a)
    functions = {
        "sqrt": tf.sqrt,
        "rsqrt": tf.rsqrt,
        "log1p": tf.log1p,
        "sin": tf.sin,
        "cos": tf.cos,
        "tan": tf.tan,
        "tanh": tf.tanh,
        "sinh": tf.sinh,
        "cosh": tf.cosh,
        "expm1": tf.expm1,
        "reciprocal": tf.reciprocal,
        "sign": tf.sign,
        "cumsum": tf.cumsum,
        "log": tf.log,
        "div": lambda t: t / w,
        "matmul": lambda t: tf.matmul(tf.reshape(t, [1, 3]), tf.reshape(w, [1, 3]), adjoint_b=True),
        "norm": tf.norm,
        "pow": lambda t: t**w,
        "transpose": lambda t: tf.transpose(tf.reshape(t, [3, 1]), conjugate=True),
    }
    for key, fn in functions.items():
        y = fn(z)
        loss = tf.reduce_sum(tf.real(y) * 1.5 + tf.imag(y) * 0.5)
        _close(np.stack(_run(tf.gradients(loss, [a, b]))), COMPLEX_GRADS[key], atol=1e-4)


def test_complex_abs_and_angle_gradients_does_match_tensorflow():
    with tf.Graph().as_default():
        x = tf.constant(X)
        z = tf.complex(x[0], x[1])
        (ga,) = _run(tf.gradients(tf.reduce_sum(tf.angle(z)), x))
        (gb,) = _run(tf.gradients(tf.reduce_sum(tf.abs(z * tf.complex(x[1], x[0]))), x))
        _close(ga, ANGLE_GRAD, atol=1e-4)
        _close(gb, ABS_GRAD, atol=1e-4)


def test_complex_graphs_does_save_and_load(tmp_path):
    from dataflow.io.dfg import load_graph, save_graph

    g = tf.Graph()
    with g.as_default():
        tf.identity(tf.signal.fft(tf.constant([1 + 2j, 3 - 1j], tf.complex64)), name="y")
    save_graph(g, tmp_path / "g.dfg")
    loaded = load_graph(tmp_path / "g.dfg")
    _close(_run("y:0", graph=loaded), [4 + 1j, -2 + 3j])


# -- FFTs ------------------------------------------------------------------------------------------
def test_fft_names_does_reach_one_function_under_every_path():
    assert tf.fft is tf.signal.fft is tf.spectral.fft
    assert tf.ifft3d is tf.signal.ifft3d is tf.spectral.ifft3d
    assert tf.spectral.rfft is tf.signal.rfft and tf.spectral.irfft2d is tf.signal.irfft2d
    assert tf.spectral.dct is tf.signal.dct and tf.spectral.idct is tf.signal.idct


def test_fft_does_give_tensorflows_values():
    with tf.Graph().as_default():
        fft, ifft2d = _run([tf.signal.fft(Z), tf.signal.ifft2d(Z)])
        assert fft.dtype == np.complex64
        _close(fft, FFT_Z, atol=1e-5)
        _close(ifft2d, IFFT2D_Z, atol=1e-5)
        z128 = Z.astype(np.complex128)
        out = _run(tf.fft3d(tf.constant(z128[None])))
        assert out.dtype == np.complex128
        _close(out, np.fft.fftn(z128[None], axes=(-3, -2, -1)))
        _close(_run(tf.ifft(tf.fft(tf.constant(z128)))), z128)
        _close(_run(tf.ifft3d(tf.fft3d(tf.constant(z128[None])))), z128[None])


def test_fft_does_reject_real_scalar_and_keep_empty_inputs():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="complex64, complex128"):
            tf.signal.fft(tf.zeros([2, 3]))
        with pytest.raises(ValueError, match="rank"):
            tf.signal.fft(tf.zeros([], tf.complex64))
        with pytest.raises(ValueError, match="RFFT requires"):
            tf.signal.rfft(tf.zeros([2, 3], tf.int32))
        assert _run(tf.signal.fft(tf.zeros([2, 0], tf.complex64))).shape == (2, 0)
        assert _run(tf.signal.rfft(tf.zeros([2, 0]))).shape == (2, 0)
        assert _run(tf.signal.irfft(tf.zeros([2, 0], tf.complex64))).shape == (2, 0)


def test_rfft_does_crop_and_pad_to_fft_length():
    with tf.Graph().as_default():
        rfft, rfft8, rfft4 = _run(
            [tf.signal.rfft(X), tf.signal.rfft(X, [8]), tf.signal.rfft(X, fft_length=[4])]
        )
        assert rfft.dtype == np.complex64
        _close(rfft, RFFT_X, atol=1e-5)
        _close(rfft8, RFFT_X_8, atol=1e-5)
        _close(rfft4, RFFT_X_4, atol=1e-5)
        assert tf.signal.rfft(tf.constant(X.astype(np.float64))).dtype is tf.complex128
        _close(_run(tf.signal.rfft2d(X)), RFFT2D_X, atol=1e-5)


def test_irfft_does_give_tensorflows_values():
    with tf.Graph().as_default():
        irfft, irfft5, irfft2d = _run(
            [tf.signal.irfft(Z), tf.signal.irfft(Z, [5]), tf.signal.irfft2d(Z, [3, 4])]
        )
        assert irfft.shape == (2, 10) and irfft.dtype == np.float32
        _close(irfft, IRFFT_Z)
        _close(irfft5, IRFFT_Z_5)
        _close(irfft2d, IRFFT2D_Z_3_4)
        x = np.random.default_rng(0).normal(size=(2, 3, 4, 5))
        back = tf.signal.irfft3d(tf.signal.rfft3d(tf.constant(x)), [3, 4, 5])
        _close(_run(back), x, atol=1e-10)


def test_rfft_does_take_a_fft_length_computed_at_run_time():
    with tf.Graph().as_default():
        n = tf.placeholder(tf.int32, [])
        signal = tf.placeholder(tf.float32, [None, None])
        spectrum = tf.signal.rfft(signal, tf.reshape(n, [1]))
        assert spectrum.shape.as_list() == [None, None]
        _close(_run(spectrum, {n: 8, signal: X}), RFFT_X_8, atol=1e-5)
        inferred = tf.signal.irfft(tf.placeholder(tf.complex64, [2, None]))
        assert inferred.shape.as_list() == [2, None]
        assert tf.signal.irfft(tf.placeholder(tf.complex64, [2, 5])).shape.as_list() == [2, 8]


def test_fft_gradients_does_match_tensorflow():
    wc = (W + 1j * W[::-1]).astype(np.complex64)
    with tf.Graph().as_default():
        z, x = tf.constant(Z), tf.constant(X)
        grads = [
            tf.gradients(tf.reduce_sum(tf.real(tf.signal.fft(z) * wc)), z)[0],
            tf.gradients(tf.reduce_sum(tf.real(tf.signal.ifft(z) * wc)), z)[0],
            tf.gradients(tf.reduce_sum(tf.real(tf.signal.rfft(x) * wc[:, :4])), x)[0],
            tf.gradients(tf.reduce_sum(tf.imag(tf.signal.rfft(x, [8]) * wc[:, :5])), x)[0],
            tf.gradients(
                tf.reduce_sum(
                    tf.signal.irfft(z) * np.cos(np.arange(20)).reshape(2, 10).astype(np.float32)
                ),
                z,
            )[0],
            tf.gradients(
                tf.reduce_sum(
                    tf.signal.irfft(z, [12])
                    * np.cos(np.arange(24)).reshape(2, 12).astype(np.float32)
                ),
                z,
            )[0],
            tf.gradients(tf.reduce_sum(tf.abs(tf.signal.rfft2d(x))), x)[0],
        ]
        values = _run(grads)
        expected = [GRAD_FFT, GRAD_IFFT, GRAD_RFFT, GRAD_RFFT_8, GRAD_IRFFT, GRAD_IRFFT_12]
        for value, want in zip(values, expected + [GRAD_RFFT2D]):
            _close(value, want, atol=1e-4)


def test_fftnd_does_transform_chosen_axes_as_numpy():
    rng = np.random.default_rng(1)
    z = (rng.normal(size=(2, 3, 4)) + 1j * rng.normal(size=(2, 3, 4))).astype(np.complex64)
    r = rng.normal(size=(2, 3, 5)).astype(np.float32)
    with tf.Graph().as_default():
        values = _run(
            [
                tf.signal.fftnd(z),
                tf.signal.fftnd(z, fft_length=[2, 6], axes=[1, 2]),
                tf.signal.ifftnd(z, fft_length=[3, 4], axes=[0, 1], norm="ortho"),
                tf.signal.rfftnd(r, fft_length=[3, 8], axes=[1, 2], norm="forward"),
                tf.signal.irfftnd(z, fft_length=[3, 5], axes=[1, 2]),
                tf.fftnd(z, [3, 4], [1, 2]),
                tf.irfftnd(z.astype(np.complex128), [3, 6], [1, 2], Treal=tf.float64),
            ]
        )
    expected = [
        np.fft.fftn(z),
        np.fft.fftn(z, s=[2, 6], axes=[1, 2]),
        np.fft.ifftn(z, s=[3, 4], axes=[0, 1], norm="ortho"),
        np.fft.rfftn(r, s=[3, 8], axes=[1, 2], norm="forward"),
        np.fft.irfftn(z, s=[3, 5], axes=[1, 2]),
        np.fft.fftn(z, axes=[1, 2]),
        np.fft.irfftn(z.astype(np.complex128), s=[3, 6], axes=[1, 2]),
    ]
    for value, want in zip(values, expected):
        assert value.shape == want.shape
        _close(value, want, atol=1e-4)
    assert values[-1].dtype == np.float64


def test_fftnd_gradients_does_agree_with_fft2d():
    rng = np.random.default_rng(2)
    z = (rng.normal(size=(2, 3, 4)) + 1j * rng.normal(size=(2, 3, 4))).astype(np.complex64)
    w = (rng.normal(size=(2, 3, 4)) + 1j * rng.normal(size=(2, 3, 4))).astype(np.complex64)
    with tf.Graph().as_default():
        t = tf.constant(z)
        nd = tf.gradients(tf.reduce_sum(tf.real(tf.signal.fftnd(t, axes=[1, 2]) * w)), t)[0]
        two = tf.gradients(tf.reduce_sum(tf.real(tf.signal.fft2d(t) * w)), t)[0]
        ind = tf.gradients(tf.reduce_sum(tf.real(tf.signal.ifftnd(t, axes=[1, 2]) * w)), t)[0]
        itwo = tf.gradients(tf.reduce_sum(tf.real(tf.signal.ifft2d(t) * w)), t)[0]
        a, b, c, d = _run([nd, two, ind, itwo])
        _close(a, b, atol=1e-4)
        _close(c, d, atol=1e-5)


def test_fftshift_does_roll_half_of_each_axis():
    x = np.arange(15.0).reshape(3, 5)
    with tf.Graph().as_default():
        a, b, c = _run(
            [
                tf.signal.fftshift(x),
                tf.signal.ifftshift(x, axes=[1, -2]),
                tf.signal.fftshift(tf.placeholder_with_default(x, [None, None]), axes=1),
            ]
        )
    np.testing.assert_array_equal(a, np.fft.fftshift(x))
    np.testing.assert_array_equal(b, np.fft.ifftshift(x, axes=[1, 0]))
    np.testing.assert_array_equal(c, np.fft.fftshift(x, axes=1))


# -- frames, windows, spectrograms -----------------------------------------------------------------
def test_frame_does_slice_and_pad_as_tensorflow():
    with tf.Graph().as_default():
        framed = tf.signal.frame(SIG[:10], 4, 3, pad_end=True, pad_value=-1.0)
        assert framed.shape.as_list() == [4, 4]
        _close(_run(framed), FRAME_PAD)
        x = np.arange(2 * 11 * 3, dtype=np.float32).reshape(2, 11, 3)
        along = tf.signal.frame(x, 4, 2, axis=1)
        assert along.shape.as_list() == [2, 4, 4, 3]
        np.testing.assert_array_equal(_run(along)[1, 2], x[1, 4:8])
        assert _run(tf.signal.frame(x, 40, 3)).shape == (2, 11, 0, 40)
        dynamic = tf.signal.frame(tf.placeholder(tf.float32, [None]), 4, 2)
        assert dynamic.shape.as_list() == [None, 4]


def test_frame_does_reject_a_bad_step_at_run_time():
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int32, [])
        framed = tf.signal.frame(SIG, 4, step)
        with pytest.raises(tf.errors.InvalidArgumentError, match="frame_step"):
            _run(framed, {step: 0})


def test_overlap_and_add_does_add_frames_and_frame_is_its_gradient():
    with tf.Graph().as_default():
        frames = tf.constant(X.reshape(1, 3, 4))
        added = tf.signal.overlap_and_add(frames, 3)
        assert added.shape.as_list() == [1, 10]
        _close(_run(added), OAA)
        s = tf.constant(SIG)
        weights = np.cos(np.arange(30)).reshape(5, 6).astype(np.float32)
        loss = tf.reduce_sum(tf.signal.frame(s, 6, 4, pad_end=True) * weights)
        _close(_run(tf.gradients(loss, s)[0]), GRAD_FRAME, atol=1e-5)
        (g,) = _run(tf.gradients(tf.reduce_sum(added * np.arange(10.0, dtype=np.float32)), frames))
        np.testing.assert_array_equal(g[0], [[0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9]])
        with pytest.raises(ValueError, match="rank"):
            tf.signal.overlap_and_add(tf.constant([1.0, 2.0]), 1)


def test_windows_does_give_tensorflows_values():
    with tf.Graph().as_default():
        values = _run(
            [
                tf.signal.hann_window(5),
                tf.signal.hann_window(5, periodic=False),
                tf.signal.hamming_window(6),
                tf.signal.kaiser_window(6, beta=5.0),
                tf.signal.kaiser_bessel_derived_window(8),
                tf.signal.vorbis_window(6),
            ]
        )
        for value, want in zip(values, [HANN_5, HANN_5_SYM, HAMMING_6, KAISER_6, KBD_8, VORBIS_6]):
            _close(value, want)
        assert tf.signal.hann_window(4, dtype=tf.float64).dtype is tf.float64
        _close(_run(tf.signal.hann_window(1)), [1.0])
        n = tf.placeholder(tf.int32, [])
        window = tf.signal.hamming_window(n)
        assert window.shape.as_list() == [None]
        _close(_run(window, {n: 6}), HAMMING_6)
        periodic = tf.placeholder(tf.bool, [])
        beta = tf.placeholder(tf.float32, [])
        hann, kaiser = tf.signal.hann_window(5, periodic), tf.signal.kaiser_window(6, beta)
        _close(_run(hann, {periodic: False}), HANN_5_SYM)
        _close(_run(kaiser, {beta: 5.0}), KAISER_6)
        with pytest.raises(ValueError, match="floating point"):
            tf.signal.vorbis_window(4, dtype=tf.int32)


def test_stft_does_give_tensorflows_values_and_gradient():
    with tf.Graph().as_default():
        s = tf.constant(SIG)
        spectrum = tf.signal.stft(s, 8, 4)
        assert spectrum.shape.as_list() == [4, 5]
        padded = tf.abs(tf.signal.stft(SIG, 6, 5, fft_length=8, pad_end=True))
        grad = tf.gradients(tf.reduce_sum(tf.abs(spectrum)), s)[0]
        a, b, c = _run([spectrum, padded, grad])
        _close(a, STFT_SIG, atol=1e-5)
        _close(b, STFT_SIG_PAD, atol=1e-5)
        _close(c, GRAD_STFT, atol=1e-4)


def test_inverse_stft_does_undo_stft_with_its_window_fn():
    with tf.Graph().as_default():
        window = tf.signal.inverse_stft_window_fn(3)(8, tf.float32)
        _close(_run(window), ISTFT_WINDOW)
        signal = tf.placeholder(tf.float32, [None])
        spectrum = tf.signal.stft(signal, 8, 2)
        back = tf.signal.inverse_stft(spectrum, 8, 2, window_fn=tf.signal.inverse_stft_window_fn(2))
        out = _run(back, {signal: SIG})
        # the samples covered by a full set of overlapping frames come back
        _close(out[6:14], SIG[6:14], atol=1e-5)
        longer = tf.signal.inverse_stft(tf.signal.stft(SIG, 10, 3, fft_length=8), 10, 3, 8)
        assert longer.shape.as_list() == [19]


def test_dct_does_give_tensorflows_values():
    with tf.Graph().as_default():
        for kind, want, want_n4 in [
            (1, DCT1, DCT1_N4),
            (2, DCT2, DCT2_N4),
            (3, DCT3, DCT3_N4),
            (4, DCT4, DCT4_N4),
        ]:
            value, value_n4 = _run([tf.signal.dct(X, type=kind), tf.signal.dct(X, kind, n=4)])
            _close(value, want, atol=1e-4)
            _close(value_n4, want_n4, atol=1e-4)
        values = _run(
            [
                tf.signal.dct(X, norm="ortho"),
                tf.signal.idct(X, norm="ortho"),
                tf.signal.idct(X, type=3),
                tf.signal.dct(X, type=4, norm="ortho"),
            ]
        )
        for value, want in zip(values, [DCT2_ORTHO, IDCT2_ORTHO, IDCT3, DCT4_ORTHO]):
            _close(value, want, atol=1e-4)
        along = _run(tf.signal.dct(X.T, axis=0))
        _close(along.T, DCT2, atol=1e-4)


def test_dct_does_reject_bad_arguments():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Types I, II, III and IV"):
            tf.signal.dct(X, type=5)
        with pytest.raises(ValueError, match="Type-I"):
            tf.signal.dct(X, type=1, norm="ortho")
        with pytest.raises(ValueError, match="greater than one"):
            tf.signal.dct(tf.zeros([3, 1]), type=1)
        with pytest.raises(ValueError, match="normalization"):
            tf.signal.dct(X, norm="forward")
        with pytest.raises(ValueError, match="positive"):
            tf.signal.dct(X, n=0)


def test_dct_gradients_does_match_tensorflow():
    weights = np.cos(np.arange(16)).reshape(2, 8).astype(np.float32)
    with tf.Graph().as_default():
        x = tf.constant(X)
        grads = [
            tf.gradients(tf.reduce_sum(tf.signal.dct(x, type=k, n=8) * weights), x)[0]
            for k in (1, 2, 3, 4)
        ]
        for value, want in zip(
            _run(grads), [GRAD_DCT1_N8, GRAD_DCT2_N8, GRAD_DCT3_N8, GRAD_DCT4_N8]
        ):
            _close(value, want, atol=1e-4)


def test_mdct_does_give_tensorflows_values_and_invert():
    with tf.Graph().as_default():
        coefficients = tf.signal.mdct(SIG[:16], 8)
        assert coefficients.shape.as_list() == [3, 4]
        _close(_run(coefficients), MDCT_SIG, atol=1e-4)
        back = tf.signal.inverse_mdct(tf.signal.mdct(SIG, 8, norm="ortho"), norm="ortho")
        # time-domain aliasing cancels where two frames overlap
        _close(_run(back)[4:16], SIG[4:16], atol=1e-5)
        with pytest.raises(ValueError, match="multiple of 4"):
            tf.signal.mdct(SIG, 6)
        length = tf.placeholder(tf.int32, [])
        _close(_run(tf.signal.mdct(SIG[:16], length), {length: 8}), MDCT_SIG, atol=1e-4)


def test_mel_and_mfcc_does_give_tensorflows_values():
    with tf.Graph().as_default():
        mel = tf.signal.linear_to_mel_weight_matrix(6, 9, 8000, 100.0, 4000.0)
        assert mel.shape.as_list() == [9, 6]
        _close(_run(mel), MEL_6_9, atol=1e-5)
        assert _run(tf.signal.linear_to_mel_weight_matrix()).shape == (129, 20)
        _close(_run(tf.signal.mfccs_from_log_mel_spectrograms(X)), MFCC_X, atol=1e-5)
        with pytest.raises(ValueError, match="Nyquist"):
            tf.signal.linear_to_mel_weight_matrix(upper_edge_hertz=5000.0)
        with pytest.raises(ValueError, match="num_mel_bins"):
            tf.signal.linear_to_mel_weight_matrix(num_mel_bins=0)


def test_signal_ops_does_run_eagerly():
    with df.eager_mode():
        x = tf.constant(SIG)
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_sum(tf.abs(tf.signal.stft(x, 8, 4)))
        _close(tape.gradient(loss, x).numpy(), GRAD_STFT, atol=1e-4)


def test_complex_matrices_does_conjugate_for_adjoints():
    a = np.array([[1 + 2j, 3 - 1j], [0.5j, 2]], np.complex64)
    with tf.Graph().as_default():
        t = tf.constant(a)
        product, adjoint, sums, norm = _run(
            [
                tf.matmul(t, t, adjoint_a=True),
                tf.linalg.adjoint(t),
                tf.cumsum(t),
                tf.norm(t),
            ]
        )
        _close(product, [[5.25, 1 - 8j], [1 + 8j, 14]])
        _close(adjoint, [[1 - 2j, -0.5j], [3 + 1j, 2]])
        _close(sums, [[1 + 2j, 3 - 1j], [1 + 2.5j, 5 - 1j]])
        _close(norm, 4.3875)


def test_serialize_tensor_does_write_complex_tensors_as_tensorflow():
    with tf.Graph().as_default():
        data = tf.io.serialize_tensor(tf.constant([1 + 2j, 3], tf.complex64))
        value = _run(data)
        assert value.hex() == "080812041202080222100000803f000000400000404000000000"
        _close(_run(tf.io.parse_tensor(value, tf.complex64)), [1 + 2j, 3])


def test_frame_and_overlap_and_add_does_handle_edges_as_tensorflow():
    x = np.arange(10, dtype=np.int32)
    with tf.Graph().as_default():
        gap, padded, empty = _run(
            [
                tf.signal.frame(x, 3, 5, pad_end=True),
                tf.signal.frame(x, 12, 2, pad_end=True),
                tf.signal.frame(x, 0, 1),
            ]
        )
        np.testing.assert_array_equal(gap, [[0, 1, 2], [5, 6, 7]])
        assert padded.shape == (5, 12) and padded.dtype == np.int32
        np.testing.assert_array_equal(padded[4], [8, 9] + [0] * 10)
        assert empty.shape == (11, 0)
        spaced, none = _run(
            [
                tf.signal.overlap_and_add(x.reshape(2, 5), 7),
                tf.signal.overlap_and_add(np.zeros([3, 0, 4], np.float32), 2),
            ]
        )
        np.testing.assert_array_equal(spaced, [0, 1, 2, 3, 4, 0, 0, 5, 6, 7, 8, 9])
        np.testing.assert_array_equal(none, np.zeros([3, 2]))
        hamming, kbd, nothing = _run(
            [
                tf.signal.hamming_window(2, periodic=False),
                tf.signal.kaiser_bessel_derived_window(3),
                tf.signal.hann_window(0),
            ]
        )
        _close(hamming, [0.08, 0.08])
        _close(kbd, [0.70710677, 0.70710677])
        assert nothing.shape == (0,)


def test_overlap_and_add_does_sum_many_overlapping_frames():
    frames = np.random.default_rng(3).normal(size=(2, 50, 6))
    expected = np.zeros((2, 2 * 49 + 6))
    for i in range(50):
        expected[:, 2 * i : 2 * i + 6] += frames[:, i]
    with tf.Graph().as_default():
        t = tf.constant(frames)
        added = tf.signal.overlap_and_add(t, 2)
        (grad,) = tf.gradients(tf.reduce_sum(added * np.arange(104.0)), t)
        value, grad = _run([added, grad])
    _close(value, expected, atol=1e-12)
    _close(grad[1, 3], np.arange(6.0, 12.0))


def test_complex_gradients_does_flow_through_while_loop_and_cond():
    with tf.Graph().as_default():
        a, b = tf.constant([0.5, -1.0]), tf.constant([0.2, 0.3])
        z = tf.complex(a, b)
        _, acc = tf.while_loop(
            lambda i, s: i < 3, lambda i, s: (i + 1, s * z + tf.signal.fft(s)), [0, z]
        )
        c = tf.cond(tf.reduce_sum(a) > 0, lambda: acc * 2, lambda: tf.conj(acc))
        value, ga, gb = _run([c] + tf.gradients(tf.reduce_sum(tf.abs(c)), [a, b]))
        _close(value, [-2.2059 - 3.628j, 10.7881 + 6.824j], atol=1e-4)
        _close(ga, [2.7712, -31.877], atol=1e-3)
        _close(gb, [6.0655, 7.5462], atol=1e-3)


def test_fft_graphs_does_go_through_tensorflows_graph_def():
    pytest.importorskip("tensorboardX")
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2, 6], name="x")
        spectrum = tf.signal.ifft(tf.signal.fft(tf.signal.rfft(x, [6])))
        tf.identity(tf.signal.irfft(tf.conj(spectrum), [6]), name="y")
    graph_def = g.as_graph_def()
    assert {"FFT", "IFFT", "RFFT", "IRFFT", "Conj"} <= {node.op for node in graph_def.node}
    loaded = tf.Graph()
    with loaded.as_default():
        tf.import_graph_def(graph_def, name="")
    flipped = _run("y:0", {"x:0": X}, graph=loaded)
    _close(flipped, np.roll(X[:, ::-1], 1, axis=1))  # the conjugate spectrum reverses time


def test_complex_graphs_does_go_through_tensorflows_graph_def(tmp_path):
    pytest.importorskip("tensorboardX")
    g = tf.Graph()
    with g.as_default():
        a = tf.placeholder(tf.float64, [3], name="a")
        z = tf.complex(a, a * 2)
        tf.identity(tf.real(z) + tf.imag(z) + tf.angle(z) + tf.abs(z), name="y")
    graph_def = g.as_graph_def()
    ops = {node.op: node for node in graph_def.node}
    assert {"Complex", "Real", "Imag", "Angle", "ComplexAbs"} <= set(ops)
    assert ops["Complex"].attr["Tout"].type == tf.complex128.as_datatype_enum
    loaded = tf.Graph()
    with loaded.as_default():
        tf.import_graph_def(graph_def, name="")
    _close(_run("y:0", {"a:0": [1.0, -2.0, 0.5]}, graph=loaded), [6.3432167, -3.562308, 3.7251827])
    df.io.save_graph(loaded, tmp_path / "imported.dfg")  # no attribute TensorFlow's only


def test_tensor_protos_does_read_tensorflows_complex_value_fields():
    pytest.importorskip("tensorboardX")
    from dataflow.framework.tensorboard_protos import protos
    from dataflow.io.graph_def import make_ndarray

    p = protos()
    splat = p.TensorProto(dtype=8, scomplex_val=[1.0, 2.0])
    splat.tensor_shape.dim.add(size=3)
    pairs = p.TensorProto(dtype=18, dcomplex_val=[1.0, 2.0, 3.0, -4.0])
    pairs.tensor_shape.dim.add(size=2)
    np.testing.assert_array_equal(make_ndarray(splat), np.full(3, 1 + 2j, np.complex64))
    assert make_ndarray(splat).dtype == np.complex64
    np.testing.assert_array_equal(make_ndarray(pairs), [1 + 2j, 3 - 4j])
    assert make_ndarray(df.make_tensor_proto(np.complex128(1 - 1j))) == 1 - 1j


def test_complex_products_and_gathers_does_take_tensorflows_gradients():
    with tf.Graph().as_default():
        a = tf.constant([0.5, -1.2, 2.0])
        b = tf.constant([0.3, 0.7, 0.0])
        z = tf.complex(a, b)
        grads = []
        for y in (tf.reduce_prod(z), tf.gather(z, [2, 0]) * 2j):
            loss = tf.reduce_sum(tf.real(y) * 1.5 + tf.imag(y) * 0.5)
            grads.append(tf.gradients(loss, [a, b]))
        prod, gathered = _run(grads)
        _close(np.stack(prod), [[-2.9, 1.8, -1.22], [-3.3, -0.4, -0.39]], atol=1e-5)
        _close(np.stack(gathered), [[1.0, 0.0, 1.0], [-3.0, 0.0, -3.0]])
        segments = tf.unsorted_segment_sum(z, [1, 0, 1], 2)
        _close(_run(segments), [-1.2 + 0.7j, 2.5 + 0.3j])
