"""FileWriter under concurrency: writers opened at once on one directory, in threads and in
processes, each keep their own file; closing while other threads add never deadlocks and
writes every event added before it."""

import multiprocessing
import os
import re
import socket
import threading
import time

import pytest

import dataflow as df
from dataflow.framework.tensorboard_protos import protos

event_file_loader = pytest.importorskip("tensorboard.backend.event_processing.event_file_loader")

WAIT_SECONDS = 60  # a bound on every wait: a deadlock fails the test instead of hanging it


def join_all(workers) -> None:
    """Joins threads or processes, all within one bound of `WAIT_SECONDS`."""
    end = time.monotonic() + WAIT_SECONDS
    for worker in workers:
        worker.join(max(0.0, end - time.monotonic()))


def summary(writer_index: int):
    proto = protos().Summary()
    proto.value.add(tag=f"writer{writer_index}", simple_value=float(writer_index))
    return proto


def summaries_in(logdir) -> list[tuple[str, int]]:
    """(tag, step) of every summary in every event file of ``logdir``, sorted."""
    found = []
    for name in os.listdir(logdir):
        for event in event_file_loader.EventFileLoader(os.path.join(logdir, name)).Load():
            if event.HasField("summary"):
                found += [(value.tag, event.step) for value in event.summary.value]
    return sorted(found)


def open_write_and_close(logdir, writer_index, barrier, events_each=3):
    barrier.wait(WAIT_SECONDS)
    writer = df.summary.FileWriter(logdir)
    for step in range(events_each):
        writer.add_summary(summary(writer_index), global_step=step)
    writer.close()


def test_writers_opened_at_once_in_several_processes_each_keep_their_events(tmp_path):
    protos()  # imported before the fork, so that the processes open their files at once
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(4)
    processes = [
        context.Process(target=open_write_and_close, args=(str(tmp_path), i, barrier))
        for i in range(4)
    ]
    try:
        for process in processes:
            process.start()
        join_all(processes)
        assert [p.exitcode for p in processes] == [0, 0, 0, 0]
    finally:
        for process in processes:
            if process.is_alive():
                process.kill()
    assert len(os.listdir(tmp_path)) == 4
    assert summaries_in(tmp_path) == [(f"writer{i}", s) for i in range(4) for s in range(3)]


def test_writers_opened_at_once_in_threads_each_keep_their_events_in_a_file_of_their_own(
    tmp_path,
):
    barrier = threading.Barrier(4)
    threads = [
        threading.Thread(target=open_write_and_close, args=(tmp_path, i, barrier)) for i in range(4)
    ]
    for thread in threads:
        thread.start()
    join_all(threads)
    assert summaries_in(tmp_path) == [(f"writer{i}", s) for i in range(4) for s in range(3)]
    names = os.listdir(tmp_path)
    host, pid = re.escape(socket.gethostname()), os.getpid()
    # TensorFlow's names: the second, the host, the process and a count within the process.
    assert all(
        re.fullmatch(rf"events\.out\.tfevents\.\d{{10}}\.{host}\.{pid}\.\d+", n) for n in names
    )
    assert len(set(names)) == 4


def test_a_writer_never_opens_a_file_that_exists(tmp_path, monkeypatch):
    # Another process (one with the same pid on another host sharing the directory) left
    # files with every name this process would choose first: they stay as they were.
    monkeypatch.setattr(df.summary.time, "time", lambda: 1_700_000_000.5)
    host, pid = socket.gethostname(), os.getpid()
    theirs = {}
    for count in range(200):
        path = tmp_path / f"events.out.tfevents.1700000000.{host}.{pid}.{count}"
        path.write_bytes(b"their events %d" % count)
        theirs[path] = path.read_bytes()
    with df.summary.FileWriter(tmp_path) as writer:
        writer.add_summary(summary(0), global_step=5)
    assert all(path.read_bytes() == data for path, data in theirs.items())
    (mine,) = set(os.listdir(tmp_path)) - {p.name for p in theirs}
    events = list(event_file_loader.EventFileLoader(str(tmp_path / mine)).Load())
    assert [e.step for e in events if e.HasField("summary")] == [5]


def test_close_while_threads_add_to_a_full_queue_ends_and_writes_what_was_added_before(tmp_path):
    writer = df.summary.FileWriter(tmp_path, max_queue=1)
    first_batch_added = [threading.Event() for _ in range(4)]
    closed = threading.Event()
    failures = []

    def add(index):
        try:
            for step in range(20):
                writer.add_summary(summary(index), global_step=step)
            first_batch_added[index].set()
            step = 20
            while not closed.is_set():  # adding on while close() runs, and after it
                writer.add_summary(summary(index), global_step=step)
                step += 1
        except BaseException as e:  # noqa: BLE001 - the test reports it
            failures.append(e)
            first_batch_added[index].set()

    adders = [threading.Thread(target=add, args=(i,), daemon=True) for i in range(4)]
    for adder in adders:
        adder.start()
    assert all(event.wait(WAIT_SECONDS) for event in first_batch_added)
    closer = threading.Thread(target=writer.close, daemon=True)
    with pytest.warns(UserWarning, match="closed FileWriter"):
        closer.start()
        closer.join(WAIT_SECONDS)
        assert not closer.is_alive(), "close() deadlocked"
        closed.set()
        join_all(adders)
    assert not any(adder.is_alive() for adder in adders), "add_summary blocked after close()"
    assert failures == []
    written = summaries_in(tmp_path)
    for index in range(4):
        steps = [step for tag, step in written if tag == f"writer{index}"]
        assert steps == list(range(len(steps)))  # in order, none lost in the middle
        assert len(steps) >= 20  # every event added before close() began


def test_an_event_added_after_close_is_ignored_with_tensorflows_warning(tmp_path):
    writer = df.summary.FileWriter(tmp_path)
    writer.add_summary(summary(0), global_step=1)
    writer.close()
    with pytest.warns(UserWarning, match="Attempting to use a closed FileWriter"):
        writer.add_summary(summary(0), global_step=2)
    writer.close()  # a second close does nothing
    assert summaries_in(tmp_path) == [("writer0", 1)]
