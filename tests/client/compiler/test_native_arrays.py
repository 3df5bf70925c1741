"""Native array kernels (`dataflow.client.compiler.native_arrays`): a region of elementwise ops
on arrays runs as one numba loop with numpy's bits, Adam's update first; what has no exact
native form splits the region; every call it cannot take goes to the Python function."""

import warnings

import numpy as np
import pytest
from bitwise import same_bits
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("numba")
pytestmark = pytest.mark.usefixtures("native_forced")

import dataflow as df  # noqa: E402
from dataflow.client import compiler  # noqa: E402
from dataflow.client.compiler import native, native_arrays, native_cache  # noqa: E402
from dataflow.framework.op_registry import apply_op  # noqa: E402


def run(graph, fetches, feeds, native_mode="force", train=None, steps=0, config=None):
    """For each feed dict of ``feeds`` (one Session), the results of ``fetches`` after
    ``steps`` runs of ``train`` (variables initialized first), in ``native_mode``
    ("interpreted": compilation off); and the array regions of the Session's plans."""
    if native_mode == "interpreted":
        compiler.set_mode("off")
    else:
        compiler.set_native(native_mode)
    try:
        with df.Session(graph=graph, config=config) as sess:
            results = []
            for feed in feeds or [None]:
                for init in graph.get_collection("init"):
                    sess.run(init)
                for _ in range(steps):
                    sess.run(train, feed)
                results.append(sess.run(fetches, feed))
            regions = [
                region
                for plan in sess._plans.values()
                if plan.compiled
                for region in plan.compiled.regions
            ]
    finally:
        compiler.set_mode("force")
        compiler.set_native("force")
    return results, array_regions(regions)


def array_regions(regions) -> list:
    return [r for r in regions if isinstance(r.function, native_arrays.NativeArrayRegion)]


def assert_same_as_interpreted(graph, fetches, feeds=(), train=None, steps=0, config=None):
    """Runs with native kernels and interpreted, compares every result bit for bit; returns
    the array regions."""
    compiled, regions = run(graph, fetches, feeds, train=train, steps=steps, config=config)
    interpreted, _ = run(graph, fetches, feeds, "interpreted", train, steps, config)
    for got, want in zip(df.nest.flatten(compiled), df.nest.flatten(interpreted)):
        assert same_bits(got, want), (got, want)
    return regions


def member_types(region) -> list:
    return [region.nodes[m].tag.type for m in region.members]


def ran_natively(regions) -> bool:
    return all(r.function.native is not None and r.function.native_calls for r in regions)


SPECIAL = [0.0, -0.0, 1.0, -1.5, 0.1, 3.4e38, -3.4e38, 1e-45, np.inf, -np.inf, np.nan, 7.0]


# -- Adam ----------------------------------------------------------------------------------------
def adam_graph(dtype=df.float32):
    """A dense layer with a bias trained by Adam on a squared loss: the graph, the training
    op, every variable (the layer's, the moments, the beta powers) and a feed."""
    graph = df.Graph()
    rng = np.random.default_rng(0)
    with graph.as_default():
        x = df.placeholder(dtype, [16, 12], name="x")
        w = df.Variable(rng.standard_normal((12, 8)).astype(dtype.as_numpy_dtype), name="w")
        b = df.Variable(np.zeros(8, dtype.as_numpy_dtype), name="b")
        loss = df.reduce_mean(df.square(df.nn.relu(df.matmul(x, w) + b) - 1.0))
        train = df.train.AdamOptimizer(0.05).minimize(loss)
        graph.add_to_collection("init", df.global_variables_initializer())
        variables = df.global_variables()
    feed = {x: rng.standard_normal((16, 12)).astype(dtype.as_numpy_dtype)}
    return graph, train, variables, feed


