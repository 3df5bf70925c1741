"""Behaviour of the codec and string names added to close tf.compat.v1 surface gaps: string
hashing, splitting and matching, image and audio codecs, parsing (values from TF 2.21)."""

import gzip
import io
import struct
import zlib

import numpy as np
import pytest

import dataflow as df

tf = df.compat.v1


def _run(t):
    graph = t.graph if hasattr(t, "graph") else tf.get_default_graph()
    with tf.Session(graph=graph) as sess:
        return sess.run(t)


def _sparse(value):
    return value.indices.tolist(), value.values.tolist(), value.dense_shape.tolist()


# -- hashing ---------------------------------------------------------------------------------------
HASHED = [
    b"",
    b"a",
    b"abc",
    b"hello",
    b"0123456789abcdefg",
    b"y" * 32,
    bytes(range(48)),
    bytes(range(65)),
    bytes(range(200)),
    "h\u00e9llo w\u00f6rld".encode(),
]
FAST = [
    1936946117179621455, 3694432073954588131, 2640714258260161385, 3786372426573024488,
    2800675501336285770, 2351315479247125839, 3719271712749750883, 478270155923209662,
    525935771297148851, 4390285103997208723,
]  # fmt: skip
LEGACY = [
    105434511174508091, 2996632905371535868, 1046625677629754806, 1331861223480393034,
    1785752214242554974, 3874897754820414304, 1012364170989806950, 2525959834624391444,
    4185538572715980330, 687603440920701714,
]  # fmt: skip
STRONG = [
    2300954737837343217, 2568798561151653994, 467923004791162527, 4232559499965833036,
    944306400137139166, 4150061048244364564, 3211593657674181847, 3173766696545641323,
    1816641315123940009, 1901328859805527958,
]  # fmt: skip


def test_to_hash_bucket_fast_does_bucket_by_farmhash_fingerprint64():
    with tf.Graph().as_default():
        buckets = tf.strings.to_hash_bucket_fast(HASHED, 2**62)
        assert buckets.dtype == tf.int64
        assert _run(buckets).tolist() == FAST
        small = tf.string_to_hash_bucket_fast(["a", "abc", "hello"], 7)
        assert _run(small).tolist() == [5, 1, 5]


def test_to_hash_bucket_does_bucket_by_the_legacy_hash64():
    with tf.Graph().as_default():
        assert _run(tf.strings.to_hash_bucket(HASHED, 2**62)).tolist() == LEGACY
        by_input = tf.string_to_hash_bucket(input=[["a"]], num_buckets=2**62)
        assert _run(by_input).tolist() == [[LEGACY[1]]]


def test_to_hash_bucket_strong_does_bucket_by_keyed_siphash():
    with tf.Graph().as_default():
        key = [1234, 0xFFFFFFFFFFFF]
        assert _run(tf.strings.to_hash_bucket_strong(HASHED, 2**62, key)).tolist() == STRONG
        assert tf.string_to_hash_bucket_strong is tf.strings.to_hash_bucket_strong


def test_to_hash_bucket_does_reject_bad_arguments():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="num_buckets"):
            tf.strings.to_hash_bucket_fast(["a"], 0)
        with pytest.raises(ValueError, match="key"):
            tf.strings.to_hash_bucket_strong(["a"], 3, [1])
        with pytest.raises(TypeError):
            tf.strings.to_hash_bucket_fast(tf.constant([1]), 3)


# -- splitting -------------------------------------------------------------------------------------
def test_strings_split_does_split_at_whitespace_into_a_sparse_tensor():
    with tf.Graph().as_default():
        value = _run(tf.strings.split(["hello world  a", "", " b "]))
        assert _sparse(value) == (
            [[0, 0], [0, 1], [0, 2], [2, 0]],
            [b"hello", b"world", b"a", b"b"],
            [3, 3],
        )


def test_strings_split_does_keep_empty_tokens_and_honour_maxsplit():
    with tf.Graph().as_default():
        value = _run(tf.strings.split(["a,b,,c", "d"], sep=","))
        assert value.values.tolist() == [b"a", b"b", b"", b"c", b"d"]
        assert value.dense_shape.tolist() == [2, 4]
        once = _run(tf.strings.split(["a,b,,c", "d"], sep=",", maxsplit=1))
        assert _sparse(once) == ([[0, 0], [0, 1], [1, 0]], [b"a", b"b,,c", b"d"], [2, 2])
        spaces = tf.strings.split(["  a  b c "], maxsplit=1, result_type="RaggedTensor")
        assert _run(spaces).to_list() == [[b"a", b"b c "]]


def test_strings_split_does_give_ragged_rows_for_any_rank():
    with tf.Graph().as_default():
        scalar = tf.strings.split(source="a b c", result_type="RaggedTensor")
        assert _run(scalar).to_list() == [[b"a", b"b", b"c"]]
        grid = [["a b", "c"], ["d e f", ""]]
        ragged = tf.strings.split(grid, result_type="RaggedTensor")
        assert _run(ragged).to_list() == [[[b"a", b"b"], [b"c"]], [[b"d", b"e", b"f"], []]]
        sparse = _run(tf.strings.split(grid))
        assert sparse.indices.tolist() == [
            [0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0], [1, 0, 1], [1, 0, 2]
        ]  # fmt: skip
        assert sparse.dense_shape.tolist() == [2, 2, 3]
        with pytest.raises(ValueError, match="result_type"):
            tf.strings.split(["a"], result_type="dense")


def test_string_split_does_split_at_any_delimiter_byte():
    with tf.Graph().as_default():
        value = _run(tf.string_split(["a,b;;c", "d"], delimiter=",;"))
        assert _sparse(value) == (
            [[0, 0], [0, 1], [0, 2], [1, 0]],
            [b"a", b"b", b"c", b"d"],
            [2, 3],
        )
        kept = _run(tf.string_split(["a,b;;c", "d"], ",;", skip_empty=False))
        assert kept.values.tolist() == [b"a", b"b", b"", b"c", b"d"]
        chars = _run(tf.string_split(["abc", "d"], delimiter=""))
        assert chars.values.tolist() == [b"a", b"b", b"c", b"d"]
        ragged = tf.string_split(["a b", "c"], result_type="RaggedTensor")
        assert _run(ragged).to_list() == [[b"a", b"b"], [b"c"]]


def test_string_split_does_need_a_vector():
    with tf.Graph().as_default():
        with pytest.raises(ValueError):
            tf.string_split([["a b"]])
        with pytest.raises(ValueError):
            tf.string_split(["a"], sep=",", delimiter=";")


def test_bytes_split_does_cut_into_bytes():
    with tf.Graph().as_default():
        rows = tf.strings.bytes_split(["ab", "", "h\u00e9j"])
        assert _run(rows).to_list() == [[b"a", b"b"], [], [b"h", b"\xc3", b"\xa9", b"j"]]
        assert _run(tf.strings.bytes_split("abc")).tolist() == [b"a", b"b", b"c"]
        grid = tf.strings.bytes_split([["ab", "c"], ["", "d"]])
        assert _run(grid).to_list() == [[[b"a", b"b"], [b"c"]], [[], [b"d"]]]


# -- matching and joining --------------------------------------------------------------------------
def test_regex_full_match_does_match_whole_strings():
    pytest.importorskip("re2")
    with tf.Graph().as_default():
        static = tf.strings.regex_full_match(["abc", "ab", "xabc"], "a.c")
        assert static.op.type == "StaticRegexFullMatch"
        assert _run(static).tolist() == [True, False, False]
        dynamic = tf.strings.regex_full_match(["abc", "ab", "xabc"], tf.constant("a.*"))
        assert dynamic.op.type == "RegexFullMatch"
        assert _run(dynamic).tolist() == [True, True, False]


