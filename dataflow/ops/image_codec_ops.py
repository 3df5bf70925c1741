"""The image codec ops of ``tf.io`` and ``tf.image``: DecodePng, DecodeJpeg, DecodeAndCropJpeg,
DecodeBmp, DecodeGif, DecodeWebP, DecodeImage, EncodePng, EncodeJpeg,
EncodeJpegVariableQuality and ExtractJpegShape, on the codecs of
`dataflow.ops.image_codecs`.

As in TensorFlow every decode op reads whichever of JPEG, PNG, GIF, BMP and WebP its bytes
hold (``decode_png`` of a JPEG decodes it, ``decode_gif`` of a PNG gives one frame), except
that only ``decode_bmp`` and ``decode_image`` read BMP and ``decode_and_crop_jpeg`` reads
JPEG only.  PNG, BMP and GIF need nothing beyond numpy; JPEG and WebP need the ``images``
extra (``pip install 'dataflow[images]'``).  None of these ops has a gradient.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor, name_scope
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from . import image_codecs as _codecs
from .image_ops import convert_image_dtype
from .math_ops import check_dtype

__all__ = [
    "adjust_jpeg_quality",
    "decode_and_crop_jpeg",
    "decode_bmp",
    "decode_gif",
    "decode_image",
    "decode_jpeg",
    "decode_png",
    "decode_webp",
    "encode_jpeg",
    "encode_png",
    "extract_jpeg_shape",
    "is_jpeg",
    "random_jpeg_quality",
]

_DECODE_TYPES = (
    "DecodePng",
    "DecodeJpeg",
    "DecodeAndCropJpeg",
    "DecodeBmp",
    "DecodeGif",
    "DecodeWebP",
    "DecodeImage",
)
_DCT_METHODS = ("", "INTEGER_FAST", "INTEGER_ACCURATE")


def _fail(message: str):
    raise InvalidArgumentError(None, None, message)


def _scalar_contents(op) -> Tensor:
    contents = op.inputs[0]
    check_dtype(contents.dtype, frozenset({_dtypes.string}), f"Input 'contents' of '{op.type}'")
    if not contents.shape.is_compatible_with([]):
        raise ValueError(f"{op.type}: contents must be a scalar, got shape {contents.shape}")
    return contents


def _check_decode_attrs(op_type: str, attrs: dict) -> None:
    channels = attrs.get("channels", 3)
    if channels not in (0, 1, 3, 4):
        raise ValueError(f"{op_type}: `channels` must be 0, 1, 3 or 4 but got {channels}")
    if op_type in ("DecodeJpeg", "DecodeAndCropJpeg"):
        if attrs["ratio"] not in (1, 2, 4, 8):
            raise ValueError(f"{op_type}: ratio must be 1, 2, 4, or 8, got {attrs['ratio']}")
        if attrs["dct_method"] not in _DCT_METHODS:
            raise ValueError(
                f"{op_type}: dct_method must be one of {{'', 'INTEGER_FAST', "
                f"'INTEGER_ACCURATE'}}, got {attrs['dct_method']!r}"
            )
        if attrs["try_recover_truncated"]:
            raise ValueError(
                f"{op_type}: try_recover_truncated=True is not supported (a truncated JPEG is "
                "an error here)"
            )
    dtype = attrs.get("dtype", _dtypes.uint8)
    allowed = {
        "DecodePng": (_dtypes.uint8, _dtypes.uint16),
        "DecodeImage": (_dtypes.uint8, _dtypes.uint16, _dtypes.float32),
        "DecodeWebP": (_dtypes.uint8,),
    }.get(op_type, (_dtypes.uint8,))
    if dtype not in allowed:
        names = ", ".join(d.name for d in allowed)
        raise TypeError(f"{op_type}: `dtype` must be one of {names}, got {dtype.name}")


def _infer_decode(op):
    _scalar_contents(op)
    attrs = op.attrs
    _check_decode_attrs(op.type, attrs)
    dtype = attrs.get("dtype", _dtypes.uint8)
    channels = attrs.get("channels", 0) or None
    if op.type == "DecodeAndCropJpeg":
        window = op.inputs[1]
        check_dtype(window.dtype, frozenset({_dtypes.int32}), "Input 'crop_window'")
        if not window.shape.is_compatible_with([4]):
            raise ValueError(f"crop_window must be a vector of 4, got shape {window.shape}")
    if op.type == "DecodeGif":
        return [(dtype, TensorShape([None, None, None, 3]))]
    if op.type == "DecodeWebP":
        return [(dtype, TensorShape([None, None, None, channels]))]
    if op.type == "DecodeImage" and attrs["expand_animations"]:
        return [(dtype, TensorShape(None))]
    return [(dtype, TensorShape([None, None, channels]))]


def _scale(image: np.ndarray, bits: int, dtype) -> np.ndarray:
    """An image of ``bits``-bit samples in ``dtype`` as TensorFlow converts it: uint16 by
    multiplying 8-bit samples by 256, float32 by dividing by the largest sample."""
    dtype = np.dtype(dtype)
    if dtype == np.uint8 or (dtype == np.uint16 and bits == 16):
        return image.astype(dtype)
    if dtype == np.uint16:
        return image.astype(np.uint16) * 256
    return image.astype(np.float32) * np.float32(1.0 / (2**bits - 1))


def _decode(op_type: str, attrs: dict, data: bytes, crop_window=None) -> np.ndarray:
    """TensorFlow's DecodeImageV2 kernel: the bytes decoded by their own format, shaped and
    typed as ``op_type`` gives them."""
    channels = attrs.get("channels", 3 if op_type == "DecodeGif" else 0)
    dtype = _dtypes.numpy_dtype(attrs.get("dtype", _dtypes.uint8))
    expand = attrs.get("expand_animations", True)
    if not data:
        _fail("Input is empty.")
    kind = _codecs.sniff(data)
    if not kind:
        _fail("Unknown image file format. One of JPEG, PNG, GIF, BMP, WebP required.")
    if op_type == "DecodeAndCropJpeg" and kind != "jpeg":
        _fail(f"DecodeAndCropJpeg operation can run on JPEG only, but detected {kind.upper()}.")
    if op_type == "DecodeBmp" and kind not in ("bmp", "webp"):
        _fail(
            f"Trying to decode {kind.upper()} format using DecodeBmp op. Use "
            f"`decode_{kind}` or `decode_image` instead."
        )
    four_d = op_type == "DecodeGif"
    if kind == "jpeg":
        fast = attrs.get("dct_method", "") != "INTEGER_ACCURATE"
        image = _codecs.decode_jpeg(
            data,
            channels,
            attrs.get("ratio", 1),
            attrs.get("fancy_upscaling", True),
            fast,
        )
        if crop_window is not None:
            image = _crop(image, crop_window)
        image = _scale(image, 8, dtype)
    elif kind == "png":
        if channels not in (0, 1, 3, 4):
            _fail(f"`channels` must be 0, 1, 3 or 4 but got {channels}")
        bits = 8 if dtype == np.uint8 else 16
        image = _scale(_codecs.decode_png(data, channels, bits), bits, dtype)
    elif kind == "gif":
        if channels not in (0, 3):
            _fail(f"channels must be 0 or 3 for GIF, got {channels}")
        frames = _codecs.decode_gif(data, first_only=not expand)
        if op_type in ("DecodePng", "DecodeJpeg") and len(frames) != 1:
            _fail(
                f"Got {len(frames)} frames, but animated gifs can only be decoded by "
                "tf.io.decode_gif or tf.io.decode_image"
            )
        four_d = op_type == "DecodeGif" or (op_type == "DecodeImage" and expand)
        image = _scale(frames if four_d else frames[0], 8, dtype)
        return image
    elif kind == "bmp":
        if op_type not in ("DecodeBmp", "DecodeImage"):
            _fail(
                "Trying to decode BMP format using a wrong op. Use `decode_bmp` or "
                f"`decode_image` instead. Op used: {op_type}"
            )
        image = _scale(_codecs.decode_bmp(data, channels), 8, dtype)
    else:
        if channels not in (0, 3, 4):
            _fail("WebP only supports 3 or 4 channels")
        if dtype != np.uint8:
            _fail("WebP only supports uint8 for dtype")
        frames = _codecs.decode_webp(data, channels)
        return frames if expand else frames[0]
    return image[None] if four_d else image


def _crop(image: np.ndarray, window) -> np.ndarray:
    window = np.asarray(window)
    if window.shape != (4,):
        _fail(f"crop_window must be a vector of four elements, got shape {list(window.shape)}")
    top, left, height, width = (int(v) for v in window)
    rows, columns = image.shape[:2]
    if (
        height <= 0
        or width <= 0
        or top < 0
        or left < 0
        or top + height > rows
        or left + width > columns
    ):
        _fail(
            "jpeg::Uncompress failed. Invalid JPEG data or crop window: "
            f"[{top}, {left}, {height}, {width}] in an image of {rows}x{columns}"
        )
    return np.ascontiguousarray(image[top : top + height, left : left + width])


def _decode_kernel(op_type: str):
    def build(attrs):
        def decode(contents, *crop):
            try:
                return _decode(op_type, attrs, bytes(contents[()]), *crop)
            except _codecs.CodecError as e:
                raise InvalidArgumentError(None, None, f"{op_type}: {e}") from None

        return decode

    return build


for _type in _DECODE_TYPES:
    define_op(_type, _infer_decode, _decode_kernel(_type))


def _contents(contents) -> Tensor:
    return convert_to_tensor(contents, _dtypes.string, name="contents")


def _decode_op(op_type: str, inputs, attrs: dict, name: Optional[str]) -> Tensor:
    return apply_op(op_type, inputs, attrs, name or op_type).outputs[0]


def decode_png(contents, channels: int = 0, dtype=_dtypes.uint8, name: Optional[str] = None):
    """A PNG (or a JPEG, or a GIF of one frame) as ``[height, width, channels]`` uint8 or
    uint16; ``channels`` 0 keeps the image's own, 1 makes it gray, 3 RGB, 4 RGBA."""
    attrs = {"channels": int(channels), "dtype": _dtypes.as_dtype(dtype)}
    return _decode_op("DecodePng", (_contents(contents),), attrs, name)


