"""``df.image``: resizing with TensorFlow's sampling rules, flips, crops, dtype conversion,
grayscale, brightness and standardization, with gradients and inside conds and loops.

Expected values are TensorFlow 2.21's (``tf.compat.v1.image``, graph mode) for the same
programs, printed by running them in a ``tf.Session``; each test names the expressions.
"""

import numpy as np
import pytest
from ops_testing import assert_same, evaluate

import dataflow as df

# TF programs below use IMG = arange(24.).reshape(2, 3, 4, 1) and U8 = [[[0, 128, 255],
# [10, 20, 30]]] (uint8).
IMG = np.arange(24, dtype=np.float32).reshape(2, 3, 4, 1)
U8 = np.array([[[0, 128, 255], [10, 20, 30]]], np.uint8)


def test_bilinear_resizing_follows_tensorflows_three_sampling_rules():
    # TF: tf.image.resize_bilinear(IMG, [2, 3])[0, :, :, 0], and [5, 3] with
    # align_corners=True and with half_pixel_centers=True
    plain, corners, centers = evaluate(
        [
            df.image.resize_bilinear(IMG, [2, 3]),
            df.image.resize_bilinear(IMG, [5, 3], align_corners=True),
            df.image.resize_bilinear(IMG, [5, 3], half_pixel_centers=True),
        ]
    )
    assert_same(plain[0, :, :, 0], np.float32([[0, 1.3333334, 2.6666667], [6, 7.333333, 8.666667]]))
    assert_same(
        corners[0, :, :, 0],
        np.float32([[0, 1.5, 3], [2, 3.5, 5], [4, 5.5, 7], [6, 7.5, 9], [8, 9.5, 11]]),
    )
    assert_same(
        centers[0, :, :, 0],
        np.float32(
            [
                [0.1666667, 1.5, 2.8333335],
                [1.7666667, 3.1000001, 4.4333334],
                [4.1666665, 5.5, 6.8333335],
                [6.5666676, 7.9000006, 9.233335],
                [8.166667, 9.5, 10.833334],
            ]
        ),
        rtol=1e-5,
    )
    assert plain.shape == (2, 2, 3, 1)
    integers = df.image.resize_bilinear(np.zeros((1, 3, 4, 1), np.uint8), [2, 2])
    assert integers.dtype is df.float32


def test_nearest_neighbor_resizing_keeps_the_dtype():
    # TF: tf.image.resize_nearest_neighbor(IMG, [5, 3]) plain, align_corners, half_pixel_centers;
    # tf.image.resize_images(arange(4).reshape(2, 2, 1) int32, [3, 3], NEAREST_NEIGHBOR)
    plain, corners, centers, ints = evaluate(
        [
            df.image.resize_nearest_neighbor(IMG, [5, 3]),
            df.image.resize_nearest_neighbor(IMG, [5, 3], align_corners=True),
            df.image.resize_nearest_neighbor(IMG, [5, 3], half_pixel_centers=True),
            df.image.resize_images(
                np.arange(4, dtype=np.int32).reshape(2, 2, 1),
                [3, 3],
                method=df.image.ResizeMethod.NEAREST_NEIGHBOR,
            ),
        ]
    )
    assert_same(
        plain[0, :, :, 0], np.float32([[0, 1, 2], [0, 1, 2], [4, 5, 6], [4, 5, 6], [8, 9, 10]])
    )
    assert_same(
        corners[0, :, :, 0],
        np.float32([[0, 2, 3], [4, 6, 7], [4, 6, 7], [8, 10, 11], [8, 10, 11]]),
    )
    assert_same(
        centers[0, :, :, 0],
        np.float32([[0, 2, 3], [0, 2, 3], [4, 6, 7], [8, 10, 11], [8, 10, 11]]),
    )
    assert_same(ints[:, :, 0], np.int32([[0, 0, 1], [0, 0, 1], [2, 2, 3]]))


