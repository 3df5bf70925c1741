"""Complex numbers with TensorFlow 2's bits: the angle, the modulus, products and quotients as
TensorFlow's CPU kernels round them, casts, the parts of real tensors, and the gradients of
``abs``, ``real``, ``imag`` and ``angle``.

Expected values were printed by TensorFlow 2.21 (eagerly, float32 results as their bits) for
the same inputs; numpy's own complex loops give other bits for several of them (noted below).
"""

import math

import numpy as np
import pytest

import dataflow as df


@pytest.fixture(autouse=True)
def eager():
    with df.eager_mode():
        yield


def bits(values) -> list:
    return [hex(v) for v in np.asarray(values, np.float32).reshape(-1).view(np.uint32).tolist()]


# Seven complex64 numbers (a packet of four and a tail of three, for the quotients).
A = [
    [0.001230153371579945, 0.2987455427646637],
    [-0.27413785457611084, -0.8905918598175049],
    [-0.454670786857605, -0.9916465282440186],
    [0.0601436011493206, 1.3402152061462402],
    [-0.49220651388168335, -0.6204748749732971],
    [0.4898420572280884, 0.35688701272010803],
    [0.1054142490029335, -0.9304680228233337],
]
B = [
    [-0.02925182320177555, 0.695303201675415],
    [-1.3442145586013794, -0.45761576294898987],
    [-1.9012227058410645, -1.289537787437439],
    [-1.8417350053787231, -0.23509113490581512],
    [-1.267446517944336, 0.27126434445381165],
    [0.15675108134746552, -0.18693093955516815],
    [-2.5167596340179443, -0.5386928915977478],
]


def complex64(pairs):
    parts = np.array(pairs, np.float32)
    return df.complex(parts[:, 0], parts[:, 1])


def test_angle_of_complex64_has_tensorflows_float32_bits():
    # tf.math.angle(tf.complex(1., 1.)) -> 0.7853982 (numpy's float32 arctan2: 0.7853981)
    assert bits(df.math.angle(df.complex(1.0, 1.0))) == ["0x3f490fdb"]
    # numpy's arctan2 differs in the last bit at elements 1, 3, 5 and 6
    assert bits(df.math.angle(complex64(A))) == [
        "0x3fc888ed",
        "0xbfef48c0",
        "0xc0000b6c",
        "0x3fc35257",
        "0xc00f7378",
        "0x3f21309c",
        "0xbfba9f46",
    ]


def test_angle_on_the_axes_and_at_infinity():
    inf = np.float32(np.inf)
    parts = np.array(
        [[0, 0], [-0.0, 0], [0, -0.0], [-1, -0.0], [0, 2], [0, -2], [inf, 1], [-inf, 1],
         [1, inf], [inf, inf], [-inf, -inf], [1, 0]],
        np.float32,
    )  # fmt: skip
    angles = df.math.angle(df.complex(parts[:, 0], parts[:, 1])).numpy()
    pi, half = np.float32(np.pi), np.float32(np.pi / 2)
    expected = [0.0, pi, -0.0, -pi, half, -half, 0.0, pi, half, np.float32(np.pi / 4),
                np.float32(-3 * np.pi / 4), 0.0]  # fmt: skip
    assert bits(angles) == bits(expected)
    assert np.isnan(df.math.angle(df.complex(np.float32(np.nan), np.float32(1))).numpy())


def test_modulus_of_complex64_and_complex128():
    # numpy's abs differs in the last bit at elements 2 and 4
    assert bits(df.abs(complex64(A))) == [
        "0x3e98f582",
        "0x3f6e8c5a",
        "0x3f8ba2ff",
        "0x3fabb85f",
        "0x3f4ac032",
        "0x3f1b2703",
        "0x3f6fb93d",
    ]
    z128 = df.constant(
        [-0.08827049412066117 + 0.32898914305260407j, -0.3359066005796194 + 1.4922798071056607j],
        df.complex128,
    )
    assert df.abs(z128).numpy().tolist() == [0.34062521395045386, 1.5296183403085437]
    assert df.math.angle(z128).numpy().tolist() == [1.832930669594243, 1.7922023870748354]
    # an infinite part makes an infinite modulus, even beside a nan
    both = df.complex(np.float32([np.inf, np.nan]), np.float32([np.nan, -np.inf]))
    assert df.abs(both).numpy().tolist() == [np.inf, np.inf]


def test_products_round_each_product_and_sum():
    product = (complex64(A) * complex64(B)).numpy()
    # numpy fuses a multiply and an add: its real parts differ at elements 1, 3, 4, 5 and 6
    assert bits(product.real) == [
        "0xbe54bda7",
        "0xbd1ff1a0",
        "0xbed423c0",
        "0x3e51351a",
        "0x3f4acae1",
        "0x3e12f0be",
        "0xbf443be4",
    ]
    assert bits(product.imag) == [
        "0xbc0129e4",
        "0x3fa94ad6",
        "0x401e2f9d",
        "0xc01ee0a2",
        "0x3f272480",
        "0xbd11eab2",
        "0x40123d17",
    ]
    assert bits(df.square(complex64(A)).numpy().real) == bits(
        (complex64(A) * complex64(A)).numpy().real
    )