def _jpeg_attrs(channels, ratio, fancy_upscaling, try_recover_truncated, fraction, dct):
    return {
        "channels": int(channels),
        "ratio": int(ratio),
        "fancy_upscaling": bool(fancy_upscaling),
        "try_recover_truncated": bool(try_recover_truncated),
        "acceptable_fraction": float(fraction),
        "dct_method": str(dct),
    }


def decode_jpeg(
    contents,
    channels: int = 0,
    ratio: int = 1,
    fancy_upscaling: bool = True,
    try_recover_truncated: bool = False,
    acceptable_fraction=1,
    dct_method: str = "",
    name: Optional[str] = None,
):
    """A JPEG (or a PNG, or a GIF of one frame) as ``[height, width, channels]`` uint8,
    scaled down by ``ratio`` (1, 2, 4 or 8) while decoding.  ``dct_method`` ``""`` is the
    fast integer DCT, as in TensorFlow, ``"INTEGER_ACCURATE"`` the accurate one.
    ``acceptable_fraction`` matters only for truncated data, which is an error here
    (``try_recover_truncated=True`` is not supported)."""
    attrs = _jpeg_attrs(
        channels, ratio, fancy_upscaling, try_recover_truncated, acceptable_fraction, dct_method
    )
    return _decode_op("DecodeJpeg", (_contents(contents),), attrs, name)


