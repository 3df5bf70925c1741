"""Why a cond or a loop stays interpreted: the compiler's refusals carry a reason naming the
op and what about it keeps the structure in Python, and `df.debug.compiled_source` shows it."""

import dataflow as df

NO_PASSES = df.ConfigProto(
    graph_options=df.passes.GraphOptions(
        rewrite_options=df.passes.RewriterConfig(disable_meta_optimizer=True)
    )
)


def source_of(fetches, feed_dict=None) -> str:
    with df.Session(config=NO_PASSES) as sess:
        return df.debug.compiled_source(sess, fetches, feed_dict)


def test_a_loop_drawing_random_numbers_says_which_op_keeps_it_interpreted(mode):
    mode("force")
    x = df.placeholder(df.float32, [])
    _, total = df.while_loop(
        lambda i, v: i < 3, lambda i, v: (i + 1, v + df.random_uniform([])), [0, x]
    )
    source = source_of(total, {x: 1.0})
    (line,) = [line for line in source.splitlines() if "stays interpreted" in line]
    assert line.startswith("# loop 'while' stays interpreted: ")
    assert "'while/random_uniform/RandomUniform' (RandomUniform)" in line
    assert "test_compiler_refusals.py" in line
    assert line.endswith("it draws from the Session's random stream")


def test_a_cond_with_a_stateful_branch_says_which_op_keeps_it_interpreted(mode):
    mode("force")
    v = df.Variable(0.0)
    x = df.placeholder(df.float32, [])
    y = df.cond(x > 0, lambda: v.assign_add(x), lambda: x)
    source = source_of(y, {x: 1.0})
    (line,) = [line for line in source.splitlines() if "stays interpreted" in line]
    assert line.startswith("# cond 'cond' stays interpreted: 'cond/AssignAdd' (AssignAdd) at ")
    assert "(AssignAdd)" in line and line.endswith("it is stateful")


def test_a_hand_wired_loop_is_named_as_written_with_the_raw_primitives(mode):
    mode("force")
    entered = df.enter(df.constant(0), frame_name="count")
    limit = df.enter(df.constant(10), frame_name="count", is_constant=True)
    one = df.enter(df.constant(1), frame_name="count", is_constant=True)
    i, _ = df.merge([entered, entered])
    i_done, i_body = df.switch(i, df.loop_cond(i < limit))
    df.set_merge_input(i, 1, df.next_iteration(i_body + one))
    source = source_of(df.exit(i_done))
    assert (
        "# loop 'count' stays interpreted: it was written with the raw primitives "
        "(no while_loop record)"
    ) in source


def test_structures_that_compile_give_no_reason(mode):
    mode("force")
    x = df.placeholder(df.float32, [])
    _, total = df.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * 2.0), [0, x])
    y = df.cond(total > 0, lambda: total + 1.0, lambda: total - 1.0)
    source = source_of(y, {x: 1.0})
    assert "# loop while:" in source and "# cond cond:" in source
    assert "stays interpreted" not in source