def test_regex_full_match_does_reject_a_bad_pattern():
    pytest.importorskip("re2")
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Invalid pattern"):
            tf.strings.regex_full_match(["a"], "(a")
        bad = tf.strings.regex_full_match(["a"], tf.constant("(a"))
        with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid pattern"):
            _run(bad)


def test_unsorted_segment_join_does_join_by_segment():
    with tf.Graph().as_default():
        joined = tf.strings.unsorted_segment_join(["a", "b", "c", "d"], [1, 0, 1, 3], 4, ":")
        assert joined.shape.as_list() == [4]
        assert _run(joined).tolist() == [b"b", b"a:c", b"", b"d"]
        rows = tf.strings.unsorted_segment_join([["a", "b"], ["c", "d"]], [1, 1], 2, ":")
        assert _run(rows).tolist() == [[b"", b""], [b"a:c", b"b:d"]]


def test_unsorted_segment_join_does_reject_ids_out_of_range():
    with tf.Graph().as_default():
        for ids in ([-1, 0], [2, 0]):
            joined = tf.strings.unsorted_segment_join(["a", "b"], ids, 2)
            with pytest.raises(tf.errors.InvalidArgumentError, match="segment_ids"):
                _run(joined)


# -- image files -----------------------------------------------------------------------------------
def _chunk(kind, body):
    crc = struct.pack(">I", zlib.crc32(kind + body))
    return struct.pack(">I", len(body)) + kind + body + crc


def _png(width, height, depth, color, rows, interlace=0, extra=b""):
    header = struct.pack(">IIBBBBB", width, height, depth, color, 0, 0, interlace)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + extra
        + _chunk(b"IDAT", zlib.compress(rows))
        + _chunk(b"IEND", b"")
    )


RGB = np.array(
    [[[255, 0, 0], [0, 255, 0], [0, 0, 255]], [[10, 20, 30], [7, 7, 7], [200, 100, 50]]], np.uint8
)


def _palette_png(trns=False):
    """A 2-bit palette PNG of 2x3 pixels, indices [[0, 1, 2], [3, 2, 1]]."""
    palette = bytes([255, 0, 0, 0, 255, 0, 0, 0, 255, 9, 9, 9])
    extra = _chunk(b"PLTE", palette) + (_chunk(b"tRNS", bytes([0, 128])) if trns else b"")
    return _png(3, 2, 2, 3, bytes([0, 0b00011000, 0, 0b11100100]), extra=extra)


def _gray1_png():
    """A 1-bit gray PNG of 2x5 pixels: [[1, 0, 1, 1, 0], [0, 0, 1, 0, 1]]."""
    return _png(5, 2, 1, 0, bytes([0, 0b10110000, 0, 0b00101000]))


def _gray_trns_png():
    gray = np.array([[0, 50, 100], [150, 50, 255]], np.uint8)
    rows = b"".join(b"\x00" + r.tobytes() for r in gray)
    return _png(3, 2, 8, 0, rows, extra=_chunk(b"tRNS", struct.pack(">H", 50)))


def _rgb16_png():
    rgb = np.array(
        [[[300, 300, 300], [65535, 0, 1000]], [[12345, 54321, 999], [0, 65535, 40000]]], ">u2"
    )
    return _png(2, 2, 16, 2, b"".join(b"\x00" + r.tobytes() for r in rgb))


def _bmp(image, top_down=False):
    height, width, channels = image.shape
    row = (channels * width + 3) // 4 * 4
    order = [2, 1, 0, 3][:channels] if channels >= 3 else [0]
    pixels = b""
    for line in image if top_down else image[::-1]:
        data = line[:, order].tobytes()
        pixels += data + b"\0" * (row - len(data))
    header = b"BM" + struct.pack("<IHHI", 54 + len(pixels), 0, 0, 54)
    header += struct.pack(
        "<IiiHHIIiiII", 40, width, -height if top_down else height, 1, channels * 8, 0,
        len(pixels), 2835, 2835, 0, 0,
    )  # fmt: skip
    return header + pixels


# Two frames of RGB (the second RGB upside down), as Pillow writes them
GIF = (
    b"GIF89a\x03\x00\x02\x00\x82\x00\x00\x00\xff\x00\xc8d2\n\x14\x1e\x07\x07\x07\xff\x00\x00"
    b"\x00\x00\xff\x00\x00\x00\x00\x00\x00!\xf9\x04\x00\x05\x00\x00\x00,\x00\x00\x00\x00\x03"
    b"\x00\x02\x00\x00\x08\t\x00\t\x00( `@\x80\x80\x00!\xf9\x04\x01\x05\x00\x06\x00,\x00\x00"
    b"\x00\x00\x03\x00\x02\x00\x82\x00\xff\x00\xc8d2\n\x14\x1e\x07\x07\x07\xff\x00\x00\x00\x00"
    b"\xff\x00\x00\x00\x00\x00\x00\x08\t\x00\x05\x0c\x08@\x00@\x81\x80\x00;"
)


def _decoded(t):
    return _run(t).tolist()


def test_decode_png_does_convert_palettes_and_transparency_as_tf():
    with tf.Graph().as_default():
        assert _decoded(tf.io.decode_png(_palette_png())) == [
            [[255, 0, 0], [0, 255, 0], [0, 0, 255]], [[9, 9, 9], [0, 0, 255], [0, 255, 0]]
        ]  # fmt: skip
        assert _decoded(tf.image.decode_png(_palette_png(True))) == [
            [[255, 0, 0, 0], [0, 255, 0, 128], [0, 0, 255, 255]],
            [[9, 9, 9, 255], [0, 0, 255, 255], [0, 255, 0, 128]],
        ]
        gray = tf.io.decode_png(_palette_png(), channels=1)
        assert gray.shape.as_list() == [None, None, 1]
        assert _decoded(gray) == [[[76], [149], [29]], [[9], [29], [149]]]
        # TensorFlow's filler for a missing alpha is (1 << bit depth) - 1, as libpng adds it
        assert [p[3] for p in _decoded(tf.io.decode_png(_palette_png(), 4))[0]] == [3, 3, 3]
        assert _decoded(tf.io.decode_png(_gray_trns_png(), 4))[0] == [
            [0, 0, 0, 255], [50, 50, 50, 0], [100, 100, 100, 255]
        ]  # fmt: skip


def test_decode_png_does_expand_low_bit_depths_and_scale_to_uint16():
    with tf.Graph().as_default():
        assert _decoded(tf.io.decode_png(_gray1_png())) == [
            [[255], [0], [255], [255], [0]], [[0], [0], [255], [0], [255]]
        ]  # fmt: skip
        wide = tf.io.decode_png(_gray1_png(), 4, dtype=tf.uint16)
        assert wide.dtype == tf.uint16
        assert _decoded(wide)[0][:2] == [[65535, 65535, 65535, 257], [0, 0, 0, 257]]


def test_decode_png_does_read_16_bits_and_make_gray_as_libpng():
    with tf.Graph().as_default():
        data = _rgb16_png()
        assert _decoded(tf.io.decode_png(data, dtype=tf.uint16)) == [
            [[300, 300, 300], [65535, 0, 1000]], [[12345, 54321, 999], [0, 65535, 40000]]
        ]  # fmt: skip
        assert _decoded(tf.io.decode_png(data)) == [
            [[1, 1, 1], [255, 0, 3]], [[48, 212, 3], [0, 255, 156]]
        ]  # fmt: skip
        assert _decoded(tf.io.decode_png(data, 1, tf.uint16)) == [
            [[300], [19708]],
            [[35690], [43029]],
        ]
        assert _decoded(tf.io.decode_png(data, 1)) == [[[1], [76]], [[139], [168]]]


