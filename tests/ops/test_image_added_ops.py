"""Behaviour of the image and special-function names added to close tf.compat.v1 surface gaps
(expected values from TensorFlow 2.21)."""

import numpy as np
import pytest

import dataflow as df

tf = df.compat.v1


def _run(*tensors, feed=None):
    with tf.Session(graph=tensors[0].graph) as sess:
        out = sess.run(list(tensors), feed_dict=feed)
    return out[0] if len(out) == 1 else out


def _image():
    return (np.arange(4 * 6, dtype=np.float32).reshape(4, 6, 1) * 1.5) % 7


# -- resizing --------------------------------------------------------------------------------------
def test_resize_bicubic_does_match_tensorflows_kernel():
    with tf.Graph().as_default():
        legacy = tf.image.resize_bicubic(_image()[None], [3, 4])
        keys = tf.image.resize_bicubic(_image()[None], [3, 4], half_pixel_centers=True)
        legacy, keys = _run(legacy, keys)
    np.testing.assert_allclose(
        legacy[0, ..., 0],
        [
            [0.0, 2.25, 4.5, 3.390625],
            [2.7401984, 4.1201453, 5.038963, 1.7191339],
            [5.482024, 1.1885979, 2.5937047, 5.409054],
        ],
        rtol=1e-6,
        atol=1e-6,
    )
    np.testing.assert_allclose(
        keys[0, ..., 0],
        [
            [0.45630538, 2.892404, 5.125574, 1.6121136],
            [3.4210765, 2.9350586, 3.5649414, 3.0789235],
            [4.887886, 1.3744262, 3.6075957, 6.0436945],
        ],
        rtol=1e-6,
        atol=1e-6,
    )


def test_resize_bicubic_does_have_tensorflows_gradient():
    with tf.Graph().as_default():
        x = tf.constant(_image()[None])
        y = tf.image.resize_bicubic(x, [3, 5])
        grad = _run(tf.gradients(y * y, x)[0])
    np.testing.assert_allclose(
        grad[0, ..., 0],
        [
            [-0.87079555, 1.8257939, 4.2480516, 8.176024, 8.446323, 0.7145383],
            [3.0740235, 5.825674, 5.9919376, 4.398342, 2.7298574, 2.7008393],
            [5.641373, 3.7763853, 3.641341, 3.7666667, 4.203635, 4.695792],
            [7.0453196, 1.4396119, 1.0623847, 2.6640866, 4.8677874, 5.7408705],
        ],
        rtol=1e-5,
        atol=1e-5,
    )


def test_resize_area_does_average_the_covered_pixels():
    with tf.Graph().as_default():
        images = tf.placeholder(tf.float32, [None, None, None, 1])
        y = tf.image.resize_area(images, [3, 4])
        assert y.shape.as_list() == [None, 3, 4, 1]
        got = _run(y, feed={images: _image()[None]})
    np.testing.assert_allclose(
        got[0, ..., 0],
        [[1.0, 3.0, 4.916667, 2.25], [3.5, 3.1666665, 3.3333335, 3.0], [4.25, 1.5833333, 3.5, 5.5]],
        rtol=1e-6,
    )


def test_resize_images_does_default_to_bilinear_and_take_every_method():
    assert tf.image.ResizeMethod.BILINEAR == 0 and tf.image.ResizeMethod.AREA == 3
    assert tf.image.resize is tf.image.resize_images
    with tf.Graph().as_default():
        img = _image()
        by_number = tf.image.resize_images(img, [3, 4], method=tf.image.ResizeMethod.AREA)
        by_name = tf.image.resize(img, [3, 4], method="area")
        nearest = tf.image.resize(img.astype(np.uint8), [3, 3], method=1)
        assert nearest.dtype == tf.uint8
        a, b = _run(by_number, by_name)
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="not implemented"):
        tf.image.resize_images(_image(), [3, 4], method=7)


def test_resize_images_does_preserve_the_aspect_ratio():
    with tf.Graph().as_default():
        y = tf.image.resize_images(_image(), [8, 8], preserve_aspect_ratio=True, method="area")
        assert y.shape.as_list() == [5, 8, 1]
        got = _run(y)
    np.testing.assert_allclose(
        got[:2, :, 0],
        [
            [0.0, 1.0, 2.0, 3.0, 4.5, 5.5, 4.1666665, 0.5],
            [1.5, 2.5, 3.5000002, 4.5, 6.0, 3.4999998, 2.1666665, 2.0],
        ],
        rtol=1e-6,
    )


def test_resize_image_with_pad_does_fit_and_pad_with_zeros():
    with tf.Graph().as_default():
        tall = tf.image.resize_image_with_pad(_image(), 5, 5)
        wide = tf.image.resize_image_with_pad(_image(), 3, 9, method=1)
        tall, wide = _run(tall, wide)
    np.testing.assert_allclose(
        tall[..., 0],
        [
            [0.0, 1.8000001, 3.6000001, 5.4, 1.599999],
            [2.6666667, 4.0, 3.9333334, 2.933333, 2.866667],
            [5.3333335, 1.9999998, 1.9333336, 3.7333336, 5.533334],
            [0.0, 0.0, 0.0, 0.0, 0.0],
            [0.0, 0.0, 0.0, 0.0, 0.0],
        ],
        rtol=1e-5,
    )
    np.testing.assert_array_equal(
        wide[..., 0],
        [
            [0.0, 0.0, 0.0, 1.5, 4.5, 6.0, 0.0, 0.0, 0.0],
            [0.0, 0.0, 2.0, 3.5, 6.5, 1.0, 0.0, 0.0, 0.0],
            [0.0, 0.0, 4.0, 5.5, 1.5, 3.0, 0.0, 0.0, 0.0],
        ],
    )
    with pytest.raises(ValueError, match="must be > 0"):
        tf.image.resize_image_with_pad(_image(), 0, 5)


