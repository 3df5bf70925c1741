"""Lazy tensors: ops record into a graph until a value is needed, then that graph runs once.

``with df.lazy_mode():`` makes every op record into the context's `Graph` (the ordinary IR)
instead of running, and return a `LazyTensor`.  Asking a lazy tensor for its value
(``numpy()``, ``bool()``, ``float()``, ``int()``, printing, ``np.asarray``) *materialises* it:
what was recorded since the last materialisation runs once, as one plan of the recording's
Session, so the default graph passes (constant folding, common subexpressions, elementwise
fusion, ...) see the whole recorded program instead of one op at a time.  This is how
PyTorch/XLA's lazy tensors get a graph out of define-by-run code.

Invariants:

- A materialisation computes every lazy tensor of the recording that Python still references
  (the recording holds them weakly, so a chain of temporaries fuses into one kernel) and runs
  every effect recorded since the last one.  No op runs twice: an op recorded later reads a
  computed tensor as a constant, and a later materialisation runs only what came after.
- Effects (variable initialisation, reads and writes, random draws, assertions: the ops
  whose OpDef is ``stateful``, except a variable's handle, which only names it) recorded
  outside ``cond``/``while_loop`` run in program order: each gets a control input from the
  one recorded before it.
- Lazy tensors stay usable after the ``with`` block; they materialise when asked.
- An op's error is raised by the materialisation that runs it, naming the user's line where
  the op was recorded.  The tensors of a failed materialisation keep its error (asking them
  again raises it again; nothing reruns), and the Session's variables keep the values they had
  before it.
- A materialisation that ran a program recorded before (the same ops, attrs, wiring, lines,
  fetched tensors and effects; only the data fed in may differ) runs that earlier program
  again with the new data, so its Session plan, passes and lowering included, is made once:
  a training loop recorded lazily plans its step once, as a tracing JIT compiles once.
  ``Recording.plan_reuses`` counts these runs.  The ops of such a recording then leave the
  graph (except variable handles, which later recordings name), so the graph of a loop stays
  the size of its distinct programs, and so do the walks over it (``gradients``).
- A `GradientTape` active under ``lazy_mode`` records the lazy ops as it records eager ones
  (`TapedOperation`), and the gradient functions it replays record lazily too, so a taped
  training step is one recorded program like any other.  A value the tape follows may not
  flow into a ``cond`` or ``while_loop`` recorded here: they are graph control flow, which a
  tape does not follow op by op, so that is refused (``df.gradients`` differentiates them).
- Variables made under ``lazy_mode`` live in the recording's Session, one per ``lazy_mode``
  block; their ``initializer`` is an effect like any other.  A variable made eagerly and used
  under ``lazy_mode`` keeps its value in the eager context: each run takes the value it has
  then and gives back what the run wrote (nothing, when the run fails).

Layer: eager (``dataflow.eager``); it may import the client and the layers below it.
"""

from .recording import LazyTensor, Recording, lazy_mode

__all__ = ["LazyTensor", "Recording", "lazy_mode"]