def test_decode_png_does_read_interlaced_images():
    image = (np.arange(9 * 10 * 3).reshape(9, 10, 3) * 7 % 256).astype(np.uint8)
    raw = b""
    passes = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2))
    for x0, y0, dx, dy in passes + ((0, 1, 1, 2),):
        sub = image[y0::dy, x0::dx]
        if sub.size:
            raw += b"".join(b"\x00" + r.tobytes() for r in sub)
    with tf.Graph().as_default():
        np.testing.assert_array_equal(_run(tf.io.decode_png(_png(10, 9, 8, 2, raw, 1))), image)


def test_encode_png_does_write_tfs_bytes_and_round_trip():
    with tf.Graph().as_default():
        encoded = _run(tf.io.encode_png(RGB))
        assert encoded == (
            b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x03\x00\x00\x00\x02\x08\x02\x00"
            b'\x00\x00\x12\x16\xf1M\x00\x00\x00\x17IDAT\x08\x99c\xf8\xcf\xc0\xc0\x00\xc1\\"r'
            b"\xec\xec\xec'R\x8c\x002n\x04\xad\xd7\x01\xac\xf7\x00\x00\x00\x00IEND\xaeB`\x82"
        )
        best = _run(tf.image.encode_png(RGB, compression=9))
        assert best[41:45] == b"\x08\xd7c\xf8"
        rng = np.random.default_rng(0)
        for image in (rng.integers(0, 65536, (5, 7, 2)).astype(np.uint16), RGB[..., :1]):
            again = tf.io.decode_png(tf.io.encode_png(image), dtype=tf.as_dtype(image.dtype))
            np.testing.assert_array_equal(_run(again), image)


def test_decode_png_does_reject_corrupt_and_oversized_data():
    with tf.Graph().as_default():
        for data in (_palette_png()[:40], b"\x89PNG\r\n\x1a\nxx", b""):
            with pytest.raises(tf.errors.InvalidArgumentError):
                _run(tf.io.decode_png(data))
        huge = _png(2**20, 2**20, 8, 0, b"\x00")
        with pytest.raises(tf.errors.InvalidArgumentError, match="too large"):
            _run(tf.io.decode_png(huge))
        # a large declared image whose data is not there fails before anything is allocated
        empty = _png(16000, 16000, 8, 6, b"\x00")
        with pytest.raises(tf.errors.InvalidArgumentError, match="Not enough image data"):
            _run(tf.io.decode_png(empty))
        bad_crc = bytearray(_gray1_png())
        bad_crc[30] ^= 1
        with pytest.raises(tf.errors.InvalidArgumentError, match="CRC"):
            _run(tf.io.decode_png(bytes(bad_crc)))
        with pytest.raises(ValueError, match="channels"):
            tf.io.decode_png(_gray1_png(), channels=2)