@pytest.mark.parametrize("dtype", [df.float32, df.float64], ids=["float32", "float64"])
def test_adams_update_of_each_variable_is_one_kernel_equal_to_the_interpreter_over_steps(dtype):
    graph, train, variables, feed = adam_graph(dtype)
    assert len(variables) == 8  # w, b, their two moments each, the two beta powers
    regions = assert_same_as_interpreted(graph, variables, [feed], train, steps=4)
    updates = [r for r in regions if r.name.startswith(("Adam/update_w/", "Adam/update_b/"))]
    assert len(updates) == 2, [r.name for r in regions]
    for region in updates:
        # m, v and the step come out of one loop; the assigns stay outside
        assert len(region.outputs) == 3
        assert not {"Assign", "AssignSub"} & set(member_types(region))
    assert ran_natively(updates)


def relu_grad(gradients, features):
    return apply_op("ReluGrad", [gradients, features]).outputs[0]


# -- random programs -------------------------------------------------------------------------------
UNARY = {
    "neg": lambda x: -x,
    "abs": df.abs,
    "square": df.square,
    "relu": df.nn.relu,
    "sqrt_abs": lambda x: df.sqrt(df.abs(x)),
}
BINARY = {
    "add": lambda x, y: x + y,
    "sub": lambda x, y: x - y,
    "mul": lambda x, y: x * y,
    "div": lambda x, y: x / y,
    "max": df.maximum,
    "min": df.minimum,
    "select": lambda x, y: df.where(x < y, x, y),
    "relu_grad": lambda x, y: relu_grad(x, y),
}
INTEGER_SAFE = {"neg", "abs", "square", "relu", "add", "sub", "mul", "max", "min", "select"}


@st.composite
def programs(draw):
    """A random elementwise program: a dtype, the shapes of three inputs (full, a row, a
    scalar), and ops each applied to two earlier values (inputs or results)."""
    dtype = draw(st.sampled_from([np.float32, np.float64, np.int32]))
    rows, columns = draw(st.integers(1, 5)), draw(st.integers(1, 7))
    allowed = INTEGER_SAFE if dtype is np.int32 else set(UNARY) | set(BINARY)
    ops = []
    for k in range(draw(st.integers(2, 5))):
        name = draw(st.sampled_from(sorted(allowed)))
        a = draw(st.integers(0, 2 + k))
        b = draw(st.integers(0, 2 + k))
        ops.append((name, a, b))
    return dtype, (rows, columns), ops


def values_of(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        pool = np.array(SPECIAL + list(rng.standard_normal(8) * 3), dtype)
        return rng.choice(pool, size=shape)
    info = np.iinfo(dtype)
    pool = np.array([0, 1, -1, 7, info.max, info.min, 46341, -46341], dtype)
    return rng.choice(pool, size=shape)


@settings(max_examples=10, deadline=None)
@given(programs(), st.integers(0, 1000))
def test_random_elementwise_programs_give_the_interpreters_bits(program, seed):
    dtype, shape, ops = program
    graph = df.Graph()
    with graph.as_default():
        full = df.placeholder(df.as_dtype(dtype), shape)
        row = df.placeholder(df.as_dtype(dtype), shape[1:])
        scalar = df.placeholder(df.as_dtype(dtype), [])
        values = [full, row, scalar]
        for name, a, b in ops:
            x, y = values[a], values[b]
            if name in UNARY:
                values.append(UNARY[name](x + full))  # every op result has the full shape
            else:
                values.append(BINARY[name](x + full, y + full))
        fetches = values[3:]
    feeds = [
        {
            full: values_of(dtype, shape, seed + k),
            row: values_of(dtype, shape[1:], seed + 10 + k),
            scalar: values_of(dtype, (), seed + 20 + k),
        }
        for k in range(3)
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's overflow warnings
        regions = assert_same_as_interpreted(graph, fetches, feeds)
    assert regions and all(r.function.native is not None for r in regions)


# -- dtypes, broadcasting, special values ------------------------------------------------------
def test_float32_constants_stay_float32_as_numpys_rules_give():
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float32, [257])
        y = x * 0.1 + 0.3  # in float64 then rounded, some elements would differ in the last bit
    value = np.linspace(-3, 3, 257, dtype=np.float32)
    regions = assert_same_as_interpreted(graph, [y], [{x: value}])
    assert ran_natively(regions)
    assert regions[0].function.output_dtypes == [np.dtype(np.float32)]
    wide = (value.astype(np.float64) * 0.1 + 0.3).astype(np.float32)
    with df.Session(graph=graph) as sess:
        assert not np.array_equal(sess.run(y, {x: value}), wide)  # the test can tell


def test_a_bias_row_and_a_scalar_broadcast_over_the_rows():
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float32, [6, 4, 5])
        b = df.placeholder(df.float32, [5])
        s = df.placeholder(df.float32, [1, 1])
        y = df.nn.relu(x + b) * s
    rng = np.random.default_rng(3)
    feed = {
        x: rng.standard_normal((6, 4, 5)).astype(np.float32),
        b: rng.standard_normal(5).astype(np.float32),
        s: np.array([[2.5]], np.float32),
    }
    regions = assert_same_as_interpreted(graph, [y], [feed])
    assert [r.function.row for r in regions] == [1]
    assert ran_natively(regions)


