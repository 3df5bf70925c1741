"""The command line: ``python -m dataflow inspect|render|run|optimize FILE``, for graphs saved by
`df.io`, TensorFlow's GraphDefs (a binary ``.pb``, a frozen graph; its nodes keep their names,
and ``optimize`` writes a ``.pb`` again when ``-o`` names one) and ONNX models (a ``.onnx`` file
is imported with `df.onnx.import_model`; its inputs are placeholders and its outputs identity
ops named after the ONNX values, so ``--feed``/``--fetch`` take the ONNX names; reading one
needs the ``onnx`` extra).

- ``inspect FILE``: op counts by type, placeholders (the inputs), ops nothing consumes (the
  outputs), variables, and each loop and cond.
- ``render FILE -o IMAGE``: draws the graph, in the format the extension names (``.png``,
  ``.svg``, ``.pdf``, or ``.gv``/``.dot`` for the DOT text); any other extension is refused.
- ``run FILE --feed name=value ... --fetch name ...``: a value is a JSON literal (``x=[1,2]``)
  or ``@path.npy``; names are tensor names (``x:0``) or op names (``x`` means ``x:0``).  A value
  must fit the placeholder's dtype and shape: a number out of the dtype's range (``300`` for an
  int8) is an error naming the feed, never a wrapped or infinite value.  Results print as
  standard JSON (RFC 8259), one object keyed by fetch name, or go to ``.npy`` files with
  ``--out DIR``.  JSON has no numbers for NaN and infinities: they print as the strings
  ``"nan"``, ``"inf"`` and ``"-inf"`` (as graph files write float attributes); a fetched op
  prints as ``null``.  ``--timeout SECONDS`` stops a run that takes longer (the initializers
  of ``--init`` and the fetches together, not the loading), as ``RunOptions(timeout_in_ms)``
  does, with an error naming where the run was.
- ``optimize FILE -o FILE [--fetch name ...] [--feed name ...] [--passes a,b,...]``: runs the
  graph passes (`dataflow.passes`, the Session's default pipeline unless ``--passes`` names
  others; for a ``.pb`` output, without the passes that make dataflow's own fused ops) and saves
  the result, printing one line per pass.  What is kept is what the fetches
  need (by default every op output nothing consumes, outside conds and loops); the names of
  fetched and fed tensors (by default every placeholder) still resolve in the optimized file.

- ``cluster start|stop|status``: the Ray head that a cluster's task processes meet at, each
  process a TF1 program with its own ``train.Server`` (`dataflow.distribute.head`).  ``start
  [--port PORT] [--num-cpus N]`` starts one on the loopback address (with Ray's token
  required) unless one runs, and prints its address (what ``RAY_ADDRESS`` may name);
  ``status`` prints the address a task process would join, where it comes from, and the
  addresses of the tasks being served (exit status 1 when there is no head); ``stop`` stops
  the head and with it every task's actor.  The head is recorded in ``DATAFLOW_CLUSTER_DIR``
  (default ``<temp dir>/dataflow-cluster-<uid>``).

A graph whose print ops write to files (``output_stream="file://..."``) runs only with
``run --allow-file-output``: a graph file from elsewhere must not choose which files a run
appends to.  ``inspect``, ``render`` and ``optimize`` never run the graph and accept it.

Exit status 0 on success, 1 when the file or a run fails (a feed that names no tensor of the
graph or does not fit it included), 2 for a command line that is wrong whatever the file holds
(an unknown pass name or image extension, a ``--feed`` that is not ``name=value`` with a JSON
literal or that holds a number no dtype holds, like ``1e400``, a ``--timeout`` that is not a
positive number of seconds), 130 when interrupted.  Every error is reported on stderr as
``error: <message>``, never as a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import signal
import sys
import threading
import time
import warnings
from collections import Counter
from typing import Optional

import numpy as np

import dataflow as df


def _inspect(graph: df.Graph) -> dict:
    ops = graph.get_operations()
    consumed = {t.op.name for op in ops for t in op.inputs}
    consumed |= {c.name for op in ops for c in op.control_inputs}
    loops = graph.get_collection(df.GraphKeys.WHILE_CONTEXT)
    conds = {}
    for c in graph.get_collection(df.GraphKeys.COND_CONTEXT):
        conds.setdefault(c.name, c.pred.name)
    return {
        "ops": len(ops),
        "op_types": dict(sorted(Counter(op.type for op in ops).items())),
        "placeholders": [
            {
                "name": op.outputs[0].name,
                "dtype": op.outputs[0].dtype.name,
                "shape": op.outputs[0].shape.as_list()
                if op.outputs[0].shape.dims is not None
                else None,
            }
            for op in ops
            if op.type in ("Placeholder", "PlaceholderWithDefault")
        ],
        "outputs": [
            t.name if op.outputs else op.name
            for op in ops
            if op.name not in consumed
            for t in (op.outputs or [None])
        ],
        "variables": [
            {"name": v.name, "dtype": v.dtype.name, "shape": str(v.shape)}
            for v in graph.get_collection(df.GraphKeys.GLOBAL_VARIABLES)
        ],
        "loops": [
            {
                "name": loop.name,
                "frame": loop.frame_name,
                "loop_vars": len(loop.merges),
                "outer": None if loop.outer_context is None else loop.outer_context.name,
            }
            for loop in loops
        ],
        "conds": [{"name": name, "pred": pred} for name, pred in conds.items()],
    }


def _print_inspection(info: dict, out) -> None:
    print(f"{info['ops']} ops", file=out)
    for op_type, count in info["op_types"].items():
        print(f"  {count:5d}  {op_type}", file=out)
    print("inputs (placeholders):", file=out)
    for p in info["placeholders"]:
        print(f"  {p['name']}  {p['dtype']}{p['shape']}", file=out)
    print("outputs (not consumed):", file=out)
    for name in info["outputs"]:
        print(f"  {name}", file=out)
    if info["variables"]:
        print("variables:", file=out)
        for v in info["variables"]:
            print(f"  {v['name']}  {v['dtype']}{v['shape']}", file=out)
    print(f"loops: {len(info['loops'])}", file=out)
    for loop in info["loops"]:
        outer = f" in {loop['outer']}" if loop["outer"] else ""
        print(f"  {loop['name']} ({loop['loop_vars']} loop variables){outer}", file=out)
    print(f"conds: {len(info['conds'])}", file=out)
    for c in info["conds"]:
        print(f"  {c['name']} (pred {c['pred']})", file=out)


class _UsageError(ValueError):
    """A command line that is wrong whatever the file holds (exit status 2)."""


_IMAGE_EXTENSIONS = (".png", ".svg", ".pdf", ".gv", ".dot")


def _check_usage(args) -> None:
    """Refuses, before the file is read, what no file could make right."""
    if args.command == "render":
        extension = os.path.splitext(args.output)[1].lower()
        if extension not in _IMAGE_EXTENSIONS:
            raise _UsageError(
                f"render -o {args.output}: the image format comes from the extension, one of "
                f"{', '.join(_IMAGE_EXTENSIONS)}"
            )
    if args.command == "optimize" and args.passes:
        known = df.passes.registered_passes()
        for name in args.passes.split(","):
            if name not in known:
                raise _UsageError(
                    f"--passes: there is no graph pass named {name!r}; the passes are: "
                    f"{', '.join(known)}"
                )
    if args.command == "run":
        for text in args.feed or []:
            _split_feed(text)
        if args.timeout is not None and not (0 < args.timeout < math.inf):
            raise _UsageError(
                f"--timeout: a number of seconds greater than 0, got {args.timeout:g}"
            )


def _tensor_name(name: str) -> str:
    return name if ":" in name else name + ":0"


def _split_feed(text: str) -> tuple:
    """``(name, value)`` of ``--feed name=value``: a JSON value, or the path after ``@``."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise _UsageError(f"--feed expects name=value, got {text!r}")
    if value.startswith("@"):
        return name, value
    try:
        return name, json.loads(value, parse_float=_finite_float)
    except json.JSONDecodeError as e:
        raise _UsageError(f"--feed {name}: {value!r} is not a JSON literal ({e})") from None
    except ValueError as e:  # from _finite_float, or an integer of too many digits
        raise _UsageError(f"--feed {name}: it holds a number no dtype holds ({e})") from None