# -- colour spaces, hue, saturation, gamma ---------------------------------------------------------
RGB = np.array(
    [
        [[0.5, 0.5, 0.5], [0.0, 0.0, 0.0], [1.0, 0.2, 1.0], [0.3, 0.9, 0.7]],
        [[0.9, 0.1, 0.4], [0.2, 0.6, 0.1], [0.25, 0.3, 0.95], [1.0, 1.0, 0.0]],
    ],
    np.float32,
)
RGB_U8 = (RGB * 255).astype(np.uint8)
COLOUR = {
    "hsv": [
        [0, 0, 0.5],
        [0, 0, 0],
        [0.8333333, 0.8, 1],
        [0.4444444, 0.6666666, 0.9],
        [0.9375, 0.8888888, 0.9],
        [0.3, 0.8333333, 0.6],
        [0.6547619, 0.7368421, 0.95],
        [0.1666667, 1, 1],
    ],
    "back": [
        [0.5, 0.5, 0.5],
        [0, 0, 0],
        [1, 0.2, 1],
        [0.3, 0.9, 0.7],
        [0.9, 0.1, 0.4],
        [0.2, 0.6, 0.1],
        [0.25, 0.3, 0.95],
        [1, 1, 0],
    ],
    "grad": [
        [7, 0, -4],
        [3, 0, 0],
        [3.608333, -2, -0.2083333],
        [-2.314815, 3.555556, 0.2777778],
        [3.325039, -2.092014, -0.2083334],
        [-0.3333333, 3.622222, -3.066667],
        [-1.884175, -0.2380952, 3.571023],
        [2.833333, 0.1666667, 0],
    ],
    "yiq": [
        [0.5, 0, -1.832843e-05],
        [0, 0, 0],
        [0.5304, 0.2196454, 0.4181523],
        [0.6978, -0.2932715, -0.1891729],
        [0.3734, 0.3803172, 0.2625562],
        [0.4234, -0.07768828, -0.2402218],
        [0.35915, -0.2386686, 0.1916937],
        [0.886, 0.3213439, -0.3112362],
    ],
    "yuv": [
        [0.5, 0, 7.450581e-09],
        [0, 0, 0],
        [0.5304, 0.2310953, 0.4119721],
        [0.6978, 0.001082654, -0.3489831],
        [0.3734, 0.01309017, 0.4619772],
        [0.4234, -0.1591487, -0.195985],
        [0.35915, 0.2907638, -0.09575544],
        [0.886, -0.4360104, 0.1000103],
    ],
    "from_yiq": [
        [1.288406, 0.04039147, 0.7987452],
        [0, 0, 0],
        [1.812022, 0.2983932, 2.482882],
        [1.594965, -0.3978545, 0.4968952],
        [1.243929, 0.613917, 1.471018],
        [0.8356743, -0.02792813, -0.2936211],
        [1.12658, -0.4464478, 1.536997],
        [1.955986, 0.7279872, -0.1067402],
    ],
    "from_yuv": [
        [1.069942, 0.0123679, 1.516031],
        [0, 0, 0],
        [2.139883, 0.3404497, 1.406412],
        [1.097918, -0.4616134, 2.128856],
        [1.355953, 0.628287, 1.103206],
        [0.3139883, -0.09484759, 1.419237],
        [1.332889, -0.4199834, 0.8596185],
        [1, 0.6053576, 3.032062],
    ],
    "hue": [
        [0.5, 0.5, 0.5],
        [0, 0, 0],
        [1, 0.8400002, 0.2],
        [0.58, 0.3, 0.9],
        [0.5599998, 0.9, 0.1],
        [0.1, 0.3, 0.6],
        [0.95, 0.25, 0.44],
        [0, 1, 0.8000002],
    ],
    "hue_u8": [
        [127, 127, 127],
        [0, 0, 0],
        [51, 255, 112],
        [229, 76, 81],
        [25, 229, 213],
        [153, 25, 140],
        [201, 242, 63],
        [76, 0, 255],
    ],
    "sat": [
        [0.5, 0.5, 0.5],
        [0, 0, 0],
        [1, 0, 1],
        [0, 0.9, 0.6000001],
        [0.9, 0, 0.3375],
        [0.12, 0.6, 0],
        [0, 0.06785711, 0.95],
        [1, 1, 0],
    ],
    "sat_u8": [
        [127, 127, 127],
        [0, 0, 0],
        [255, 173, 255],
        [168, 229, 209],
        [229, 147, 178],
        [112, 153, 101],
        [170, 175, 242],
        [255, 255, 153],
    ],
    "gamma": [
        [0.1741101, 0.1741101, 0.1741101],
        [0, 0, 0],
        [0.8, 0.02319295, 0.8],
        [0.05659222, 0.6344881, 0.3650107],
        [0.6344881, 0.005047658, 0.1065668],
        [0.02319295, 0.2600296, 0.005047658],
        [0.03789291, 0.05659222, 0.7146311],
        [0.8, 0.8, 0],
    ],
    "gamma_u8": [
        [234, 234, 234],
        [0, 0, 0],
        [255, 148, 255],
        [181, 255, 255],
        [255, 104, 210],
        [148, 255, 104],
        [165, 181, 255],
        [255, 255, 0],
    ],
}


def _pixels(t):
    return np.asarray(_run(t)).reshape(-1, 3)