def test_decode_bmp_does_read_bgr_rows_as_tf():
    rgba = np.concatenate([RGB, np.arange(1, 7, dtype=np.uint8).reshape(2, 3, 1)], -1)
    with tf.Graph().as_default():
        assert _decoded(tf.io.decode_bmp(_bmp(RGB))) == RGB.tolist()
        assert _decoded(tf.image.decode_bmp(_bmp(RGB), 4))[1][2] == [200, 100, 50, 255]
        assert _decoded(tf.io.decode_bmp(_bmp(rgba, top_down=True))) == rgba.tolist()
        assert _decoded(tf.io.decode_bmp(_bmp(rgba, top_down=True), 3)) == RGB.tolist()
        assert _decoded(tf.io.decode_bmp(_bmp(RGB[..., :1]), 3))[1] == [
            [10, 10, 10], [7, 7, 7], [200, 200, 200]
        ]  # fmt: skip
        as_float = _run(tf.io.decode_image(_bmp(RGB), dtype=tf.float32))
        np.testing.assert_allclose(as_float, RGB / 255.0, rtol=1e-6)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Input size"):
            _run(tf.io.decode_bmp(_bmp(RGB)[:-1]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="DecodeBmp"):
            _run(tf.io.decode_bmp(_gray1_png()))


def test_decode_gif_does_give_every_frame():
    with tf.Graph().as_default():
        frames = tf.io.decode_gif(GIF)
        assert frames.shape.as_list() == [None, None, None, 3]
        assert _decoded(frames) == [RGB.tolist(), RGB[::-1].tolist()]
        assert _decoded(tf.io.decode_image(GIF, expand_animations=False)) == RGB.tolist()
        assert _run(tf.io.decode_image(GIF)).shape == (2, 2, 3, 3)
        with pytest.raises(tf.errors.InvalidArgumentError, match="animated"):
            _run(tf.io.decode_png(GIF))
        with pytest.raises(tf.errors.InvalidArgumentError):
            _run(tf.io.decode_gif(GIF[:60]))


def test_decode_image_does_reject_unknown_and_empty_data():
    with tf.Graph().as_default():
        with pytest.raises(tf.errors.InvalidArgumentError, match="Unknown image file format"):
            _run(tf.io.decode_image(b"hello"))
        with pytest.raises(tf.errors.InvalidArgumentError, match="empty"):
            _run(tf.io.decode_image(b""))
        sixteen = tf.io.decode_image(_gray1_png(), dtype=tf.uint16)
        assert _decoded(sixteen)[0][:2] == [[65535], [0]]


# -- JPEG and WebP (the images extra) --------------------------------------------------------------
def _jpeg():
    pytest.importorskip("simplejpeg")
    pytest.importorskip("PIL")
    return _run(tf.io.encode_jpeg(RGB, quality=90))


def test_decode_jpeg_does_give_tfs_pixels_for_each_dct_method():
    with tf.Graph().as_default():
        data = _jpeg()
        assert _decoded(tf.io.decode_jpeg(data)) == [
            [[80, 87, 20], [151, 158, 91], [56, 5, 110]], [[25, 32, 0], [8, 15, 0], [144, 93, 198]]
        ]  # fmt: skip
        accurate = tf.image.decode_jpeg(data, dct_method="INTEGER_ACCURATE")
        assert _decoded(accurate) == [
            [[79, 86, 19], [151, 158, 91], [59, 6, 112]], [[24, 31, 0], [8, 15, 0], [146, 93, 199]]
        ]  # fmt: skip
        gray = tf.io.decode_jpeg(data, channels=1)
        assert _decoded(gray) == [[[77], [148], [32]], [[22], [5], [120]]]
        wide = tf.io.decode_image(data, dtype=tf.uint16)
        assert _decoded(wide)[0][0] == [20480, 22272, 5120]


def test_decode_and_crop_jpeg_does_crop_the_window():
    with tf.Graph().as_default():
        data = _jpeg()
        crop = tf.io.decode_and_crop_jpeg(data, [1, 1, 1, 2])
        assert _decoded(crop) == [[[8, 15, 0], [144, 93, 198]]]
        with pytest.raises(tf.errors.InvalidArgumentError, match="crop window"):
            _run(tf.image.decode_and_crop_jpeg(data, [1, 1, 2, 2]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="JPEG only"):
            _run(tf.io.decode_and_crop_jpeg(_gray1_png(), [0, 0, 1, 1]))


def test_extract_jpeg_shape_and_is_jpeg_do_read_the_header():
    with tf.Graph().as_default():
        data = _jpeg()
        shape = tf.io.extract_jpeg_shape(data, tf.int64)
        assert shape.dtype == tf.int64 and _run(shape).tolist() == [2, 3, 3]
        assert _run(tf.image.extract_jpeg_shape(data)).dtype == np.int32
        assert _run(tf.io.is_jpeg(data)) and not _run(tf.image.is_jpeg(_gray1_png()))
        with pytest.raises(tf.errors.InvalidArgumentError):
            _run(tf.io.extract_jpeg_shape(b"\xff\xd8\xff\xe0"))


def test_decode_jpeg_does_reject_bad_arguments():
    with tf.Graph().as_default():
        data = _jpeg()
        with pytest.raises(tf.errors.InvalidArgumentError, match="4 channels"):
            _run(tf.io.decode_jpeg(data, channels=4))
        with pytest.raises(ValueError, match="ratio"):
            tf.io.decode_jpeg(data, ratio=3)
        with pytest.raises(ValueError, match="dct_method"):
            tf.io.decode_jpeg(data, dct_method="FLOAT")
        with pytest.raises(ValueError, match="try_recover_truncated"):
            tf.io.decode_jpeg(data, try_recover_truncated=True)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Premature end"):
            _run(tf.io.decode_jpeg(data[:-20]))


def test_decode_jpeg_does_step_over_stray_bytes_as_libjpeg():
    with tf.Graph().as_default():
        data = _jpeg()
        stray = data[:20] + b"\x00\x01" + data[20:]  # between the JFIF and DQT segments
        np.testing.assert_array_equal(_run(tf.io.decode_jpeg(stray)), _run(tf.io.decode_jpeg(data)))
        assert _run(tf.io.extract_jpeg_shape(stray)).tolist() == [2, 3, 3]


def test_encode_jpeg_does_write_tfs_bytes():
    import hashlib

    def digest(t):
        return hashlib.sha256(_run(t)).hexdigest()[:16]

    with tf.Graph().as_default():
        _jpeg()
        gray = tf.io.encode_jpeg(RGB[..., :1], format="grayscale", quality=80)
        assert digest(gray) == "70cfc78ca9672202"
        options = {"quality": 70, "chroma_downsampling": False, "density_unit": "cm"}
        dense = tf.io.encode_jpeg(RGB, x_density=5, y_density=7, xmp_metadata="<meta/>", **options)
        assert digest(dense) == "7036ed6ea15846f9"
        progressive = tf.image.encode_jpeg(RGB, progressive=True, optimize_size=True)
        assert digest(progressive) == "7050325b03a0ac45"
        with pytest.raises(ValueError, match="channels"):
            tf.io.encode_jpeg(RGB, format="grayscale")
        with pytest.raises(ValueError, match="density_unit"):
            tf.io.encode_jpeg(RGB, density_unit="mm")


def test_adjust_jpeg_quality_does_round_trip_in_the_images_dtype():
    with tf.Graph().as_default():
        _jpeg()
        assert _decoded(tf.image.adjust_jpeg_quality(RGB, 30))[0] == [
            [122, 107, 100], [77, 62, 55], [103, 77, 124]
        ]  # fmt: skip
        floats = tf.image.adjust_jpeg_quality(tf.constant(RGB / 255.0, tf.float32), 30)
        assert floats.dtype == tf.float32
        np.testing.assert_allclose(_run(floats)[1][0], [0.16862746, 0.10980393, 0.08235294])
        randomized = tf.image.random_jpeg_quality(RGB, 20, 90, seed=3)
        assert _run(randomized).shape == (2, 3, 3)
        with pytest.raises(ValueError, match="less than"):
            tf.image.random_jpeg_quality(RGB, 50, 50)


def test_decode_webp_does_give_frames():
    PIL = pytest.importorskip("PIL.Image")
    out = io.BytesIO()
    PIL.fromarray(RGB).save(out, "WEBP", lossless=True)
    with tf.Graph().as_default():
        frames = tf.io.decode_webp(out.getvalue())
        assert _decoded(frames) == [RGB.tolist()]
        assert _decoded(tf.io.decode_image(out.getvalue(), expand_animations=False)) == RGB.tolist()
        with pytest.raises(tf.errors.InvalidArgumentError, match="channels"):
            _run(tf.io.decode_webp(out.getvalue(), channels=4))


# -- audio -----------------------------------------------------------------------------------------
WAV = (
    b"RIFF4\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x02\x00\x80>\x00\x00\x00\xfa\x00\x00"
    b"\x04\x00\x10\x00data\x10\x00\x00\x00\x00@\x00\xe0\xff\x7f\x00\x80\xcd\x0c\x00\x00\x00"
    b"\x00\xff\x7f"
)


def test_encode_wav_does_write_tfs_bytes():
    audio = [[0.5, -0.25], [1.0, -1.0], [0.1, 0.0], [-0.00001, 2.0]]
    with tf.Graph().as_default():
        assert _run(tf.audio.encode_wav(tf.constant(audio), 16000)) == WAV


def test_decode_wav_does_pad_and_repeat_channels():
    with tf.Graph().as_default():
        audio, rate = _run(tf.audio.decode_wav(WAV))
        assert rate == 16000
        np.testing.assert_array_equal(
            audio, np.float32([[0.5, -0.25], [0.9999695, -1], [0.1000061, 0], [0, 0.9999695]])
        )
        wider = _run(tf.audio.decode_wav(WAV, desired_channels=3, desired_samples=5)).audio
        assert wider.shape == (5, 3)
        np.testing.assert_array_equal(wider[:, 2], wider[:, 1])
        assert not wider[4].any()
        mono = tf.audio.decode_wav(WAV, desired_channels=1, desired_samples=2).audio
        assert mono.shape.as_list() == [2, 1]
        np.testing.assert_array_equal(_run(mono), np.float32([[0.5], [0.9999695]]))


def test_decode_wav_does_reject_corrupt_files():
    with tf.Graph().as_default():
        for data in (WAV[:50], b"RIFX" + WAV[4:], WAV.replace(b"\x10\x00data", b"\x08\x00data")):
            with pytest.raises(tf.errors.InvalidArgumentError):
                _run(tf.audio.decode_wav(data))
        with pytest.raises(ValueError):
            tf.audio.encode_wav(tf.constant([0.5]), 8000)


# -- decode_compressed -----------------------------------------------------------------------------
def test_decode_compressed_does_inflate_zlib_and_gzip():
    with tf.Graph().as_default():
        zipped = [zlib.compress(b"hello"), zlib.compress(b"")]
        assert _run(tf.decode_compressed(zipped, "ZLIB")).tolist() == [b"hello", b""]
        assert _run(tf.io.decode_compressed([[gzip.compress(b"ab")]], "GZIP")).tolist() == [[b"ab"]]
        assert _run(tf.io.decode_compressed(b"raw")) == b"raw"
        for bad in (b"garbage", zlib.compress(b"hello world")[:-3]):
            with pytest.raises(tf.errors.InvalidArgumentError):
                _run(tf.io.decode_compressed(bad, "ZLIB"))
        with pytest.raises(ValueError, match="compression_type"):
            tf.io.decode_compressed(b"x", "BZ2")


# -- SequenceExample -------------------------------------------------------------------------------
def _varint(n):
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number, body):
    return _varint(number << 3 | 2) + _varint(len(body)) + body


def _feature(kind, values):
    if kind == "b":
        return _field(1, b"".join(_field(1, v) for v in values))
    if kind == "f":
        return _field(2, _field(1, struct.pack(f"<{len(values)}f", *values)))
    return _field(3, _field(1, b"".join(_varint(v & (2**64 - 1)) for v in values)))


def _sequence_example(context, lists):
    entries = b"".join(
        _field(1, _field(1, k.encode()) + _field(2, _feature(*v))) for k, v in context.items()
    )
    feature_lists = b"".join(
        _field(
            1, _field(1, k.encode()) + _field(2, b"".join(_field(1, _feature(*s)) for s in steps))
        )
        for k, steps in lists.items()
    )
    return _field(1, entries) + (_field(2, feature_lists) if lists else b"")


SEQ1 = _sequence_example(
    {"len": ("i", [3]), "name": ("b", [b"ab"])},
    {
        "tok": [("i", [1, 2]), ("i", [3, 4]), ("i", [5, 6])],
        "w": [("f", [0.5]), ("f", []), ("f", [1.5, 2.5])],
    },
)
SEQ2 = _sequence_example(
    {"len": ("i", [1]), "tags": ("b", [b"x", b"y"])}, {"tok": [("i", [7, 8])], "w": []}
)
SEQ3 = _sequence_example({}, {})


def _sequence_features(allow_missing=False):
    context = {
        "len": tf.FixedLenFeature([], tf.int64, default_value=-1 if allow_missing else None),
        "name": tf.FixedLenFeature([], tf.string, default_value="none"),
        "tags": tf.VarLenFeature(tf.string),
    }
    sequence = {
        "tok": tf.FixedLenSequenceFeature([2], tf.int64, allow_missing=allow_missing),
        "w": tf.VarLenFeature(tf.float32),
    }
    return context, sequence


def test_parse_single_sequence_example_does_parse_context_and_steps():
    with tf.Graph().as_default():
        context, lists = tf.io.parse_single_sequence_example(SEQ1, *_sequence_features())
        assert lists["tok"].shape.as_list() == [None, 2]
        with tf.Session() as sess:
            c, s = sess.run((context, lists))
        assert (c["len"], c["name"]) == (3, b"ab")
        assert c["tags"].dense_shape.tolist() == [0]
        assert s["tok"].tolist() == [[1, 2], [3, 4], [5, 6]]
        assert s["w"].indices.tolist() == [[0, 0], [2, 0], [2, 1]]
        assert s["w"].values.tolist() == [0.5, 1.5, 2.5]
        assert s["w"].dense_shape.tolist() == [3, 2]
        only = tf.parse_single_sequence_example(SEQ1, {"len": tf.FixedLenFeature([], tf.int64)})
        assert _run(only[0]["len"]) == 3 and only[1] == {}


def test_parse_single_sequence_example_does_use_defaults_or_fail():
    with tf.Graph().as_default():
        context, lists = tf.io.parse_single_sequence_example(SEQ3, *_sequence_features(True))
        with tf.Session() as sess:
            c, s = sess.run((context, lists))
        assert (c["len"], c["name"]) == (-1, b"none")
        assert s["tok"].shape == (0, 2) and s["w"].dense_shape.tolist() == [0, 0]
        missing = tf.io.parse_single_sequence_example(SEQ3, *_sequence_features())
        with pytest.raises(tf.errors.InvalidArgumentError, match="len"):
            _run(missing[0]["len"])
        wrong = {"tok": tf.FixedLenSequenceFeature([3], tf.int64)}
        with pytest.raises(tf.errors.InvalidArgumentError, match="Number of int64 values"):
            _run(tf.io.parse_single_sequence_example(SEQ1, None, wrong)[1]["tok"])
        with pytest.raises(tf.errors.InvalidArgumentError, match="Data types"):
            kind = {"len": tf.FixedLenFeature([], tf.float32)}
            _run(tf.io.parse_single_sequence_example(SEQ1, kind)[0]["len"])
        with pytest.raises(ValueError, match="must be None"):
            padded = {"tok": tf.FixedLenSequenceFeature([2], tf.int64, True, default_value=0)}
            tf.io.parse_sequence_example([SEQ1], None, padded)


def test_parse_sequence_example_does_pad_a_batch_and_give_lengths():
    with tf.Graph().as_default():
        parsed = tf.io.parse_sequence_example([SEQ1, SEQ2, SEQ3], *_sequence_features(True))
        with tf.Session() as sess:
            c, s, lengths = sess.run(parsed)
        assert c["len"].tolist() == [3, 1, -1]
        assert c["name"].tolist() == [b"ab", b"none", b"none"]
        assert c["tags"].indices.tolist() == [[1, 0], [1, 1]]
        assert c["tags"].dense_shape.tolist() == [3, 2]
        assert s["tok"].tolist() == [
            [[1, 2], [3, 4], [5, 6]], [[7, 8], [0, 0], [0, 0]], [[0, 0], [0, 0], [0, 0]]
        ]  # fmt: skip
        assert s["w"].indices.tolist() == [[0, 0, 0], [0, 2, 0], [0, 2, 1]]
        assert s["w"].dense_shape.tolist() == [3, 3, 2]
        assert lengths["tok"].tolist() == [3, 1, 0]
        with pytest.raises(tf.errors.InvalidArgumentError, match="Could not parse"):
            _run(
                tf.io.parse_sequence_example([b"\x0a\x05ab"], {"n": tf.VarLenFeature(tf.int64)})[0][
                    "n"
                ].values
            )


# -- unicode ---------------------------------------------------------------------------------------
def test_unicode_decode_does_give_code_points_with_tfs_error_handling():
    with tf.Graph().as_default():
        rows = tf.strings.unicode_decode(["h\u00e9llo".encode(), b"", b"a\xffb"], "UTF-8")
        assert _run(rows).to_list() == [[104, 233, 108, 108, 111], [], [97, 65533, 98]]
        replaced = tf.strings.unicode_decode(
            [b"a\xff\xfeb", b"\xe2\x82", b"\xe2\x82a"], "UTF-8", replacement_char=63
        )
        assert _run(replaced).to_list() == [[97, 63, 63, 98], [63], [63, 97]]
        ignored = tf.strings.unicode_decode([b"\x01a\xff"], "utf-8", "ignore", 65533, True)
        assert _run(ignored).to_list() == [[97]]
        controls = tf.strings.unicode_decode(
            ["\x01\x1f\x7f\u0085 a\t".encode()], "UTF-8", replace_control_characters=True
        )
        assert _run(controls).to_list() == [[65533, 65533, 127, 133, 32, 97, 65533]]
        assert _run(tf.strings.unicode_decode("h\u00e9", "UTF-8")).tolist() == [104, 233]
        wide = [b"\x00a\xd8\x00\x00b\x00", "h\u00e9".encode("utf-16-le")]
        assert _run(tf.strings.unicode_decode(wide[:1], "UTF-16-BE")).to_list() == [
            [97, 65533, 98, 65533]
        ]
        assert _run(tf.strings.unicode_decode(wide[1:], "UTF-16-LE")).to_list() == [[104, 233]]
        with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid formatting"):
            _run(tf.strings.unicode_decode([b"a\xffb"], "UTF-8", errors="strict"))
        with pytest.raises(ValueError, match="converter"):
            tf.strings.unicode_decode([b"h"], "NOPE")


def test_unicode_decode_with_offsets_does_give_byte_starts_for_any_rank():
    with tf.Graph().as_default():
        points, starts = tf.strings.unicode_decode_with_offsets(
            [["h\u00e9", "x"], ["", "ab"]], "UTF-8"
        )
        assert _run(points).to_list() == [[[104, 233], [120]], [[], [97, 98]]]
        assert _run(starts).to_list() == [[[0, 1], [0]], [[], [0, 1]]]
        bad = tf.strings.unicode_decode_with_offsets([b"a\xff\xe2\x82b"], "UTF-8")
        assert _run(bad[1]).to_list() == [[0, 1, 2, 4]]


def test_unicode_split_does_cut_into_characters():
    with tf.Graph().as_default():
        chars = tf.strings.unicode_split(["h\u00e9llo", "ab"], "UTF-8")
        assert _run(chars).to_list() == [[b"h", b"\xc3\xa9", b"l", b"l", b"o"], [b"a", b"b"]]
        assert _run(tf.strings.unicode_split("h\u00e9", "UTF-8")).tolist() == [b"h", b"\xc3\xa9"]
        assert _run(tf.strings.unicode_split([b"a\xffb"], "UTF-8")).to_list() == [
            [b"a", b"\xef\xbf\xbd", b"b"]
        ]
        chars, starts = tf.strings.unicode_split_with_offsets(["h\u00e9llo"], "UTF-8")
        assert _run(starts).to_list() == [[0, 1, 3, 4, 5]]
        nested = tf.strings.unicode_split(tf.ragged.constant([["h\u00e9"], ["a", "b"]]), "UTF-8")
        assert _run(nested).to_list() == [[[b"h", b"\xc3\xa9"]], [[b"a"], [b"b"]]]


def test_unicode_encode_does_encode_the_last_dimension():
    with tf.Graph().as_default():
        ragged = tf.ragged.constant([[104, 233], [], [0x110000, 65]])
        assert _run(tf.strings.unicode_encode(ragged, "UTF-8")).tolist() == [
            b"h\xc3\xa9", b"", b"\xef\xbf\xbdA"
        ]  # fmt: skip
        dense = tf.strings.unicode_encode([[104, 233], [65, 66]], "UTF-16-BE")
        assert _run(dense).tolist() == [b"\x00h\x00\xe9", b"\x00A\x00B"]
        assert _run(tf.strings.unicode_encode([104, 233], "UTF-8")) == b"h\xc3\xa9"
        cube = tf.strings.unicode_encode([[[104, 105]], [[106, 107]]], "UTF-8")
        assert _run(cube).tolist() == [[b"hi"], [b"jk"]]
        skipped = tf.strings.unicode_encode([104, -5, 0xD800], "UTF-8", errors="ignore")
        assert _run(skipped) == b"h"
        assert _run(tf.strings.unicode_encode([104, -5], "UTF-8", replacement_char=63)) == b"h?"
        with pytest.raises(tf.errors.InvalidArgumentError):
            _run(tf.strings.unicode_encode([104, -5], "UTF-8", errors="strict"))
        with pytest.raises(ValueError, match="output_encoding"):
            tf.strings.unicode_encode([104], "UTF-16-LE")


def test_unicode_transcode_does_reencode_with_tfs_errors():
    with tf.Graph().as_default():
        text = ["h\u00e9llo".encode(), b"a\xffb"]
        assert _run(tf.strings.unicode_transcode(text, "UTF-8", "UTF-16-BE")).tolist() == [
            b"\x00h\x00\xe9\x00l\x00l\x00o", b"\x00a\xff\xfd\x00b"
        ]  # fmt: skip
        ignored = tf.strings.unicode_transcode(text[1:], "UTF-8", "UTF-16-BE", errors="ignore")
        assert _run(ignored).tolist() == [b"\x00a\x00b"]
        controls = tf.strings.unicode_transcode(
            [b"a\x01b"], "UTF-8", "UTF-8", replace_control_characters=True
        )
        assert _run(controls).tolist() == [b"a\xef\xbf\xbdb"]
        with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid formatting"):
            _run(tf.strings.unicode_transcode(text[1:], "UTF-8", "UTF-8", errors="strict"))


# -- ngrams and format -----------------------------------------------------------------------------
def test_ngrams_does_pad_and_keep_tensors_dense():
    with tf.Graph().as_default():
        assert _run(tf.strings.ngrams(["a", "b", "c", "d"], 2)).tolist() == [b"a b", b"b c", b"c d"]
        grid = tf.strings.ngrams([["a", "b", "c"], ["d", "e", "f"]], 2, separator="-")
        assert _run(grid).tolist() == [[b"a-b", b"b-c"], [b"d-e", b"e-f"]]
        rows = tf.ragged.constant([["a", "b", "c"], ["d"], []])
        padded = tf.strings.ngrams(rows, [2, 3], pad_values=("<", ">"))
        assert _run(padded).to_list() == [
            [b"< a", b"a b", b"b c", b"c >", b"< < a", b"< a b", b"a b c", b"b c >", b"c > >"],
            [b"< d", b"d >", b"< < d", b"< d >", b"d > >"],
            [b"< >", b"< < >", b"< > >"],
        ]
        once = tf.strings.ngrams(rows, 3, pad_values="#", padding_width=1)
        assert _run(once).to_list() == [[b"# a b", b"a b c", b"b c #"], [b"# d #"], []]
        short = tf.strings.ngrams(rows, 4, "#".join(" " * 2), "#", 1, True)
        assert _run(short).to_list() == [[b"# # a # b # c", b"a # b # c # #"], [b"# # d # #"], []]
        preserved = tf.strings.ngrams(rows, 3, preserve_short_sequences=True)
        assert _run(preserved).to_list() == [[b"a b c"], [b"d"], []]


def test_ngrams_does_reject_bad_padding():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="pad_values must be provided"):
            tf.strings.ngrams(["a"], 2, padding_width=1)
        with pytest.raises(ValueError, match="greater than 0"):
            tf.strings.ngrams(["a"], 2, pad_values="#", padding_width=0)
        with pytest.raises(ValueError, match="rank>0"):
            tf.strings.ngrams("a", 2)