def decode_and_crop_jpeg(
    contents,
    crop_window,
    channels: int = 0,
    ratio: int = 1,
    fancy_upscaling: bool = True,
    try_recover_truncated: bool = False,
    acceptable_fraction=1,
    dct_method: str = "",
    name: Optional[str] = None,
):
    """`decode_jpeg` of the window ``[y, x, height, width]`` of the image only; a window
    reaching outside the (scaled) image is an error."""
    attrs = _jpeg_attrs(
        channels, ratio, fancy_upscaling, try_recover_truncated, acceptable_fraction, dct_method
    )
    window = convert_to_tensor(crop_window, _dtypes.int32, name="crop_window")
    return _decode_op("DecodeAndCropJpeg", (_contents(contents), window), attrs, name)


def decode_bmp(contents, channels: int = 0, name: Optional[str] = None):
    """An uncompressed BMP of 8, 24 or 32 bits per pixel as ``[height, width, channels]``
    uint8 (0 keeps the image's own channels, 3 RGB, 4 RGBA)."""
    return _decode_op("DecodeBmp", (_contents(contents),), {"channels": int(channels)}, name)


def decode_gif(contents, name: Optional[str] = None):
    """The frames of a GIF as ``[frames, height, width, 3]`` uint8 (each frame drawn over the
    one before); a PNG or JPEG gives one frame."""
    return _decode_op("DecodeGif", (_contents(contents),), {}, name)