def test_rgb_to_hsv_and_back_does_match_tensorflow():
    with tf.Graph().as_default():
        hsv = tf.image.rgb_to_hsv(RGB)
        back = tf.image.hsv_to_rgb(hsv)
        assert hsv.shape.as_list() == [2, 4, 3]
        np.testing.assert_allclose(_pixels(hsv), COLOUR["hsv"], rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(_pixels(back), COLOUR["back"], rtol=1e-6, atol=1e-6)


def test_rgb_to_hsv_does_have_tensorflows_gradient_away_from_grey():
    with tf.Graph().as_default():
        x = tf.constant(RGB)
        hsv = tf.image.rgb_to_hsv(x)
        grad = _pixels(tf.gradients(tf.reduce_sum(hsv * np.float32([1, 2, 3])), x)[0])
    # Pixel 0 is grey, where hue has no derivative (TensorFlow's formula gives [7, 0, -4]); in
    # pixel 7, (1, 1, 0), a tie, TensorFlow's formula drops blue's derivative (saturation's, -2).
    np.testing.assert_allclose(grad[1:7], COLOUR["grad"][1:7], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grad[7][2], -2.0, rtol=1e-6)
    assert np.isfinite(grad).all()


@pytest.mark.parametrize("name", ["rgb_to_yiq", "rgb_to_yuv", "yiq_to_rgb", "yuv_to_rgb"])
def test_yiq_and_yuv_conversions_do_match_tensorflow(name):
    key = {"rgb_to_yiq": "yiq", "rgb_to_yuv": "yuv"}.get(name, "from_" + name[:3])
    with tf.Graph().as_default():
        out = getattr(tf.image, name)(RGB)
        np.testing.assert_allclose(_pixels(out), COLOUR[key], rtol=1e-6, atol=1e-6)
        with pytest.raises(TypeError, match=name):
            getattr(tf.image, name)(RGB_U8)
        with pytest.raises(ValueError, match="last dimension"):
            getattr(tf.image, name)(RGB[..., :2])


def test_adjust_hue_does_turn_the_hue_in_the_images_dtype():
    with tf.Graph().as_default():
        turned = tf.image.adjust_hue(RGB, 0.3)
        turned_u8 = tf.image.adjust_hue(RGB_U8, -0.45)
        assert turned_u8.dtype == tf.uint8
        np.testing.assert_allclose(_pixels(turned), COLOUR["hue"], rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(_pixels(turned_u8), COLOUR["hue_u8"])
        with pytest.raises(ValueError, match=r"\[-1, 1\]"):
            tf.image.adjust_hue(RGB, 1.5)
        with pytest.raises(LookupError, match="AdjustHue"):
            x = tf.constant(RGB)
            tf.gradients(tf.image.adjust_hue(x, 0.1), x)


def test_adjust_saturation_does_scale_and_clip_the_saturation():
    with tf.Graph().as_default():
        more = tf.image.adjust_saturation(RGB, 1.7)
        less = tf.image.adjust_saturation(RGB_U8, 0.4)
        np.testing.assert_allclose(_pixels(more), COLOUR["sat"], rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(_pixels(less), COLOUR["sat_u8"])


def test_adjust_gamma_does_correct_and_saturate():
    with tf.Graph().as_default():
        dark = tf.image.adjust_gamma(RGB, 2.2, 0.8)
        bright = tf.image.adjust_gamma(RGB_U8, 0.5, 1.3)
        same = tf.image.adjust_gamma(RGB.astype(np.float64))
        assert same.dtype == tf.float64
        np.testing.assert_allclose(_pixels(dark), COLOUR["gamma"], rtol=1e-5, atol=1e-7)
        np.testing.assert_array_equal(_pixels(bright), COLOUR["gamma_u8"])
        np.testing.assert_allclose(_run(same), RGB, rtol=1e-7)
        with pytest.raises(ValueError, match="non-negative"):
            tf.image.adjust_gamma(RGB, -1.0)
        gamma = tf.placeholder(tf.float32, [])
        checked = tf.image.adjust_gamma(RGB, gamma)
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="Gamma"):
            sess.run(checked, {gamma: -2.0})


def test_random_hue_and_saturation_do_draw_within_their_range():
    with tf.Graph().as_default():
        image = tf.constant(RGB)
        hue = tf.image.random_hue(image, 0.2, seed=3)
        saturation = tf.image.random_saturation(image, 0.5, 1.5, seed=3)
        with tf.Session() as sess:
            for _ in range(3):
                h, s = sess.run([tf.image.rgb_to_hsv(hue), tf.image.rgb_to_hsv(saturation)])
                shift = np.mod(h[0, 2, 0] - COLOUR["hsv"][2][0] + 0.5, 1.0) - 0.5
                assert abs(shift) <= 0.2 + 1e-6
                factor = s[1, 0, 1] / COLOUR["hsv"][4][1]
                assert 0.5 - 1e-6 <= factor <= 1.5 + 1e-6
        with pytest.raises(ValueError, match="max_delta must be <= 0.5"):
            tf.image.random_hue(image, 0.7)
        with pytest.raises(ValueError, match="upper must be > lower"):
            tf.image.random_saturation(image, 1.0, 0.5)


# -- differences and quality metrics -------------------------------------------------------------
SMALL = np.arange(2 * 3 * 4 * 2, dtype=np.float32).reshape(2, 3, 4, 2) ** 1.5 % 7


def _pair():
    rng = np.random.default_rng(7)
    a = rng.random((2, 24, 26, 3)).astype(np.float32)
    b = np.clip(a + rng.normal(0, 0.1, a.shape), 0, 1).astype(np.float32)
    return a, b


def test_total_variation_does_sum_neighbour_differences_per_image():
    with tf.Graph().as_default():
        batch = tf.image.total_variation(SMALL)
        one = tf.image.total_variation(SMALL[0])
        assert batch.shape.as_list() == [2] and one.shape.as_list() == []
        np.testing.assert_allclose(_run(batch), [84.87786865234375, 92.91793823242188])
        np.testing.assert_allclose(_run(one), 84.87786865234375)
        x = tf.constant(SMALL[:1, :2, :2, :1])
        grad = _run(tf.gradients(tf.image.total_variation(x), x)[0])
    v = SMALL[0, :2, :2, 0]
    down, across = np.sign(v[1] - v[0]), np.sign(v[:, 1] - v[:, 0])
    expected = np.zeros((2, 2), np.float32)
    expected[0] -= down
    expected[1] += down
    expected[:, 0] -= across
    expected[:, 1] += across
    np.testing.assert_array_equal(grad[0, ..., 0], expected)
    with pytest.raises(ValueError, match="3 or 4"):
        tf.image.total_variation(np.zeros([3, 3]))


def test_image_gradients_does_take_differences_with_a_zero_edge():
    with tf.Graph().as_default():
        dy, dx = tf.image.image_gradients(SMALL)
        dy, dx = _run(dy, dx)
    np.testing.assert_allclose(
        dy[1, :, :, 1],
        [
            [-5.4294281005859375, 3.7666778564453125, -1.1075592041015625, 0.9542083740234375],
            [2.9575347900390625, -2.0929412841796875, -0.1930389404296875, -5.3391571044921875],
            [0.0, 0.0, 0.0, 0.0],
        ],
        rtol=1e-6,
    )
    np.testing.assert_allclose(
        dx[1, :, :, 1],
        [
            [-5.703887939453125, 1.8736572265625, 2.430938720703125, 0.0],
            [3.492218017578125, -3.000579833984375, 4.492706298828125, 0.0],
            [-1.558258056640625, -1.100677490234375, -0.653411865234375, 0.0],
        ],
        rtol=1e-6,
    )
    with pytest.raises(ValueError, match="4D"):
        tf.image.image_gradients(SMALL[0])


def test_sobel_edges_does_filter_each_channel_with_a_reflected_border():
    with tf.Graph().as_default():
        edges = tf.image.sobel_edges(SMALL)
        assert edges.shape.as_list() == [2, 3, 4, 2, 2]
        got = _run(edges)
    np.testing.assert_allclose(
        got[0, :, :, 0, :],
        [
            [[0.0, 0.0], [0.0, 11.883609771728516], [0.0, -4.74212646484375], [0.0, 0.0]],
            [
                [9.078207015991211, 0.0],
                [12.520925521850586, 15.32632827758789],
                [16.916749954223633, -3.789020538330078],
                [17.869855880737305, 0.0],
            ],
            [[0.0, 0.0], [0.0, 18.769046783447266], [0.0, -2.8359146118164062], [0.0, 0.0]],
        ],
        rtol=1e-6,
        atol=1e-6,
    )
    with pytest.raises(TypeError, match="float32 or float64"):
        tf.image.sobel_edges(SMALL.astype(np.int32))


def test_psnr_does_match_tensorflow_for_floats_and_integers():
    a, b = _pair()
    with tf.Graph().as_default():
        floats = tf.image.psnr(a, b, 1.0)
        ints = tf.image.psnr((a * 255).astype(np.uint8), (b * 255).astype(np.uint8), 255)
        np.testing.assert_allclose(
            _run(floats), [20.499046325683594, 20.630123138427734], rtol=1e-6
        )
        np.testing.assert_allclose(_run(ints), [20.495159149169922, 20.62763023376465], rtol=1e-6)
        with pytest.raises(ValueError, match="not compatible"):
            tf.image.psnr(a, b[:, :, :20], 1.0)


def test_ssim_does_match_tensorflow_with_and_without_an_index_map():
    a, b = _pair()
    with tf.Graph().as_default():
        mean = tf.image.ssim(a, b, 1.0)
        ints = tf.image.ssim((a * 255).astype(np.uint8), (b * 255).astype(np.uint8), 255)
        index_map = tf.image.ssim(a, b, 1.0, filter_size=5, filter_sigma=1.0, return_index_map=True)
        assert index_map.shape.as_list() == [2, 20, 22]
        mean, ints, index_map = _run(mean, ints, index_map)
    np.testing.assert_allclose(mean, [0.9467721581459045, 0.9476022720336914], rtol=1e-6)
    np.testing.assert_allclose(ints, [0.9466700553894043, 0.9475191235542297], rtol=1e-6)
    np.testing.assert_allclose(
        index_map[0, :3, :3],
        [
            [0.9393168091773987, 0.9290658831596375, 0.9269795417785645],
            [0.9539723992347717, 0.9479764103889465, 0.9491594433784485],
            [0.9615340828895569, 0.9507601261138916, 0.9470978379249573],
        ],
        rtol=1e-5,
    )
    with tf.Graph().as_default(), pytest.raises(ValueError, match="at least 11x11"):
        tf.image.ssim(a[:, :8], b[:, :8], 1.0)


def test_ssim_does_differentiate_towards_the_other_image():
    a, b = _pair()
    with tf.Graph().as_default():
        x = tf.Variable(a[:1, :12, :12])
        loss = 1.0 - tf.image.ssim(x, b[:1, :12, :12], 1.0)[0]
        step = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            before = sess.run(loss)
            for _ in range(5):
                sess.run(step)
            assert sess.run(loss) < before


def test_ssim_multiscale_does_match_tensorflow():
    rng = np.random.default_rng(7)
    rng.random((2, 24, 26, 3))
    rng.normal(0, 0.1, (2, 24, 26, 3))
    big1 = rng.random((1, 45, 50, 1)).astype(np.float32)
    big2 = np.clip(big1 + rng.normal(0, 0.05, big1.shape), 0, 1).astype(np.float32)
    with tf.Graph().as_default():
        three = tf.image.ssim_multiscale(
            big1, big2, 1.0, power_factors=(0.3, 0.4, 0.3), filter_size=7
        )
        five = tf.image.ssim_multiscale(
            np.tile(big1, [1, 4, 4, 1]), np.tile(big2, [1, 4, 4, 1]), 1.0
        )
        np.testing.assert_allclose(_run(three), [0.9851976633071899], rtol=1e-6)
        np.testing.assert_allclose(_run(five), [0.987644612789154], rtol=1e-5)
        with pytest.raises(ValueError, match="known, equal height and width"):
            tf.image.ssim_multiscale(tf.placeholder(tf.float32, [1, None, None, 1]), big2, 1.0)


# -- non-max suppression ---------------------------------------------------------------------------
def _boxes():
    rng = np.random.default_rng(11)
    corner = rng.random((40, 2)) * 0.8
    size = rng.random((40, 2)) * 0.4 + 0.05
    boxes = np.concatenate([corner, corner + size], 1).astype(np.float32)
    boxes[3] = boxes[3][[2, 3, 0, 1]]  # given by the other two corners
    scores = rng.random(40).astype(np.float32)
    scores[5] = scores[7]  # a tie: the lower index goes first
    return rng, boxes, scores


def test_non_max_suppression_does_select_greedily_as_tensorflow():
    _, boxes, scores = _boxes()
    with tf.Graph().as_default():
        top = tf.image.non_max_suppression(boxes, scores, 10, 0.3)
        above = tf.image.non_max_suppression(boxes, scores, 30, 0.5, score_threshold=0.4)
        none = tf.image.non_max_suppression(boxes, scores, 0)
        assert top.dtype == tf.int32 and top.shape.as_list() == [None]
        top, above, none = _run(top, above, none)
    np.testing.assert_array_equal(top, [5, 7, 16, 24, 39, 33, 35, 13, 1, 14])
    np.testing.assert_array_equal(
        above,
        [5, 7, 16, 37, 24, 39, 33, 35, 13, 1, 14, 28, 17, 21, 26, 34, 25, 4, 19, 15, 30, 27]
        + [32, 3, 10, 36, 29, 2],
    )
    assert none.shape == (0,)


def test_non_max_suppression_does_check_its_inputs():
    _, boxes, scores = _boxes()
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="4 columns"):
            tf.image.non_max_suppression(boxes[:, :3], scores, 3)
        bad = tf.image.non_max_suppression(boxes, scores, 3, iou_threshold=1.5)
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match=r"\[0, 1\]"):
            sess.run(bad)


