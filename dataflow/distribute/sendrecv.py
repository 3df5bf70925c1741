"""``_Send`` and ``_Recv``: the two ends of an edge that crosses from one partition to another.

Both ops have TF's attributes: ``tensor_name`` (the tensor of the unpartitioned graph the pair
carries, or a control edge's name), ``send_device``, ``send_device_incarnation``,
``recv_device`` and ``client_terminated`` (always False here: feeds and fetches stay in the
partitions, see `dataflow.distribute.partition`).  ``_Recv`` adds ``tensor_type`` (TF's) and
``shape``, the static shape of the tensor it stands for, so that the ops it feeds infer the
same shapes as in the unpartitioned graph.

The kernels talk to the step's rendezvous (``RunContext.rendezvous``) with the key of
`rendezvous.make_key`, whose frame instance and iteration come from the executor
(``wants_frame``), so a loop's values of different iterations never meet the wrong partner.
Dead values travel as dead: ``_Send`` fires on a dead input (``fires_on_dead``) and sends the
dead mark; ``_Recv`` of a dead mark returns `executor.DEAD`, so its output is dead.  ``_Recv``
is ``asynchronous``: it asks the rendezvous for its value with a callback (`receive_async`),
which completes it at once when the value was sent already (the partition goes on inline, no
thread involved) and otherwise from the sender's thread when it is sent, while its partition
goes on with other work; no thread waits for it.  A failed partition's ``abort`` completes it
with that error; the step's deadline stops its partition's run, which waits for it.
"""

from __future__ import annotations

from executor import DEAD

from ..framework.gradient_registry import NotDifferentiable
from ..framework.op_registry import define_op
from ..framework.tensor_shape import as_shape
from .rendezvous import make_key, receive_async


def _infer_send(op) -> list:
    if len(op.inputs) != 1:
        raise ValueError(f"_Send takes one input, got {len(op.inputs)}")
    return []


def _infer_recv(op) -> list:
    if op.inputs:
        raise ValueError(f"_Recv takes no input, got {len(op.inputs)}")
    return [(op.attrs["tensor_type"], as_shape(op.attrs.get("shape")))]


def _key(attrs: dict, where: tuple) -> str:
    frame, iteration = where
    return make_key(
        attrs["send_device"],
        attrs["send_device_incarnation"],
        attrs["recv_device"],
        attrs["tensor_name"],
        frame,
        iteration,
    )


def _rendezvous_of(context, op_type: str):
    rendezvous = getattr(context, "rendezvous", None)
    if rendezvous is None:
        raise RuntimeError(
            f"a {op_type} runs only in a step of partitioned graphs, which has a rendezvous"
        )
    return rendezvous


def _send_kernel(attrs: dict):
    def send(context, where, value):
        is_dead = value is DEAD
        _rendezvous_of(context, "_Send").send(_key(attrs, where), value, is_dead)
        return ()

    return send


def _recv_kernel(attrs: dict):
    def recv(done, context, where):
        rendezvous = _rendezvous_of(context, "_Recv")

        def received(entry=None, error=None):
            if error is not None:
                done(error=error)
            else:
                value, is_dead = entry
                done(DEAD if is_dead else value)

        receive_async(rendezvous, _key(attrs, where), context.deadline, received)

    return recv


define_op(
    "_Send",
    _infer_send,
    _send_kernel,
    stateful=True,
    wants_context=True,
    inline=True,
    fires_on_dead=True,
    wants_frame=True,
)
define_op(
    "_Recv",
    _infer_recv,
    _recv_kernel,
    stateful=True,
    wants_context=True,
    inline=True,
    asynchronous=True,
    wants_frame=True,
)
NotDifferentiable("_Send")
NotDifferentiable("_Recv")
