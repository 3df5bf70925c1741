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