def test_non_max_suppression_with_scores_does_soft_nms():
    _, boxes, scores = _boxes()
    with tf.Graph().as_default():
        indices, kept = tf.image.non_max_suppression_with_scores(
            boxes, scores, 12, 0.5, 0.1, soft_nms_sigma=0.5
        )
        indices, kept = _run(indices, kept)
    np.testing.assert_array_equal(indices, [5, 7, 16, 39, 24, 35, 1, 28, 33, 13, 14, 26])
    np.testing.assert_allclose(
        kept,
        [0.9793815612792969, 0.9558094143867493, 0.8987084031105042, 0.8629767298698425]
        + [0.8204255700111389, 0.8031522035598755, 0.7956167459487915, 0.7732981443405151]
        + [0.7493425011634827, 0.7469615340232849, 0.7463230490684509, 0.7446787357330322],
        rtol=1e-6,
    )


def test_non_max_suppression_overlaps_does_use_the_given_overlaps():
    rng, _, scores = _boxes()
    overlaps = rng.random((40, 40)).astype(np.float32)
    overlaps = (overlaps + overlaps.T) / 2
    with tf.Graph().as_default():
        got = _run(tf.image.non_max_suppression_overlaps(overlaps, scores, 8, 0.6, 0.2))
    np.testing.assert_array_equal(got, [5, 37, 24, 13, 28, 6])


