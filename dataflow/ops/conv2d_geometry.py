"""What the 2-d convolution and pooling ops share: the geometry of their windows (output sizes,
padding, strides, dilations, NHWC and NCHW), the checks of the arguments the functions take,
and the attributes they become."""

from __future__ import annotations

import contextlib
from typing import Optional

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..framework.errors import InvalidArgumentError
from ..framework.graph import _user_location
from ..framework.tensor_shape import TensorShape

DATA_FORMATS = ("NHWC", "NCHW")


TO_NHWC = (0, 2, 3, 1)


TO_NCHW = (0, 3, 1, 2)


# -- geometry --------------------------------------------------------------------------------------
def _output_size(size: int, window: int, stride: int, padding: str, explicit=(0, 0)):
    """The output extent and the padding before and after along one spatial dimension;
    ``window`` is the effective (dilated) window."""
    if padding == "SAME":
        out = -(-size // stride)
        total = max((out - 1) * stride + window - size, 0)
        return out, total // 2, total - total // 2
    before, after = explicit if padding == "EXPLICIT" else (0, 0)
    return (size + before + after - window) // stride + 1, before, after


def _explicit_pairs(attrs) -> tuple:
    flat = attrs.get("explicit_paddings") or (0, 0, 0, 0)
    return (flat[0], flat[1]), (flat[2], flat[3])


class _Geometry:
    """Where the windows of one convolution or pooling lie over an NHWC input: the filter size
    ``(kh, kw)``, ``strides``, ``dilations``, the effective window ``(eh, ew)`` (dilated), the
    output size ``(oh, ow)`` and the padding ``((top, bottom), (left, right))``."""

    __slots__ = ("kh", "kw", "strides", "dilations", "eh", "ew", "oh", "ow", "pads")

    def __init__(self, h: int, w: int, kh: int, kw: int, attrs: dict):
        self.kh, self.kw = kh, kw
        self.strides = attrs["strides"]
        self.dilations = attrs.get("dilations", (1, 1))
        (sh, sw), (dh, dw) = self.strides, self.dilations
        self.eh, self.ew = (kh - 1) * dh + 1, (kw - 1) * dw + 1
        explicit_h, explicit_w = _explicit_pairs(attrs)
        self.oh, top, bottom = _output_size(h, self.eh, sh, attrs["padding"], explicit_h)
        self.ow, left, right = _output_size(w, self.ew, sw, attrs["padding"], explicit_w)
        self.pads = ((top, bottom), (left, right))

    def offset_slices(self, i: int, j: int):
        """The rows and columns of the padded input that window offset ``(i, j)`` covers in
        every window, as slices."""
        (sh, sw), (dh, dw) = self.strides, self.dilations
        return (
            slice(i * dh, i * dh + (self.oh - 1) * sh + 1, sh),
            slice(j * dw, j * dw + (self.ow - 1) * sw + 1, sw),
        )


def _pad_spatial(x, pads, fill):
    """``x`` (NHWC) padded by ``pads = ((top, bottom), (left, right))`` with ``fill``."""
    (top, bottom), (left, right) = pads
    if not (top or bottom or left or right):
        return x
    n, h, w, c = x.shape
    out = np.full((n, h + top + bottom, w + left + right, c), fill, dtype=x.dtype)
    out[:, top : top + h, left : left + w, :] = x
    return out


def _im2col_view(x, g: _Geometry):
    """The windows of the NHWC ``x`` as a strided view ``(N, OH, OW, KH, KW, C)``, no copy."""
    (sh, sw), (dh, dw) = g.strides, g.dilations
    padded = _pad_spatial(x, g.pads, 0)
    windows = sliding_window_view(padded, (g.eh, g.ew), axis=(1, 2))
    windows = windows[:, : (g.oh - 1) * sh + 1 : sh, : (g.ow - 1) * sw + 1 : sw, :, ::dh, ::dw]
    return windows.transpose(0, 1, 2, 4, 5, 3)


def _col2im(columns, x_shape, g: _Geometry, buffer_order=(0, 1, 2, 3)):
    """The NHWC array of ``x_shape`` whose every element is the sum of the window entries of
    ``columns`` (indexed ``[n, oh, ow, kh, kw, c]``, any strides) that cover it: the transpose
    of `_im2col_view`.  ``buffer_order`` is the memory order of the accumulator, as a
    permutation of NHWC; the adds run fastest when it matches the memory order of ``columns``.
    """
    n, h, w, c = x_shape
    (top, bottom), (left, right) = g.pads
    full = (n, h + top + bottom, w + left + right, c)
    order = tuple(buffer_order)
    inverse = tuple(int(k) for k in np.argsort(order))
    padded = np.zeros(tuple(full[k] for k in order), dtype=columns.dtype).transpose(inverse)
    for i in range(g.kh):
        for j in range(g.kw):
            rows, cols = g.offset_slices(i, j)
            padded[:, rows, cols, :] += columns[:, :, :, i, j, :]
    return padded[:, top : top + h, left : left + w, :]


def _to_nhwc(x, nchw: bool):
    return x.transpose(TO_NHWC) if nchw else x


def _from_nhwc(y, nchw: bool):
    return np.ascontiguousarray(y.transpose(TO_NCHW)) if nchw else y


def _layout_kernel(nhwc_fn, images=(0,), sizes=(), filter_sizes=(), image_output=True):
    """A kernel running ``nhwc_fn(*inputs, attrs)``, which computes in NHWC.  When the op's
    ``data_format`` is NCHW, the inputs at ``images`` and (when ``image_output``) the output
    are transposed from and to NCHW.  ``sizes`` is ``(index, name)`` of an input holding an
    image's four sizes in the op's data_format (given to ``nhwc_fn`` as an NHWC tuple), and
    ``filter_sizes`` that of one holding a filter's four sizes (a tuple)."""

    def make(attrs):
        nchw = attrs.get("data_format") == "NCHW"
        if not (nchw or sizes or filter_sizes):
            return lambda *inputs: nhwc_fn(*inputs, attrs)

        def kernel(*inputs):
            inputs = list(inputs)
            for i in images:
                inputs[i] = _to_nhwc(inputs[i], nchw)
            if sizes:
                i, name = sizes
                shape = _sizes(inputs[i], name)
                inputs[i] = tuple(shape[k] for k in TO_NHWC) if nchw else shape
            if filter_sizes:
                i, name = filter_sizes
                inputs[i] = _sizes(inputs[i], name)
            out = nhwc_fn(*inputs, attrs)
            return _from_nhwc(out, nchw) if image_output else out

        return kernel

    return make


def _sizes(vector, what: str) -> tuple:
    sizes = tuple(int(d) for d in np.asarray(vector).reshape(-1))
    if len(sizes) != 4 or min(sizes) < 0:
        raise InvalidArgumentError(None, None, f"{what} must be 4 sizes, got {list(sizes)}")
    return sizes


def _check_window_fits(g: _Geometry, x_shape, what: str) -> None:
    if g.oh < 0 or g.ow < 0:
        raise InvalidArgumentError(
            None, None, f"{what} window {(g.eh, g.ew)} is larger than the padded input {x_shape}"
        )


# -- attributes from the functions' arguments ------------------------------------------------------
@contextlib.contextmanager
def argument_errors(op_type: str, name: Optional[str]):
    """Re-raises a ValueError/TypeError about a function's arguments naming the op and the
    user's file:line, as the errors of shape inference do."""
    try:
        yield
    except (ValueError, TypeError) as e:
        raise type(e)(f"{op_type} op '{name or op_type}' at {_user_location()}: {e}") from None


def _check_data_format(data_format, spatial_ranks=DATA_FORMATS) -> str:
    data_format = data_format or spatial_ranks[0]
    if data_format not in spatial_ranks:
        raise ValueError(
            f"data_format must be one of {', '.join(spatial_ranks)}, got {data_format!r}"
        )
    return data_format


def _spatial(values, what: str, data_format: str = "NHWC", default=None) -> tuple:
    """``(h, w)`` from an int, a pair, or TensorFlow's 4-list in ``data_format`` order (whose
    batch and channel entries must be 1)."""
    if values is None:
        if default is None:
            raise ValueError(f"{what} must be given")
        values = default
    if isinstance(values, (int, np.integer)):
        values = [int(values)]
    values = [int(v) for v in values]
    if len(values) == 1:
        values = values * 2
    elif len(values) == 4:
        batch, channel = (0, 1) if data_format == "NCHW" else (0, 3)
        if values[batch] != 1 or values[channel] != 1:
            raise ValueError(
                f"{what} {values} must be 1 in the batch and channel dimensions ({data_format})"
            )
        values = values[2:4] if data_format == "NCHW" else values[1:3]
    elif len(values) != 2:
        raise ValueError(f"{what} must be an int, 2 ints or 4 ints ({data_format}), got {values}")
    if min(values) < 1:
        raise ValueError(f"{what} must be positive, got {values}")
    return tuple(values)


def _padding_attrs(padding, data_format: str, explicit_allowed: bool = True) -> dict:
    """``{"padding": ...}`` for SAME and VALID (exactly so spelled, as TensorFlow's attribute
    check), plus ``explicit_paddings`` for a list of 4 ``[before, after]`` pairs in
    ``data_format`` order, whose batch and channel pairs must be 0."""
    if isinstance(padding, str) or not explicit_allowed:
        if padding not in ("SAME", "VALID"):
            raise ValueError(f"padding must be 'SAME' or 'VALID', got {padding!r}")
        return {"padding": padding}
    try:
        pairs = [[int(v) for v in pair] for pair in padding]
    except TypeError:
        raise ValueError(f"padding must be 'SAME', 'VALID' or 4 pairs, got {padding!r}") from None
    if len(pairs) != 4 or any(len(pair) != 2 for pair in pairs):
        raise ValueError(f"explicit padding must be 4 [before, after] pairs, got {padding!r}")
    batch, channel = (0, 1) if data_format == "NCHW" else (0, 3)
    if pairs[batch] != [0, 0] or pairs[channel] != [0, 0]:
        raise ValueError(
            f"explicit padding {pairs} must be 0 in the batch and channel dimensions "
            f"({data_format})"
        )
    if min(min(pair) for pair in pairs) < 0:
        raise ValueError(f"explicit padding must not be negative, got {pairs}")
    h, w = (pairs[2], pairs[3]) if data_format == "NCHW" else (pairs[1], pairs[2])
    return {"padding": "EXPLICIT", "explicit_paddings": (h[0], h[1], w[0], w[1])}


def _conv_attrs(strides, padding, dilations, data_format) -> dict:
    data_format = _check_data_format(data_format)
    return {
        "strides": _spatial(strides, "strides", data_format),
        "dilations": _spatial(dilations, "dilations", data_format, default=1),
        "data_format": data_format,
        **_padding_attrs(padding, data_format),
    }


def _spatial_dims(shape: TensorShape, data_format: str) -> list:
    """``[n, h, w, c]`` of a 4-D static shape (entries None where unknown) in either layout."""
    dims = shape.as_list() if shape.ndims is not None else [None] * 4
    return [dims[i] for i in TO_NHWC] if data_format == "NCHW" else dims


def _image_shape(nhwc_dims: list, data_format: str) -> TensorShape:
    if data_format == "NCHW":
        return TensorShape([nhwc_dims[i] for i in TO_NCHW])
    return TensorShape(nhwc_dims)


def _static_out(size, window, stride, attrs, axis: int, what: str):
    if size is None or window is None:
        return None
    explicit = _explicit_pairs(attrs)[axis]
    out = _output_size(size, window, stride, attrs["padding"], explicit)[0]
    if out < 0 or (attrs["padding"] == "VALID" and size < window):
        raise ValueError(
            f"{what} window of size {window} is larger than the (padded) input size {size}"
        )
    return out


def _static_output_hw(h, w, kh, kw, attrs, what):
    (sh, sw), (dh, dw) = attrs["strides"], attrs.get("dilations", (1, 1))
    eh = None if kh is None else (kh - 1) * dh + 1
    ew = None if kw is None else (kw - 1) * dw + 1
    return (
        _static_out(h, eh, sh, attrs, 0, what),
        _static_out(w, ew, sw, attrs, 1, what),
    )


def _layout(images: tuple, image_outputs: tuple, sizes: tuple = ()) -> dict:
    return {"layout": {"images": images, "image_outputs": image_outputs, "sizes": sizes}}


def _check_rank4(op, *named) -> None:
    for t, arg in named:
        if t.shape.ndims not in (None, 4):
            raise ValueError(f"{arg} of {op.type} must be 4-D, got shape {t.shape}")
