"""The Ray head that the processes of one cluster meet at: starting it, stopping it, finding it.

A cluster whose `ClusterSpec` holds ``host:port`` addresses runs as one process per task, each
with its own ``train.Server`` (`dataflow.distribute.task_processes`).  Those processes find one
another through one Ray cluster; this module manages its head and says where it is.  A task
process finds the head, in this order:

1. ``RAY_ADDRESS``: the ``host:port`` of a running head's control store (or ``ray://host:port``
   for Ray Client), as Ray itself reads it;
2. the head recorded by ``python -m dataflow cluster start`` in its state directory
   (``DATAFLOW_CLUSTER_DIR``, default ``<temp dir>/dataflow-cluster-<uid>``), when that head
   still runs;
3. otherwise the first task process starts one, exactly as ``cluster start`` does (under a
   lock, so that tasks started together start one head) and records it there.

A head started here is a ``ray start --head --block`` process in a session of its own, so it
outlives the process that started it; ``python -m dataflow cluster stop`` (`stop_head`) ends it
with SIGTERM, on which Ray stops the node's every process.  ``ray stop`` is never used: it stops
every Ray of the user on the machine, other people's clusters included.

As `ray_cluster.start_local_ray` does for a Ray in one process, a head started here listens on
the loopback address only (its Ray servers take ports chosen free at start) and requires Ray's
token (``RAY_AUTH_MODE=token``, unless the environment says otherwise); the processes it starts
for tasks import ``dataflow`` from where the starting process found it (the head's
``PYTHONPATH`` names that directory first).

Invariants: the state file names a head only while its ``ray start`` process lives (a stale
file is ignored and replaced); one state directory records at most one head.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import Optional

# What Ray reads for the address of the cluster to join (documented by Ray).
ADDRESS_VARIABLE = "RAY_ADDRESS"
# Where `cluster start` records its head, when set; else `default_state_dir()`.
STATE_DIR_VARIABLE = "DATAFLOW_CLUSTER_DIR"
_STATE_FILE = "head.json"
_LOCK_FILE = "head.lock"
# How long a starting head may take until its control store accepts connections.
_START_TIMEOUT_SECONDS = 90.0
# How long a stopping head may drain before its processes are killed.
_STOP_TIMEOUT_SECONDS = 40.0


class HeadError(RuntimeError):
    """A head that cannot be started, found or stopped, with the reason."""


def default_state_dir() -> str:
    """``DATAFLOW_CLUSTER_DIR``, else ``<temp dir>/dataflow-cluster-<uid>``."""
    configured = os.environ.get(STATE_DIR_VARIABLE)
    if configured:
        return configured
    return os.path.join(tempfile.gettempdir(), f"dataflow-cluster-{os.getuid()}")


def _state_path(state_dir: Optional[str]) -> str:
    return os.path.join(state_dir or default_state_dir(), _STATE_FILE)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process took the number
        return False
    # A zombie (exited, not yet reaped by its parent) is not a running head.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def _accepts_connections(address: str, timeout: float = 1.0) -> bool:
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            return True
    except (OSError, ValueError):
        return False


def read_head(state_dir: Optional[str] = None) -> Optional[dict]:
    """The head recorded in ``state_dir`` (``{"address", "pid", "log", "temp_dir"}``) when its
    ``ray start`` process still runs; None when none is recorded or it has stopped."""
    try:
        with open(_state_path(state_dir)) as f:
            head = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(head, dict) or not _alive(int(head.get("pid", 0) or 0)):
        return None
    return head


def _free_ports(count: int) -> list[int]:
    """``count`` distinct ports free on the loopback address now."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