def test_quotients_divide_packets_of_four_and_the_tail_apart():
    quotient = (complex64(A) / complex64(B)).numpy()
    # the first four as Eigen's packets, the last three as std::complex's operator
    assert bits(quotient.real) == [
        "0x3edb8f74",
        "0x3ec50f5e",
        "0x3ecfebdc",
        "0xbdfcfd93",
        "0x3e8ad41f",
        "0x3e2d43ed",
        "0x3d11e2c1",
    ]
    assert bits(quotient.imag) == [
        "0xbca24941",
        "0x3f081108",
        "0x3e7c0c87",
        "0xbf36409d",
        "0x3f0c2e30",
        "0x401ea0af",
        "0x3eb9633e",
    ]
    inverse = df.math.reciprocal(complex64(A)).numpy()
    assert bits(inverse.real) == [
        "0x3c61d2cb",
        "0xbea1a586",
        "0xbec39bc9",
        "0x3d08e031",
        "0xbf48e1f0",
        "0x3faab2c0",
        "0x3df63325",
    ]
    assert bits(inverse.imag)[4:] == ["0x3f7d3b78", "0xbf78bbb3", "0x3f87d268"]


def test_division_by_zero_in_a_packet_and_alone():
    # TF: a packet gives nan+nanj; a lone quotient (std::complex) gives inf+infj
    packet = df.constant([1 + 1j] * 4, df.complex64) / df.constant([0j, 1, 1, 1], df.complex64)
    assert np.isnan(packet.numpy()[0].real) and np.isnan(packet.numpy()[0].imag)
    assert packet.numpy()[1:].tolist() == [1 + 1j] * 3
    alone = (df.complex(1.0, 1.0) / df.complex(0.0, 0.0)).numpy()
    assert alone.real == np.inf and alone.imag == np.inf


def test_complex_arithmetic_in_a_graph_matches_eager_mode():
    expected = (complex64(A) / complex64(B) * complex64(A)).numpy()
    with df.Graph().as_default():
        x = df.placeholder(df.complex64, [7])
        y = x / complex64(B) * x
        with df.Session() as sess:
            feed = np.array(A, np.float32)
            for _ in range(4):  # the compiled plan too
                got = sess.run(y, {x: feed[:, 0] + 1j * feed[:, 1].astype(np.complex64)})
                assert bits(got.real) == bits(expected.real)
                assert bits(got.imag) == bits(expected.imag)


def test_casts_parts_and_conjugates():
    # tf.cast between complex64 and complex128 keeps each part's value
    wide = df.cast(df.constant([1.1 + 2.2j], df.complex64), df.complex128).numpy()
    assert wide.tolist() == [1.100000023841858 + 2.200000047683716j]
    assert df.cast(df.constant([1.5 + 2.2j], df.complex64), df.float32).numpy().tolist() == [1.5]
    assert df.cast(df.constant([1.5]), df.complex64).numpy().tolist() == [1.5 + 0j]
    reals = df.constant([1.0, -2.0])
    assert df.math.real(reals).numpy().tolist() == [1.0, -2.0]
    assert df.math.imag(reals).numpy().tolist() == [0.0, 0.0]
    assert bits(df.math.angle(reals)) == bits([0.0, math.pi])
    assert df.math.conj(df.constant([1 + 2j], df.complex64)).numpy().tolist() == [1 - 2j]
    assert df.math.conj(df.constant([1, 2])).numpy().tolist() == [1, 2]
    with pytest.raises(TypeError, match="must be consistent"):
        df.complex(df.constant(1.0), df.constant(2.0, df.float64))
    with pytest.raises(TypeError, match="must be consistent"):
        df.complex(1, 2)


def gradient(f, x):
    with df.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return tape.gradient(y, x).numpy().tolist()


def test_gradients_of_abs_real_imag_and_angle_as_tensorflow_2():
    z = df.constant([1 + 2j, 3 - 4j, 0j, -2.5 + 0j], df.complex64)
    # tf: abs -> z / |z| (0 at 0)
    assert gradient(df.abs, z) == [
        0.4472135901451111 + 0.8944271802902222j,
        0.6000000238418579 - 0.800000011920929j,
        0j,
        -1 + 0j,
    ]
    assert gradient(df.math.real, z) == [1 + 0j] * 4
    assert gradient(df.math.imag, z) == [1j] * 4
    angle = gradient(df.math.angle, z)
    assert angle[:2] == [
        -0.4000000059604645 + 0.20000000298023224j,
        0.1599999964237213 + 0.11999999731779099j,
    ]
    assert np.isnan(angle[2].real) and np.isnan(angle[2].imag)
    # -0.4j with a real part of +0, as -grad * reciprocal(Im + i Re) gives it
    assert angle[3] == -0.4000000059604645j and not np.signbit(angle[3].real)
    assert gradient(lambda v: df.square(df.abs(v)), z) == [2 + 4j, 6 - 8j, 0j, -5 + 0j]
    assert gradient(df.abs, df.cast(z, df.complex128))[:2] == [
        0.4472135954999579 + 0.8944271909999159j,
        0.6 - 0.8j,
    ]
    a, b = df.constant([1.0, 2.0]), df.constant([3.0, -1.0])
    with df.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        modulus = df.abs(df.complex(a, b))
    assert tape.gradient(modulus, a).numpy().tolist() == [0.3162277638912201, 0.8944271802902222]
    assert tape.gradient(modulus, b).numpy().tolist() == [0.9486832618713379, -0.4472135901451111]
