"""Behaviour of the N-d convolution and pooling names added to close tf.compat.v1 surface gaps
(conv3d, pool3d, convolution, pool, transposes, backward ops; values from TF 2.21)."""

import numpy as np
import pytest

import dataflow as df

tf = df.compat.v1


def _run(t):
    with tf.Session() as sess:
        return sess.run(t)


def _check(got, want):
    got = np.asarray(got)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def _x(*shape):
    return (np.arange(np.prod(shape)) % 7 - 3).reshape(shape).astype(np.float32) / 4


def _f(*shape):
    return (np.arange(np.prod(shape)) % 5 - 2).reshape(shape).astype(np.float32) / 3


def test_conv3d_does_convolve_with_strides_and_same_padding():
    with tf.Graph().as_default():
        x = tf.constant(_x(1, 3, 4, 3, 2))
        f = tf.constant(_f(2, 2, 2, 2, 3))
        y = tf.nn.conv3d(x, f, [1, 1, 2, 1, 1], "SAME")
        _check(
            _run(y),
            np.array(
                [
                    [
                        [
                            [
                                [0.5, 0.41667, 0.75],
                                [1.91667, -0.33333, 0.75],
                                [-1.41667, 1.0, 0.08333],
                            ],
                            [
                                [-0.33333, 1.75, -1.58333],
                                [0.5, 0.41667, 0.75],
                                [0.91667, -0.41667, -0.08333],
                            ],
                        ],
                        [
                            [
                                [1.75, -1.58333, -1.58333],
                                [-0.33333, 1.75, -1.58333],
                                [0.91667, 0.5, 0.91667],
                            ],
                            [
                                [-0.25, -1.41667, 0.75],
                                [1.75, -1.58333, -1.58333],
                                [-0.83333, 0.83333, -0.41667],
                            ],
                        ],
                        [
                            [
                                [-1.33333, -1.16667, 1.08333],
                                [0.66667, -0.41667, -0.25],
                                [0.08333, 0.08333, -0.33333],
                            ],
                            [
                                [-1.0, 1.0, 0.08333],
                                [-1.33333, -1.16667, 1.08333],
                                [0.58333, -0.08333, -0.33333],
                            ],
                        ],
                    ]
                ],
                dtype=np.float32,
            ),
        )


def test_conv3d_does_dilate_in_ncdhw_valid():
    with tf.Graph().as_default():
        x = tf.constant(_x(1, 2, 3, 5, 4))
        f = tf.constant(_f(2, 2, 2, 4, 2))
        y = tf.nn.conv3d(
            tf.transpose(x, [0, 4, 1, 2, 3]),
            f,
            [1, 1, 1, 1, 1],
            "VALID",
            data_format="NCDHW",
            dilations=[1, 1, 1, 1, 2],
        )
        _check(
            _run(y),
            np.array(
                [
                    [
                        [[[-1.0, 0.66667, 0.0], [1.5, -0.33333, -1.0]]],
                        [[[-1.0, 0.16667, 0.16667], [-1.0, 1.33333, -1.0]]],
                    ]
                ],
                dtype=np.float32,
            ),
        )