def test_strings_format_does_print_tensors_as_tf():
    with tf.Graph().as_default():
        two = tf.strings.format("x={} y={}", [tf.constant([1, 2, 3, 4, 5, 6, 7]), tf.constant(2.5)])
        assert _run(two) == b"x=[1 2 3 ... 5 6 7] y=2.5"
        grid = tf.strings.format("a {} b", tf.constant([[1.5, 2.0], [3.25, 4.0]]), summarize=1)
        assert _run(grid) == b"a [[1.5 2]\n [3.25 4]] b"
        text = tf.strings.format("{}", tf.constant(['a"b', "c\nd"]))
        assert _run(text) == b'["a\\"b" "c\\nd"]'
        assert _run(tf.strings.format("{}", tf.constant("ab"))) == b'"ab"'
        floats = tf.constant([1 / 3, 1e-5, 100.0, -0.0, float("nan"), float("inf")], tf.float32)
        assert _run(tf.strings.format("{}", floats)) == b"[0.333333343 1e-05 100 -0 nan inf]"
        doubles = tf.constant([0.1, 1 / 3, 1e100, 123456789.0], tf.float64)
        assert (
            _run(tf.strings.format("{}", doubles)) == b"[0.1 0.33333333333333331 1e+100 123456789]"
        )
        cube = tf.strings.format("{}", tf.reshape(tf.range(60), [3, 4, 5]), summarize=1)
        assert _run(cube) == (
            b"[[[0 ... 4]\n  ...\n  [15 ... 19]]\n\n ...\n\n [[40 ... 44]\n  ...\n  [55 ... 59]]]"
        )
        assert _run(tf.strings.format("{}", tf.zeros([2, 0]))) == b"[\n ...]"
        assert _run(tf.strings.format("%", tf.constant([True, False]), placeholder="%")) == b"[1 0]"
        everything = tf.strings.format("{}", tf.range(10), summarize=-1)
        assert _run(everything) == b"[0 1 2 3 4 5 6 7 8 9]"
        with pytest.raises(ValueError, match="expects 2 tensors"):
            tf.strings.format("{} {}", [tf.constant(1)])


