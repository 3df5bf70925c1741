"""Runs compared with the interpreter's, bit for bit and warning for warning, for the tests of
compiled code (`dataflow.client.compiler`)."""

import warnings

from bitwise import same_bits

import dataflow as df

NO_PASSES = df.ConfigProto(
    graph_options=df.passes.GraphOptions(
        rewrite_options=df.passes.RewriterConfig(disable_meta_optimizer=True)
    )
)


def warning_of(caught: warnings.WarningMessage) -> tuple:
    """A warning's category and message, where numpy's scalar operators say ``scalar add`` for
    the ufunc's ``add`` (the one difference of the float operators, see `codegen`)."""
    return caught.category, str(caught.message).replace(" scalar ", " ")


def run_recording(new_mode, set_mode, fetches, feeds):
    """For each feed dict, the results of a run with compilation ``new_mode`` and the warnings
    it gave (`warning_of`); and the compiled source."""
    set_mode(new_mode)
    outcomes = []
    with df.Session(config=NO_PASSES) as sess:
        for feed in feeds:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                results = sess.run(fetches, feed)
            outcomes.append((results, [warning_of(w) for w in caught]))
        source = df.debug.compiled_source(sess, fetches) if new_mode == "force" else ""
    return outcomes, source


def assert_same_as_interpreter(set_mode, fetches, feeds) -> str:
    """Checks every run gives the same bits, types and warnings compiled and interpreted;
    returns the compiled source."""
    compiled, source = run_recording("force", set_mode, fetches, feeds)
    interpreted, _ = run_recording("off", set_mode, fetches, feeds)
    for feed, (c, c_warnings), (i, i_warnings) in zip(feeds, compiled, interpreted):
        for c_value, i_value in zip(c, i):
            assert same_bits(c_value, i_value), (feed, c, i)
        assert c_warnings == i_warnings, feed
    return source
