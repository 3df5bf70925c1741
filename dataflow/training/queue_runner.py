"""Queue runners: threads that keep a queue fed (``tf.train.QueueRunner``).

A `QueueRunner` holds a queue and the enqueue ops that fill it.  ``create_threads(sess, coord)``
starts one thread per enqueue op, each running its op over and over with ``sess.run``.  When an
enqueue stops with one of the "queue closed" exceptions (``OutOfRangeError``: the queue it reads
from, upstream, ran out) the thread ends, and the last one to end closes the queue, so that
readers drain what is left and then get ``OutOfRangeError`` themselves.  Any other exception is
passed to the coordinator (which stops every thread and re-raises it in ``coord.join``).  With a
coordinator, one more thread waits for the stop and then cancels the queue, freeing enqueues that
wait for room.

``add_queue_runner`` puts a runner in the graph's ``QUEUE_RUNNERS`` collection and
``start_queue_runners`` starts the threads of all of them, as TF1 programs expect.
"""

from __future__ import annotations

import threading

from ..framework import errors
from ..framework.graph import get_default_graph
from ..framework.graph_keys import GraphKeys
from ..framework.session_stack import get_default_session
from ..io.dfg import _register_collection_item
from ..ops.queue_ops import QueueBase

__all__ = ["QueueRunner", "add_queue_runner", "start_queue_runners"]

_QUEUE_RUNNERS = GraphKeys.QUEUE_RUNNERS


class QueueRunner:
    """The enqueue ops that feed ``queue``, and the threads that run them."""

    def __init__(
        self,
        queue=None,
        enqueue_ops=None,
        close_op=None,
        cancel_op=None,
        queue_closed_exception_types=None,
        queue_runner_def=None,
        import_scope=None,
    ):
        if get_default_graph()._eager:
            raise RuntimeError(
                "QueueRunners are not supported when eager execution is enabled. Instead, "
                "please use df.data to get data into your model."
            )
        if queue_runner_def is not None:
            raise ValueError("queue_runner_def (a protocol buffer) is not supported")
        if queue is None or not enqueue_ops:
            raise ValueError("QueueRunner needs a queue and at least one enqueue op")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = (
            cancel_op if cancel_op is not None else queue.close(cancel_pending_enqueues=True)
        )
        self._queue_closed_exception_types = tuple(
            queue_closed_exception_types or (errors.OutOfRangeError,)
        )
        self._lock = threading.Lock()
        self._runs_per_session: dict = {}
        self._exceptions_raised: list = []

    @property
    def queue(self):
        return self._queue

    @property
    def enqueue_ops(self) -> list:
        return list(self._enqueue_ops)

    @property
    def close_op(self):
        return self._close_op

    @property
    def cancel_op(self):
        return self._cancel_op

    @property
    def queue_closed_exception_types(self) -> tuple:
        return self._queue_closed_exception_types

    @property
    def exceptions_raised(self) -> list:
        """Exceptions the threads raised that no coordinator took."""
        return list(self._exceptions_raised)

    @property
    def name(self) -> str:
        return self._queue.name

    # -- saving with df.io ------------------------------------------------------------------------
    def to_record(self) -> dict:
        """The runner as op names, for a graph file (`dataflow.io`)."""
        return {
            "queue": self._queue.queue_ref.op.name,
            "enqueue_ops": [op.name for op in self._enqueue_ops],
            "close_op": self._close_op.name,
            "cancel_op": self._cancel_op.name,
        }

    @classmethod
    def from_record(cls, graph, record: dict) -> QueueRunner:
        """The runner `to_record` described, over the ops of ``graph``; ``KeyError``,
        ``ValueError`` or ``TypeError`` when the record does not describe one."""
        if not isinstance(record, dict) or set(record) != {
            "queue",
            "enqueue_ops",
            "close_op",
            "cancel_op",
        }:
            raise ValueError(f"expected queue, enqueue_ops, close_op and cancel_op: {record!r:.80}")
        if not isinstance(record["enqueue_ops"], list) or not all(
            isinstance(name, str) for name in record["enqueue_ops"]
        ):
            raise TypeError("enqueue_ops is a list of op names")
        operation = lambda name: graph.as_graph_element(  # noqa: E731
            name, allow_tensor=False, allow_operation=True
        )
        return cls(
            QueueBase.from_handle(operation(record["queue"])),
            [operation(name) for name in record["enqueue_ops"]],
            close_op=operation(record["close_op"]),
            cancel_op=operation(record["cancel_op"]),
        )

    # -- the threads ------------------------------------------------------------------------------
    def _run(self, sess, enqueue_op, coord) -> None:
        decremented = False
        try:
            while True:
                if coord is not None and coord.should_stop():
                    break
                try:
                    sess.run(enqueue_op)
                except self._queue_closed_exception_types:
                    with self._lock:
                        self._runs_per_session[sess] -= 1
                        decremented = True
                        if self._runs_per_session[sess] == 0:
                            try:
                                sess.run(self._close_op)
                            except Exception:
                                pass  # the Session may be closing; nothing is left to close
                    return
        except Exception as e:
            if coord is not None:
                coord.request_stop(e)
            else:
                with self._lock:
                    self._exceptions_raised.append(e)
                raise
        finally:
            if not decremented:
                with self._lock:
                    self._runs_per_session[sess] -= 1

    def _close_on_stop(self, sess, coord) -> None:
        coord.wait_for_stop()
        try:
            sess.run(self._cancel_op)
        except Exception:
            pass  # the Session is closed already: its queues were cancelled with it

    def create_threads(self, sess, coord=None, daemon: bool = False, start: bool = False):
        """The threads (started when ``start``) that run the enqueue ops in ``sess``; none when
        threads of this runner are already running in ``sess``."""
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [
            threading.Thread(
                target=self._run, args=(sess, op, coord), name=f"QueueRunnerThread-{self.name}"
            )
            for op in self._enqueue_ops
        ]
        if coord is not None:
            threads.append(
                threading.Thread(
                    target=self._close_on_stop,
                    args=(sess, coord),
                    name=f"QueueRunnerThread-{self.name}-close_on_stop",
                )
            )
        for thread in threads:
            if coord is not None:
                coord.register_thread(thread)
            thread.daemon = daemon
            if start:
                thread.start()
        return threads


def add_queue_runner(qr: QueueRunner, collection: str = _QUEUE_RUNNERS) -> None:
    """Adds ``qr`` to the default graph's ``collection`` (``QUEUE_RUNNERS``)."""
    get_default_graph().add_to_collection(collection, qr)


def start_queue_runners(
    sess=None,
    coord=None,
    daemon: bool = True,
    start: bool = True,
    collection: str = _QUEUE_RUNNERS,
) -> list:
    """Starts the threads of every queue runner in ``collection`` of ``sess``'s graph and
    returns them (pass them to ``coord.join``)."""
    if sess is None:
        sess = get_default_session()
        if sess is None:
            raise ValueError(
                "Cannot start queue runners: no default session is registered. Use `with "
                "sess.as_default()` or pass an explicit session to start_queue_runners(sess=sess)"
            )
    threads = []
    for qr in sess.graph.get_collection(collection):
        threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads


# Graph files save and load the queue runners of a graph's collections.
_register_collection_item("queue_runner", QueueRunner, QueueRunner.from_record)