def _finite_float(text: str) -> float:
    """A JSON number as a float; a ValueError for one too large for any float (``1e400``),
    which ``json`` would turn into infinity."""
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"{text:.40} is out of the range of float64")
    return value


def _fit(value, dtype: np.dtype) -> np.ndarray:
    """``value`` as an array of ``dtype``; a ValueError saying why when a number does not fit
    (numpy would raise OverflowError for a Python int, and wrap or turn into inf silently for
    an array or a float)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # numpy's "overflow encountered in cast"
        try:
            source = np.asarray(value)
        except ValueError as e:
            raise ValueError(f"it is not an array of {dtype}: {e}") from None
        if dtype.kind in "iu" and source.dtype.kind in "iuf" and source.size:
            info = np.iinfo(dtype)
            low, high = source.min(), source.max()
            if low < info.min or high > info.max:
                raise ValueError(
                    f"it holds {low if low < info.min else high}, out of the range of {dtype} "
                    f"[{info.min}, {info.max}]"
                )
        try:
            return np.asarray(value, dtype=dtype)
        except (OverflowError, RuntimeWarning) as e:
            raise ValueError(f"a number is out of the range of {dtype}: {e}") from None
        except (TypeError, ValueError) as e:
            raise ValueError(f"it is not an array of {dtype}: {e}") from None


def _parse_feed(text: str, graph: df.Graph):
    name, value = _split_feed(text)
    try:
        tensor = graph.get_tensor_by_name(_tensor_name(name))
    except (KeyError, ValueError) as e:
        message = e.args[0] if isinstance(e, KeyError) and e.args else e
        raise ValueError(f"--feed {name}: {message}") from None
    if isinstance(value, str) and value.startswith("@"):
        value = np.load(value[1:], allow_pickle=False)
    what = f"--feed {name}: the value does not fit '{tensor.name}' ({tensor.dtype.name}"
    try:
        array = _fit(value, np.dtype(tensor.dtype.as_numpy_dtype))
    except ValueError as e:
        raise ValueError(f"{what}): {e}") from None
    if not tensor.shape.is_compatible_with(array.shape):
        raise ValueError(f"{what}, shape {tensor.shape}): it has shape {list(array.shape)}")
    return tensor, array


def _json_floats(value):
    if isinstance(value, list):
        return [_json_floats(v) for v in value]
    if math.isfinite(value):
        return value
    return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")


def _jsonable(value):
    """A fetched value as standard JSON: non-finite floats as "nan", "inf", "-inf"."""
    if value is None:
        return None
    array = np.asarray(value)
    if array.dtype.kind == "f":
        return _json_floats(array.tolist())
    return array.tolist()


def _run(args, graph: df.Graph, out) -> None:
    feeds = dict(_parse_feed(f, graph) for f in args.feed or [])
    fetches = []
    for name in args.fetch:
        if ":" in name:
            fetches.append(graph.get_tensor_by_name(name))
        else:
            op = graph.get_operation_by_name(name)
            fetches.append(op.outputs[0] if op.outputs else op)
    deadline = None if args.timeout is None else time.monotonic() + args.timeout
    with df.Session(graph=graph) as sess, _interrupts_cancel(sess):
        try:
            if args.init:
                with graph.as_default():
                    initializer = df.global_variables_initializer()
                sess.run(initializer, options=_run_options(deadline))
            values = sess.run(fetches, feeds, options=_run_options(deadline))
        except df.errors.DeadlineExceededError as e:
            where = str(e).partition("\n")[2]
            raise _RunTimedOut(
                f"the run did not finish within --timeout {args.timeout:g} s and was stopped"
                + ("\n" + where if where else "")
            ) from None
        except df.errors.CancelledError:
            if sess._cancellation.reason == _INTERRUPTED:
                raise KeyboardInterrupt from None
            raise
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        for name, value in zip(args.fetch, values):
            path = os.path.join(args.out, name.replace("/", "_").replace(":", "_") + ".npy")
            np.save(path, np.asarray(value), allow_pickle=False)
            print(path, file=out)
    else:
        json.dump({n: _jsonable(v) for n, v in zip(args.fetch, values)}, out, allow_nan=False)
        print(file=out)


_INTERRUPTED = "interrupted"


@contextlib.contextmanager
def _interrupts_cancel(sess: df.Session):
    """While the block runs, Ctrl-C (SIGINT) also cancels ``sess``'s runs.

    Python turns SIGINT into a KeyboardInterrupt raised in whatever the main thread is doing
    at that moment, and code that catches BaseException there (a finalizer, a callback, a
    stream wrapper) can lose it.  The cancellation is a flag every run reads before it fires
    a node, so the run stops whatever becomes of the exception.  A program that starts with
    SIGINT ignored or handled (``nohup``, a parent's choice) keeps its handling."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return

    def interrupt(signum, frame):
        sess._cancellation.cancel(_INTERRUPTED)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


class _RunTimedOut(Exception):
    """A run went past ``--timeout`` (exit status 1)."""


def _run_options(deadline: Optional[float]) -> Optional[df.RunOptions]:
    """The options of a run that must end by ``deadline`` (``time.monotonic()``), or None."""
    if deadline is None:
        return None
    return df.RunOptions(timeout_in_ms=max(1, math.ceil((deadline - time.monotonic()) * 1000)))


def _optimize(args, graph: df.Graph, out) -> None:
    if args.fetch:
        fetches = [graph.as_graph_element(_tensor_name(n)) for n in args.fetch]
    else:
        ops = graph.get_operations()
        controlling = {c for op in ops for c in op.control_inputs}
        fetches = []
        for op in ops:
            if op in controlling or any(t.consumers() for t in op.outputs):
                continue
            if op._control_flow_context is not None or op.type == "Placeholder":
                continue  # the inside of a cond or loop, or an input
            fetches.extend(op.outputs or [op])
    if args.feed:
        feeds = [graph.get_tensor_by_name(_tensor_name(n)) for n in args.feed]
    else:
        feeds = [op.outputs[0] for op in graph.get_operations() if op.type == "Placeholder"]
    passes = args.passes.split(",") if args.passes else None
    if passes is None and _is_graph_def(args.output):
        # A GraphDef holds TensorFlow's ops: the passes that make ops of dataflow's own
        # (fused elementwise kernels) or plan-only decisions are left out.
        passes = [p for p in df.passes.DEFAULT_PIPELINE if p not in _NOT_FOR_GRAPH_DEFS]
    item, reports = df.passes.optimize(graph, fetches, feeds, passes)
    _save(item.graph, args.output)
    for report in reports:
        print(report, file=out)
    print(
        f"{len(graph.get_operations())} ops -> {len(item.graph.get_operations())} ops: "
        f"{args.output}",
        file=out,
    )


# The default passes whose results a GraphDef cannot hold: fused kernels of dataflow's own, and
# the run plan's in-place decisions.
_NOT_FOR_GRAPH_DEFS = ("elementwise_fusion", "inplace")


def _is_graph_def(path: str) -> bool:
    """A TensorFlow GraphDef file (binary, ``.pb``) rather than a graph file of `df.io`."""
    return os.path.splitext(path)[1].lower() == ".pb"


def _load(path: str, allow_file_output: bool) -> df.Graph:
    """The graph of ``path``: a ``.pb`` is a TensorFlow GraphDef, imported with its nodes'
    names (which ``--feed`` and ``--fetch`` use); an ``.onnx`` file an ONNX model, imported
    into a new graph; any other file is a graph file of `df.io`.  All are read as untrusted
    files (sizes bounded, nothing in them run)."""
    if _is_graph_def(path):
        return df.io.load_graph_def(path)
    if os.path.splitext(path)[1].lower() == ".onnx":
        graph = df.Graph()
        with graph.as_default():
            df.onnx.import_model(path)
        return graph
    return df.io.load_graph(path, allow_file_output=allow_file_output)


def _save(graph: df.Graph, path: str) -> None:
    """Writes ``graph`` to ``path``: a GraphDef for ``.pb`` (an op TensorFlow has no form for
    is an error naming it), a graph file of `df.io` otherwise."""
    if _is_graph_def(path):
        with open(path, "wb") as f:
            f.write(graph.as_graph_def().SerializeToString(deterministic=True))
    else:
        df.io.save_graph(graph, path)


def _cluster(args, out) -> int:
    """``cluster start|stop|status`` (see the module docstring): the exit status."""
    from dataflow.distribute import head

    if args.action == "start":
        record, started = head.start_head(port=args.port, num_cpus=args.num_cpus)
        what = "started" if started else "already running"
        print(f"Ray head {what} at {record['address']} (pid {record['pid']})", file=out)
        print(f"export {head.ADDRESS_VARIABLE}={record['address']}", file=out)
        return 0
    if args.action == "stop":
        record = head.stop_head()
        if record is None:
            print("no Ray head was running", file=out)
        else:
            print(f"stopped the Ray head at {record['address']} (pid {record['pid']})", file=out)
        return 0
    status = head.head_status()
    if status["address"] is None:
        print("no Ray head: `python -m dataflow cluster start` starts one", file=out)
        return 1
    print(f"address {status['address']} (from {status['source']})", file=out)
    if status["head"] is not None:
        print(f"head pid {status['head']['pid']}, log {status['head']['log']}", file=out)
    for address in _served_addresses(status["address"]):
        print(f"task at {address}", file=out)
    return 0


def _served_addresses(address: str) -> list[str]:
    """The addresses of the tasks whose processes serve them on the head at ``address``."""
    from dataflow.distribute.ray_cluster import join_ray
    from dataflow.distribute.ray_task import ACTOR_NAMESPACE

    ray = join_ray(address)
    try:
        from ray.util import list_named_actors

        names = [
            a["name"]
            for a in list_named_actors(all_namespaces=True)
            if a["namespace"] == ACTOR_NAMESPACE and a["name"].startswith("task@")
        ]
    finally:
        ray.shutdown()
    return sorted(name.partition("@")[2] for name in names)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m dataflow",
        description="Inspect, draw and run saved dataflow graphs; start and stop the Ray head of a "
        "cluster of task processes.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    inspect = commands.add_parser("inspect", help="summarize a saved graph")
    inspect.add_argument("file")
    inspect.add_argument("--json", action="store_true", help="print the summary as JSON")
    render = commands.add_parser("render", help="draw a saved graph")
    render.add_argument("file")
    render.add_argument("-o", "--output", required=True, help="image file (.png, .svg, .pdf, .gv)")
    run = commands.add_parser("run", help="run a saved graph")
    run.add_argument("file")
    run.add_argument(
        "--feed",
        action="append",
        metavar="NAME=VALUE",
        help="a JSON literal (its numbers within float64's range) or @file.npy",
    )
    run.add_argument("--fetch", action="append", required=True, metavar="NAME")
    run.add_argument("--out", metavar="DIR", help="write each result to DIR/<name>.npy")
    run.add_argument(
        "--init", action="store_true", help="run the variables' initializers before fetching"
    )
    run.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="stop the run if it takes longer than SECONDS (a decimal number, 0.5 for half a "
        "second); it is RunOptions(timeout_in_ms=1000*SECONDS) for the runs of --init and of "
        "the fetches together",
    )
    run.add_argument(
        "--allow-file-output",
        action="store_true",
        help="let print ops of the graph write to the files they name (refused otherwise)",
    )
    optimize = commands.add_parser("optimize", help="run the graph passes on a saved graph")
    optimize.add_argument("file")
    optimize.add_argument("-o", "--output", required=True, help="the optimized graph file")
    optimize.add_argument("--fetch", action="append", metavar="NAME", help="keep what NAME needs")
    optimize.add_argument("--feed", action="append", metavar="NAME", help="NAME will be fed")
    optimize.add_argument("--passes", metavar="A,B", help="pass names, in order")
    cluster = commands.add_parser(
        "cluster", help="start, stop or show the Ray head of a cluster of task processes"
    )
    cluster.add_argument("action", choices=["start", "stop", "status"])
    cluster.add_argument("--port", type=int, help="the head's port (start; default: a free one)")
    cluster.add_argument("--num-cpus", type=int, help="CPUs Ray may schedule (start; default 2)")
    return parser


def main(argv: Optional[list[str]] = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "cluster":
        try:
            return _cluster(args, sys.stdout)
        except (OSError, RuntimeError, ImportError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
    try:
        _check_usage(args)
        # Only `run` executes the graph: the others may load one that prints to files.
        allow_file_output = args.command != "run" or args.allow_file_output
        graph = _load(args.file, allow_file_output)
        if args.command == "inspect":
            info = _inspect(graph)
            if args.json:
                json.dump(info, sys.stdout, indent=1)
                print()
            else:
                _print_inspection(info, sys.stdout)
        elif args.command == "render":
            df.render(graph, args.output)
            print(args.output)
        elif args.command == "optimize":
            _optimize(args, graph, sys.stdout)
        else:
            _run(args, graph, sys.stdout)
    except _UsageError as e:  # as argparse reports its own errors, but returned
        parser.print_usage(sys.stderr)
        print(f"{parser.prog}: error: {e}", file=sys.stderr)
        return 2
    except (OSError, ValueError, KeyError, TypeError, df.errors.OpError, _RunTimedOut) as e:
        message = e.args[0] if isinstance(e, KeyError) and e.args else e
        print(f"error: {message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # whatever else fails (the drawing program, memory): one line too
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