def test_non_max_suppression_padded_does_pad_and_batch():
    _, boxes, scores = _boxes()
    with tf.Graph().as_default():
        indices, valid = tf.image.non_max_suppression_padded(boxes, scores, 10, 0.3)
        batch = np.stack([boxes, boxes[::-1]]), np.stack([scores, scores[::-1] * 0.9])
        padded, counts = tf.image.non_max_suppression_padded(
            *batch, 12, 0.4, score_threshold=0.2, pad_to_max_output_size=True
        )
        assert padded.shape.as_list() == [2, 12] and counts.shape.as_list() == [2]
        indices, valid, padded, counts = _run(indices, valid, padded, counts)
        with pytest.raises(ValueError, match="must be True for batched input"):
            tf.image.non_max_suppression_padded(*batch, 12)
    np.testing.assert_array_equal(indices, [5, 7, 16, 24, 39, 33, 35, 13, 1, 14])
    assert valid == 10
    np.testing.assert_array_equal(
        padded,
        [
            [5, 7, 16, 37, 24, 39, 33, 35, 13, 1, 14, 28],
            [32, 34, 23, 2, 15, 0, 6, 4, 26, 38, 25, 11],
        ],
    )
    np.testing.assert_array_equal(counts, [12, 12])


def test_combined_non_max_suppression_does_merge_classes_as_tensorflow():
    rng, _, _ = _boxes()
    rng.random((40, 40))
    boxes = rng.random((2, 15, 3, 4)).astype(np.float32)
    boxes[..., 2:] = boxes[..., :2] + 0.3
    boxes[0, 0, 0] = [-0.1, 0.2, 0.5, 1.3]
    scores = rng.random((2, 15, 3)).astype(np.float32)
    with tf.Graph().as_default():
        out = tf.image.combined_non_max_suppression(boxes, scores, 4, 7, 0.3, 0.1)
        assert [t.shape.as_list() for t in out] == [[2, 7, 4], [2, 7], [2, 7], [2]]
        per_class = tf.image.combined_non_max_suppression(
            boxes[:, :, :1], scores, 2, 20, 0.3, 0.5, pad_per_class=True, clip_boxes=False
        )
        assert per_class[1].shape.as_list() == [2, 6]
        b, s, c, v, b2, s2, c2, v2 = _run(*out, *per_class)
    np.testing.assert_allclose(
        b[0, [0, 1, 6]],
        [[0.5191103, 0.1993263, 0.8191104, 0.4993263], [0.7760823, 0.0986686, 1.0, 0.3986686]]
        + [[0.0, 0.2, 0.5, 1.0]],
        rtol=1e-6,
    )
    np.testing.assert_allclose(
        s[1],
        [0.9996072, 0.993021, 0.9652209, 0.9633501, 0.9383596, 0.9168198, 0.9155442],
        rtol=1e-6,
    )
    np.testing.assert_array_equal(c, [[1, 0, 0, 2, 2, 2, 0], [2, 0, 1, 2, 2, 1, 0]])
    np.testing.assert_array_equal(v, [7, 7])
    np.testing.assert_allclose(b2[0, 1], [0.7760823, 0.0986686, 1.0760822, 0.3986686], rtol=1e-6)
    np.testing.assert_allclose(
        s2[0], [0.9731449, 0.9424003, 0.9275097, 0.8983492, 0.888801, 0.8400704], rtol=1e-6
    )
    np.testing.assert_array_equal(c2, [[1, 0, 0, 2, 2, 1], [2, 0, 1, 2, 1, 0]])
    np.testing.assert_array_equal(v2, [6, 6])


