"""Shape and layout ops: reshape, transpose, concat/stack/split, slicing, gather, padding,
filling, shape queries, range, one_hot, identity, and ``Tensor.__getitem__``.

Arguments that TensorFlow lets a graph compute at run time (reshape's shape, fill's dims, tile's
multiples, slice's begin and size, strided_slice's begin/end/strides, range's bounds, one_hot's
depth, gather's indices) are tensor inputs here too; static shapes are inferred from whatever of
them is known when the graph is built (`constant_vector`).  Axes, permutations, paddings and
split sizes must be known at build time and are attributes.

Views: reshape, transpose, squeeze, expand_dims, slicing, split and unstack return numpy views
of their input.  That is safe because no kernel writes into its inputs.

As in TensorFlow 1.x, `shape`, `size` and `rank` give a constant when the static answer is
complete, and `zeros_like`/`ones_like` of a fully known shape are constants.  Built by a
gradient function in a backward loop, on a forward value of the loop, they read the query's
result saved by the forward loop, not the value (``primitives.loop_gradients``).

A deliberate difference: a bad argument that is certain when the graph is built (a slice past
the end of a known dimension, a zero stride, two ellipses, mirror paddings wider than a known
dimension, gather's ``batch_dims`` against known shapes) is a ``ValueError`` at build time,
where TensorFlow leaves some of these cases to the kernel (``InvalidArgumentError`` at run time).
"""

from __future__ import annotations

import builtins
import math
from typing import Optional

import numpy as np

from ..framework import composites
from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor, _user_location, get_default_graph, graph_to_build_in
from ..framework.indexed_slices import IndexedSlices
from ..framework.op_registry import apply_op, define_op
from ..framework.ragged_tensor import override_for
from ..framework.tensor_conversion import (
    convert_to_tensor,
    holds_tensor,
    is_tensor_like,
    numpy_value_or_none,
    register_conversion_op,
)
from ..framework.tensor_shape import TensorShape, as_shape
from .constant_op import constant
from .math_ops import (
    INDEX_TYPES,
    NUMERIC_OR_BOOL_TYPES,
    cast,
    check_dtype,
    check_same_dtype,
    convert_all,
    graph_of,
    normalize_axis,
    static_axis,
)
from .static_values import (  # noqa: F401 - offered here too
    _constant_scalar,
    _constant_through_cast,
    _shape_from_vector,
    constant_vector,
    known_int_value,
)

__all__ = [
    "concat",
    "expand_dims",
    "fill",
    "identity",
    "identity_n",
    "one_hot",
    "ones",
    "ones_like",
    "range",
    "rank",
    "reshape",
    "shape",
    "size",
    "split",
    "squeeze",
    "stack",
    "stop_gradient",
    "transpose",
    "unstack",
    "zeros",
    "zeros_like",
]

# This module defines `slice` and `range` (TensorFlow's names); the builtins are reached here.
_pyslice = builtins.slice
_pyrange = builtins.range


def _single_or_tuple(values):
    """A kernel's result: the value itself for one output (the executor's convention)."""
    return values[0] if len(values) == 1 else tuple(values)


def _as_index_vector(value, name: str, dtype=None, owner: Optional[str] = None) -> Tensor:
    """A 1-D int tensor from a tensor, a list of ints, or a list mixing ints and scalar tensors
    (stacked, as TensorFlow's auto-packing does).  Ints become ``dtype``; by default int32 (int64
    when they do not fit), or the dtype of an int32/int64 numpy array.  Non-integers are an
    error naming ``owner`` (by default the name scope the calling op builds in) and the user's
    line."""
    if isinstance(value, Tensor) or is_tensor_like(value):
        return convert_to_tensor(value)
    if isinstance(value, (list, tuple)) and any(
        isinstance(v, Tensor) or is_tensor_like(v) for v in value
    ):
        return stack(value, name=name)
    if isinstance(value, TensorShape):
        value = value.as_list()
    array = np.asarray(value)
    if array.size and array.dtype.kind not in "iu":
        owner = owner or get_default_graph().get_name_scope() or name
        raise TypeError(f"{owner} at {_user_location()}: {name} must be integers, got {value!r}")
    if dtype is None and isinstance(value, np.ndarray) and array.dtype in (np.int32, np.int64):
        dtype = _dtypes.as_dtype(array.dtype)
    if dtype is None:
        info = np.iinfo(np.int32)
        fits = not array.size or (array.min() >= info.min and array.max() <= info.max)
        dtype = _dtypes.int32 if fits else _dtypes.int64
    return constant(array.astype(np.int64), dtype=dtype, name=name)


# -- identity ------------------------------------------------------------------------------------
def _infer_identity(op):
    (x,) = op.inputs
    return [(x.dtype, x.shape)]


def _identity(x):
    return x


define_op(
    "Identity",
    _infer_identity,
    lambda attrs: _identity,
    inline=True,
    extra={"passes_sparse_gradients": True},
)
define_op("StopGradient", _infer_identity, lambda attrs: _identity, inline=True)


def _infer_identity_n(op):
    return [(x.dtype, x.shape) for x in op.inputs]


def _identity_n(*values):
    return values if len(values) != 1 else values[0]