def test_conv3d_gradients_do_match_tf():
    with tf.Graph().as_default():
        x = tf.constant(_x(1, 3, 4, 3, 2))
        f = tf.constant(_f(2, 2, 2, 2, 3))
        z = tf.nn.conv3d(x, f, [1, 2, 1, 2, 1], "SAME")
        y = tf.gradients(tf.reduce_sum(z * z), [x, f])
        got = _run(y)
        _check(
            got[0],
            np.array(
                [
                    [
                        [
                            [[-0.94444, -0.11111], [0.16667, -0.38889], [1.22222, 0.27778]],
                            [[3.94444, -3.94444], [1.5, -1.66667], [0.33333, 1.83333]],
                            [[-0.16667, 6.88889], [-3.83333, -0.11111], [-3.27778, -0.27778]],
                            [[-0.27778, 0.0], [5.0, -3.88889], [-0.94444, -1.22222]],
                        ],
                        [
                            [[-0.38889, 1.27778], [-0.94444, -0.11111], [-3.27778, 0.77778]],
                            [[-1.66667, 0.16667], [3.94444, -3.94444], [4.55556, -5.61111]],
                            [[-0.11111, -2.77778], [-0.16667, 6.88889], [0.44444, 3.16667]],
                            [[-3.88889, -0.83333], [-0.27778, 0.0], [-0.38889, 2.38889]],
                        ],
                        [
                            [[2.55556, -3.88889], [1.61111, -0.94444], [-0.16667, 0.61111]],
                            [[-0.05556, 5.55556], [-4.66667, 0.94444], [-0.83333, 0.5]],
                            [[-0.16667, -0.16667], [3.72222, -3.5], [-1.16667, 0.27778]],
                            [[0.44444, 0.83333], [0.11111, 1.88889], [-0.88889, -1.05556]],
                        ],
                    ]
                ],
                dtype=np.float32,
            ),
        )
        _check(
            got[1],
            np.array(
                [
                    [
                        [
                            [[-9.45833, 1.45833, -1.375], [-0.125, 9.16667, -8.625]],
                            [[0.54167, 0.29167, 1.91667], [5.58333, -5.66667, 1.20833]],
                        ],
                        [
                            [[-5.04167, 1.29167, 3.25], [-8.0, 0.75, -0.5]],
                            [[2.5, 7.58333, -7.54167], [1.75, -1.125, 2.04167]],
                        ],
                    ],
                    [
                        [
                            [[7.41667, -6.83333, -0.66667], [3.33333, -1.70833, 3.04167]],
                            [[0.20833, -0.5, 1.08333], [-1.08333, 0.83333, 1.08333]],
                        ],
                        [
                            [[1.16667, -2.04167, 0.16667], [5.58333, -5.08333, -0.75]],
                            [[0.41667, -0.66667, 1.16667], [-0.33333, 0.08333, 1.125]],
                        ],
                    ],
                ],
                dtype=np.float32,
            ),
        )


def test_conv3d_backprop_filter_does_give_the_filter_gradient():
    with tf.Graph().as_default():
        x = tf.constant(_x(1, 3, 4, 3, 2))
        f = tf.constant(_f(1, 2, 2, 2, 3))
        y = tf.nn.conv3d_backprop_filter(x, [2, 2, 2, 2, 3], f, [1, 2, 2, 2, 1], "SAME")
        _check(
            _run(y),
            np.array(
                [
                    [
                        [
                            [[0.5, 1.0, 0.25], [0.33333, 0.5, -1.0]],
                            [[0.66667, 0.41667, -1.08333], [-0.08333, -0.58333, 0.16667]],
                        ],
                        [
                            [[-0.5, 0.33333, 0.33333], [0.5, 1.0, 0.25]],
                            [[0.25, 0.25, -0.58333], [0.66667, 0.41667, -1.08333]],
                        ],
                    ],
                    [
                        [
                            [[0.25, -0.83333, 0.16667], [0.25, -0.91667, -0.0]],
                            [[-0.33333, -0.16667, 0.0], [-0.58333, -0.25, 0.08333]],
                        ],
                        [
                            [[0.83333, 0.41667, -0.83333], [0.25, -0.83333, 0.16667]],
                            [[-0.08333, -0.08333, -0.08333], [-0.33333, -0.16667, 0.0]],
                        ],
                    ],
                ],
                dtype=np.float32,
            ),
        )