@contextlib.contextmanager
def _state_lock(state_dir: str):
    """Holds the state directory's lock: one process at a time starts or stops its head."""
    import fcntl

    os.makedirs(state_dir, mode=0o700, exist_ok=True)
    with open(os.path.join(state_dir, _LOCK_FILE), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _head_environment() -> dict:
    """The environment of a head: Ray's token required (unless set otherwise), the loopback
    address only, and ``dataflow`` importable by the task processes it starts."""
    environment = dict(os.environ)
    environment.setdefault("RAY_AUTH_MODE", "token")
    environment["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    # No drain on SIGTERM (it waits up to 30 s for Ray Serve's replicas; there are none).
    environment["RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S"] = "0"
    package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    paths = [package_parent] + [p for p in environment.get("PYTHONPATH", "").split(os.pathsep) if p]
    environment["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    return environment


def start_head(
    state_dir: Optional[str] = None, port: Optional[int] = None, num_cpus: Optional[int] = None
) -> tuple[dict, bool]:
    """Starts a head recorded in ``state_dir`` unless one runs there already: ``(head,
    started)``.  ``port`` is its control store's port (default: one free now); ``num_cpus``
    what Ray may schedule on it (default 2; the task actors take none)."""
    state_dir = state_dir or default_state_dir()
    with _state_lock(state_dir):
        head = read_head(state_dir)
        if head is not None:
            return head, False
        ports = _free_ports(5)
        port = port or ports[0]
        temp_dir = tempfile.mkdtemp(prefix="dfray-", dir=tempfile.gettempdir())
        log_path = os.path.join(state_dir, "head.log")
        command = [
            sys.executable,
            "-m",
            "ray.scripts.scripts",
            "start",
            "--head",
            "--block",
            f"--port={port}",
            "--node-ip-address=127.0.0.1",
            f"--num-cpus={2 if num_cpus is None else num_cpus}",
            "--include-dashboard=false",
            "--disable-usage-stats",
            f"--temp-dir={temp_dir}",
            f"--ray-client-server-port={ports[1]}",
            f"--dashboard-port={ports[2]}",
            f"--dashboard-agent-listen-port={ports[3]}",
            f"--runtime-env-agent-port={ports[4]}",
        ]
        with open(log_path, "w") as log:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=_head_environment(),
                start_new_session=True,  # outlives this process; its own process group
            )
        address = f"127.0.0.1:{port}"
        deadline = time.monotonic() + _START_TIMEOUT_SECONDS
        while not _ready(log_path):
            if process.poll() is not None:
                raise HeadError(
                    f"The Ray head did not start (exit status {process.returncode}); its log "
                    f"{log_path} ends with:\n{_tail(log_path)}"
                )
            if time.monotonic() > deadline:
                _stop_process_group(process.pid)
                raise HeadError(
                    f"The Ray head did not start within {_START_TIMEOUT_SECONDS:.0f} s; see "
                    f"{log_path}"
                )
            time.sleep(0.2)
        head = {"address": address, "pid": process.pid, "log": log_path, "temp_dir": temp_dir}
        with open(_state_path(state_dir), "w") as f:
            json.dump(head, f)
        return head, True


def _ready(log_path: str) -> bool:
    """Whether ``ray start --block`` has said its node runs (it says so once every process of
    the node started, just before it begins to block)."""
    try:
        with open(log_path, errors="replace") as f:
            return "Ray runtime started" in f.read()
    except OSError:
        return False


def _tail(path: str, lines: int = 15) -> str:
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return "(no log)"


def _stop_process_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def stop_head(state_dir: Optional[str] = None) -> Optional[dict]:
    """Stops the head recorded in ``state_dir``: SIGTERM to its ``ray start`` process, which
    stops every process of the node (the task processes' actors with them); the process group
    is killed if it has not ended within `_STOP_TIMEOUT_SECONDS`.  Ray's session directory is
    removed (the head's log in ``state_dir`` stays).  Returns the head that was stopped, None
    when none ran."""
    state_dir = state_dir or default_state_dir()
    with _state_lock(state_dir):
        head = read_head(state_dir)
        with contextlib.suppress(FileNotFoundError):
            os.remove(_state_path(state_dir))
        if head is None:
            return None
        pid = int(head["pid"])
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + _STOP_TIMEOUT_SECONDS
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        _stop_process_group(pid)  # whatever of the node is left
        # Ray's session files (sockets, the node's logs); the head's own log stays.
        shutil.rmtree(head.get("temp_dir", ""), ignore_errors=True)
        return head


def head_status(state_dir: Optional[str] = None) -> dict:
    """What ``cluster status`` reports: the address a task process would use and where it
    comes from, and the recorded head (None when none runs)."""
    head = read_head(state_dir)
    from_environment = os.environ.get(ADDRESS_VARIABLE)
    if from_environment:
        address, source = from_environment, ADDRESS_VARIABLE
    elif head is not None:
        address, source = head["address"], _state_path(state_dir)
    else:
        address, source = None, None
    return {"address": address, "source": source, "head": head}


def resolve_head_address(state_dir: Optional[str] = None) -> str:
    """The address of the head a task process joins (see the module docstring): from
    ``RAY_ADDRESS``, else the recorded head, else a head started now."""
    from_environment = os.environ.get(ADDRESS_VARIABLE)
    if from_environment:
        return from_environment
    head, _ = start_head(state_dir)
    return head["address"]