define_op("IdentityN", _infer_identity_n, lambda attrs: _identity_n, inline=True)


def identity(input, name: Optional[str] = None) -> Tensor:  # noqa: A002 - TensorFlow's name
    """A tensor with the value of ``input`` (a new node, e.g. to hang control dependencies on).
    An IndexedSlices or SparseTensor gives one of the same kind, each part passed through."""
    if composites.is_composite(input):
        with get_default_graph().name_scope(name or "Identity"):
            return composites.map_parts(input, identity)
    return apply_op("Identity", (input,), None, name or "Identity").outputs[0]


def identity_n(input, name: Optional[str] = None) -> list:  # noqa: A002 - TensorFlow's name
    """One op whose outputs have the values of the tensors ``input``, in order; its gradient
    passes each output's gradient to its input (`df.custom_gradient` gives it another)."""
    return list(apply_op("IdentityN", list(input), None, name or "IdentityN").outputs)


def stop_gradient(input, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """``input`` unchanged; gradients will not flow through it."""
    return apply_op("StopGradient", (input,), None, name or "StopGradient").outputs[0]


# -- reshape and friends ---------------------------------------------------------------------------
def _reshaped_dims(in_shape: TensorShape, target: list) -> TensorShape:
    if sum(1 for d in target if d == -1) > 1:
        raise ValueError(f"reshape's shape {target} has more than one -1")
    for d in target:
        if d is not None and d < -1:
            raise ValueError(f"reshape's shape {target} has a negative size other than -1")
    total = in_shape.num_elements()
    known = [d for d in target if d is not None and d != -1]
    known_product = math.prod(known)
    if -1 in target:
        if total is None or len(known) < len(target) - 1:
            return TensorShape([None if d == -1 else d for d in target])
        if known_product == 0 or total % known_product:
            raise ValueError(f"Cannot reshape a tensor of shape {in_shape} into {target}")
        return TensorShape([total // known_product if d == -1 else d for d in target])
    if total is not None and len(known) == len(target) and known_product != total:
        raise ValueError(
            f"Cannot reshape a tensor with {total} elements (shape {in_shape}) into shape "
            f"{target} ({known_product} elements)"
        )
    return TensorShape(target)


def _infer_reshape(op):
    x, shape = op.inputs
    check_dtype(shape.dtype, INDEX_TYPES, "reshape's shape")
    if shape.shape.ndims is not None and shape.shape.ndims != 1:
        raise ValueError(f"reshape's shape must be a vector, got shape {shape.shape}")
    target = constant_vector(shape)
    if target is None:
        return [(x.dtype, TensorShape(None))]
    return [(x.dtype, _reshaped_dims(x.shape, target))]


# "view": the output is a view of input 0 with other dims, the same elements in the same order.
define_op("Reshape", _infer_reshape, lambda attrs: np.reshape, inline=True, extra={"view": True})


def reshape(tensor, shape, name: Optional[str] = None) -> Tensor:
    """``tensor`` with the same elements in ``shape`` (one ``-1`` is inferred).  ``shape`` may be
    a list, a tensor, or a list mixing ints and scalar tensors."""
    tensor = convert_to_tensor(tensor)
    graph = graph_to_build_in(tensor.graph)
    with graph.as_default(), graph.name_scope(name or "Reshape") as scope:
        shape = _as_index_vector(shape, "shape")
        return apply_op("Reshape", (tensor, shape), None, scope).outputs[0]


def _infer_transpose(op):
    (x,) = op.inputs
    perm = op.attrs["perm"]
    rank = x.shape.ndims
    if rank is None:
        return [(x.dtype, TensorShape(None if perm is None else [None] * len(perm)))]
    if perm is None:
        return [(x.dtype, TensorShape(x.shape.as_list()[::-1]))]
    if sorted(a % rank if -rank <= a < rank else a for a in perm) != list(_pyrange(rank)):
        raise ValueError(f"perm {list(perm)} is not a permutation of the {rank} axes")
    dims = x.shape.as_list()
    return [(x.dtype, TensorShape([dims[a] for a in perm]))]


def _transpose_kernel(attrs):
    perm = attrs["perm"]
    return lambda x: np.transpose(x, perm)


# "permutation": the attr holding the axes order (None: reversed), for passes that compose them.
define_op(
    "Transpose", _infer_transpose, _transpose_kernel, inline=True, extra={"permutation": "perm"}
)


def transpose(a, perm=None, name: Optional[str] = "transpose", conjugate: bool = False) -> Tensor:
    """``a`` with its axes permuted by ``perm`` (reversed when ``None``)."""
    perm = static_axis(perm, "perm")
    if isinstance(perm, int):
        raise TypeError(f"perm must be a list of axes, got {perm!r}")
    out = apply_op("Transpose", (a,), {"perm": perm}, name or "transpose").outputs[0]
    if conjugate and out.dtype.is_complex:  # a ``Conj`` op, defined by `complex_ops`
        out = apply_op("Conj", (out,), None, "Conj").outputs[0]
    return out


def _infer_expand_dims(op):
    (x,) = op.inputs
    rank = x.shape.ndims
    if rank is None:
        return [(x.dtype, TensorShape(None))]
    axis = normalize_axis(op.attrs["axis"], rank + 1)
    dims = x.shape.as_list()
    return [(x.dtype, TensorShape(dims[:axis] + [1] + dims[axis:]))]


def _expand_dims_kernel(attrs):
    axis = attrs["axis"]
    return lambda x: np.expand_dims(x, axis)


define_op("ExpandDims", _infer_expand_dims, _expand_dims_kernel, inline=True)


def expand_dims(input, axis=None, name: Optional[str] = None, dim=None) -> Tensor:  # noqa: A002
    """``input`` with a new dimension of size 1 at ``axis`` (``-1`` appends)."""
    if dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'dim'")
        axis = dim
    if axis is None:
        raise ValueError("expand_dims needs an axis")
    axis = static_axis(axis)
    if not isinstance(axis, int):
        if len(axis) != 1:
            raise ValueError(f"expand_dims takes a single axis, got {axis!r}")
        axis = axis[0]
    return apply_op("ExpandDims", (input,), {"axis": axis}, name or "ExpandDims").outputs[0]


def _infer_squeeze(op):
    (x,) = op.inputs
    axis = op.attrs["axis"]
    rank = x.shape.ndims
    if rank is None:
        return [(x.dtype, TensorShape(None))]
    dims = x.shape.as_list()
    if axis is None:
        if any(d is None for d in dims):
            return [(x.dtype, TensorShape(None))]
        return [(x.dtype, TensorShape([d for d in dims if d != 1]))]
    axes = {normalize_axis(a, rank) for a in axis}
    for a in axes:
        if dims[a] is not None and dims[a] != 1:
            raise ValueError(f"Cannot squeeze dimension {a} of size {dims[a]} (shape {x.shape})")
    return [(x.dtype, TensorShape([d for i, d in enumerate(dims) if i not in axes]))]


def _squeeze_kernel(attrs):
    axis = attrs["axis"]

    def squeeze(x):
        if axis is None:
            return np.squeeze(x)
        # Two names for one dimension (0 and -rank) squeeze it once; numpy would refuse.
        axes = {a + x.ndim if a < 0 else a for a in axis}
        return np.squeeze(x, tuple(axes) if all(0 <= a < x.ndim for a in axes) else axis)

    return squeeze


define_op("Squeeze", _infer_squeeze, _squeeze_kernel, inline=True)


def squeeze(
    input,  # noqa: A002 - TensorFlow's argument name
    axis=None,
    name: Optional[str] = None,
    squeeze_dims=None,
) -> Tensor:
    """``input`` without the size-1 dimensions listed in ``axis`` (all of them when ``None``)."""
    if squeeze_dims is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'squeeze_dims'")
        axis = squeeze_dims
    axis = static_axis(axis)
    if isinstance(axis, int):
        axis = (axis,)
    if axis is not None and len(axis) == 0:
        axis = None  # an empty list of axes squeezes every size-1 dimension
    return apply_op("Squeeze", (input,), {"axis": axis}, name or "Squeeze").outputs[0]


# -- joining and splitting -------------------------------------------------------------------------
def _infer_concat(op):
    values = op.inputs
    check_same_dtype(values, [f"values[{i}]" for i in _pyrange(len(values))], op.type)
    ranks = {v.shape.ndims for v in values} - {None}
    if len(ranks) > 1:
        raise ValueError(
            f"concat needs inputs of one rank, got shapes {[str(v.shape) for v in values]}"
        )
    if not ranks:
        return [(values[0].dtype, TensorShape(None))]
    rank = ranks.pop()
    if rank == 0:
        raise ValueError("Cannot concatenate scalars; use stack")
    axis = normalize_axis(op.attrs["axis"], rank)
    dims: list = [None] * rank
    total = 0
    for v in values:
        if v.shape.ndims is None:
            total = None
            continue
        vd = v.shape.as_list()
        for i in _pyrange(rank):
            if i == axis:
                continue
            if dims[i] is not None and vd[i] is not None and dims[i] != vd[i]:
                raise ValueError(
                    f"Dimension {i} of the inputs of concat must agree, got {dims[i]} and "
                    f"{vd[i]} (concat along axis {axis})"
                )
            dims[i] = dims[i] if dims[i] is not None else vd[i]
        total = None if total is None or vd[axis] is None else total + vd[axis]
    dims[axis] = total
    return [(values[0].dtype, TensorShape(dims))]


def _concat_kernel(attrs):
    axis = attrs["axis"]
    return lambda *values: np.concatenate(values, axis=axis)


define_op("ConcatV2", _infer_concat, _concat_kernel)


def concat(values, axis, name: str = "concat") -> Tensor:
    """The tensors in ``values`` joined along the existing dimension ``axis``."""
    if isinstance(values, Tensor) or not isinstance(values, (list, tuple)):
        values = [values]
    ragged = override_for("concat", values)
    if ragged is not None:
        return ragged(values, axis, name)
    axis = static_axis(axis)
    if not isinstance(axis, int):
        raise TypeError(f"concat takes a single axis, got {axis!r}")
    if not values:
        raise ValueError("concat needs at least one tensor")
    if len(values) == 1:
        # As TensorFlow: an Identity named like the scope it sits in (``concat/concat``).
        graph = graph_of(values)
        with graph.as_default(), graph.name_scope(name):
            return identity(values[0], name=name)
    graph = graph_of(values)
    with graph.as_default(), graph.name_scope(name) as scope:
        tensors = convert_all(values, [f"values_{i}" for i in _pyrange(len(values))])
        return apply_op("ConcatV2", tensors, {"axis": axis}, scope).outputs[0]


def _infer_pack(op):
    values = op.inputs
    check_same_dtype(values, [f"values[{i}]" for i in _pyrange(len(values))], op.type)
    shape = TensorShape(None)
    for v in values:
        if not shape.is_compatible_with(v.shape):
            raise ValueError(f"stack needs inputs of one shape, got {shape} and {v.shape}")
        shape = shape.merge_with(v.shape)
    if shape.ndims is None:
        return [(values[0].dtype, TensorShape(None))]
    axis = normalize_axis(op.attrs["axis"], shape.ndims + 1)
    dims = shape.as_list()
    return [(values[0].dtype, TensorShape(dims[:axis] + [len(values)] + dims[axis:]))]


def _pack_kernel(attrs):
    axis = attrs["axis"]
    return lambda *values: np.stack(values, axis=axis)


define_op("Pack", _infer_pack, _pack_kernel)


def stack(values, axis: int = 0, name: str = "stack") -> Tensor:
    """The tensors in ``values`` (of one shape) joined along a new dimension ``axis``."""
    if isinstance(values, Tensor) or not isinstance(values, (list, tuple)):
        raise TypeError(f"stack takes a list of tensors, got {values!r}")
    if not values:
        raise ValueError("stack needs at least one tensor")
    axis = static_axis(axis)
    if not isinstance(axis, int):
        raise TypeError(f"stack takes a single axis, got {axis!r}")
    graph = graph_of(values)
    if axis == 0 and not holds_tensor(values):
        # A list of plain values is one constant, its dtype inferred from all of them at once:
        # stack([1, 2.5]) is float32 [1.0, 2.5], not a clash between int32 and float32.
        with graph.as_default():
            try:
                return convert_to_tensor(values, name=name)
            except (TypeError, ValueError):
                pass  # ragged or mixed: Pack says what is wrong
    with graph.as_default(), graph.name_scope(name) as scope:
        tensors = convert_all(values, [f"values_{i}" for i in _pyrange(len(values))])
        return apply_op("Pack", tensors, {"axis": axis}, scope).outputs[0]


def _infer_unpack(op):
    (x,) = op.inputs
    num, axis = op.attrs["num"], op.attrs["axis"]
    if x.shape.ndims is None:
        return [(x.dtype, TensorShape(None))] * num
    if x.shape.ndims == 0:
        raise ValueError("Cannot unstack a scalar")
    axis = normalize_axis(axis, x.shape.ndims)
    dims = x.shape.as_list()
    if dims[axis] is not None and dims[axis] != num:
        raise ValueError(f"Cannot unstack dimension {axis} of size {dims[axis]} into {num} tensors")
    return [(x.dtype, TensorShape(dims[:axis] + dims[axis + 1 :]))] * num


def _unpack_kernel(attrs):
    num, axis = attrs["num"], attrs["axis"]

    def unpack(x):
        if x.shape[axis] != num:
            raise InvalidArgumentError(
                None, None, f"Cannot unstack dimension {axis} of shape {x.shape} into {num} tensors"
            )
        return _single_or_tuple(tuple(np.moveaxis(x, axis, 0)))

    return unpack


define_op("Unpack", _infer_unpack, _unpack_kernel, inline=True)


def unstack(value, num: Optional[int] = None, axis: int = 0, name: str = "unstack") -> list:
    """The slices of ``value`` along ``axis``, as a list of ``num`` tensors (``num`` is taken
    from the static shape when not given)."""
    value = convert_to_tensor(value)
    axis = static_axis(axis)
    if not isinstance(axis, int):
        raise TypeError(f"unstack takes a single axis, got {axis!r}")
    if num is None:
        rank = value.shape.ndims
        if rank is None:
            raise ValueError(f"Cannot infer num from the shape {value.shape} of '{value.name}'")
        num = value.shape[normalize_axis(axis, rank)]
        if num is None:
            raise ValueError(
                f"Cannot infer num from the shape {value.shape} of '{value.name}': dimension "
                f"{axis} is unknown; pass num="
            )
    return apply_op("Unpack", (value,), {"num": int(num), "axis": axis}, name).outputs


def _infer_split(op):
    (x,) = op.inputs
    sizes = op.attrs["size_splits"] if op.type == "SplitV" else None
    num = len(sizes) if sizes is not None else op.attrs["num_split"]
    if x.shape.ndims is None:
        return [(x.dtype, TensorShape(None))] * num
    if x.shape.ndims == 0:
        raise ValueError("Cannot split a scalar")
    axis = normalize_axis(op.attrs["axis"], x.shape.ndims)
    dims = x.shape.as_list()
    size = dims[axis]
    if sizes is None:
        if size is not None and size % num:
            raise ValueError(f"Dimension {axis} of size {size} cannot be split into {num} parts")
        pieces = [None if size is None else size // num] * num
    else:
        if sum(1 for s in sizes if s == -1) > 1 or any(s < -1 for s in sizes):
            raise ValueError(f"size_splits {list(sizes)} may hold one -1 and no other negatives")
        known = sum(s for s in sizes if s != -1)
        if size is not None and (known > size or -1 not in sizes and known != size):
            raise ValueError(
                f"size_splits {list(sizes)} do not add up to the size {size} of dimension {axis}"
            )
        fill = None if size is None else size - known
        pieces = [fill if s == -1 else s for s in sizes]
    outs = []
    for p in pieces:
        d = list(dims)
        d[axis] = p
        outs.append((x.dtype, TensorShape(d)))
    return outs


def _split_kernel(attrs):
    num, axis = attrs["num_split"], attrs["axis"]

    def split(x):
        if x.shape[axis] % num:
            raise InvalidArgumentError(
                None, None, f"Dimension {axis} of shape {x.shape} cannot be split into {num} parts"
            )
        return _single_or_tuple(np.split(x, num, axis))

    return split


def _split_v_kernel(attrs):
    sizes, axis = list(attrs["size_splits"]), attrs["axis"]

    def split_v(x):
        size = x.shape[axis]
        known = sum(s for s in sizes if s != -1)
        resolved = [size - known if s == -1 else s for s in sizes]
        if sum(resolved) != size or min(resolved, default=0) < 0:
            raise InvalidArgumentError(
                None, None, f"size_splits {sizes} do not add up to dimension {axis} of {x.shape}"
            )
        return _single_or_tuple(np.split(x, np.cumsum(resolved)[:-1], axis))

    return split_v


define_op("Split", _infer_split, _split_kernel, inline=True)
define_op("SplitV", _infer_split, _split_v_kernel, inline=True)


def split(value, num_or_size_splits, axis=0, num=None, name: str = "split") -> list:
    """``value`` cut along ``axis`` into ``num_or_size_splits`` equal parts (an int), or into
    parts of the listed sizes (one of which may be -1)."""
    axis = static_axis(axis)
    if not isinstance(axis, int):
        raise TypeError(f"split takes a single axis, got {axis!r}")
    sizes = num_or_size_splits
    if isinstance(sizes, Tensor) or is_tensor_like(sizes):
        t = convert_to_tensor(sizes)
        sizes = numpy_value_or_none(t)
        if sizes is None:
            raise ValueError(
                f"num_or_size_splits must be known when the graph is built; '{t.name}' is "
                "computed at run time"
            )
    sizes = np.asarray(sizes)
    if sizes.size and sizes.dtype.kind not in "iu":
        raise TypeError(f"num_or_size_splits must be ints, got {num_or_size_splits!r}")
    if sizes.ndim == 0:
        n = int(sizes)
        if n < 1:
            raise ValueError(f"num_or_size_splits must be at least 1, got {n}")
        attrs = {"num_split": n, "axis": axis}
        outputs = apply_op("Split", (value,), attrs, name).outputs
    else:
        attrs = {"size_splits": tuple(int(s) for s in sizes), "axis": axis}
        if num is not None and num != len(attrs["size_splits"]):
            raise ValueError(f"num={num} does not match size_splits {num_or_size_splits}")
        outputs = apply_op("SplitV", (value,), attrs, name).outputs
    return outputs


# -- creating tensors ------------------------------------------------------------------------------
def _infer_fill(op):
    dims, value = op.inputs
    check_dtype(dims.dtype, INDEX_TYPES, "fill's dims")
    if value.shape.ndims not in (None, 0):
        raise ValueError(f"fill's value must be a scalar, got shape {value.shape}")
    return [(value.dtype, _shape_from_vector(dims, "fill's dims"))]


def _fill(dims, value):
    if dims.ndim != 1 or (dims.size and dims.min() < 0):
        raise InvalidArgumentError(None, None, f"fill's dims must be a vector of sizes, got {dims}")
    return np.full(dims, value, dtype=value.dtype)


define_op("Fill", _infer_fill, lambda attrs: _fill)


def fill(dims, value, name: Optional[str] = None) -> Tensor:
    """A tensor of shape ``dims`` with every element ``value``."""
    graph = graph_of((dims, value))
    with graph.as_default(), graph.name_scope(name or "Fill") as scope:
        dims = _as_index_vector(dims, "dims")
        value = convert_to_tensor(value, name="value")
        return apply_op("Fill", (dims, value), None, scope).outputs[0]


def _fill_scalar(fill_value: int, dtype: _dtypes.DType, name: str) -> np.ndarray:
    """The 0-d array of ``fill_value`` (0 or 1) in ``dtype``: 0 is False for bool and the
    empty string for strings (as TensorFlow's ``zeros``); strings have no one."""
    if dtype is _dtypes.string:
        if fill_value != 0:
            raise TypeError(f"{name} at {_user_location()}: a string tensor has no ones")
        return np.array(b"", dtype=object)
    return np.array(fill_value, dtype=_dtypes.numpy_dtype(dtype))


def _filled(fill_value, shape, dtype, name: str) -> Tensor:
    dtype = _dtypes.as_dtype(dtype)
    fill_value = _fill_scalar(fill_value, dtype, name)
    if not (isinstance(shape, Tensor) or is_tensor_like(shape)) and not (
        isinstance(shape, (list, tuple))
        and any(isinstance(d, Tensor) or is_tensor_like(d) for d in shape)
    ):
        dims = as_shape(shape).as_list() if isinstance(shape, TensorShape) else shape
        array = np.asarray(dims)
        if array.size and array.dtype.kind not in "iu":
            raise TypeError(f"{name} at {_user_location()}: shape must be integers, got {shape!r}")
        array = array.astype(np.int64)
        if array.ndim <= 1 and math.prod(array.reshape(-1).tolist()) < 1000:
            return constant(fill_value, dtype=dtype, shape=array.reshape(-1).tolist(), name=name)
    graph = graph_of(shape if isinstance(shape, (list, tuple)) else [shape])
    with graph.as_default(), graph.name_scope(name) as scope:
        dims = _as_index_vector(shape, "shape")
        value = constant(fill_value, dtype=dtype)
        return apply_op("Fill", (dims, value), None, scope).outputs[0]


def zeros(shape, dtype=_dtypes.float32, name: Optional[str] = None) -> Tensor:
    """A tensor of zeros (a constant when small and known, else a ``Fill``)."""
    return _filled(0, shape, dtype, name or "zeros")


def ones(shape, dtype=_dtypes.float32, name: Optional[str] = None) -> Tensor:
    """A tensor of ones (a constant when small and known, else a ``Fill``)."""
    return _filled(1, shape, dtype, name or "ones")


define_op(
    "ZerosLike", _infer_identity, lambda attrs: np.zeros_like, extra={"layout": "elementwise"}
)
define_op("OnesLike", _infer_identity, lambda attrs: np.ones_like)


def _filled_like(op_type, fill_value, tensor, dtype, name):
    tensor = convert_to_tensor(tensor)
    dtype = tensor.dtype if dtype is None else _dtypes.as_dtype(dtype)
    if tensor.shape.is_fully_defined():
        with graph_to_build_in(tensor.graph).as_default():
            return _filled(fill_value, tensor.shape.as_list(), dtype, name)
    fill_shape = _saved_shape_query("Shape", tensor, _dtypes.int32)
    # ZerosLike's kernel (numpy's zeros_like) would give a string tensor integer zeros.
    if dtype is not tensor.dtype or fill_shape is not None or dtype is _dtypes.string:
        graph = graph_to_build_in(tensor.graph)
        with graph.as_default(), graph.name_scope(name) as scope:
            if fill_shape is None:
                fill_shape = shape(tensor)
            value = constant(_fill_scalar(fill_value, dtype, name))
            out = apply_op("Fill", (fill_shape, value), None, scope).outputs[0]
        out.set_shape(tensor.shape)
        return out
    return apply_op(op_type, (tensor,), None, name).outputs[0]


def zeros_like(tensor, dtype=None, name: Optional[str] = None, optimize: bool = True) -> Tensor:
    """Zeros of the shape of ``tensor`` (and its dtype unless ``dtype`` is given)."""
    return _filled_like("ZerosLike", 0, tensor, dtype, name or "zeros_like")


def ones_like(tensor, dtype=None, name: Optional[str] = None, optimize: bool = True) -> Tensor:
    """Ones of the shape of ``tensor`` (and its dtype unless ``dtype`` is given)."""
    return _filled_like("OnesLike", 1, tensor, dtype, name or "ones_like")


# -- shape queries ---------------------------------------------------------------------------------
def _infer_shape(op):
    (x,) = op.inputs
    check_dtype(op.attrs["out_type"], INDEX_TYPES, "out_type")
    return [(op.attrs["out_type"], TensorShape([x.shape.ndims]))]


def _shape_kernel(attrs):
    np_dtype = _dtypes.numpy_dtype(attrs["out_type"])
    return lambda x: np.array(np.shape(x), dtype=np_dtype)


def _infer_scalar_query(op):
    check_dtype(op.attrs["out_type"], INDEX_TYPES, "out_type")
    return [(op.attrs["out_type"], TensorShape([]))]


def _size_kernel(attrs):
    scalar_type = attrs["out_type"].as_numpy_dtype
    return lambda x: scalar_type(np.size(x))


def _rank_kernel(attrs):
    return lambda x: np.int32(np.ndim(x))


define_op("Shape", _infer_shape, _shape_kernel, inline=True)
define_op("Size", _infer_scalar_query, _size_kernel, inline=True)
define_op("Rank", _infer_scalar_query, _rank_kernel, inline=True)


def _saved_shape_query(kind: str, input: Tensor, out_type) -> Optional[Tensor]:  # noqa: A002
    """In the backward loop of a `gradients` call, ``kind`` ("Shape", "Size", "Rank") of a
    forward value of the loop, computed in the forward loop and saved per iteration in place of
    the value itself (``primitives.loop_gradients``); None anywhere else."""
    query = getattr(input.graph._control_flow_context, "shape_query", None)
    return None if query is None else query(kind, input, out_type)


def shape(input, name: Optional[str] = None, out_type=None) -> Tensor:  # noqa: A002
    """The shape of ``input`` as a 1-D int tensor (int32 unless ``out_type`` says; a constant
    when fully known statically)."""
    input = convert_to_tensor(input)  # noqa: A001
    out_type = _dtypes.int32 if out_type is None else _dtypes.as_dtype(out_type)
    if input.shape.is_fully_defined():
        with graph_to_build_in(input.graph).as_default():
            return constant(input.shape.as_list(), dtype=out_type, name=name or "Shape")
    saved = _saved_shape_query("Shape", input, out_type)
    if saved is not None:
        return saved
    return apply_op("Shape", (input,), {"out_type": out_type}, name or "Shape").outputs[0]


def size(input, name: Optional[str] = None, out_type=None) -> Tensor:  # noqa: A002
    """The number of elements of ``input`` (int32 unless ``out_type`` says; a constant when
    its shape is fully known)."""
    input = convert_to_tensor(input)  # noqa: A001
    out_type = _dtypes.int32 if out_type is None else _dtypes.as_dtype(out_type)
    if input.shape.is_fully_defined():
        with graph_to_build_in(input.graph).as_default():
            count = input.shape.num_elements()
            return constant(count, dtype=out_type, name=name or "Size")
    saved = _saved_shape_query("Size", input, out_type)
    if saved is not None:
        return saved
    return apply_op("Size", (input,), {"out_type": out_type}, name or "Size").outputs[0]


def rank(input, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The number of dimensions of ``input`` as an int32 scalar (a constant when known)."""
    input = convert_to_tensor(input)  # noqa: A001
    if input.shape.ndims is not None:
        with graph_to_build_in(input.graph).as_default():
            return constant(input.shape.ndims, dtype=_dtypes.int32, name=name or "Rank")
    saved = _saved_shape_query("Rank", input, _dtypes.int32)
    if saved is not None:
        return saved
    return apply_op("Rank", (input,), {"out_type": _dtypes.int32}, name or "Rank").outputs[0]


# -- range and one_hot -----------------------------------------------------------------------------
# Range's dtypes, narrowest first: without a dtype, range takes the widest of its arguments'.
_RANGE_TYPES = (_dtypes.int32, _dtypes.int64, _dtypes.float16, _dtypes.float32, _dtypes.float64)


def _range_length(start, limit, delta) -> int:
    """The number of elements TensorFlow's Range makes (``ValueError`` if it makes none that
    way): ``ceil(|limit - start| / |delta|)``, for floats computed in their own dtype."""
    if delta == 0:
        raise ValueError("range requires delta != 0")
    if delta > 0 and start > limit:
        raise ValueError(f"range requires start <= limit when delta > 0, got {start} > {limit}")
    if delta < 0 and start < limit:
        raise ValueError(f"range requires start >= limit when delta < 0, got {start} < {limit}")
    if isinstance(start, (int, np.integer)) and isinstance(delta, (int, np.integer)):
        span, step = builtins.abs(int(limit) - int(start)), builtins.abs(int(delta))
        return (span + step - 1) // step
    with np.errstate(all="ignore"):
        size = np.ceil(np.abs((limit - start) / delta))
    if not float(size) <= 2.0**63:  # nan and inf fail too
        raise ValueError(f"range requires ((limit - start) / delta) <= 2**63, got {size}")
    return int(size)


def _infer_range(op):
    start, limit, delta = op.inputs
    check_same_dtype((start, limit, delta), ("start", "limit", "delta"), op.type)
    if start.dtype not in _RANGE_TYPES:
        raise TypeError(f"range does not support dtype {start.dtype.name}")
    for t, arg in ((start, "start"), (limit, "limit"), (delta, "delta")):
        if t.shape.ndims not in (None, 0):
            raise ValueError(f"range's {arg} must be a scalar, got shape {t.shape}")
    values = [_constant_through_cast(t) for t in (start, limit, delta)]
    if any(v is None for v in values):
        return [(start.dtype, TensorShape([None]))]
    return [(start.dtype, TensorShape([_range_length(*(v[()] for v in values))]))]


def _range_kernel(attrs):
    def range_(start, limit, delta):
        try:
            size = _range_length(start[()], limit[()], delta[()])
        except ValueError as e:
            raise InvalidArgumentError(None, None, str(e)) from None
        if start.dtype.kind != "f":
            return np.arange(start, limit, delta, dtype=start.dtype)
        # TensorFlow's kernel: start + T(i) * delta, rounded in the dtype at each step (numpy's
        # arange steps by its first two values' difference instead).
        with np.errstate(all="ignore"):
            return start + np.arange(size).astype(start.dtype) * delta

    return range_


define_op("Range", _infer_range, _range_kernel)


def range(start, limit=None, delta=1, dtype=None, name: str = "range") -> Tensor:  # noqa: A001
    """``[start, start + delta, ...]`` up to but excluding ``limit`` (``range(n)`` counts from
    0).  The dtype is the widest of the arguments' (int32 < int64 < float16 < float32 < float64)
    unless given; the ``i``-th value is ``start + i * delta`` in that dtype."""
    if limit is None:
        start, limit = 0, start
    graph = graph_of((start, limit, delta))
    with graph.as_default(), graph.name_scope(name) as scope:
        args = []
        for value, arg in ((start, "start"), (limit, "limit"), (delta, "delta")):
            if isinstance(value, Tensor) or is_tensor_like(value):
                args.append(convert_to_tensor(value))
            else:
                args.append(convert_to_tensor(value, dtype=dtype, name=arg))
        if dtype is None:
            for t in args:
                if t.dtype not in _RANGE_TYPES:
                    raise TypeError(f"range does not support dtype {t.dtype.name}")
            dtype = max((t.dtype for t in args), key=_RANGE_TYPES.index)
        args = [cast(t, dtype) for t in args]
        return apply_op("Range", args, None, scope).outputs[0]


def _infer_one_hot(op):
    indices, depth, on_value, off_value = op.inputs
    check_dtype(indices.dtype, INDEX_TYPES | {_dtypes.uint8}, "one_hot's indices")
    check_dtype(depth.dtype, {_dtypes.int32}, "one_hot's depth")
    check_same_dtype((on_value, off_value), ("on_value", "off_value"), op.type)
    check_dtype(on_value.dtype, NUMERIC_OR_BOOL_TYPES, "one_hot's on_value")
    for t, arg in ((depth, "depth"), (on_value, "on_value"), (off_value, "off_value")):
        if t.shape.ndims not in (None, 0):
            raise ValueError(f"one_hot's {arg} must be a scalar, got shape {t.shape}")
    d = _constant_scalar(depth)
    if d is not None and d < 0:
        raise ValueError(f"one_hot's depth must not be negative, got {d}")
    if indices.shape.ndims is None:
        return [(on_value.dtype, TensorShape(None))]
    dims = indices.shape.as_list()
    axis = op.attrs["axis"]
    axis = len(dims) if axis == -1 else normalize_axis(axis, len(dims) + 1, "one_hot's axis")
    return [(on_value.dtype, TensorShape(dims[:axis] + [d] + dims[axis:]))]


def _one_hot_kernel(attrs):
    axis = attrs["axis"]

    def one_hot(indices, depth, on_value, off_value):
        if depth < 0:
            raise InvalidArgumentError(None, None, f"one_hot's depth must not be negative: {depth}")
        hot = np.expand_dims(indices, -1) == np.arange(depth)
        out = np.where(hot, on_value, off_value)
        if axis != -1 and axis != np.ndim(indices):
            out = np.ascontiguousarray(np.moveaxis(out, -1, axis))
        return out

    return one_hot


define_op("OneHot", _infer_one_hot, _one_hot_kernel)


def one_hot(
    indices,
    depth,
    on_value=None,
    off_value=None,
    axis=None,
    dtype=None,
    name: Optional[str] = None,
) -> Tensor:
    """``on_value`` where the new ``axis`` (default last) equals ``indices``, else
    ``off_value``; indices outside ``[0, depth)`` give an all-off row.  The dtype is ``dtype``,
    else that of ``on_value``/``off_value``, else float32."""
    graph = graph_of((indices, depth, on_value, off_value))
    with graph.as_default(), graph.name_scope(name or "one_hot") as scope:
        indices = convert_to_tensor(indices, name="indices")
        depth = convert_to_tensor(depth, dtype=_dtypes.int32, name="depth")
        dtype = None if dtype is None else _dtypes.as_dtype(dtype)
        values = {}
        for value, arg in ((on_value, "on_value"), (off_value, "off_value")):
            if value is not None:
                # Without a dtype, each value keeps its own: on_value=1.0 with off_value=0 is a
                # float32/int32 clash, not an off_value quietly made float.
                values[arg] = convert_to_tensor(value, dtype=dtype, name=arg)
        if len(values) == 2 and values["on_value"].dtype != values["off_value"].dtype:
            raise TypeError(
                f"one_hot's on_value has dtype {values['on_value'].dtype.name} but its off_value "
                f"has dtype {values['off_value'].dtype.name}"
            )
        if dtype is None:
            dtype = next(iter(values.values())).dtype if values else _dtypes.float32
        if "on_value" not in values:
            values["on_value"] = constant(1, dtype=dtype, name="on_value")
        if "off_value" not in values:
            values["off_value"] = constant(0, dtype=dtype, name="off_value")
        on_value, off_value = values["on_value"], values["off_value"]
        axis = -1 if axis is None else static_axis(axis)
        if not isinstance(axis, int):
            raise TypeError(f"one_hot takes a single axis, got {axis!r}")
        if axis < -1:
            # -1 means "last"; other negative axes are not counted from the end.
            raise ValueError(f"one_hot's axis must be >= -1, got {axis}")
        inputs = (indices, depth, on_value, off_value)
        return apply_op("OneHot", inputs, {"axis": axis}, scope).outputs[0]


# Lists that mix tensors and values are packed with `stack` (`graph.convert_to_tensor`).
register_conversion_op("stack", stack)


def dense_as_indexed_slices(tensor: Tensor, like: IndexedSlices) -> IndexedSlices:
    """``tensor`` as IndexedSlices holding every one of its rows, with the index and shape dtypes
    of ``like`` (TensorFlow's ``_as_indexed_slices``): how a dense value joins sparse ones in a
    Merge, so that the result stays sparse."""
    rows = range(shape(tensor, out_type=like.indices.dtype)[0])
    dense_shape = None
    if like.dense_shape is not None:
        dense_shape = shape(tensor, out_type=like.dense_shape.dtype)
    return IndexedSlices(tensor, rows, dense_shape)
