"""A pytest plugin that round-trips every graph a test runs through `df.io`.

With ``-p roundtrip_plugin`` (``tests/io`` on ``sys.path``), each successful ``Session.run`` is
repeated on a copy of the graph saved and loaded again, in a fresh Session holding the same
variable values, with fetches and feeds given by name; the results must be equal bit for bit.
The fresh Session starts from the random streams the first had (`rerun.start_from`), so random
ops draw the same values.  Graphs the format cannot hold (``py_func``) and graphs printing to
files are skipped.
The op types that were round-tripped are written, one per line, to the file named by the
environment variable ``DATAFLOW_ROUNDTRIP_REPORT``.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import os
import tempfile

from bitwise import same_bits
from hypothesis import settings
from rerun import (
    check_every_run,
    pytest_runtest_call,  # noqa: F401 - the hook that sees marked tests
    start_from,
    unrepeatable,
)

import dataflow as df
from dataflow.framework import nest

_round_tripped: set[str] = set()


def _by_name(fetch):
    if hasattr(type(fetch), "_fetch_structure"):  # IndexedSlices, SparseTensor, RaggedTensor
        parts = nest.flatten(fetch._fetch_structure())
        return tuple(part.name for part in parts if part is not None)
    if isinstance(fetch, (df.Tensor, df.Operation)):
        return fetch.name
    if isinstance(fetch, df.Variable):
        return fetch.value().name
    return fetch


def _shadow_run(session, before, fetches, feed_dict, options, results, error) -> None:
    graph = session.graph
    if error is not None or unrepeatable(graph) or session.sess_str:  # clusters: as passes_plugin
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "graph.dfg")
        try:
            df.io.save_graph(graph, path)
        except df.io.GraphNotSerializableError:
            return
        loaded = df.io.load_graph(path)
    names = nest.map_structure(_by_name, fetches)
    feeds = {}
    for key, value in (feed_dict or {}).items():
        if hasattr(type(key), "_feed_pairs"):
            feeds.update((_by_name(k), v) for k, v in key._feed_pairs(value))
        else:  # a tensor, a name, or a nested structure of them
            feeds[nest.map_structure(_by_name, key)] = value
    with df.Session(graph=loaded, config=session._config) as shadow:
        start_from(shadow, before)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            again = _original_run(shadow, names, feeds)
    for a, b in zip(nest.flatten(results), nest.flatten(again)):
        if not same_bits(a, b):
            raise AssertionError(f"round-tripped graph gave {b!r} instead of {a!r}")
    _round_tripped.update(op.type for op in loaded.get_operations())


_original_run = check_every_run(_shadow_run)
# The programs matter here, not many random inputs to each.
settings.register_profile("roundtrip", max_examples=5, deadline=None)
settings.load_profile("roundtrip")


@atexit.register
def _report() -> None:
    report = os.environ.get("DATAFLOW_ROUNDTRIP_REPORT")
    if report:
        with open(report, "w") as f:
            f.write("\n".join(sorted(_round_tripped)) + "\n")
