"""Higher-order functions over the first dimension of tensors: `map_fn`, `scan`, `foldl`, `foldr`.

As in TensorFlow 1.x (graph mode, control flow v1) each is a `while_loop` over the element
index ``i``: the elements are unstacked into TensorArrays before the loop and read at ``i``
inside it; `map_fn` and `scan` write each result into a TensorArray that is a loop variable and
stack it after the loop; the folds carry their accumulator as a loop variable.  So they run
``fn`` once per element at run time (the graph holds one copy of ``fn``'s ops), their gradients
are the loop's (the backward loop reads and writes the arrays' gradient arrays), and their op
names are TF1's (``map/while/...``, ``scan/TensorArrayUnstack/...``).

``elems`` may be a nested structure (tuples, lists, dicts, namedtuples) of tensors that share
their first dimension; ``fn`` receives one slice of each, in that structure.  Scalars cannot be
iterated over: ``ValueError`` at build time, as in TF1.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Optional

from dataflow.framework import dtypes as _dtypes
from dataflow.framework import nest
from dataflow.framework.graph import Tensor, _user_location, name_scope
from dataflow.framework.tensor_conversion import convert_to_tensor
from dataflow.framework.tensor_shape import TensorShape
from dataflow.ops.array_ops import shape
from dataflow.ops.constant_op import constant
from dataflow.ops.tensor_array_ops import TensorArray

__all__ = ["foldl", "foldr", "map_fn", "scan"]


def _check_fn(fn: Callable, what: str) -> None:
    if not callable(fn):
        raise TypeError(f"{what}: fn must be callable, got {fn!r} ({_user_location()})")


def _flat_elements(elems, what: str) -> list[Tensor]:
    """The leaves of ``elems`` as tensors of rank 1 or more, named ``elem`` as TF1 names them."""
    flat = nest.flatten(elems)
    if not flat:
        raise ValueError(
            f"{what}: elems must be a Tensor or (possibly nested) sequence of Tensors. Got "
            f"{elems!r} ({_user_location()})"
        )
    tensors = [convert_to_tensor(e, name="elem") for e in flat]
    for t in tensors:
        if t.shape.ndims == 0:
            raise ValueError(
                f"{what}: elements in elems must be 1+ dimensional Tensors, not scalars: "
                f"'{t.name}' ({_user_location()})"
            )
    return tensors


def _length(tensors: list[Tensor], what: str) -> tuple[Any, Optional[int]]:
    """The number of elements (an int when known statically, else a tensor) and its static
    value; every leaf must agree on it."""
    static = None
    for t in tensors:
        first = t.shape[0] if t.shape.ndims else None
        if first is None:
            continue
        if static is not None and first != static:
            raise ValueError(
                f"{what}: the tensors of elems must have the same first dimension, got "
                f"{static} and {first} ('{t.name}') ({_user_location()})"
            )
        static = first
    if static is not None:
        return static, static
    return shape(tensors[0])[0], None


def _unstacked(tensors: list[Tensor], n) -> list[TensorArray]:
    return [
        TensorArray(t.dtype, size=n, dynamic_size=False, infer_shape=True).unstack(t)
        for t in tensors
    ]


def _with_first_dimension(results: list[Tensor], static_n: Optional[int]) -> None:
    for r in results:
        if r.shape.ndims:
            r.set_shape(TensorShape([static_n]).concatenate(r.shape[1:]))


def map_fn(
    fn: Callable,
    elems,
    dtype=None,
    parallel_iterations: Optional[int] = None,
    back_prop: bool = True,
    swap_memory: bool = False,
    infer_shape: bool = True,
    name: Optional[str] = None,
    fn_output_signature=None,
):
    """``fn`` applied to each element of ``elems`` (its slices along the first dimension),
    the results stacked (``tf.compat.v1.map_fn``).

    ``fn_output_signature`` (``dtype``, its earlier name, when it is not given) gives the
    structure and dtypes of ``fn``'s result when they differ from those of ``elems``: a dtype
    or a `TensorSpec` (whose dtype counts), or a nested structure of them.  With
    ``infer_shape`` every result must have one shape.  ``parallel_iterations`` (10 by default)
    results may be computed at once; with ``back_prop=False`` no gradient flows through.
    """
    __tracebackhide__ = True
    _check_fn(fn, "map_fn")
    if fn_output_signature is not None:
        dtype = nest.map_structure(_signature_dtype, fn_output_signature)
    if parallel_iterations is None:
        parallel_iterations = 10
    with name_scope(name, "map", nest.flatten(elems)):
        elems_flat = _flat_elements(elems, "map_fn")
        if dtype is None:
            dtype_flat = [t.dtype for t in elems_flat]
            output_structure = elems
        else:
            output_structure = dtype
            dtype_flat = [_dtypes.as_dtype(d) for d in nest.flatten(dtype)]
        n, static_n = _length(elems_flat, "map_fn")
        elems_ta = _unstacked(elems_flat, n)
        accs_ta = [
            TensorArray(dt, size=n, dynamic_size=False, infer_shape=infer_shape)
            for dt in dtype_flat
        ]
        location = _user_location()

        def compute(i, tas):
            packed = nest.pack_sequence_as(elems, [ta.read(i) for ta in elems_ta])
            result = fn(packed)
            try:
                nest.assert_same_structure(output_structure, result)
            except (TypeError, ValueError) as e:
                raise type(e)(
                    f"map_fn ({location}): fn must return the structure of "
                    f"{'dtype' if dtype is not None else 'elems'} (give dtype when it differs "
                    f"from that of elems): {e}"
                ) from None
            values = [convert_to_tensor(v) for v in nest.flatten(result)]
            for value, dt in zip(values, dtype_flat):
                if value.dtype is not dt:
                    raise TypeError(
                        f"map_fn ({location}): fn returned {value.dtype.name} ('{value.name}') "
                        f"where {dt.name} was expected; give dtype= for the results of fn."
                    )
            return i + 1, [ta.write(i, v) for ta, v in zip(tas, values)]

        i = constant(0)
        _, results_ta = _while_loop(
            lambda i, _: i < n,
            compute,
            (i, accs_ta),
            parallel_iterations=parallel_iterations,
            back_prop=back_prop,
            swap_memory=swap_memory,
            maximum_iterations=n,
        )
        results = [ta.stack() for ta in results_ta]
        _with_first_dimension(results, static_n)
    return nest.pack_sequence_as(output_structure, results)


def _signature_dtype(spec):
    """The dtype of one leaf of map_fn's ``fn_output_signature``."""
    from dataflow.framework.tensor_spec import TensorSpec

    if isinstance(spec, TensorSpec):
        return spec.dtype
    if hasattr(spec, "_component_specs") or type(spec).__name__ in (
        "SparseTensorSpec",
        "RaggedTensorSpec",
    ):
        raise TypeError(
            f"map_fn: fn_output_signature {spec!r} describes a composite tensor; map_fn stacks "
            "tensors only here (give the dtypes of tensor results)"
        )
    return _dtypes.as_dtype(spec)