# -- SparseFeature and RaggedFeature ---------------------------------------------------------------
def _example(features):
    entries = b"".join(
        _field(1, _field(1, k.encode()) + _field(2, _feature(*v))) for k, v in features.items()
    )
    return _field(1, entries)


RX1 = _example(
    {
        "v": ("i", [1, 2, 3, 4, 5, 6]),
        "len": ("i", [2, 1, 3]),
        "splits": ("i", [0, 2, 3, 6]),
        "starts": ("i", [0, 2, 3]),
        "limits": ("i", [2, 3, 6]),
        "ids": ("i", [0, 0, 1, 2, 2, 2]),
        "idx": ("i", [3, 0]),
        "idx2": ("i", [1, 2]),
        "val": ("f", [0.5, 1.5]),
    }
)
RX2 = _example(
    {
        "v": ("i", [7, 8]),
        "len": ("i", [0, 2]),
        "splits": ("i", [0, 0, 2]),
        "starts": ("i", [0, 0]),
        "limits": ("i", [0, 2]),
        "ids": ("i", [1, 1]),
        "idx": ("i", [1]),
        "idx2": ("i", [0]),
        "val": ("f", [2.5]),
    }
)


def test_sparse_feature_does_merge_index_and_value_features():
    with tf.Graph().as_default():
        assert tf.SparseFeature is tf.io.SparseFeature
        merged = tf.io.parse_example(
            [RX1, RX2], {"sp": tf.SparseFeature("idx", "val", tf.float32, 5)}
        )
        value = _run(merged["sp"])
        assert value.indices.tolist() == [[0, 0], [0, 3], [1, 1]]
        assert value.values.tolist() == [1.5, 0.5, 2.5]
        assert value.dense_shape.tolist() == [2, 5]
        grid = tf.io.SparseFeature(["idx", "idx2"], "val", tf.float32, [4, 3])
        value = _run(tf.io.parse_example([RX1, RX2], {"sp": grid})["sp"])
        assert value.indices.tolist() == [[0, 0, 2], [0, 3, 1], [1, 1, 0]]
        assert value.dense_shape.tolist() == [2, 4, 3]
        single = tf.io.parse_single_example(
            RX1, {"sp": tf.SparseFeature("idx", "val", tf.float32, 5)}
        )
        value = _run(single["sp"])
        assert value.indices.tolist() == [[0], [3]] and value.dense_shape.tolist() == [5]
        both = {
            "sp": tf.SparseFeature("idx", "val", tf.float32, 5, already_sorted=True),
            "idx": tf.io.VarLenFeature(tf.int64),
        }
        parsed = tf.io.parse_example([RX1, RX2], both)
        assert sorted(parsed) == ["idx", "sp"]
        assert _run(parsed["sp"]).indices.tolist() == [[0, 3], [0, 0], [1, 1]]