# -- crop_and_resize -------------------------------------------------------------------------------
def _crops_input():
    image = np.random.default_rng(5).random((2, 6, 7, 2)).astype(np.float32)
    boxes = np.float32(
        [[0.1, 0.2, 0.8, 0.9], [0.9, 0.8, 0.0, 0.1], [-0.2, 0.3, 0.5, 1.4], [0.3, 0.3, 0.3, 0.3]]
    )
    return image, boxes, np.int32([0, 1, 1, 0])


def test_crop_and_resize_does_sample_bilinearly_with_extrapolation():
    image, boxes, indices = _crops_input()
    with tf.Graph().as_default():
        crops = tf.image.crop_and_resize(image, boxes, indices, [3, 4], extrapolation_value=-1)
        assert crops.shape.as_list() == [4, 3, 4, 2] and crops.dtype == tf.float32
        crops = _run(crops)
    np.testing.assert_allclose(
        crops[1, :, :, 0],  # a flipped box
        [
            [0.5660022, 0.2527842, 0.4264372, 0.4306886],
            [0.7276437, 0.4992102, 0.6770625, 0.3093103],
            [0.9758242, 0.7483323, 0.0009199, 0.3821617],
        ],
        rtol=1e-5,
        atol=1e-7,
    )
    np.testing.assert_allclose(
        crops[2, :, :, 1],  # partly outside the image
        [[-1, -1, -1, -1], [0.5447247, 0.161534, -1, -1], [0.3451983, 0.2772545, -1, -1]],
        rtol=1e-6,
    )


def test_crop_and_resize_does_nearest_and_single_pixel_crops():
    image, boxes, indices = _crops_input()
    with tf.Graph().as_default():
        nearest = tf.image.crop_and_resize(image, boxes, indices, [3, 4], method="nearest")
        single = tf.image.crop_and_resize(image, boxes, box_ind=indices, crop_size=[1, 1])
        ints = tf.image.crop_and_resize((image * 255).astype(np.uint8), boxes, indices, [2, 2])
        assert ints.dtype == tf.float32
        nearest, single = _run(nearest, single)
    np.testing.assert_allclose(
        nearest[0, :, :, 0],
        [
            [0.3924047, 0.5555961, 0.8796512, 0.6791815],
            [0.7074956, 0.2032528, 0.8062154, 0.1490386],
            [0.7414217, 0.2218886, 0.1070895, 0.6353868],
        ],
        rtol=1e-6,
    )
    np.testing.assert_allclose(
        single[:, 0, 0, 0], [0.29708704, 0.47925386, 0.86006266, 0.58201134], rtol=1e-6
    )


def test_crop_and_resize_does_differentiate_image_and_boxes_as_tensorflow():
    image, boxes, indices = _crops_input()
    with tf.Graph().as_default():
        x, b = tf.constant(image), tf.constant(boxes)
        crops = tf.image.crop_and_resize(x, b, indices, [3, 4], extrapolation_value=-1)
        grad_image, grad_boxes = _run(*tf.gradients(tf.reduce_sum(crops * crops), [x, b]))
    np.testing.assert_allclose(grad_image[1, :, :, 0].sum(), 15.600209, rtol=1e-5)
    np.testing.assert_allclose(grad_image.sum(), 74.367355, rtol=1e-5)
    np.testing.assert_allclose(
        grad_boxes,
        [
            [3.9095333, -5.4691854, 0.956483, 2.8725705],
            [-11.57703, 2.1419477, -6.0559039, 0.0306301],
            [-0.6588159, -4.0889244, -9.116456, 0.0],
            [0.3741282, 1.7084373, 0.3741283, 1.7084374],
        ],
        rtol=1e-4,
        atol=1e-5,
    )


def test_crop_and_resize_does_check_its_arguments():
    image, boxes, indices = _crops_input()
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="both"):
            tf.image.crop_and_resize(image, boxes, indices, [2, 2], box_indices=indices)
        with pytest.raises(ValueError, match="method"):
            tf.image.crop_and_resize(image, boxes, indices, [2, 2], method="area")
        with pytest.raises(ValueError, match="4-D"):
            tf.image.crop_and_resize(image[0], boxes, indices, [2, 2])
        wrong = tf.image.crop_and_resize(image, boxes, [0, 1, 2, 0], [2, 2])
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="box_ind"):
            sess.run(wrong)


# -- drawing boxes, glimpses, distorted crops ------------------------------------------------------
DRAWN_BOXES = np.float32(
    [
        [[0.1, 0.2, 0.8, 0.9], [-0.3, -0.5, 0.4, 0.5], [0.5, 0.5, 0.2, 0.9], [0.6, 0.1, 1.4, 0.5]],
        [[1.2, 0.0, 1.5, 0.5], [0.0, 0.0, 1.0, 1.0], [-0.05, 0.3, 0.3, 0.3], [0.2, 0.2, 0.2, 0.2]],
    ]
)


def _as_letters(image, letters):
    return ["".join(letters[tuple(round(float(v), 2) for v in px)] for px in row) for row in image]