def scan(
    fn: Callable,
    elems,
    initializer=None,
    parallel_iterations: int = 10,
    back_prop: bool = True,
    swap_memory: bool = False,
    infer_shape: bool = True,
    reverse: bool = False,
    name: Optional[str] = None,
):
    """The running results of ``a = fn(a, element)`` over the elements of ``elems``, stacked
    (``tf.compat.v1.scan``).

    ``a`` starts as ``initializer`` (any nested structure; ``fn`` returns that structure), or,
    without it, as the first element (then ``fn`` returns the structure of ``elems``, and the
    first result is that element).  With ``reverse`` the elements are taken last to first, and
    the results are stored at the elements' positions.
    """
    __tracebackhide__ = True
    _check_fn(fn, "scan")
    with name_scope(name, "scan", nest.flatten(elems)):
        elems_flat = _flat_elements(elems, "scan")
        n, static_n = _length(elems_flat, "scan")
        elems_ta = _unstacked(elems_flat, n)
        if initializer is None:
            structure = elems
            first = n - 1 if reverse else 0
            a_flat = [ta.read(first) for ta in elems_ta]
            start = 1
        else:
            structure = initializer
            a_flat = [convert_to_tensor(a) for a in nest.flatten(initializer)]
            start = 0
        accs_ta = [
            TensorArray(
                a.dtype,
                size=n,
                element_shape=a.shape if infer_shape else None,
                dynamic_size=False,
                infer_shape=infer_shape,
            )
            for a in a_flat
        ]
        if initializer is None:
            accs_ta = [ta.write(first, a) for ta, a in zip(accs_ta, a_flat)]
        location = _user_location()

        def compute(i, a_flat, tas):
            packed_elems = nest.pack_sequence_as(elems, [ta.read(i) for ta in elems_ta])
            a_out = fn(nest.pack_sequence_as(structure, a_flat), packed_elems)
            try:
                nest.assert_same_structure(structure, a_out)
            except (TypeError, ValueError) as e:
                raise type(e)(
                    f"scan ({location}): fn must return the structure of "
                    f"{'initializer' if initializer is not None else 'elems'}: {e}"
                ) from None
            flat_out = nest.flatten(a_out)
            tas = [ta.write(i, v) for ta, v in zip(tas, flat_out)]
            return (i - 1 if reverse else i + 1), flat_out, tas

        if reverse:
            initial_i = n - 1 - start

            def condition(i, _1, _2):
                return i >= 0

        else:
            initial_i = start

            def condition(i, _1, _2):
                return i < n

        _, _, results_ta = _while_loop(
            condition,
            compute,
            (convert_to_tensor(initial_i, dtype=_dtypes.int32), a_flat, accs_ta),
            parallel_iterations=parallel_iterations,
            back_prop=back_prop,
            swap_memory=swap_memory,
            maximum_iterations=n,
        )
        results = [ta.stack() for ta in results_ta]
        _with_first_dimension(results, static_n)
    return nest.pack_sequence_as(structure, results)