def test_conv3d_transpose_does_map_back_to_the_output_shape():
    with tf.Graph().as_default():
        x = tf.constant(_x(1, 2, 2, 2, 3))
        f = tf.constant(_f(2, 2, 2, 2, 3))
        y = tf.nn.conv3d_transpose(x, f, [1, 4, 3, 4, 2], [1, 2, 2, 2, 1], "SAME")
        _check(
            _run(y),
            np.array(
                [
                    [
                        [
                            [
                                [0.66667, -0.41667],
                                [0.16667, -0.08333],
                                [-0.08333, -0.16667],
                                [0.16667, -0.33333],
                            ],
                            [
                                [-0.33333, 0.66667],
                                [-0.41667, 0.16667],
                                [0.41667, -0.08333],
                                [-0.16667, 0.16667],
                            ],
                            [
                                [-0.25, 0.08333],
                                [-0.41667, 1.16667],
                                [0.16667, -0.25],
                                [0.16667, -0.25],
                            ],
                        ],
                        [
                            [
                                [-0.08333, -0.33333],
                                [0.66667, -0.41667],
                                [-0.33333, 0.41667],
                                [-0.08333, -0.16667],
                            ],
                            [
                                [0.16667, -0.08333],
                                [-0.33333, 0.66667],
                                [0.16667, -0.33333],
                                [0.41667, -0.08333],
                            ],
                            [
                                [1.16667, -0.58333],
                                [-0.25, 0.08333],
                                [-0.25, 0.16667],
                                [0.16667, -0.25],
                            ],
                        ],
                        [
                            [
                                [-0.58333, 1.16667],
                                [-0.41667, 0.08333],
                                [0.41667, -0.33333],
                                [0.16667, -0.16667],
                            ],
                            [
                                [-0.25, -0.58333],
                                [1.16667, -0.41667],
                                [-0.08333, 0.41667],
                                [-0.33333, 0.16667],
                            ],
                            [
                                [-0.33333, -0.08333],
                                [0.16667, -0.41667],
                                [0.66667, -0.41667],
                                [0.16667, -0.08333],
                            ],
                        ],
                        [
                            [
                                [0.08333, -0.25],
                                [-0.58333, 1.16667],
                                [-0.16667, -0.08333],
                                [0.41667, -0.33333],
                            ],
                            [
                                [-0.41667, 0.08333],
                                [-0.25, -0.58333],
                                [0.16667, -0.16667],
                                [-0.08333, 0.41667],
                            ],
                            [
                                [-0.41667, 0.66667],
                                [-0.33333, -0.08333],
                                [-0.08333, -0.33333],
                                [0.66667, -0.41667],
                            ],
                        ],
                    ]
                ],
                dtype=np.float32,
            ),
        )


def test_max_pool3d_and_avg_pool3d_do_pool_with_same_padding():
    with tf.Graph().as_default():
        x = tf.constant(_x(1, 3, 4, 3, 2))
        y = [
            tf.nn.max_pool3d(x, [1, 2, 2, 2, 1], [1, 2, 2, 1, 1], "SAME"),
            tf.nn.avg_pool3d(x, [1, 2, 3, 2, 1], [1, 2, 2, 2, 1], "SAME"),
        ]
        got = _run(y)
        _check(
            got[0],
            np.array(
                [
                    [
                        [
                            [[0.75, 0.75], [0.75, 0.75], [0.75, 0.5]],
                            [[0.75, 0.75], [0.75, 0.75], [0.5, 0.75]],
                        ],
                        [
                            [[0.75, 0.75], [0.0, 0.25], [0.0, 0.25]],
                            [[0.75, 0.75], [0.75, 0.75], [-0.5, -0.25]],
                        ],
                    ]
                ],
                dtype=np.float32,
            ),
        )
        _check(
            got[1],
            np.array(
                [
                    [
                        [
                            [[-0.08333, 0.02083], [0.08333, 0.04167]],
                            [[-0.09375, -0.0625], [0.0, 0.25]],
                        ],
                        [[[0.16667, -0.16667], [-0.25, 0.0]], [[0.375, 0.1875], [-0.625, -0.375]]],
                    ]
                ],
                dtype=np.float32,
            ),
        )