def test_draw_bounding_boxes_does_draw_outlines_in_tensorflows_colours():
    images = np.zeros((2, 6, 7, 3), np.float32) + 0.25
    with tf.Graph().as_default():
        drawn = tf.image.draw_bounding_boxes(images, DRAWN_BOXES)
        assert drawn.shape.as_list() == [2, 6, 7, 3]
        drawn = _run(drawn)
    letters = {(0.25, 0.25, 0.25): ".", (1, 1, 0): "Y", (0, 0, 1): "B", (1, 0, 0): "R"}
    letters[(0, 1, 0)] = "G"
    assert _as_letters(drawn[0], letters) == [
        ".YYBYY.",
        ".Y.B.Y.",
        "BBBB.Y.",
        "GGGG.Y.",
        "GYYGYY.",
        "G..G...",
    ]
    assert _as_letters(drawn[1], letters) == [
        "BRBBBBB",
        "BG....B",
        "B.....B",
        "B.....B",
        "B.....B",
        "BBBBBBB",
    ]


def test_draw_bounding_boxes_does_cycle_given_colours_and_gray_images():
    images = np.zeros((2, 6, 7, 3), np.float32) + 0.25
    colours = np.float32([[0.1, 0.2, 0.3, 0.4], [0.9, 0.8, 0.7, 0.6]])
    with tf.Graph().as_default():
        drawn = _run(tf.image.draw_bounding_boxes(images, DRAWN_BOXES, colors=colours))
        gray = _run(tf.image.draw_bounding_boxes(images[..., :1], DRAWN_BOXES))
        with pytest.raises(ValueError, match="Channel depth"):
            tf.image.draw_bounding_boxes(np.zeros((1, 4, 4, 2), np.float32), DRAWN_BOXES[:1])
    letters = {(0.25, 0.25, 0.25): ".", (0.1, 0.2, 0.3): "a", (0.9, 0.8, 0.7): "b"}
    assert _as_letters(drawn[0], letters) == [
        ".aabaa.",
        ".a.b.a.",
        "bbbb.a.",
        "bbbb.a.",
        "baabaa.",
        "b..b...",
    ]
    assert set(np.unique(gray)) == {0.25, 1.0}


GLIMPSE_IMAGES = np.arange(2 * 8 * 9 * 2, dtype=np.float32).reshape(2, 8, 9, 2)


def test_extract_glimpse_does_place_windows_as_tensorflow():
    offsets = np.float32([[0.0, 0.0], [0.3, -0.5]])
    with tf.Graph().as_default():
        centred = tf.image.extract_glimpse(GLIMPSE_IMAGES, [3, 4], offsets)
        assert centred.shape.as_list() == [2, 3, 4, 2]
        pixels = tf.image.extract_glimpse(
            GLIMPSE_IMAGES, [3, 4], [[2.0, 3.0], [4.0, 5.0]], centered=False, normalized=False
        )
        unit = tf.image.extract_glimpse(
            GLIMPSE_IMAGES, [2, 2], [[0.5, 0.5], [0.25, 0.75]], centered=False
        )
        centred, pixels, unit = _run(centred, pixels, unit)
    np.testing.assert_array_equal(
        centred[..., 0],
        [
            [[40, 42, 44, 46], [58, 60, 62, 64], [76, 78, 80, 82]],
            [[198, 200, 202, 204], [216, 218, 220, 222], [234, 236, 238, 240]],
        ],
    )
    np.testing.assert_array_equal(
        pixels[..., 0],
        [
            [[2, 4, 6, 8], [20, 22, 24, 26], [38, 40, 42, 44]],
            [[186, 188, 190, 192], [204, 206, 208, 210], [222, 224, 226, 228]],
        ],
    )
    np.testing.assert_array_equal(unit[..., 0], [[[60, 62], [78, 80]], [[172, 174], [190, 192]]])


def test_extract_glimpse_does_fill_outside_the_image_with_noise():
    offsets = np.float32([[-0.9, -0.9], [0.9, 0.8]])
    with tf.Graph().as_default():
        uniform = tf.image.extract_glimpse(GLIMPSE_IMAGES, [4, 5], offsets)
        gaussian = tf.image.extract_glimpse(GLIMPSE_IMAGES, [4, 5], offsets, uniform_noise=False)
        uniform, gaussian = _run(uniform, gaussian)
    inside = np.zeros((2, 4, 5), bool)
    inside[0, 1:, 2:] = True
    inside[1, :3, :4] = True
    np.testing.assert_array_equal(uniform[0, 1:, 2:, 0], [[0, 2, 4], [18, 20, 22], [36, 38, 40]])
    np.testing.assert_array_equal(
        uniform[1, :3, :4, 0], [[244, 246, 248, 250], [262, 264, 266, 268], [280, 282, 284, 286]]
    )
    np.testing.assert_array_equal(gaussian[inside], uniform[inside])
    for i in range(2):
        noise = uniform[i][~inside[i]]
        image = GLIMPSE_IMAGES[i]
        assert image.min() <= noise.min() and noise.max() < image.max()
        assert len(np.unique(noise)) > len(noise) // 2  # drawn, not a constant


def test_sample_distorted_bounding_box_does_draw_crops_covering_an_object():
    boxes = np.float32([[[0.1, 0.1, 0.6, 0.7]]])
    with tf.Graph().as_default():
        begin, size, box = tf.image.sample_distorted_bounding_box(
            [40, 50, 3], boxes, seed=1, min_object_covered=0.5, area_range=[0.2, 0.9]
        )
        assert begin.shape.as_list() == [3] and box.shape.as_list() == [1, 1, 4]
        assert begin.dtype == tf.int32
        with tf.Session() as sess:
            draws = [sess.run([begin, size, box]) for _ in range(20)]
        with tf.Session() as sess:
            again = [sess.run([begin, size, box]) for _ in range(20)]
    for (b, s, bb), again_one in zip(draws, again):
        np.testing.assert_array_equal(b, again_one[0])  # the same seed, the same crops
        (y, x, z), (h, w, c) = b, s
        assert z == 0 and c == -1 and 0 <= y and y + h <= 40 and 0 <= x and x + w <= 50
        assert 0.2 * 2000 - 1e-3 <= h * w <= 0.9 * 2000 + 1e-3
        assert 0.75 - 0.05 <= w / h <= 1.33 + 0.05
        np.testing.assert_allclose(bb[0, 0], [y / 40, x / 50, (y + h) / 40, (x + w) / 50])
        covered = max(0, min(y + h, 24) - max(y, 4)) * max(0, min(x + w, 35) - max(x, 5))
        assert covered / (20 * 30) >= 0.5
    assert len({tuple(b) for b, _, _ in draws}) > 1