def decode_webp(contents, channels: int = 0, dtype=_dtypes.uint8, name: Optional[str] = None):
    """The frames of a WebP as ``[frames, height, width, channels]`` uint8: RGB, or RGBA for
    an image with alpha and for animations (``channels`` must be 0 or that number)."""
    attrs = {"channels": int(channels), "dtype": _dtypes.as_dtype(dtype)}
    return _decode_op("DecodeWebP", (_contents(contents),), attrs, name)


def decode_image(
    contents,
    channels=None,
    dtype=_dtypes.uint8,
    name: Optional[str] = None,
    expand_animations: bool = True,
):
    """A JPEG, PNG, GIF, BMP or WebP image: ``[height, width, channels]``, or for GIF and WebP
    ``[frames, height, width, channels]`` unless ``expand_animations`` is False (then their
    first frame).  ``dtype`` uint8, uint16 or float32 come from the op (floats in [0, 1]);
    any other dtype is converted from uint16 with ``convert_image_dtype``."""
    dtype = _dtypes.as_dtype(dtype)
    with name_scope(name or "decode_image"):
        attrs = {
            "channels": 0 if channels is None else int(channels),
            "dtype": dtype if dtype in (_dtypes.uint8, _dtypes.uint16, _dtypes.float32) else None,
            "expand_animations": bool(expand_animations),
        }
        if attrs["dtype"] is None:
            attrs["dtype"] = _dtypes.uint16
            image = _decode_op("DecodeImage", (_contents(contents),), attrs, "DecodeImage")
            return convert_image_dtype(image, dtype)
        return _decode_op("DecodeImage", (_contents(contents),), attrs, "DecodeImage")


# -- EncodePng -------------------------------------------------------------------------------------
def _check_image(op, types, name: str = "image") -> Tensor:
    image = op.inputs[0]
    check_dtype(image.dtype, frozenset(types), f"Input '{name}' of '{op.type}'")
    image.shape.with_rank(3)
    return image


def _infer_encode_png(op):
    _check_image(op, (_dtypes.uint8, _dtypes.uint16))
    if not -1 <= op.attrs["compression"] <= 9:
        raise ValueError(f"compression should be in [-1,9], got {op.attrs['compression']}")
    return [(_dtypes.string, TensorShape([]))]


def _encode_png_kernel(attrs):
    def encode_png(image):
        if image.ndim != 3:
            _fail(f"image must be 3-dimensional, got shape {list(image.shape)}")
        try:
            return np.array(_codecs.encode_png(image, attrs["compression"]), dtype=object)
        except _codecs.CodecError as e:
            raise InvalidArgumentError(None, None, f"EncodePng: {e}") from None

    return encode_png


define_op("EncodePng", _infer_encode_png, _encode_png_kernel)


def encode_png(image, compression: int = -1, name: Optional[str] = None):
    """``image`` (``[height, width, channels]`` uint8 or uint16, 1 to 4 channels) as the
    bytes of a PNG, compressed at zlib level ``compression`` (-1: zlib's default); the
    bytes are TensorFlow's (libpng's filters and window)."""
    image = convert_to_tensor(image, name="image")
    attrs = {"compression": int(compression)}
    return apply_op("EncodePng", (image,), attrs, name or "EncodePng").outputs[0]


# -- EncodeJpeg / EncodeJpegVariableQuality --------------------------------------------------------
_DENSITY_UNITS = {"in": 1, "cm": 2}
_JPEG_FORMATS = {"": None, "grayscale": 1, "rgb": 3}