def _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name, reverse):
    what = "foldr" if reverse else "foldl"
    _check_fn(fn, what)
    with name_scope(name, what, nest.flatten(elems)):
        elems_flat = _flat_elements(elems, what)
        n, _ = _length(elems_flat, what)
        elems_ta = _unstacked(elems_flat, n)

        def element(i):
            return nest.pack_sequence_as(elems, [ta.read(i) for ta in elems_ta])

        if initializer is None:
            first = n - 1 if reverse else 0
            a = element(first)
            i = convert_to_tensor(first, dtype=_dtypes.int32)
            if not reverse:
                i = constant(1)
        else:
            a = initializer
            i = convert_to_tensor(n, dtype=_dtypes.int32) if reverse else constant(0)

        if reverse:

            def compute(i, a):
                i -= 1
                return [i, fn(a, element(i))]

            def condition(i, a):
                return i > 0

        else:

            def compute(i, a):
                a = fn(a, element(i))
                return [i + 1, a]

            def condition(i, a):
                return i < n

        _, result = _while_loop(
            condition,
            compute,
            [i, a],
            parallel_iterations=parallel_iterations,
            back_prop=back_prop,
            swap_memory=swap_memory,
            maximum_iterations=n,
        )
    return result


def foldl(
    fn: Callable,
    elems,
    initializer=None,
    parallel_iterations: int = 10,
    back_prop: bool = True,
    swap_memory: bool = False,
    name: Optional[str] = None,
):
    """``fn(...fn(fn(initializer, e0), e1)..., e_last)`` over the elements of ``elems``
    (``tf.compat.v1.foldl``); without ``initializer`` the first element starts."""
    __tracebackhide__ = True
    return _fold(
        fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name, reverse=False
    )


def foldr(
    fn: Callable,
    elems,
    initializer=None,
    parallel_iterations: int = 10,
    back_prop: bool = True,
    swap_memory: bool = False,
    name: Optional[str] = None,
):
    """``fn(...fn(fn(initializer, e_last), e_last-1)..., e0)`` over the elements of ``elems``
    (``tf.compat.v1.foldr``); without ``initializer`` the last element starts."""
    __tracebackhide__ = True
    return _fold(
        fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name, reverse=True
    )


def _while_loop(*args, **kwargs):
    """`while_loop`, imported when first used: ``primitives`` is built on this package, which
    the functional ops are built on."""
    from primitives.control_flow_ops import while_loop

    return while_loop(*args, **kwargs)