def test_a_column_does_not_broadcast_natively_and_keeps_its_op_out():
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float32, [6, 5])
        column = df.placeholder(df.float32, [6, 1])
        y = df.square(x * 2.0 + column)
    feed = {x: np.ones((6, 5), np.float32), column: np.arange(6, dtype=np.float32)[:, None]}
    regions = assert_same_as_interpreted(graph, [y], [feed])
    assert all("add" not in r.name.split("..")[-1] for r in regions)


def test_a_select_by_rows_and_its_errors_stay_the_interpreters():
    graph = df.Graph()
    with graph.as_default():
        rows = df.placeholder(df.bool, [4])
        x = df.placeholder(df.float32, [4, 4])
        picked = df.compat.v1.where(rows, x * 2.0, x - 1.0)  # a condition per row
    feed = {rows: np.array([True, False, False, True]), x: np.eye(4, dtype=np.float32)}
    regions = assert_same_as_interpreted(graph, [picked], [feed])
    assert all("Select" not in member_types(r) for r in regions)
    want = np.where(feed[rows][:, None], feed[x] * 2, feed[x] - 1)
    np.testing.assert_array_equal(run(graph, picked, [feed])[0][0], want)


def test_integer_arithmetic_wraps_as_numpys():
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.int32, [4])
        y = df.abs(x * x + x) - x
    info = np.iinfo(np.int32)
    feed = {x: np.array([info.max, info.min, 46341, -7], np.int32)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        regions = assert_same_as_interpreted(graph, [y], [feed])
    assert ran_natively(regions)


def test_division_by_zero_and_signed_zeros_as_numpy():
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float64, [4])
        z = df.placeholder(df.float64, [4])
        y = df.maximum(x / z, -x)
    feed = {x: np.array([1.0, -1.0, 0.0, -0.0]), z: np.array([0.0, 0.0, -2.0, 3.0])}
    regions = assert_same_as_interpreted(graph, [y], [feed])
    assert ran_natively(regions)


def test_a_nan_result_is_the_interpreters_nan_computed_in_python():
    graph = df.Graph()
    with graph.as_default():
        g = df.placeholder(df.float32, [5])
        f = df.placeholder(df.float32, [5])
        y = relu_grad(g * 2.0, f)
    feeds = [
        {
            g: np.array([np.inf, -np.nan, -1, 2, 3], np.float32),
            f: np.array([-1, 0, -0.0, 1, 2], np.float32),
        },
        {g: np.array([1, -1, -1, 2, 3], np.float32), f: np.array([-1, 0, -0.0, 1, 2], np.float32)},
    ]
    regions = assert_same_as_interpreted(graph, [y], feeds)
    assert [r.function.native_calls for r in regions] == [1]  # the second feed only


def test_a_relu_gradient_alone_is_a_kernel_and_joins_its_relu():
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float32, [3, 4])
        upstream = df.placeholder(df.float32, [3, 4])
        alone = relu_grad(upstream, x)
        (y,) = df.gradients(df.nn.relu(x), [x], grad_ys=upstream)
    features = np.array([[-1, 0, -0.0, 2]] * 3, np.float32)
    feeds = [
        {x: features, upstream: np.array([[-0.0, 2, 3, -2], [1, 2, 3, 4], [-1, -9, 0, 5]])},
        {x: features, upstream: np.array([[-0.0, np.inf, 3, -2], [1, 2, 3, np.inf]] * 2)[:3]},
    ]
    feeds = [{k: v.astype(np.float32) for k, v in feed.items()} for feed in feeds]
    regions = assert_same_as_interpreted(graph, [alone, y], feeds)
    assert sorted(member_types(r) for r in regions) == [["Relu", "ReluGrad"], ["ReluGrad"]]
    assert ran_natively(regions)