def _check_jpeg_attrs(attrs: dict) -> None:
    if attrs["format"] not in _JPEG_FORMATS:
        raise ValueError(f"format must be '', 'grayscale' or 'rgb', got {attrs['format']!r}")
    if not 0 <= attrs["quality"] <= 100:
        raise ValueError(f"quality must be in [0,100], got {attrs['quality']}")
    if attrs["density_unit"] not in _DENSITY_UNITS:
        raise ValueError(f"density_unit must be 'in' or 'cm', got {attrs['density_unit']!r}")


def _infer_encode_jpeg(op):
    image = _check_image(op, (_dtypes.uint8,))
    if op.type == "EncodeJpeg":
        _check_jpeg_attrs(op.attrs)
    else:
        check_dtype(op.inputs[1].dtype, frozenset({_dtypes.int32}), "Input 'quality'")
        op.inputs[1].shape.with_rank(0)
    want = _JPEG_FORMATS.get(op.attrs.get("format", ""))
    channels = image.shape[2] if image.shape.ndims else None
    if channels is not None and channels not in ((want,) if want else (1, 3)):
        raise ValueError(f"{op.type}: image must have 1 or 3 channels, got {channels}")
    return [(_dtypes.string, TensorShape([]))]


def _encode_jpeg(image: np.ndarray, attrs: dict, quality: int) -> np.ndarray:
    if image.ndim != 3:
        _fail(f"image must be 3-dimensional, got shape {list(image.shape)}")
    want = _JPEG_FORMATS.get(attrs.get("format", ""))
    if want and image.shape[2] != want:
        _fail(f"image must have {want} channels for format {attrs['format']!r}")
    try:
        encoded = _codecs.encode_jpeg(
            image,
            quality,
            attrs.get("progressive", False),
            attrs.get("optimize_size", False),
            attrs.get("chroma_downsampling", True),
            _DENSITY_UNITS[attrs.get("density_unit", "in")],
            attrs.get("x_density", 300),
            attrs.get("y_density", 300),
            attrs.get("xmp_metadata", "").encode("utf-8"),
        )
    except _codecs.CodecError as e:
        raise InvalidArgumentError(None, None, f"EncodeJpeg: {e}") from None
    return np.array(encoded, dtype=object)


def _encode_jpeg_kernel(attrs):
    return lambda image: _encode_jpeg(image, attrs, attrs["quality"])


def _encode_jpeg_variable_quality_kernel(attrs):
    def encode(image, quality):
        quality = int(quality)
        if not 0 <= quality <= 100:
            _fail(f"quality must be in [0,100], got {quality}")
        return _encode_jpeg(image, attrs, quality)

    return encode


define_op("EncodeJpeg", _infer_encode_jpeg, _encode_jpeg_kernel)
define_op("EncodeJpegVariableQuality", _infer_encode_jpeg, _encode_jpeg_variable_quality_kernel)


def encode_jpeg(
    image,
    format: str = "",  # noqa: A002 - mirrors tf.io.encode_jpeg
    quality: int = 95,
    progressive: bool = False,
    optimize_size: bool = False,
    chroma_downsampling: bool = True,
    density_unit: str = "in",
    x_density: int = 300,
    y_density: int = 300,
    xmp_metadata: str = "",
    name: Optional[str] = None,
):
    """``image`` (``[height, width, 1 or 3]`` uint8) as the bytes of a JPEG at ``quality``
    (0 to 100), progressive or not, with optimized Huffman tables or not, chroma at half
    resolution or not, the given JFIF density and XMP metadata.  ``format`` "grayscale" or
    "rgb" demands 1 or 3 channels.  Needs the ``images`` extra (Pillow)."""
    image = convert_to_tensor(image, name="image")
    attrs = {
        "format": str(format),
        "quality": int(quality),
        "progressive": bool(progressive),
        "optimize_size": bool(optimize_size),
        "chroma_downsampling": bool(chroma_downsampling),
        "density_unit": str(density_unit),
        "x_density": int(x_density),
        "y_density": int(y_density),
        "xmp_metadata": str(xmp_metadata),
    }
    return apply_op("EncodeJpeg", (image,), attrs, name or "EncodeJpeg").outputs[0]


