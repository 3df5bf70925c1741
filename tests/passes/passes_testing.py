"""Helpers of the pass tests: Sessions running chosen passes, runs with and without them, and
the memory a run takes."""

import tracemalloc

import dataflow as df
from dataflow.client.compiler import native
from dataflow.passes import RewriterConfig


def session(passes=None, graph=None, threads=1):
    """A Session running exactly ``passes`` (None: the default pipeline; []: none)."""
    if passes is None:
        rewrite = RewriterConfig()
    elif not passes:
        rewrite = RewriterConfig(disable_meta_optimizer=True)
    else:
        rewrite = RewriterConfig(optimizers=list(passes))
    config = df.ConfigProto(
        inter_op_parallelism_threads=threads,
        graph_options=df.passes.GraphOptions(rewrite_options=rewrite),
    )
    return df.Session(graph=graph, config=config)


def run_both(fetches, feed_dict=None, passes=None, setup=None):
    """Runs ``fetches`` with no pass and with ``passes``; returns both results."""
    results = []
    for chosen in ([], passes):
        with session(chosen) as sess:
            if setup is not None:
                sess.run(setup)
            results.append(sess.run(fetches, feed_dict))
    return results


def peak_in_arrays(fetches, feed_dict, passes, array) -> float:
    """The peak memory a run of ``fetches`` allocates with ``passes``, in units of ``array``'s
    size (tracemalloc), measured on a second run, once the plan is built."""
    with session(passes) as sess:
        sess.run(fetches, feed_dict)
        # tracemalloc counts every thread's allocations: let the native tier's compile thread
        # finish what earlier runs queued.
        native.wait_until_idle()
        tracemalloc.start()
        try:
            result = sess.run(fetches, feed_dict)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        del result
    return peak / array.nbytes


def op_types(graph) -> list:
    return [op.type for op in graph.get_operations()]
