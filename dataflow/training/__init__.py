"""Training: optimizers (`train`, ``df.train``), learning-rate schedules, moving averages,
the sessions that train (`monitored_session`, `supervisor`, hooks), coordinators and queue
runners, TF1's input pipelines (`input`), object checkpoints (`checkpoint`), warm starts and
synchronous replicas.

Layer: training, the highest layer of model code; it may import every layer below it
(framework to nn) and nothing above (render, debug, compat, the package root).

Invariant: training is built from ordinary graphs and runs: an optimizer adds ops to the graph
(its slots are variables, its update an op), and a hook sees a run only through
`session_run_hook`'s arguments and values, so everything here can be drawn, saved and run by
any Session.
"""