def _encode_jpeg_variable_quality(image, quality, name: Optional[str] = None) -> Tensor:
    quality = convert_to_tensor(quality, _dtypes.int32, name="quality")
    op_type = "EncodeJpegVariableQuality"
    return apply_op(op_type, (image, quality), {}, name or op_type).outputs[0]


# -- ExtractJpegShape ------------------------------------------------------------------------------
def _infer_extract_jpeg_shape(op):
    _scalar_contents(op)
    check_dtype(op.attrs["output_type"], frozenset({_dtypes.int32, _dtypes.int64}), "'output_type'")
    return [(op.attrs["output_type"], TensorShape([3]))]


def _extract_jpeg_shape_kernel(attrs):
    dtype = _dtypes.numpy_dtype(attrs["output_type"])

    def extract_jpeg_shape(contents):
        try:
            height, width, components, _ = _codecs.jpeg_header(bytes(contents[()]))
        except _codecs.CodecError as e:
            raise InvalidArgumentError(
                None, None, f"Could not read image: not a valid JPEG ({e})"
            ) from None
        return np.array([height, width, components], dtype=dtype)

    return extract_jpeg_shape


define_op("ExtractJpegShape", _infer_extract_jpeg_shape, _extract_jpeg_shape_kernel)


def extract_jpeg_shape(contents, output_type=_dtypes.int32, name: Optional[str] = None):
    """``[height, width, channels]`` of a JPEG, read from its header without decoding it."""
    attrs = {"output_type": _dtypes.as_dtype(output_type)}
    op_type = "ExtractJpegShape"
    return apply_op(op_type, (_contents(contents),), attrs, name or op_type).outputs[0]


def is_jpeg(contents, name: Optional[str] = None):
    """Whether the bytes start as a JPEG does (``\\xff\\xd8\\xff``), a bool scalar."""
    from .math_ops import equal
    from .string_ops import substr

    with name_scope(name or "is_jpeg"):
        start = substr(_contents(contents), 0, 3)
        return equal(start, convert_to_tensor(b"\xff\xd8\xff", _dtypes.string), name="is_jpeg")


# -- JPEG quality ----------------------------------------------------------------------------------
def adjust_jpeg_quality(image, jpeg_quality, dct_method: str = "", name: Optional[str] = None):
    """``image`` after a round trip through JPEG at ``jpeg_quality`` (0 to 100, an int or a
    tensor), in its own dtype; 1 or 3 channels."""
    with name_scope(name or "adjust_jpeg_quality"):
        image = convert_to_tensor(image, name="image")
        channels = image.shape.as_list()[-1] if image.shape.ndims else None
        if channels is None:
            raise ValueError("adjust_jpeg_quality: the number of channels must be known")
        original = image.dtype
        image = convert_image_dtype(image, _dtypes.uint8, saturate=True)
        encoded = _encode_jpeg_variable_quality(image, jpeg_quality)
        decoded = decode_jpeg(encoded, channels=channels, dct_method=dct_method)
        return convert_image_dtype(decoded, original, saturate=True)


def random_jpeg_quality(image, min_jpeg_quality, max_jpeg_quality, seed=None):
    """`adjust_jpeg_quality` at a quality drawn uniformly from
    ``[min_jpeg_quality, max_jpeg_quality)`` at each run."""
    from .random_ops import random_uniform

    if not all(0 <= q <= 100 for q in (min_jpeg_quality, max_jpeg_quality)):
        raise ValueError("jpeg encoding range must be between 0 and 100.")
    if min_jpeg_quality >= max_jpeg_quality:
        raise ValueError("`min_jpeg_quality` must be less than `max_jpeg_quality`.")
    quality = random_uniform([], min_jpeg_quality, max_jpeg_quality, seed=seed, dtype=_dtypes.int32)
    return adjust_jpeg_quality(image, quality)


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import NotDifferentiable  # noqa: E402

for _type in (*_DECODE_TYPES, "EncodePng", "EncodeJpeg", "EncodeJpegVariableQuality"):
    NotDifferentiable(_type)
NotDifferentiable("ExtractJpegShape")