def test_resize_images_of_one_image_and_its_errors():
    # TF: tf.image.resize_images(IMG[0], [2, 6])[:, :, 0]
    resized = df.image.resize_images(IMG[0], [2, 6])
    assert resized.shape.as_list() == [2, 6, 1]
    assert_same(
        evaluate(resized)[:, :, 0],
        np.float32(
            [
                [0, 0.6666667, 1.3333334, 2, 2.6666667, 3],
                [6, 6.666667, 7.333333, 8, 8.666667, 9],
            ]
        ),
    )
    with pytest.raises(ValueError, match=r"resize_bilinear at .*test_image_ops.py:\d+: .*3 or 4"):
        df.image.resize_bilinear(df.zeros([3, 3]), [2, 2])
    with pytest.raises(ValueError, match="Resize method is not implemented: lanczos3"):
        df.image.resize_images(IMG, [2, 2], method="lanczos3")


def test_resize_bilinear_gradient_scatters_each_output_to_its_four_sources():
    x = df.placeholder(df.float64, [1, 3, 4, 1])
    y = df.image.resize_bilinear(x, [5, 3], half_pixel_centers=True)
    weights = np.random.default_rng(0).uniform(size=(1, 5, 3, 1))
    (grad,) = df.gradients(df.reduce_sum(df.cast(y, df.float64) * weights), x)
    value = np.random.default_rng(1).normal(size=(1, 3, 4, 1))
    with df.Session() as sess:
        symbolic = sess.run(grad, {x: value})
        loss = df.reduce_sum(df.cast(y, df.float64) * weights)
        numeric = np.zeros_like(value)
        for index in np.ndindex(value.shape):
            up, down = value.copy(), value.copy()
            up[index] += 1e-2
            down[index] -= 1e-2
            numeric[index] = (sess.run(loss, {x: up}) - sess.run(loss, {x: down})) / 2e-2
    np.testing.assert_allclose(symbolic, numeric, rtol=1e-4, atol=1e-4)


def test_flips():
    # TF: tf.image.flip_left_right(IMG[0])[:, :, 0], tf.image.flip_up_down(IMG)[1, :, :, 0]
    left_right, up_down = evaluate([df.image.flip_left_right(IMG[0]), df.image.flip_up_down(IMG)])
    assert_same(left_right[:, :, 0], np.float32([[3, 2, 1, 0], [7, 6, 5, 4], [11, 10, 9, 8]]))
    assert_same(
        up_down[1, :, :, 0], np.float32([[20, 21, 22, 23], [16, 17, 18, 19], [12, 13, 14, 15]])
    )


def test_random_flips_give_the_image_or_its_mirror_per_image():
    batch = np.arange(64, dtype=np.float32).reshape(16, 2, 2, 1)
    flipped = evaluate(df.image.random_flip_left_right(batch, seed=3))
    mirrored = [bool((f == b[:, ::-1]).all()) for f, b in zip(flipped, batch)]
    unchanged = [bool((f == b).all()) for f, b in zip(flipped, batch)]
    assert all(m != u for m, u in zip(mirrored, unchanged))
    assert 0 < sum(mirrored) < 16
    single = evaluate(df.image.random_flip_up_down(IMG[0], seed=1))
    assert (single == IMG[0]).all() or (single == IMG[0][::-1]).all()


def test_per_image_standardization():
    # TF: tf.image.per_image_standardization(IMG[0])[:, :, 0]; of ones((2, 2, 1), uint8) -> 0
    standardized, uniform = evaluate(
        [
            df.image.per_image_standardization(IMG[0]),
            df.image.per_image_standardization(np.ones((2, 2, 1), np.uint8)),
        ]
    )
    assert_same(
        standardized[:, :, 0],
        np.float32(
            [
                [-1.593255, -1.3035723, -1.0138896, -0.7242068],
                [-0.4345241, -0.1448414, 0.1448414, 0.4345241],
                [0.7242068, 1.0138896, 1.3035723, 1.593255],
            ]
        ),
        rtol=1e-5,
    )
    assert_same(uniform, np.zeros((2, 2, 1), np.float32))


def test_convert_image_dtype_rescales_between_ranges():
    # TF: tf.image.convert_image_dtype(U8, tf.float32); ([0, .5, 1, 1.2], tf.uint8,
    # saturate=True) -> [0, 127, 255, 255]; ([0, .5, 1], tf.int16) -> [0, 16383, 32767];
    # (U8, tf.int32) -> U8 * 2 ** 23
    floats, saturated, int16, int32 = evaluate(
        [
            df.image.convert_image_dtype(U8, df.float32),
            df.image.convert_image_dtype([0.0, 0.5, 1.0, 1.2], df.uint8, saturate=True),
            df.image.convert_image_dtype([0.0, 0.5, 1.0], df.int16),
            df.image.convert_image_dtype(U8, df.int32),
        ]
    )
    assert_same(
        floats, np.float32([[[0, 0.5019608, 1], [0.0392157, 0.0784314, 0.1176471]]]), rtol=1e-6
    )
    assert_same(saturated, np.uint8([0, 127, 255, 255]))
    assert_same(int16, np.int16([0, 16383, 32767]))
    assert_same(int32, U8.astype(np.int32) * 2**23)