def test_a_region_longer_than_a_kernel_runs_as_several_with_the_same_bits():
    """LLVM's time grows faster than a function's length, so a long chain of exact ops is cut
    into kernels of at most `MAX_MEMBERS` ops, consecutive stretches of the chain; stretches
    of the same text share one compiled kernel."""
    graph = df.Graph()
    steps = native_arrays.MAX_MEMBERS + 10
    with graph.as_default():
        x = df.placeholder(df.float32, [8])
        y = x
        for _ in range(steps // 2):
            y = y * 0.75 + 0.125
    feed = {x: np.array(SPECIAL[:8], np.float32)}
    unfused = df.ConfigProto(  # elementwise fusion would make the chain one op
        graph_options=df.GraphOptions(
            rewrite_options=df.RewriterConfig(remapping=df.RewriterConfig.OFF)
        )
    )
    regions = assert_same_as_interpreted(graph, [y], [feed], config=unfused)
    assert len(regions) == 2
    assert all(len(r.members) <= native_arrays.MAX_MEMBERS for r in regions)
    assert sum(len(r.members) for r in regions) == steps
    assert ran_natively(regions)


# -- what stays out ---------------------------------------------------------------------------
def test_a_transcendental_splits_the_region_and_runs_in_numpy():
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float32, [64])
        e = df.exp(x * 2.0 + 1.0)  # one fused chain with Exp: it stays numpy's, whole
        y = df.square(e * 3.0 - e)
    feed = {x: np.linspace(-5, 5, 64, dtype=np.float32)}
    regions = assert_same_as_interpreted(graph, [y], [feed])
    assert len(regions) == 1
    steps = [
        step[0]
        for m in regions[0].members
        for step in regions[0].nodes[m].tag.attrs.get("steps", [[regions[0].nodes[m].tag.type]])
    ]
    assert "Exp" not in steps and {"Mul", "Sub", "Square"} <= set(steps)
    assert ran_natively(regions)


NO_PASSES = df.ConfigProto(
    graph_options=df.passes.GraphOptions(
        rewrite_options=df.passes.RewriterConfig(disable_meta_optimizer=True)
    )
)


def test_transcendental_ops_split_regions_where_they_are():
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float32, [8, 8])
        y = x * 2.0 + 1.0
        for function in (df.exp, df.tanh, df.sigmoid, df.log):
            y = function(y) * 0.5 + 1.0  # positive: the logarithm gives no NaN
    feed = {x: np.linspace(-2, 2, 64, dtype=np.float32).reshape(8, 8)}
    regions = assert_same_as_interpreted(graph, [y], [feed], config=NO_PASSES)
    assert [member_types(r) for r in regions] == [["Mul", "Add"]] * 5
    assert ran_natively(regions)


def test_products_and_sums_are_not_contracted_into_fused_multiply_adds():
    graph = df.Graph()
    with graph.as_default():
        a = df.placeholder(df.float64, [4096])
        b = df.placeholder(df.float64, [4096])
        c = df.placeholder(df.float64, [4096])
        y = a * b + c
    rng = np.random.default_rng(7)
    x, z = rng.standard_normal(4096), rng.standard_normal(4096)
    feed = {a: x, b: z, c: -(x * z)}  # exactly 0 unfused; the rounding error of x * z fused
    regions = assert_same_as_interpreted(graph, [y], [feed], config=NO_PASSES)
    assert ran_natively(regions)
    assert not run(graph, y, [feed], config=NO_PASSES)[0][0].any()


def test_without_numba_or_in_off_mode_there_are_no_array_kernels(monkeypatch):
    graph, train, variables, feed = adam_graph()
    monkeypatch.setattr(native, "_available", False)
    assert run(graph, variables, [feed], train=train, steps=2)[1] == []
    monkeypatch.setattr(native, "_available", None)
    assert run(graph, variables, [feed], native_mode="off", train=train, steps=2)[1] == []
    assert run(graph, variables, [feed], train=train, steps=2)[1]  # the test can tell


