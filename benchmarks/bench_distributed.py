"""Distributed execution benchmarks: prints figures, one section each.

    python benchmarks/bench_distributed.py            # every section
    python benchmarks/bench_distributed.py --quick    # fewer repeats
    python benchmarks/bench_distributed.py --only in_process

Sections (each a function ``section_<name>(repeats)`` listed in `SECTIONS`):

- ``in_process``: what cutting a graph across in-process devices costs against the same graph
  on one device.  (1) Per Send/Recv pair: a chain of ``K`` scalar adds placed alternately on
  ``/cpu:0`` and ``/cpu:1`` (every edge crosses: ``K`` pairs); the figure is (partitioned - one
  device) / K.  (2) Per cross-device loop iteration: a ``while_loop`` of ``N`` iterations whose
  predicate is on ``/cpu:0`` and whose body is on ``/cpu:1`` (each iteration sends the predicate
  to the body's control loop and the loop variable both ways); the figure is (partitioned - one
  device) / N.

- ``ray_transfer``: a 1 MB and a 100 MB float32 tensor moved from one task actor to another
  through the cluster's rendezvous (the sender's ``send``, the receiver's ``recv`` of the same
  step and key), against Ray's own way of doing it between the same two actors (the sender
  ``ray.put``s the array and hands over the reference, the receiver ``ray.get``s it).  Both go
  through two actor calls and one copy into Ray's object store, and arrive zero-copy.  Target:
  the rendezvous within 1.5x of Ray's own.

Medians over repeats, both ways timed in turn within each round; the machine may be shared, so
read ratios, not absolutes.  Ray runs locally with two CPUs and no dashboard.
"""

from __future__ import annotations

# First, before numpy is imported: importing harness pins BLAS threads.
from harness import describe_machine, paired_median_times

# isort: split
import argparse
import itertools

import numpy as np

import dataflow as df
from dataflow.distribute.ray_cluster import TaskServer
from dataflow.distribute.rendezvous import make_key


# -- In process: partitions on several CPUs of one process ------------------------------------
def _chain(length: int, split: bool):
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float32, [], name="x")
        value = x
        for k in range(length):
            with df.device(f"/cpu:{k % 2 if split else 0}"):
                value = value + 1.0
    return graph, x, value


def _loop(split: bool):
    graph = df.Graph()
    with graph.as_default():
        n = df.placeholder(df.int32, [], name="n")

        def cond(i, acc):
            with df.device("/cpu:0"):
                return i < n

        def body(i, acc):
            with df.device(f"/cpu:{1 if split else 0}"):
                return i + 1, acc * 0.5 + 1.0

        with df.device("/cpu:0"):
            out = df.while_loop(cond, body, [df.constant(0), df.constant(0.0)])[1]
    return graph, n, out


def _session_runner(graph, fetch, feed):
    # No graph passes: the chain of adds would be fused into one op on one device.
    config = df.ConfigProto(
        device_count={"CPU": 2},
        graph_options=df.GraphOptions(
            rewrite_options=df.RewriterConfig(disable_meta_optimizer=True)
        ),
    )
    sess = df.Session(graph=graph, config=config)
    sess.run(fetch, feed)
    return sess, (lambda: sess.run(fetch, feed))


def section_in_process(repeats: int) -> None:
    length = 64
    runners, sessions = [], []
    for split in (False, True):
        graph, x, out = _chain(length, split)
        sess, run = _session_runner(graph, out, {x: np.float32(0)})
        sessions.append(sess)
        runners.append(run)
    one, parted = paired_median_times(*runners, repeats=repeats * 4)
    print(
        f"In process, chain of {length} adds: one device {one * 1e3:.2f} ms, split on 2 devices "
        f"{parted * 1e3:.2f} ms ({length} Send/Recv pairs): "
        f"{(parted - one) / length * 1e6:.1f} us per Send/Recv pair"
    )
    iterations = 200
    runners = []
    for split in (False, True):
        graph, n, out = _loop(split)
        sess, run = _session_runner(graph, out, {n: iterations})
        sessions.append(sess)
        runners.append(run)
    one, parted = paired_median_times(*runners, repeats=max(3, repeats))
    print(
        f"In process, while_loop of {iterations} iterations: one device {one * 1e3:.2f} ms, "
        f"predicate and body on 2 devices {parted * 1e3:.2f} ms: "
        f"{(parted - one) / iterations * 1e6:.1f} us per cross-device iteration "
        f"({parted / one:.1f}x)"
    )
    for sess in sessions:
        sess.close()


# -- Ray transfer between two tasks ----------------------------------------------------------------
class _TransferTask(TaskServer):
    """A task that holds one array to send, and reports what it received by its size only, so
    that no array travels back to the driver."""

    def hold(self, nbytes: int) -> None:
        self._array = np.random.default_rng(0).random(nbytes // 4, dtype=np.float32)

    def send_held(self, step_id: str, key: str) -> None:
        self.rendezvous(step_id).send(key, self._array, False)

    def recv_size(self, step_id: str, key: str) -> int:
        value, _ = self.recv(step_id, key, 60_000)
        return value.nbytes

    def put_held(self) -> list:
        import ray

        return [ray.put(self._array)]  # in a list, so that Ray hands over the reference

    def get_size(self, references: list) -> int:
        import ray

        return ray.get(references[0]).nbytes


def section_ray_transfer(repeats: int) -> None:
    import ray

    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    names = ["/job:worker/task:0", "/job:worker/task:1"]
    actor_class = ray.remote(_TransferTask).options(num_cpus=0, max_concurrency=32)
    sender, receiver = [actor_class.remote("worker", i) for i in range(2)]
    ray.get([a.connect.remote(dict(zip(names, (sender, receiver)))) for a in (sender, receiver)])
    key = make_key(f"{names[0]}/device:CPU:0", 1, f"{names[1]}/device:CPU:0", "x:0", "", 0)
    steps = itertools.count()

    def through_rendezvous():
        step = f"bench:{next(steps)}"
        sent = sender.send_held.remote(step, key)
        size = receiver.recv_size.remote(step, key)
        ray.get([sent, size])

    def through_ray_put_get():
        ray.get(receiver.get_size.remote(sender.put_held.remote()))

    print("Ray transfer between two task actors (median seconds per tensor)")
    print(f"  {'size':>8}  {'rendezvous':>11}  {'ray.put/get':>11}  {'ratio':>6}  (target <= 1.5)")
    for megabytes, rounds in ((1, repeats * 4), (100, repeats * 2)):
        ray.get(sender.hold.remote(megabytes << 20))
        ours, theirs = paired_median_times(through_rendezvous, through_ray_put_get, repeats=rounds)
        print(f"  {megabytes:>6}MB  {ours:>11.5f}  {theirs:>11.5f}  {ours / theirs:>6.2f}")
    for actor in (sender, receiver):
        ray.kill(actor)
    if started:
        ray.shutdown()


SECTIONS = {"in_process": section_in_process, "ray_transfer": section_ray_transfer}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--only", choices=sorted(SECTIONS), help="run one section")
    args = parser.parse_args()
    repeats = 3 if args.quick else 9
    print(describe_machine(repeats))
    for name, section in SECTIONS.items():
        if args.only in (None, name):
            section(repeats)


if __name__ == "__main__":
    main()