def test_sample_distorted_bounding_box_does_fall_back_to_the_whole_image():
    none = np.zeros((1, 0, 4), np.float32)
    with tf.Graph().as_default():
        whole = tf.image.sample_distorted_bounding_box(
            [40, 50, 3], none, use_image_if_no_bounding_boxes=True, min_object_covered=2.0
        )
        begin, size, box = _run(*whole)
        np.testing.assert_array_equal(begin, [0, 0, 0])
        np.testing.assert_array_equal(size, [40, 50, -1])
        np.testing.assert_array_equal(box, [[[0, 0, 1, 1]]])
        missing = tf.image.sample_distorted_bounding_box([40, 50, 3], none)
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="No bound"):
            sess.run(missing)
        with pytest.raises(ValueError, match="area_range"):
            tf.image.sample_distorted_bounding_box([4, 5, 3], none, area_range=[0.5, 0.1])


# -- patches ---------------------------------------------------------------------------------------
PATCH_IMAGES = np.arange(2 * 7 * 8 * 3, dtype=np.float32).reshape(2, 7, 8, 3)


def test_extract_patches_does_match_tensorflow_with_padding_strides_and_rates():
    with tf.Graph().as_default():
        same = tf.image.extract_patches(
            PATCH_IMAGES, [1, 3, 2, 1], [1, 1, 2, 1], [1, 2, 1, 1], "SAME"
        )
        valid = tf.image.extract_patches(
            PATCH_IMAGES, [1, 2, 2, 1], [1, 1, 1, 1], [1, 2, 3, 1], "VALID"
        )
        strided = tf.image.extract_patches(
            PATCH_IMAGES, [1, 2, 3, 1], [1, 2, 3, 1], [1, 1, 1, 1], "SAME"
        )
        assert same.shape.as_list() == [2, 7, 4, 18]
        assert valid.shape.as_list() == [2, 5, 5, 12]
        assert strided.shape.as_list() == [2, 4, 3, 18]
        same, valid, strided = _run(same, valid, strided)
    np.testing.assert_array_equal(same[0, 0, 0], [0] * 7 + [1, 2, 3, 4, 5, 48, 49, 50, 51, 52, 53])
    np.testing.assert_array_equal(
        same[1, 6, 3], [282, 283, 284, 285, 286, 287, 330, 331, 332, 333, 334, 335] + [0] * 6
    )
    np.testing.assert_array_equal(
        valid[1, 4, 4], [276, 277, 278, 285, 286, 287, 324, 325, 326, 333, 334, 335]
    )
    np.testing.assert_array_equal(strided[0, 3, 2], [162, 163, 164, 165, 166, 167] + [0] * 12)


def test_extract_image_patches_does_take_ksizes_and_differentiate():
    assert tf.image.extract_patches is not tf.image.extract_image_patches
    with tf.Graph().as_default():
        x = tf.constant(PATCH_IMAGES)
        y = tf.image.extract_image_patches(
            x, ksizes=[1, 3, 2, 1], strides=[1, 2, 2, 1], rates=[1, 1, 2, 1], padding="SAME"
        )
        same = tf.image.extract_image_patches(
            x, sizes=[1, 3, 2, 1], strides=[1, 2, 2, 1], rates=[1, 1, 2, 1], padding="SAME"
        )
        grad = _run(tf.gradients(tf.reduce_sum(y * y), x)[0])
        np.testing.assert_array_equal(*_run(y, same))
        with pytest.raises(ValueError, match="both"):
            tf.image.extract_image_patches(
                x, [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "SAME", sizes=[1, 2, 2, 1]
            )
        with pytest.raises(ValueError, match="padding"):
            tf.image.extract_patches(x, [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "FULL")
        with pytest.raises(ValueError, match="do not fit"):
            tf.image.extract_patches(x, [1, 9, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID")
    np.testing.assert_array_equal(
        grad[0, :3, :, 0],
        [
            [0, 0, 24, 0, 48, 0, 72, 0],
            [96, 0, 240, 0, 288, 0, 336, 0],
            [96, 0, 216, 0, 240, 0, 264, 0],
        ],
    )


def test_box_ops_do_take_no_boxes():
    no_boxes, no_scores = np.zeros((0, 4), np.float32), np.zeros(0, np.float32)
    with tf.Graph().as_default():
        plain = tf.image.non_max_suppression(no_boxes, no_scores, 3)
        padded, valid = tf.image.non_max_suppression_padded(
            np.zeros((2, 0, 4), np.float32),
            np.zeros((2, 0), np.float32),
            3,
            pad_to_max_output_size=True,
        )
        combined = tf.image.combined_non_max_suppression(
            np.zeros((1, 0, 1, 4), np.float32), np.zeros((1, 0, 2), np.float32), 3, 4
        )
        crops = tf.image.crop_and_resize(np.ones((1, 4, 4, 1), np.float32), no_boxes, [], [2, 2])
        drawn = tf.image.draw_bounding_boxes(np.ones((1, 4, 4, 3), np.float32), no_boxes[None])
        plain, padded, valid, scores, count, crops, drawn = _run(
            plain, padded, valid, combined[1], combined[3], crops, drawn
        )
    assert plain.shape == (0,) and crops.shape == (0, 2, 2, 1)
    np.testing.assert_array_equal(padded, np.zeros((2, 3)))
    np.testing.assert_array_equal(valid, [0, 0])
    np.testing.assert_array_equal(scores, np.zeros((1, 4)))
    np.testing.assert_array_equal(count, [0])
    np.testing.assert_array_equal(drawn, np.ones((1, 4, 4, 3)))
