"""``dataflow.distribute``: partitioned and distributed execution (issue 13).

One graph runs on many devices as TensorFlow 1.x runs it: every op is placed on a device, the
graph is cut into one graph per device (`partition`), every edge that crosses the cut becomes a
``_Send``/``_Recv`` pair (`sendrecv`) meeting at a rendezvous (`rendezvous`), and each
partition lowers and runs on the executor unchanged.  The executor never learns about devices:
it only knows the node flags those two ops declare (``fires_on_dead``, ``blocking``,
``wants_frame``).

Invariants: a partition graph is an ordinary `Graph` (it renders, saves and loads); one
rendezvous serves one step; a value crosses between partitions only through a rendezvous.
"""