def test_a_failed_compilation_leaves_the_members_running_in_python(monkeypatch):
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float64, [9])
        y = df.square(x) * 0.5 - x
    monkeypatch.setattr(native, "_failure_reported", False)

    def broken(source, name):
        raise OSError("no space left on device")

    monkeypatch.setattr(native, "load_function", broken)
    with pytest.warns(RuntimeWarning, match="could not compile"):
        regions = assert_same_as_interpreted(graph, [y], [{x: np.arange(9.0)}])
    assert regions and regions[0].function.native is None
    assert "no space left" in native.status(regions[0])


def test_strict_floating_point_errors_raise_as_interpreted():
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float32, [3])
        y = x * 1e30 * 1e30
    with df.Session(graph=graph) as sess:
        assert np.isinf(sess.run(y, {x: np.ones(3, np.float32)})).all()
        with np.errstate(over="raise"), pytest.raises(Exception, match="overflow"):
            sess.run(y, {x: np.ones(3, np.float32)})


def test_inputs_of_another_shape_at_run_time_still_give_the_interpreters_bits():
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float32, [None, 3])
        b = df.placeholder(df.float32, [3])
        y = df.nn.relu(x - b) * 2.0
    feeds = [
        {x: np.ones((n, 3), np.float32) * n, b: np.arange(3, dtype=np.float32)} for n in (1, 4, 0)
    ]
    regions = assert_same_as_interpreted(graph, [y], feeds)
    assert regions[0].function.native_calls == 2  # the empty batch makes no call


def test_auto_mode_has_the_compile_process_compile_an_array_kernel(tmp_path, monkeypatch):
    """The child process compiles the kernel, arrays of two dimensions among its arguments,
    into the disk cache; this process loads it from there and uses it."""
    monkeypatch.setenv("DATAFLOW_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(native_cache, "_modules", {})
    monkeypatch.setattr(native_cache, "_refused_directories", {})
    monkeypatch.setattr(native, "_worker", None)
    monkeypatch.setattr(native, "PROCESS_MIN_LINES", 1)
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float64, [3, 4])
        b = df.placeholder(df.float64, [4])
        y = df.nn.relu(x - b) * 3.0
    feed = {x: np.arange(12.0).reshape(3, 4), b: np.full(4, 5.0)}
    compiler.set_native("auto")
    try:
        with df.Session(graph=graph) as sess:
            for _ in range(native.AUTO_AFTER_CALLS):
                sess.run(y, feed)
            (kernel,) = array_regions(next(iter(sess._plans.values())).compiled.regions)
            assert kernel.function.pending.wait(timeout=120)
            got = sess.run(y, feed)
    finally:
        native._stop_worker()
    assert kernel.function.native_calls == 1
    assert sum(kernel.function.dispatcher.stats.cache_hits.values()) == 1
    assert not kernel.function.dispatcher.stats.cache_misses
    assert same_bits(got, run(graph, y, [feed], "interpreted")[0][0])


# -- threads -----------------------------------------------------------------------------------
def test_a_large_output_runs_in_blocks_with_the_same_bits(monkeypatch):
    monkeypatch.setattr(native_arrays, "PARALLEL_MIN_ELEMENTS", 64)
    blocks = []
    real_run_blocks = native_arrays.run_blocks

    def counting(count, run_block, threads):
        blocks.append(count)
        real_run_blocks(count, run_block, threads)

    monkeypatch.setattr(native_arrays, "run_blocks", counting)
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float32, [50, 9])
        b = df.placeholder(df.float32, [9])
        y = df.nn.relu(x + b) * 0.5
    rng = np.random.default_rng(5)
    feed = {x: rng.standard_normal((50, 9)).astype(np.float32), b: np.ones(9, np.float32)}
    regions = assert_same_as_interpreted(graph, [y], [feed])
    assert ran_natively(regions)
    if regions[0].function.threads > 1:
        assert blocks and blocks[0] > 1
