"""Partitioned and distributed execution: placement, partitioning, and running the partitions.

The layer sits between a built graph and the executor (``architecture.md``): the placer gives
every op of a run one full device name (`placer.place`); the partitioner (`partition`) cuts the
placed graph into one graph per device, joined by ``_Send``/``_Recv`` pairs (`sendrecv`) that
meet at a rendezvous (`rendezvous`); the partitions run in process (`local`, one executor run
per device) or on the tasks of a Ray cluster.

Invariants: the executor never learns about devices (each partition is an ordinary program; it
only knows the node flags ``_Send``/``_Recv`` declare: ``fires_on_dead``, ``blocking``,
``wants_frame``); placement is a pure function of the graph, the ops of the run, the
``ConfigProto`` and the cluster, so a plan and its placement are cached together; ops of one
colocation group always share a device; one rendezvous serves one step, and a value crosses
between partitions only through it.
"""
