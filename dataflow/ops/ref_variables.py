"""TF1's reference variables: tensors that name a variable's storage instead of holding a value.

dataflow's `Variable` is a resource variable: a handle op, and reads and writes through it.
TF1's older variables are references: the ``VariableV2`` op outputs a tensor of a reference
dtype (``float32_ref``; ``dtype.base_dtype`` is ``float32``, ``dtype.is_ref_dtype`` is true),
and an op either takes that reference as it is (``Assign``, ``RefIdentity``, ``RefSwitch``,
...) or reads the variable through it when it runs.  Here both kinds of variable share the
Session's storage, keyed by name:

- ``variable(shape, dtype, ...)`` is TF1's raw ``VariableV2``: its reference names the storage
  ``shared_name`` (or the op's own name); using it before anything is assigned is TF1's
  FailedPreconditionError, "Attempting to use uninitialized value".
- ``Variable._ref()`` is a ``VariableV2`` naming the variable's own storage, so an assign
  through the reference updates the variable.
- The value of a reference at run time is the `VariableRef` a handle has: the executor moves it
  like any other value, so the control-flow primitives forward it.  An op that does not list an
  input in its OpDef's ``extra["ref_inputs"]`` reads a reference given there when it runs (the
  Session wraps its kernel), and its outputs are values (`Graph.create_op`); only ops marked
  ``outputs_refs`` output references.  Fetching a reference fetches the variable's value.
- The control-flow builders choose the Ref variant of a primitive (``RefSwitch``, ``RefMerge``,
  ``RefEnter``, ``RefExit``, ``RefNextIteration``, `primitives.raw_ops`) when its data input is
  a reference, as TF1's do; ``ref_identity`` and ``ref_select`` forward a reference too.

A reference tensor is TF1's racy read made explicit: a read through it sees whatever the
storage holds when the reading op runs, not a snapshot taken when the reference was made.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

import numpy as np

from ..framework import composites
from ..framework import dtypes as _dtypes
from ..framework.errors import FailedPreconditionError
from ..framework.graph import Tensor, control_dependencies, name_scope
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape, as_shape, unknown_shape
from .variables import Variable, VariableRef, _outside_control_flow

__all__ = [
    "forwarding_identity",
    "is_variable_initialized",
    "ref_identity",
    "ref_select",
    "variable",
]


# -- VariableV2 ------------------------------------------------------------------------------------
def _infer_variable(op):
    return [(op.attrs["dtype"]._as_ref, op.attrs["shape"])]


def _variable_kernel(attrs):
    """``attrs["op_name"]`` is the op's name, which the Session adds (``extra["named_by_op"]``):
    the storage of a variable without a ``shared_name``."""
    key = attrs["shared_name"] or attrs["op_name"]
    if attrs.get("container"):
        key = f"{attrs['container']}/{key}"
    ref = VariableRef(key, attrs["dtype"], attrs["shape"])
    return lambda: ref


define_op(
    "VariableV2",
    _infer_variable,
    _variable_kernel,
    inline=True,
    stateful=True,
    extra={"outputs_refs": True, "named_by_op": True},
)


def variable(
    shape,
    dtype,
    name: Optional[str] = None,
    container: str = "",
    shared_name: str = "",
) -> Tensor:
    """TF1's raw variable op (``gen_state_ops.variable``, ``VariableV2``): a reference to the
    storage ``shared_name`` (the op's name when empty) in ``container``, holding values of
    ``dtype`` and ``shape``.  Nothing initializes it: assign to it first.  Without a
    ``container``, the one of the enclosing ``container`` block
    (`dataflow.framework.resource_containers`)."""
    from ..framework.resource_containers import current_container

    dtype = _dtypes.as_dtype(dtype).base_dtype
    attrs = {
        "shape": as_shape(shape),
        "dtype": dtype,
        "container": container or current_container(),
        "shared_name": shared_name,
    }
    return apply_op("VariableV2", (), attrs, name=name or "Variable").outputs[0]


def ref_of(var: Variable) -> Tensor:
    """The reference to ``var``'s storage (``Variable._ref()``): one ``VariableV2`` per
    variable, named ``<variable>/ref``, made at the top level of the graph."""
    ref = getattr(var, "_ref_tensor", None)
    if ref is None:
        handle = var.handle
        with handle.graph.as_default(), _outside_control_flow(), control_dependencies(None):
            attrs = {
                "shape": var.shape,
                "dtype": var.dtype,
                "container": "",
                "shared_name": handle.op.attrs["shared_name"],
            }
            with name_scope(None):
                ref = apply_op("VariableV2", (), attrs, name=handle.op.name + "/ref").outputs[0]
        var._ref_tensor = ref
    return ref


# TF1's ``RefVariable._ref()``, on dataflow's Variable (registered here, where references live).
Variable._ref = ref_of


def as_ref_or_tensor(value) -> Tensor:
    """``value`` as TF1 converts an input that may take a reference: a `Variable` as its
    reference, anything else as a tensor."""
    if isinstance(value, Variable):
        return ref_of(value)
    return convert_to_tensor(value)


def _check_ref(t: Tensor, what: str) -> Tensor:
    if not t.dtype.is_ref_dtype:
        raise TypeError(f"{what} needs a reference, got '{t.name}' of dtype {t.dtype.name}")
    return t


# -- RefIdentity, RefSelect ------------------------------------------------------------------------
def _infer_ref_identity(op):
    (data,) = op.inputs
    return [(data.dtype, data.shape)]


define_op(
    "RefIdentity",
    _infer_ref_identity,
    lambda attrs: lambda ref: ref,
    inline=True,
    extra={"ref_inputs": (0,), "outputs_refs": True, "passes_sparse_gradients": True},
)


def ref_identity(data, name: Optional[str] = None) -> Tensor:
    """The reference ``data`` (or a variable's), forwarded: an assign to the result updates the
    variable."""
    data = _check_ref(as_ref_or_tensor(data), "ref_identity")
    return apply_op("RefIdentity", [data], name=name or "RefIdentity").outputs[0]


def forwarding_identity(data, name: Optional[str] = None) -> Tensor:
    """A RefIdentity of a reference (or of a variable's), an Identity of anything else: TF1's
    ``control_flow_ops._Identity``, which the control-flow builders use so that a reference
    stays one.  A composite (IndexedSlices, SparseTensor) goes part by part."""
    if composites.is_composite(data):
        return composites.map_parts(data, lambda part: forwarding_identity(part, name=name))
    data = as_ref_or_tensor(data)
    op_type = "RefIdentity" if data.dtype.is_ref_dtype else "Identity"
    return apply_op(op_type, [data], name=name or op_type).outputs[0]


def _infer_ref_select(op):
    index, *inputs = op.inputs
    if not index.dtype.is_integer or index.dtype.is_ref_dtype:
        raise TypeError(f"the index must be an int32 tensor, got {index.dtype.name}")
    if not inputs:
        raise ValueError("RefSelect needs at least one input")
    dtypes = {t.dtype for t in inputs}
    if len(dtypes) != 1 or not inputs[0].dtype.is_ref_dtype:
        raise TypeError(
            f"the inputs must be references of one dtype, got {sorted(d.name for d in dtypes)}"
        )
    # As TF1's: the inputs' shape when all know the same one, else unknown.
    shapes = [t.shape for t in inputs]
    same = all(s.is_fully_defined() for s in shapes) and all(s == shapes[0] for s in shapes)
    return [(inputs[0].dtype, shapes[0] if same else unknown_shape())]


def _ref_select_kernel(attrs):
    def select(index, *refs):
        position = int(np.asarray(index))
        if not 0 <= position < len(refs):
            raise IndexError(f"index {position} is out of range for {len(refs)} references")
        return refs[position]

    return select


define_op(
    "RefSelect",
    _infer_ref_select,
    _ref_select_kernel,
    inline=True,
    extra={"ref_inputs": "all", "outputs_refs": True},
)


def ref_select(index, inputs: Sequence, name: Optional[str] = None) -> Tensor:
    """The reference ``inputs[index]`` (TF1's ``ref_select``); ``inputs`` are references or
    variables of one dtype."""
    refs = [_check_ref(as_ref_or_tensor(x), "ref_select") for x in inputs]
    index = convert_to_tensor(index, dtype=_dtypes.int32)
    return apply_op("RefSelect", [index, *refs], name=name or "RefSelect").outputs[0]


# -- IsVariableInitialized -------------------------------------------------------------------------
def _is_initialized_kernel(attrs):
    def is_initialized(context, ref):
        try:
            context.read_variable(ref)
        except FailedPreconditionError:
            return np.array(False)
        return np.array(True)

    return is_initialized


define_op(
    "IsVariableInitialized",
    lambda op: [(_dtypes.bool, TensorShape([]))],
    _is_initialized_kernel,
    inline=True,
    stateful=True,
    wants_context=True,
    extra={"ref_inputs": (0,)},
)


def is_variable_initialized(variable, name: Optional[str] = None) -> Tensor:
    """A bool scalar: whether ``variable`` (a `Variable`, its handle or a reference) holds a
    value yet in the running Session."""
    target = variable.handle if isinstance(variable, Variable) else convert_to_tensor(variable)
    if not (target.dtype.is_ref_dtype or target.dtype is _dtypes.resource):
        raise TypeError(f"is_variable_initialized needs a variable, got {variable!r:.80}")
    op = apply_op("IsVariableInitialized", [target], name=name or "IsVariableInitialized")
    return op.outputs[0]


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import NotDifferentiable, RegisterGradient  # noqa: E402

for _type in ("VariableV2", "IsVariableInitialized", "RefSelect"):
    NotDifferentiable(_type)


@RegisterGradient("RefIdentity")
def _ref_identity_grad(op, grad):
    return grad
