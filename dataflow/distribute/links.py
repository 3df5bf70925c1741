"""Direct connections between the processes of a Ray cluster: the messages of a step.

Ray starts a cluster's task processes, names them, and tells when one is gone.  The messages
of a step (the master's call to run each task's partition, its commit, the values the tasks
send one another, the replies) travel instead over TCP connections made once between the
processes, because on a small machine a Ray actor call takes about 0.8 ms and such a message
0.05-0.15 ms.  A value larger than `INLINE_BYTES` still goes through Ray's object store, which
moves large arrays with fewer copies than a socket.

A task's `LinkServer` listens on the address of its Ray node (the loopback address for a
cluster on one machine).  Whoever connects must prove that it knows the task's secret, and
the task proves it back (HMAC-SHA256 of a random challenge each way, as
`multiprocessing.connection` does); the secret is learnt from the task through Ray
(`link_to`), so only a process joined to the Ray cluster, which takes Ray's token, can talk to
a task.  Messages are pickled, as Ray's own are, and only once both sides have proved the
secret; the length a message declares is bounded before anything is read.

On a connection, the connecting side sends ``("call", id, method, args)``, answered by
``("reply", id, value)`` or ``("raise", id, class name, message)``, and ``("post", method,
args)``, never answered.  Only the methods the server was given can be named: calls run on the
server's thread pool (a call may block, as a step waiting for a value does), posts on the
connection's reader thread (they must not block: a value delivered to a mailbox, an abort).

Invariants: one reader thread per connection, and no thread per waiting call; a connection
that breaks fails every call waiting on it with `LinkLost`, and the next `link_to` connects
again (to the task's new process, when it was started again).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import hashlib
import hmac
import itertools
import logging
import os
import pickle
import socket
import struct
import threading
from collections.abc import Callable
from typing import Any, Optional

# Values up to this many bytes go over a link; larger ones through Ray's object store (the
# size up to which Ray itself passes an actor call's argument inline, too).
INLINE_BYTES = 100 * 1024
# The largest message a link reads; a longer declared length breaks the connection.
MAX_MESSAGE_BYTES = 1 << 32
_HEADER = struct.Struct("!Q")
_CHALLENGE_BYTES = 32
# How long connecting and proving the secret may take, and how long a send may wait for a
# peer that reads nothing (one that is stopped, say) before the connection is dropped.
_HANDSHAKE_SECONDS = 10.0
_SEND_TIMEOUT_SECONDS = 30.0
# Messages shorter than this are sent with their header in one buffer.
_JOIN_BELOW_BYTES = 1 << 16

_logger = logging.getLogger(__name__)


class LinkLost(ConnectionError):
    """A link broke (its peer's process ended, say) or could not be made."""


class RemoteCallError(RuntimeError):
    """A method called over a link raised: ``class_name`` and ``message`` of its error."""

    def __init__(self, class_name: str, message: str):
        super().__init__(f"{class_name}: {message}")
        self.class_name = class_name
        self.message = message


# -- framing ---------------------------------------------------------------------------------------
def _send_frame(sock: socket.socket, payload: bytes) -> None:
    header = _HEADER.pack(len(payload))
    if len(payload) < _JOIN_BELOW_BYTES:
        sock.sendall(header + payload)
    else:
        sock.sendall(header)
        sock.sendall(payload)


def _recv_exact(sock: socket.socket, size: int) -> bytearray:
    buffer = bytearray(size)
    view = memoryview(buffer)
    received = 0
    while received < size:
        count = sock.recv_into(view[received:])
        if count == 0:
            raise EOFError("the connection was closed")
        received += count
    return buffer


def _recv_frame(sock: socket.socket, limit: int = MAX_MESSAGE_BYTES) -> bytearray:
    (size,) = _HEADER.unpack(_recv_exact(sock, _HEADER.size))
    if size > limit:
        raise LinkLost(f"a message declared {size} bytes, more than the {limit} a link reads")
    return _recv_exact(sock, size)


def _tune(sock: socket.socket) -> None:
    # Small messages leave at once (no waiting to coalesce them with later ones), and a send
    # to a peer that reads nothing gives up rather than blocking its thread for good.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        timeval = struct.pack("ll", int(_SEND_TIMEOUT_SECONDS), 0)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, timeval)
    except OSError:  # a platform whose timeval differs: sends then wait as long as they must
        pass


def _proof(secret: bytes, role: bytes, challenge: bytes) -> bytes:
    return hmac.new(secret, role + challenge, hashlib.sha256).digest()


def _prove_and_check(sock: socket.socket, secret: bytes, server: bool) -> None:
    """Both sides of a new connection prove they know ``secret``; raises `LinkLost` when the
    other side does not."""
    mine = os.urandom(_CHALLENGE_BYTES)
    _send_frame(sock, mine)
    theirs = bytes(_recv_frame(sock, _CHALLENGE_BYTES))
    own_role, their_role = (b"server", b"client") if server else (b"client", b"server")
    _send_frame(sock, _proof(secret, own_role, theirs))
    answer = bytes(_recv_frame(sock, 64))
    if not hmac.compare_digest(answer, _proof(secret, their_role, mine)):
        raise LinkLost("the other side of a link does not know the task's secret")


# -- the serving side ------------------------------------------------------------------------------
class LinkServer:
    """Serves ``calls`` (name -> function, run on a pool of ``threads`` threads) and ``posts``
    (name -> function, run on the connection's reader thread, each inside a context that
    ``around_posts`` makes, when given) to whoever proves ``secret``."""

    def __init__(
        self,
        host: str,
        calls: dict[str, Callable],
        posts: dict[str, Callable],
        threads: int,
        around_posts: Callable = contextlib.nullcontext,
    ):
        self.secret = os.urandom(32)
        self._calls = dict(calls)
        self._posts = dict(posts)
        self._around_posts = around_posts
        self._pool = concurrent.futures.ThreadPoolExecutor(threads, thread_name_prefix="link-call")
        self._listener = socket.create_server((host, 0))
        self.address = (host, self._listener.getsockname()[1])
        threading.Thread(target=self._accept, name="link-accept", daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(
                target=self._serve, args=(sock,), name="link-read", daemon=True
            ).start()

    def _serve(self, sock: socket.socket) -> None:
        send_lock = threading.Lock()

        def answer(message: tuple) -> None:
            try:
                payload = pickle.dumps(message, protocol=5)
            except Exception as e:  # a value that does not pickle: say so instead
                payload = pickle.dumps(("raise", message[1], type(e).__name__, str(e)))
            with send_lock:
                try:
                    _send_frame(sock, payload)
                except OSError:
                    pass  # the caller is gone, or reads nothing: its calls fail on its side

        def run(call_id: int, function: Callable, args: tuple) -> None:
            try:
                answer(("reply", call_id, function(*args)))
            except Exception as e:
                answer(("raise", call_id, type(e).__name__, str(e)))

        try:
            sock.settimeout(_HANDSHAKE_SECONDS)
            _tune(sock)
            _prove_and_check(sock, self.secret, server=True)
            sock.settimeout(None)
            while True:
                message = pickle.loads(_recv_frame(sock))
                if message[0] == "post":
                    _, name, args = message
                    function = self._posts[name]  # a KeyError ends the connection
                    try:
                        with self._around_posts():
                            function(*args)
                    except Exception:  # a post has no answer: its failure is only logged
                        _logger.exception("A message %r sent over a link failed", name)
                else:
                    _, call_id, name, args = message
                    self._pool.submit(run, call_id, self._calls[name], args)
        except (OSError, EOFError, LinkLost, KeyError, ValueError, pickle.UnpicklingError):
            pass  # the peer went away, or broke the protocol: the connection ends
        finally:
            sock.close()


# -- the connecting side ---------------------------------------------------------------------------
class Link:
    """A connection to one `LinkServer`: ``call`` returns a future of the method's value,
    ``post`` returns at once."""

    def __init__(self, address: tuple, secret: bytes):
        try:
            sock = socket.create_connection(address, timeout=_HANDSHAKE_SECONDS)
            _tune(sock)
            _prove_and_check(sock, secret, server=False)
            sock.settimeout(None)
        except (OSError, EOFError) as e:
            raise LinkLost(f"no link to {address[0]}:{address[1]}: {e}") from None
        self._sock = sock
        self._send_lock = threading.Lock()
        self._pending: dict[int, concurrent.futures.Future] = {}
        self._pending_lock = threading.Lock()
        self._ids = itertools.count()
        self.broken: Optional[str] = None
        threading.Thread(target=self._read, name="link-replies", daemon=True).start()

    def call(self, method: str, *args) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        call_id = next(self._ids)
        with self._pending_lock:
            if self.broken is not None:
                future.set_exception(LinkLost(self.broken))
                return future
            self._pending[call_id] = future
        try:
            self._send(("call", call_id, method, args))
        except LinkLost as e:
            with self._pending_lock:
                self._pending.pop(call_id, None)
            if not future.done():
                future.set_exception(e)
        return future

    def post(self, method: str, *args) -> None:
        """Sends a message that has no answer; `LinkLost` when the link is broken."""
        self._send(("post", method, args))

    def _send(self, message: tuple) -> None:
        payload = pickle.dumps(message, protocol=5)
        with self._send_lock:
            if self.broken is not None:
                raise LinkLost(self.broken)
            try:
                _send_frame(self._sock, payload)
            except OSError as e:
                self._break(f"sending failed: {e}")
                raise LinkLost(self.broken) from None

    def _read(self) -> None:
        try:
            while True:
                message = pickle.loads(_recv_frame(self._sock))
                with self._pending_lock:
                    future = self._pending.pop(message[1], None)
                if future is None:
                    continue
                if message[0] == "reply":
                    future.set_result(message[2])
                else:
                    future.set_exception(RemoteCallError(message[2], message[3]))
        except (OSError, EOFError, LinkLost, pickle.UnpicklingError) as e:
            self._break(f"the connection ended ({type(e).__name__})")

    def _break(self, reason: str) -> None:
        with self._pending_lock:
            if self.broken is None:
                self.broken = reason
            pending, self._pending = self._pending, {}
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        for future in pending.values():
            if not future.done():
                future.set_exception(LinkLost(reason))

    def close(self) -> None:
        self._break("closed")
        self._sock.close()


# -- links by actor --------------------------------------------------------------------------------
_links: dict[str, Link] = {}
_links_lock = threading.Lock()


def link_to(actor: Any, timeout: float = _HANDSHAKE_SECONDS) -> Link:
    """This process's link to the `LinkServer` of a task actor (whose ``link_address`` method
    gives its address and secret), made on first use and again after it broke; `LinkLost`
    when the actor cannot be reached."""
    import ray

    key = actor._actor_id.hex()
    with _links_lock:
        link = _links.get(key)
    if link is not None and link.broken is None:
        return link
    try:
        host, port, secret = ray.get(actor.link_address.remote(), timeout=timeout)
    except ray.exceptions.GetTimeoutError:
        raise LinkLost(f"the task did not give its link address within {timeout:.0f} s") from None
    except ray.exceptions.RayError as e:
        raise LinkLost(f"the task is gone ({type(e).__name__})") from None
    link = Link((host, port), secret)
    with _links_lock:
        old = _links.get(key)
        if old is not None and old.broken is None:
            link.close()
            return old
        _links[key] = link
    return link


def forget_links() -> None:
    """Closes every link of this process (when the Ray it reached is shut down)."""
    with _links_lock:
        links = list(_links.values())
        _links.clear()
    for link in links:
        link.close()