def test_grayscale_and_brightness():
    # TF: tf.image.rgb_to_grayscale(U8) -> [[[104], [18]]]; of [[[.2, .4, .6]]] -> 0.36298;
    # tf.image.adjust_brightness(U8, 0.1) -> [[[25, 153, 255], [35, 45, 55]]];
    # adjust_brightness([.2, .9], .2) -> [.4, 1.1]
    gray, gray_float, brighter, brighter_float = evaluate(
        [
            df.image.rgb_to_grayscale(U8),
            df.image.rgb_to_grayscale([[[0.2, 0.4, 0.6]]]),
            df.image.adjust_brightness(U8, 0.1),
            df.image.adjust_brightness([0.2, 0.9], 0.2),
        ]
    )
    assert_same(gray, np.uint8([[[104], [18]]]))
    assert_same(gray_float, np.float32([[[0.36298]]]))
    assert_same(brighter, np.uint8([[[25, 153, 255], [35, 45, 55]]]))
    assert_same(brighter_float, np.float32([0.4, 1.1]))


def test_crops_and_pads_are_centred():
    # TF: tf.image.central_crop(arange(30.).reshape(5, 6, 1), 0.5)[:, :, 0];
    # central_crop(arange(49.).reshape(7, 7, 1), 0.33); resize_image_with_crop_or_pad(IMG[0], 5, 2)
    crop, small_crop, crop_or_pad = evaluate(
        [
            df.image.central_crop(np.arange(30, dtype=np.float32).reshape(5, 6, 1), 0.5),
            df.image.central_crop(np.arange(49, dtype=np.float32).reshape(7, 7, 1), 0.33),
            df.image.resize_image_with_crop_or_pad(IMG[0], 5, 2),
        ]
    )
    assert_same(crop[:, :, 0], np.float32([[7, 8, 9, 10], [13, 14, 15, 16], [19, 20, 21, 22]]))
    assert_same(small_crop[:, :, 0], np.float32([[16, 17, 18], [23, 24, 25], [30, 31, 32]]))
    assert_same(crop_or_pad[:, :, 0], np.float32([[0, 0], [1, 2], [5, 6], [9, 10], [0, 0]]))


def test_random_crop_takes_a_block_of_the_value():
    value = np.arange(25, dtype=np.float32).reshape(5, 5)
    crop = df.random_crop(value, [2, 3], seed=7)
    assert df.random_crop is df.image.random_crop and crop.shape.as_list() == [2, 3]
    got = evaluate(crop)
    top, left = divmod(int(got[0, 0]), 5)
    assert_same(got, value[top : top + 2, left : left + 3])
    with pytest.raises(ValueError, match=r"random_crop at .*test_image_ops.py:\d+: Need value"):
        df.random_crop(df.zeros([2, 2]), [3, 1])
    size = df.placeholder(df.int32, [2])
    with pytest.raises(df.errors.InvalidArgumentError, match="Need value.shape >= size"):
        evaluate(df.random_crop(value, size), {size: [6, 1]})


def test_image_ops_in_a_cond_and_a_loop():
    images = df.placeholder(df.float32, [2, 3, 4, 1])
    flag = df.placeholder(df.bool, [])
    branch = df.cond(
        flag,
        lambda: df.image.resize_bilinear(images, [2, 3]),
        lambda: df.image.resize_nearest_neighbor(images, [2, 3]),
    )
    _, looped = df.while_loop(
        lambda i, x: i < 2, lambda i, x: (i + 1, df.image.flip_left_right(x) + 1.0), [0, images]
    )
    bilinear, twice_flipped = evaluate([branch, looped], {images: IMG, flag: True})
    assert_same(
        bilinear[0, :, :, 0], np.float32([[0, 1.3333334, 2.6666667], [6, 7.333333, 8.666667]])
    )
    assert_same(twice_flipped, IMG + 2)
