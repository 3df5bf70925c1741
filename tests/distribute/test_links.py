"""Links: the direct connections a step's messages take between the processes of a cluster.

A link runs only the methods its server was given, for a peer that proved it knows the
server's secret; a message's declared length is bounded before it is read; a link that breaks
fails the calls waiting on it at once.
"""

import pickle
import socket
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from dataflow.distribute import links
from dataflow.distribute.links import Link, LinkLost, LinkServer, RemoteCallError


def make_server(**calls_and_posts):
    posts = {k[5:]: f for k, f in calls_and_posts.items() if k.startswith("post_")}
    calls = {k: f for k, f in calls_and_posts.items() if not k.startswith("post_")}
    return LinkServer("127.0.0.1", calls=calls, posts=posts, threads=4)


def connection_closed(sock: socket.socket) -> bool:
    sock.settimeout(10)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def test_a_call_returns_the_methods_value_and_a_post_runs_on_arrival():
    posted = []
    arrived = threading.Event()

    def note(value):
        posted.append(value)
        arrived.set()

    server = make_server(add=lambda a, b: a + b, post_note=note)
    link = Link(server.address, server.secret)
    assert link.call("add", 2, 3).result(timeout=10) == 5
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(link.call("add", array, 1.0).result(timeout=10), array + 1)
    link.post("note", "hello")
    assert arrived.wait(10) and posted == ["hello"]
    link.close()


def test_calls_on_one_link_run_at_once_and_each_answer_finds_its_caller():
    release = threading.Event()

    def slow(x):
        release.wait(10)
        return x

    server = make_server(slow=slow, fast=lambda x: -x)
    link = Link(server.address, server.secret)
    waiting = link.call("slow", 1)
    assert link.call("fast", 2).result(timeout=10) == -2  # not behind the blocked call
    assert not waiting.done()
    release.set()
    assert waiting.result(timeout=10) == 1
    link.close()


def test_a_method_that_raises_fails_the_callers_future_with_its_class_and_message():
    def refuse(x):
        raise ValueError(f"no {x}")

    server = make_server(refuse=refuse)
    link = Link(server.address, server.secret)
    with pytest.raises(RemoteCallError, match="ValueError: no 3") as caught:
        link.call("refuse", 3).result(timeout=10)
    assert caught.value.class_name == "ValueError"
    link.close()


def test_a_peer_without_the_secret_is_refused_and_runs_nothing():
    ran = []
    server = make_server(run=lambda: ran.append(1))
    with pytest.raises(LinkLost, match="secret|ended|closed|reset|Broken"):
        Link(server.address, b"a guess" * 4).call("run").result(timeout=10)
    assert ran == []


class _Recorder:
    """A pickle that would call `_record` when loaded (as a hostile message would run code)."""

    def __reduce__(self):
        return (_record, ())


_recorded = []


def _record():
    _recorded.append(1)


def test_a_pickle_sent_before_the_secret_is_proved_is_never_loaded():
    server = make_server(run=lambda: None)
    sock = socket.create_connection(server.address, timeout=10)
    links._recv_frame(sock)  # the server's challenge
    links._send_frame(sock, pickle.dumps(("post", "run", (_Recorder(),))))
    assert connection_closed(sock)
    assert _recorded == []


def test_a_message_declaring_more_than_the_limit_ends_the_connection_before_it_is_read():
    server = make_server(run=lambda: None)
    sock = socket.create_connection(server.address, timeout=10)
    links._prove_and_check(sock, server.secret, server=False)
    sock.sendall(links._HEADER.pack(links.MAX_MESSAGE_BYTES + 1))
    assert connection_closed(sock)


def test_a_message_naming_a_method_the_server_was_not_given_ends_the_connection():
    server = make_server(run=lambda: 1)
    link = Link(server.address, server.secret)
    link.post("__init__")
    deadline = time.monotonic() + 10
    while link.broken is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert link.broken is not None
    with pytest.raises(LinkLost):
        link.call("run").result(timeout=10)


SERVE_IN_A_PROCESS = textwrap.dedent(
    """
    import sys, time
    from dataflow.distribute.links import LinkServer
    server = LinkServer("127.0.0.1", calls={"sleep": time.sleep}, posts={}, threads=2)
    print(server.address[1], server.secret.hex(), flush=True)
    time.sleep(600)
    """
)


def test_when_the_peers_process_ends_its_waiting_calls_fail_at_once():
    process = subprocess.Popen(
        [sys.executable, "-c", SERVE_IN_A_PROCESS], stdout=subprocess.PIPE, text=True
    )
    try:
        port, secret = process.stdout.readline().split()
        link = Link(("127.0.0.1", int(port)), bytes.fromhex(secret))
        waiting = link.call("sleep", 300)
        time.sleep(0.2)
        process.kill()
        started = time.monotonic()
        with pytest.raises(LinkLost):
            waiting.result(timeout=10)
        assert time.monotonic() - started < 1.0
        with pytest.raises(LinkLost):
            link.call("sleep", 0).result(timeout=10)  # a broken link stays broken
    finally:
        process.kill()
        process.wait()