def test_ragged_feature_does_cut_values_by_each_kind_of_partition():
    R = tf.io.RaggedFeature
    rows = [[[1, 2], [3], [4, 5, 6]], [[], [7, 8]]]
    with tf.Graph().as_default():
        for partition in (
            R.RowLengths("len"),
            R.RowSplits("splits"),
            R.RowStarts("starts"),
            R.RowLimits("limits"),
            R.ValueRowIds("ids"),
        ):
            features = {"r": R(tf.int64, value_key="v", partitions=(partition,))}
            batch = tf.io.parse_example([RX1, RX2], features)["r"]
            assert batch.row_splits.dtype == tf.int32
            assert _run(batch).to_list() == rows, partition
            single = tf.io.parse_single_example(RX1, features)["r"]
            assert _run(single).to_list() == rows[0], partition


def test_ragged_feature_does_give_plain_and_uniform_rows():
    R = tf.io.RaggedFeature
    with tf.Graph().as_default():
        plain = tf.io.parse_example([RX1, RX2], {"v": R(tf.int64, row_splits_dtype=tf.int64)})
        assert plain["v"].row_splits.dtype == tf.int64
        assert _run(plain["v"]).to_list() == [[1, 2, 3, 4, 5, 6], [7, 8]]
        vector = tf.io.parse_single_example(RX1, {"v": R(tf.int64)})["v"]
        assert _run(vector).tolist() == [1, 2, 3, 4, 5, 6]
        pairs = {"r": R(tf.int64, value_key="v", partitions=(R.UniformRowLength(2),))}
        assert _run(tf.io.parse_single_example(RX1, pairs)["r"]).tolist() == [
            [1, 2],
            [3, 4],
            [5, 6],
        ]
        assert _run(tf.io.parse_example([RX1, RX2], pairs)["r"]).to_list() == [
            [[1, 2], [3, 4], [5, 6]], [[7, 8]]
        ]  # fmt: skip
        nested = (R.RowLengths("len"), R.UniformRowLength(1))
        both = tf.io.parse_example([RX1, RX2], {"r": R(tf.int64, value_key="v", partitions=nested)})
        assert _run(both["r"]).to_list() == [[[[1], [2]], [[3]], [[4], [5], [6]]], [[], [[7], [8]]]]


# -- decode_json_example ---------------------------------------------------------------------------
def test_decode_json_example_does_write_tfs_binary_example():
    ints = '{"features": {"feature": {"a": {"int64List": {"value": ["1", 2, "-3"]}}}}}'
    data = '{"features": {"feature": {"b": {"bytes_list": {"value": ["YWJj", "eA"]}}}}}'
    floats = '{"features": {"feature": {"c": {"floatList": {"value": [1.5, "NaN", -2]}}}}}'
    with tf.Graph().as_default():
        assert _run(tf.io.decode_json_example(ints)) == (
            b"\n\x18\n\x16\n\x01a\x12\x11\x1a\x0f\x08\x01\x08\x02\x08\xfd\xff\xff\xff\xff\xff"
            b"\xff\xff\xff\x01"
        )
        assert _run(tf.decode_json_example([data, floats])).tolist() == [
            b"\n\x11\n\x0f\n\x01b\x12\n\n\x08\n\x03abc\n\x01x",
            b"\n\x18\n\x16\n\x01c\x12\x11\x12\x0f\r\x00\x00\xc0?\r\x00\x00\xc0\x7f\r\x00\x00\x00\xc0",
        ]
        empty = '{"features": {"feature": {"e": {"floatList": {}}}}}'
        assert _run(tf.io.decode_json_example([[empty, "{}"]])).tolist() == [
            [b"\n\t\n\x07\n\x01e\x12\x02\x12\x00", b""]
        ]
        parsed = tf.io.parse_example(
            tf.io.decode_json_example([ints]), {"a": tf.io.VarLenFeature(tf.int64)}
        )
        assert _run(parsed["a"]).values.tolist() == [1, 2, -3]


def test_decode_json_example_does_reject_malformed_json():
    with tf.Graph().as_default():
        for text in (
            '{"features": 3}',
            '{"feat": {}}',
            "{",
            '{"features": {"feature": {"b": {"bytesList": {"value": ["@@"]}}}}}',
            '{"features": {"feature": {"b": {"bytesList": {}, "int64List": {}}}}}',
        ):
            with pytest.raises(tf.errors.InvalidArgumentError, match="parsing JSON"):
                _run(tf.io.decode_json_example(text))


# -- decode_proto and encode_proto -----------------------------------------------------------------
def _rec_descriptors():
    """A FileDescriptorSet of message test.Rec with fields of many types (proto2)."""
    descriptor_pb2 = pytest.importorskip("google.protobuf.descriptor_pb2")
    F = descriptor_pb2.FieldDescriptorProto
    files = descriptor_pb2.FileDescriptorSet()
    file = files.file.add(name="rec.proto", package="test", syntax="proto2")
    colors = file.enum_type.add(name="Color")
    colors.value.add(name="RED", number=0)
    colors.value.add(name="BLUE", number=5)
    message = file.message_type.add(name="Rec")
    for name, number, kind, label, extra in (
        ("i32", 1, F.TYPE_INT32, 1, {"default_value": "7"}),
        ("u64", 4, F.TYPE_UINT64, 1, {}),
        ("s32", 5, F.TYPE_SINT32, 1, {}),
        ("f", 7, F.TYPE_FLOAT, 1, {"default_value": "1.5"}),
        ("b", 9, F.TYPE_BOOL, 1, {}),
        ("s", 10, F.TYPE_STRING, 1, {"default_value": "hi"}),
        ("ri", 12, F.TYPE_INT32, 3, {}),
        ("e", 13, F.TYPE_ENUM, 1, {"type_name": ".test.Color", "default_value": "BLUE"}),
        ("child", 14, F.TYPE_MESSAGE, 1, {"type_name": ".test.Rec"}),
        ("rs", 15, F.TYPE_STRING, 3, {}),
        ("rp", 16, F.TYPE_SINT64, 3, {}),
    ):
        field = message.field.add(name=name, number=number, type=kind, label=label, **extra)
        if name == "rp":
            field.options.packed = True
    return files.SerializeToString()