def test_pool3d_gradients_do_match_tf():
    with tf.Graph().as_default():
        x = tf.constant(_x(1, 3, 4, 3, 2))
        a = tf.nn.max_pool3d(x, [1, 2, 2, 2, 1], [1, 1, 2, 1, 1], "VALID")
        b = tf.nn.avg_pool3d(x, [1, 2, 3, 2, 1], [1, 2, 2, 2, 1], "SAME")
        y = [tf.gradients(tf.reduce_sum(a * a), x)[0], tf.gradients(tf.reduce_sum(b * b), x)[0]]
        got = _run(y)
        _check(
            got[0],
            np.array(
                [
                    [
                        [
                            [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
                            [[1.5, 0.0], [0.0, 0.0], [0.0, 0.0]],
                            [[0.0, 1.5], [0.0, 0.0], [0.0, 0.0]],
                            [[0.0, 0.0], [3.0, 0.0], [0.0, 0.0]],
                        ],
                        [
                            [[0.0, 0.0], [0.0, 6.0], [0.0, 0.0]],
                            [[0.0, 0.0], [0.0, 0.0], [3.0, 0.0]],
                            [[0.0, 0.0], [0.0, 0.0], [0.0, 3.0]],
                            [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
                        ],
                        [
                            [[1.5, 0.0], [0.0, 0.0], [0.0, 0.0]],
                            [[0.0, 1.5], [0.0, 0.0], [0.0, 0.0]],
                            [[0.0, 0.0], [3.0, 0.0], [0.0, 0.0]],
                            [[0.0, 0.0], [0.0, 3.0], [0.0, 0.0]],
                        ],
                    ]
                ],
                dtype=np.float32,
            ),
        )
        _check(
            got[1],
            np.array(
                [
                    [
                        [
                            [[-0.01389, 0.00347], [-0.01389, 0.00347], [0.02778, 0.01389]],
                            [[-0.01389, 0.00347], [-0.01389, 0.00347], [0.02778, 0.01389]],
                            [[-0.03733, -0.01215], [-0.03733, -0.01215], [0.02778, 0.13889]],
                            [[-0.02344, -0.01562], [-0.02344, -0.01562], [0.0, 0.125]],
                        ],
                        [
                            [[-0.01389, 0.00347], [-0.01389, 0.00347], [0.02778, 0.01389]],
                            [[-0.01389, 0.00347], [-0.01389, 0.00347], [0.02778, 0.01389]],
                            [[-0.03733, -0.01215], [-0.03733, -0.01215], [0.02778, 0.13889]],
                            [[-0.02344, -0.01562], [-0.02344, -0.01562], [0.0, 0.125]],
                        ],
                        [
                            [[0.05556, -0.05556], [0.05556, -0.05556], [-0.16667, 0.0]],
                            [[0.05556, -0.05556], [0.05556, -0.05556], [-0.16667, 0.0]],
                            [[0.24306, 0.03819], [0.24306, 0.03819], [-0.79167, -0.375]],
                            [[0.1875, 0.09375], [0.1875, 0.09375], [-0.625, -0.375]],
                        ],
                    ]
                ],
                dtype=np.float32,
            ),
        )


def test_avg_pool3d_does_pool_ncdhw():
    with tf.Graph().as_default():
        x = tf.constant(_x(1, 2, 3, 4, 3))
        y = tf.nn.avg_pool3d(x, [1, 1, 2, 2, 2], [1, 1, 1, 2, 2], "VALID", data_format="NCDHW")
        _check(
            _run(y),
            np.array(
                [
                    [
                        [[[-0.0625], [-0.09375]], [[0.09375], [0.0625]]],
                        [[[-0.03125], [-0.0625]], [[-0.09375], [0.09375]]],
                    ]
                ],
                dtype=np.float32,
            ),
        )


def test_convolution_does_pick_conv1d_by_rank_with_dilation():
    with tf.Graph().as_default():
        x = tf.constant(_x(2, 6, 2))
        f = tf.constant(_f(3, 2, 3))
        y = tf.nn.convolution(x, f, "SAME", dilation_rate=[2])
        _check(
            _run(y),
            np.array(
                [
                    [
                        [-0.41667, 0.25, 0.08333],
                        [0.58333, 0.5, 0.41667],
                        [0.75, -0.5, -0.08333],
                        [-0.75, 0.5, 0.5],
                        [0.0, 0.41667, -0.41667],
                        [-0.58333, -0.91667, 0.41667],
                    ],
                    [
                        [0.33333, -0.58333, -0.25],
                        [-0.41667, 0.25, 0.08333],
                        [0.5, 0.83333, -0.08333],
                        [0.75, -0.5, -0.08333],
                        [-0.58333, 0.58333, 0.5],
                        [0.0, 0.41667, -0.41667],
                    ],
                ],
                dtype=np.float32,
            ),
        )


def test_convolution_does_pick_conv3d_by_rank():
    with tf.Graph().as_default():
        x = tf.constant(_x(1, 3, 3, 4, 1))
        f = tf.constant(_f(2, 2, 2, 1, 2))
        y = tf.nn.convolution(x, f, "VALID", strides=[1, 1, 2])
        _check(
            _run(y),
            np.array(
                [
                    [
                        [[[0.16667, -0.08333], [1.33333, -1.0]], [[-1.0, 1.0], [-1.0, -0.5]]],
                        [[[-1.0, 0.25], [0.16667, -0.08333]], [[1.33333, -1.0], [-1.0, 1.0]]],
                    ]
                ],
                dtype=np.float32,
            ),
        )


def test_pool_does_dilate_valid_windows():
    with tf.Graph().as_default():
        x = tf.constant(_x(1, 6, 5, 2))
        a = tf.nn.pool(x, [2, 2], "MAX", "VALID", dilation_rate=[2, 2])
        b = tf.nn.pool(x, [2, 2], "AVG", "VALID", dilation_rate=[1, 2])
        y = [a, b, tf.gradients(tf.reduce_sum(a * b[:, :4, :3]), x)[0]]
        got = _run(y)
        _check(
            got[0],
            np.array(
                [
                    [
                        [[0.75, 0.5], [0.75, 0.75], [0.25, 0.5]],
                        [[0.75, 0.25], [0.5, 0.75], [0.75, 0.5]],
                        [[0.75, 0.75], [0.5, 0.75], [0.75, 0.25]],
                        [[0.75, 0.75], [0.25, 0.5], [0.75, 0.75]],
                    ]
                ],
                dtype=np.float32,
            ),
        )
        _check(
            got[1],
            np.array(
                [
                    [
                        [[-0.3125, -0.0625], [0.1875, 0.0], [-0.1875, 0.0625]],
                        [[0.0, -0.1875], [0.0625, 0.3125], [-0.3125, -0.0625]],
                        [[0.3125, -0.3125], [-0.0625, 0.1875], [0.0, -0.1875]],
                        [[0.1875, 0.0], [-0.1875, 0.0625], [0.3125, -0.3125]],
                        [[0.0625, 0.3125], [-0.3125, -0.0625], [0.1875, 0.0]],
                    ]
                ],
                dtype=np.float32,
            ),
        )
        _check(
            got[2],
            np.array(
                [
                    [
                        [
                            [0.1875, 0.125],
                            [0.1875, 0.1875],
                            [0.0625, 0.25],
                            [0.375, 0.1875],
                            [0.0625, 0.125],
                        ],
                        [
                            [0.375, 0.0],
                            [0.375, 0.6875],
                            [0.625, 0.4375],
                            [0.3125, 0.375],
                            [0.25, 0.1875],
                        ],
                        [
                            [0.375, 0.25],
                            [0.25, 0.375],
                            [0.75, 0.25],
                            [0.1875, 0.5625],
                            [0.375, 0.1875],
                        ],
                        [
                            [0.375, 0.375],
                            [0.0, 0.375],
                            [0.9375, 0.625],
                            [0.1875, 0.3125],
                            [0.375, 0.25],
                        ],
                        [
                            [0.1875, -0.125],
                            [0.0625, 0.125],
                            [0.375, 0.375],
                            [0.0625, 0.125],
                            [0.1875, 0.1875],
                        ],
                        [[0.0, 0.0], [0.0, 0.0], [0.0, -0.3125], [0.0, 0.0], [0.0, 0.0]],
                    ]
                ],
                dtype=np.float32,
            ),
        )


def test_pool_does_stride_in_one_and_three_dimensions():
    with tf.Graph().as_default():
        x = tf.constant(_x(1, 7, 2))
        z = tf.constant(_x(1, 3, 3, 4, 1) * 4)
        y = [
            tf.nn.pool(x, [3], "AVG", "SAME", strides=[2]),
            tf.nn.pool(z, [2, 2, 2], "MAX", "SAME", strides=[2, 1, 2]),
        ]
        got = _run(y)
        _check(
            got[0],
            np.array(
                [[[-0.5, -0.25], [0.25, -0.08333], [0.08333, -0.25], [0.25, 0.5]]], dtype=np.float32
            ),
        )
        _check(
            got[1],
            np.array(
                [
                    [
                        [[[3.0], [3.0]], [[3.0], [3.0]], [[3.0], [1.0]]],
                        [[[1.0], [3.0]], [[2.0], [3.0]], [[2.0], [3.0]]],
                    ]
                ],
                dtype=np.float32,
            ),
        )


def test_conv1d_transpose_does_map_width_back():
    with tf.Graph().as_default():
        x = tf.constant(_x(1, 4, 3))
        f = tf.constant(_f(3, 2, 3))
        y = tf.nn.conv1d_transpose(x, f, [1, 8, 2], 2)
        _check(
            _run(y),
            np.array(
                [
                    [
                        [0.66667, -0.41667],
                        [0.16667, -0.08333],
                        [-0.41667, 0.5],
                        [0.16667, -0.33333],
                        [0.16667, 0.0],
                        [-0.41667, 1.16667],
                        [-0.41667, -0.5],
                        [0.16667, -0.25],
                    ]
                ],
                dtype=np.float32,
            ),
        )


def test_atrous_conv2d_transpose_does_dilate_the_filter():
    with tf.Graph().as_default():
        x = tf.constant(_x(1, 4, 3, 3))
        f = tf.constant(_f(2, 2, 2, 3))
        y = tf.nn.atrous_conv2d_transpose(x, f, [1, 4, 3, 2], 2, "SAME")
        _check(
            _run(y),
            np.array(
                [
                    [
                        [[-0.58333, 1.16667], [0.58333, -0.58333], [-0.41667, 0.08333]],
                        [[1.08333, -0.5], [-0.91667, -0.66667], [-0.0, 0.08333]],
                        [[-0.08333, -0.83333], [-1.33333, 2.91667], [1.33333, -0.66667]],
                        [[-0.33333, 0.66667], [0.33333, 0.08333], [-0.41667, 0.16667]],
                    ]
                ],
                dtype=np.float32,
            ),
        )


def test_conv_transpose_does_pick_2d_by_output_shape():
    with tf.Graph().as_default():
        x = tf.constant(_x(1, 3, 2, 3))
        f = tf.constant(_f(2, 2, 2, 3))
        y = tf.nn.conv_transpose(x, f, [1, 6, 4, 2], [2, 2])
        _check(
            _run(y),
            np.array(
                [
                    [
                        [
                            [0.66667, -0.41667],
                            [0.16667, -0.08333],
                            [-0.08333, -0.16667],
                            [0.16667, -0.33333],
                        ],
                        [
                            [-0.33333, 0.66667],
                            [-0.41667, 0.16667],
                            [0.41667, -0.08333],
                            [-0.16667, 0.16667],
                        ],
                        [[-0.25, 0.08333], [-0.41667, 1.16667], [0.16667, -0.25], [0.16667, -0.25]],
                        [
                            [-0.58333, -0.25],
                            [0.08333, -0.41667],
                            [0.16667, 0.16667],
                            [-0.25, 0.16667],
                        ],
                        [
                            [-0.58333, 1.16667],
                            [-0.41667, 0.08333],
                            [0.41667, -0.33333],
                            [0.16667, -0.16667],
                        ],
                        [
                            [-0.25, -0.58333],
                            [1.16667, -0.41667],
                            [-0.08333, 0.41667],
                            [-0.33333, 0.16667],
                        ],
                    ]
                ],
                dtype=np.float32,
            ),
        )


def test_conv_does_fold_batch_dims_and_pad_explicitly():
    with tf.Graph().as_default():
        x = tf.constant(_x(2, 1, 4, 3, 2))
        f = tf.constant(_f(2, 2, 2, 3))
        y = tf.conv(
            x, f, [1, 2, 1, 1], "EXPLICIT", explicit_paddings=[0, 0, 1, 0, 0, 1, 0, 0], batch_dims=2
        )
        _check(
            _run(y),
            np.array(
                [
                    [
                        [
                            [
                                [0.25, -0.25, -0.33333],
                                [-0.08333, 0.08333, -0.16667],
                                [-0.33333, -0.08333, 0.16667],
                            ],
                            [
                                [-1.33333, -1.16667, 1.08333],
                                [0.66667, -0.41667, -0.25],
                                [0.08333, 0.08333, -0.33333],
                            ],
                        ]
                    ],
                    [
                        [
                            [
                                [-0.25, 0.25, -0.08333],
                                [-0.58333, -0.58333, 0.66667],
                                [0.33333, -0.08333, -0.5],
                            ],
                            [
                                [0.5, -0.33333, -0.33333],
                                [-1.0, 1.0, 0.08333],
                                [-1.25, -0.83333, 0.83333],
                            ],
                        ]
                    ],
                ],
                dtype=np.float32,
            ),
        )


def test_depthwise_native_backprops_do_match_tf():
    with tf.Graph().as_default():
        x = tf.constant(_x(1, 4, 3, 2))
        f = tf.constant(_f(2, 2, 2, 2))
        dy = tf.constant(_f(1, 3, 2, 4))
        y = [
            tf.nn.depthwise_conv2d_native_backprop_input(
                [1, 4, 3, 2], f, dy, [1, 1, 1, 1], "VALID"
            ),
            tf.nn.depthwise_conv2d_backprop_filter(x, [2, 2, 2, 2], dy, [1, 1, 1, 1], "VALID"),
        ]
        got = _run(y)
        _check(
            got[0],
            np.array(
                [
                    [
                        [[0.55556, 0.11111], [-0.44444, 0.0], [0.88889, 0.11111]],
                        [[-0.88889, -0.22222], [-0.66667, 0.0], [-0.44444, -0.44444]],
                        [[0.77778, 0.77778], [0.77778, -0.44444], [-0.11111, 0.88889]],
                        [[-0.11111, -0.44444], [-0.44444, -0.33333], [-0.11111, -0.22222]],
                    ]
                ],
                dtype=np.float32,
            ),
        )
        _check(
            got[1],
            np.array(
                [
                    [[[0.91667, 1.0], [0.58333, 0.58333]], [[0.58333, -0.33333], [0.0, -0.41667]]],
                    [[[-1.25, -0.08333], [-0.58333, -0.08333]], [[0.16667, -0.25], [0.0, -0.5]]],
                ],
                dtype=np.float32,
            ),
        )


def test_conv_does_convolve_groups_separately():
    x, f = _x(1, 4, 3, 4), _f(2, 2, 2, 6)
    with tf.Graph().as_default():
        y = _run(tf.conv(tf.constant(x), tf.constant(f), [1, 1, 1, 1], "VALID", groups=2))
        parts = [
            _run(tf.nn.conv2d(x[..., 2 * g : 2 * g + 2], f[..., 3 * g : 3 * g + 3], 1, "VALID"))
            for g in range(2)
        ]
    _check(y, np.concatenate(parts, -1))


def test_conv2d_backprop_v2_does_take_shapes_from_tensors():
    x, f = _x(1, 5, 4, 2), _f(3, 3, 2, 3)
    dy = _x(1, 3, 2, 3)
    with tf.Graph().as_default():
        got = _run(
            [
                tf.conv2d_backprop_input_v2(x, f, dy, [1, 2, 2, 1], "SAME"),
                tf.conv2d_backprop_filter_v2(
                    x, f, dy, [1, 2, 2, 1], "EXPLICIT", explicit_paddings=[0, 0, 1, 1, 0, 1, 0, 0]
                ),
            ]
        )
        want = _run(
            [
                tf.nn.conv2d_backprop_input([1, 5, 4, 2], f, dy, [1, 2, 2, 1], "SAME"),
                tf.nn.conv2d_backprop_filter(
                    x, [3, 3, 2, 3], dy, [1, 2, 2, 1], [[0, 0], [1, 1], [0, 1], [0, 0]]
                ),
            ]
        )
    _check(got[0], want[0])
    _check(got[1], want[1])


def test_conv2d_dilations_default_does_mean_no_dilation():
    x, f = _x(1, 5, 5, 1), _f(2, 2, 1, 1)
    with tf.Graph().as_default():
        a = _run(tf.nn.conv2d(x, f, [1, 1, 1, 1], "VALID"))
        b = _run(tf.nn.conv2d(x, f, [1, 1, 1, 1], "VALID", dilations=[1, 2, 2, 1]))
    assert a.shape == (1, 4, 4, 1) and b.shape == (1, 3, 3, 1)


def test_avg_pool2d_is_tf1_avg_pool():
    assert tf.nn.avg_pool2d is tf.nn.avg_pool
    with tf.Graph().as_default():
        y = tf.nn.avg_pool2d(value=_x(1, 4, 4, 1), ksize=2, strides=2, padding="VALID")
        _check(_run(y), _x(1, 4, 4, 1).reshape(1, 2, 2, 2, 2).mean(axis=(2, 4))[..., None])


def test_conv3d_does_reject_bad_arguments():
    with tf.Graph().as_default():
        x, f = tf.constant(_x(1, 3, 3, 3, 2)), tf.constant(_f(2, 2, 2, 3, 1))
        with pytest.raises(ValueError, match="channels"):
            tf.nn.conv3d(x, f, [1, 1, 1, 1, 1], "SAME")
        with pytest.raises(ValueError, match="batch and channel"):
            tf.nn.conv3d(x, tf.constant(_f(2, 2, 2, 2, 1)), [2, 1, 1, 1, 1], "SAME")
        with pytest.raises(ValueError, match="padding"):
            tf.nn.max_pool3d(x, [1, 2, 2, 2, 1], [1, 1, 1, 1, 1], "FULL")


def test_pool_does_reject_same_padding_with_dilation():
    with tf.Graph().as_default():
        x = tf.constant(_x(1, 4, 4, 1))
        with pytest.raises(ValueError, match="dilation_rate"):
            tf.nn.pool(x, [2, 2], "MAX", "SAME", dilation_rate=[2, 2])
        with pytest.raises(ValueError, match="pooling_type"):
            tf.nn.pool(x, [2, 2], "MIN", "VALID")


def test_conv3d_does_handle_an_empty_batch():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3, 3, 3, 2])
        y = tf.nn.conv3d(x, _f(2, 2, 2, 2, 4), [1, 1, 1, 1, 1], "VALID")
        with tf.Session() as sess:
            got = sess.run(y, {x: np.zeros((0, 3, 3, 3, 2), np.float32)})
    assert got.shape == (0, 2, 2, 2, 4)


def test_embedding_lookup_sparse_fast_lookup_does_give_the_same_values():
    params = np.arange(12.0).reshape(4, 3)
    with tf.Graph().as_default():
        ids = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], tf.constant([3, 1, 3], tf.int64), [3, 2])
        fast = tf.nn.embedding_lookup_sparse(params, ids, None, allow_fast_lookup=True)
        slow = tf.nn.embedding_lookup_sparse(params, ids, None)
        got, want = _run([fast, slow])
    np.testing.assert_allclose(got, [[6.0, 7.0, 8.0], [0.0, 0.0, 0.0], [9.0, 10.0, 11.0]])
    np.testing.assert_allclose(got, want)