# test.Rec(i32=-3, u64=2**63 + 5, s32=-9, f=0.25, b=True, s="héllo", ri=[1, 2, 3], e=5,
# child=Rec(i32=42), rs=["x", "yz"], rp=[-1, 2]) and test.Rec(ri=[9], rs=["q"]), as protobuf
# writes them
REC_A = (
    b"\x08\xfd\xff\xff\xff\xff\xff\xff\xff\xff\x01 \x85\x80\x80\x80\x80\x80\x80\x80\x80\x01(\x11"
    b"=\x00\x00\x80>H\x01R\x06h\xc3\xa9llo`\x01`\x02`\x03h\x05r\x02\x08*z\x01xz\x02yz\x82\x01"
    b"\x02\x01\x04"
)
REC_B = b"`\tz\x01q"


def test_decode_proto_does_read_fields_with_defaults_and_padding(tmp_path):
    path = tmp_path / "rec.desc"
    path.write_bytes(_rec_descriptors())
    names = ["i32", "u64", "s32", "f", "b", "s", "ri", "e", "child", "rs", "rp"]
    types = [tf.int32, tf.uint64, tf.int32, tf.float32, tf.bool, tf.string, tf.int64, tf.int32]
    types += [tf.string, tf.string, tf.int64]
    with tf.Graph().as_default():
        sizes, values = tf.io.decode_proto(
            [REC_A, REC_B, b""], "test.Rec", names, types, descriptor_source=str(path)
        )
        assert sizes.shape.as_list() == [3, 11]
        with tf.Session() as sess:
            sizes, values = sess.run((sizes, values))
        assert sizes.tolist() == [
            [1, 1, 1, 1, 1, 1, 3, 1, 1, 2, 2], [0] * 6 + [1, 0, 0, 1, 0], [0] * 11
        ]  # fmt: skip
        got = dict(zip(names, (v.tolist() for v in values)))
        assert got["i32"] == [[-3], [7], [7]]
        assert got["u64"] == [[2**63 + 5], [0], [0]] and values[1].dtype == np.uint64
        assert got["s32"] == [[-9], [0], [0]]
        assert got["f"] == [[0.25], [1.5], [1.5]]
        assert got["s"] == [["h\u00e9llo".encode()], [b"hi"], [b"hi"]]
        assert got["ri"] == [[1, 2, 3], [9, 0, 0], [0, 0, 0]]
        assert got["e"] == [[5], [5], [5]]
        assert got["child"] == [[b"\x08*"], [b""], [b""]]
        assert got["rs"] == [[b"x", b"yz"], [b"q", b""], [b"", b""]]
        assert got["rp"] == [[-1, 2], [0, 0], [0, 0]]


def test_decode_proto_does_read_text_and_well_known_types(tmp_path):
    path = tmp_path / "rec.desc"
    path.write_bytes(_rec_descriptors())
    with tf.Graph().as_default():
        text = tf.io.decode_proto(
            ['i32: 5 ri: 1 ri: 2 s: "x"'], "test.Rec", ["i32", "ri", "s"],
            [tf.int32, tf.int32, tf.string], descriptor_source=str(path), message_format="text",
        )  # fmt: skip
        sizes, values = _run(text.sizes), [_run(v).tolist() for v in text.values]
        assert sizes.tolist() == [[1, 2, 1]] and values == [[[5]], [[1, 2]], [[b"x"]]]
        duration = tf.io.decode_proto(
            [b"\x08\x05\x10\x07"], "google.protobuf.Duration", ["seconds", "nanos"],
            [tf.int64, tf.int32],
        )  # fmt: skip
        assert [_run(v).tolist() for v in duration.values] == [[[5]], [[7]]]


def test_decode_proto_does_reject_bad_fields_and_data(tmp_path):
    path = str(tmp_path / "rec.desc")
    (tmp_path / "rec.desc").write_bytes(_rec_descriptors())
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Unexpected output type"):
            tf.io.decode_proto([REC_A], "test.Rec", ["s"], [tf.int32], descriptor_source=path)
        with pytest.raises(ValueError, match="Unknown field"):
            tf.io.decode_proto([REC_A], "test.Rec", ["zz"], [tf.int32], descriptor_source=path)
        with pytest.raises(ValueError, match="No descriptor"):
            tf.io.decode_proto([REC_A], "test.No", ["i32"], [tf.int32], descriptor_source=path)
        corrupt = tf.io.decode_proto(
            [b"\x08"], "test.Rec", ["i32"], [tf.int32], descriptor_source=path
        )
        with pytest.raises(tf.errors.DataLossError):
            _run(corrupt.sizes)


def test_encode_proto_does_write_tfs_bytes(tmp_path):
    path = str(tmp_path / "rec.desc")
    (tmp_path / "rec.desc").write_bytes(_rec_descriptors())
    with tf.Graph().as_default():
        values = [
            tf.constant([[5], [0]]),
            tf.constant([["hey"], [""]]),
            tf.constant([[1, 2, 3], [4, 0, 0]]),
            tf.constant([[1.5], [0]], tf.float32),
            tf.constant([["x", "y"], ["", ""]]),
            tf.constant([[-1, 300], [0, 0]], tf.int64),
        ]
        sizes = [[1, 1, 3, 1, 2, 2], [0, 0, 1, 0, 0, 0]]
        names = ["i32", "s", "ri", "f", "rs", "rp"]
        encoded = tf.io.encode_proto(sizes, values, names, "test.Rec", descriptor_source=path)
        assert encoded.shape.as_list() == [2]
        assert _run(encoded).tolist() == [
            b"\x08\x05=\x00\x00\xc0?R\x03hey`\x01`\x02`\x03z\x01xz\x01y\x82\x01\x03\x01\xd8\x04",
            b"`\x04",
        ]
        nested = tf.io.encode_proto(
            [[1, 1]], [tf.constant([[True]]), tf.constant([[b"\x08*"]])], ["b", "child"],
            "test.Rec", descriptor_source=path,
        )  # fmt: skip
        assert _run(nested).tolist() == [b"H\x01r\x02\x08*"]
        ordered = tf.io.encode_proto(
            [[1, 1]], [tf.constant([[7]]), tf.constant([[5]])], ["e", "i32"], "test.Rec",
            descriptor_source=path,
        )  # fmt: skip
        assert _run(ordered).tolist() == [b"\x08\x05h\x07"]
        duration = tf.io.encode_proto(
            [[1, 1]], [tf.constant([[5]], tf.int64), tf.constant([[7]])], ["seconds", "nanos"],
            "google.protobuf.Duration",
        )  # fmt: skip
        assert _run(duration).tolist() == [b"\x08\x05\x10\x07"]
        with pytest.raises(tf.errors.InvalidArgumentError, match="size 3"):
            _run(tf.io.encode_proto([[3]], [tf.constant([[1, 2]])], ["ri"], "test.Rec", path))
        with pytest.raises(ValueError, match="Unexpected output type"):
            tf.io.encode_proto([[1]], [tf.constant([[7]])], ["u64"], "test.Rec", path)
