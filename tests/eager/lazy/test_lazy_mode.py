"""`df.lazy_mode`: ops record into a graph, which runs once, with the passes, when a value is
needed."""

import numpy as np
import pytest

import dataflow as df


def test_ops_record_into_a_graph_instead_of_running():
    with df.lazy_mode() as recording:
        x = df.constant([1.0, 2.0])
        y = x * 3.0 + 1.0
    assert isinstance(y, df.LazyTensor)
    assert isinstance(y, df.Tensor)
    assert y.op.graph is recording.graph
    assert {"Mul", "Add"} <= {op.type for op in recording.graph.get_operations()}
    assert recording.materialisations == 0
    np.testing.assert_allclose(y.numpy(), [4.0, 7.0])
    assert recording.materialisations == 1


def test_static_shape_and_dtype_are_known_without_running():
    with df.lazy_mode() as recording:
        y = df.matmul(df.ones([2, 3]), df.ones([3, 5]))
    assert y.shape.as_list() == [2, 5]
    assert y.dtype is df.float32
    assert recording.materialisations == 0


def test_a_computed_value_is_kept_and_not_computed_again():
    with df.lazy_mode() as recording:
        y = df.constant(2.0) * 5.0
        assert y.numpy() == 10.0
        assert float(y) == 10.0
        assert np.asarray(y) == 10.0
    assert recording.materialisations == 1


def test_a_random_draw_runs_once_so_later_uses_see_the_same_numbers():
    with df.lazy_mode() as recording:
        draw = df.random_uniform([4], seed=1)
        first = draw.numpy()
        shifted = draw + 1.0
        np.testing.assert_array_equal(shifted.numpy(), first + np.float32(1.0))
        np.testing.assert_array_equal(draw.numpy(), first)
    assert recording.materialisations == 2


def test_every_tensor_python_still_holds_is_computed_in_the_same_run():
    with df.lazy_mode() as recording:
        a = df.constant(3.0) * 2.0
        b = a + 1.0
        assert b.numpy() == 7.0
        assert a.numpy() == 6.0
    assert recording.materialisations == 1


def test_temporaries_python_dropped_are_not_fetched_so_the_chain_fuses():
    with df.lazy_mode() as recording:
        x = df.random_uniform([1000], seed=3)
        y = x
        for _ in range(6):
            y = df.tanh(y * 1.5 - 0.25)
        y.numpy()
    rewritten = recording.last_run_metadata.rewritten_ops
    assert any("fused" in how for how in rewritten.values()), rewritten
    kernels = [stats.node_name for stats in recording.last_run_metadata.step_stats]
    assert len(kernels) < 10, kernels


def test_constant_subprograms_are_folded_before_the_run():
    with df.lazy_mode() as recording:
        y = df.constant(np.arange(4.0))
        for _ in range(5):
            y = y * 2.0 + 1.0
        y.numpy()
    rewritten = recording.last_run_metadata.rewritten_ops
    assert rewritten and all("folded" in how for how in rewritten.values()), rewritten


def test_arrays_come_in_as_fed_data_and_literals_as_foldable_constants():
    data = np.arange(100.0)
    with df.lazy_mode() as recording:
        y = df.constant(data) * df.constant([2.0], dtype=df.float64)
        np.testing.assert_array_equal(y.numpy(), data * 2.0)
    types = [op.type for op in recording.graph.get_operations()]
    assert types.count("Placeholder") == 1
    assert types.count("Const") == 1


def test_a_value_computed_before_enters_a_later_cond_branch():
    with df.lazy_mode():
        x = df.constant(np.arange(20.0)) + 1.0
        total = float(df.reduce_sum(x))
        y = df.cond(df.constant(total) > 100.0, lambda: x * 2.0, lambda: x)
        np.testing.assert_array_equal(y.numpy(), (np.arange(20.0) + 1.0) * 2.0)


def test_python_control_flow_on_a_lazy_value_materialises_it():
    with df.lazy_mode() as recording:
        total = df.constant(0.0)
        steps = 0
        while total < 10.0:
            total = total + 3.0
            steps += 1
    assert steps == 4
    assert float(total) == 12.0
    assert recording.materialisations == 5


def test_scalars_convert_to_python_numbers_and_indices():
    with df.lazy_mode():
        n = df.constant(3) + 1
        items = ["a", "b", "c", "d", "e"]
        assert items[n] == "e"
        assert int(n) == 4
        assert bool(df.constant(0.0) < 1.0)
        assert len(df.zeros([7, 2])) == 7
        assert f"{df.constant(0.25) * 2:.2f}" == "0.50"


def test_a_non_scalar_is_not_a_python_bool():
    with df.lazy_mode():
        pair = df.constant([1.0, 2.0])
        with pytest.raises(TypeError, match="one element"):
            bool(pair)


def test_printing_shows_the_value():
    with df.lazy_mode():
        y = df.constant([1.0, 2.0]) * 2.0
        assert str(y) == "[2. 4.]"
        assert "numpy=array([2., 4.]" in repr(y)


def test_tensors_still_held_after_the_block_materialise_on_demand():
    with df.lazy_mode() as recording:
        y = df.constant(4.0) * df.constant(2.5)
    assert recording.materialisations == 0
    assert y.numpy() == 10.0


def test_a_tensor_of_an_earlier_block_is_a_constant_in_a_later_one():
    with df.lazy_mode():
        a = df.constant(2.0) * 3.0
    with df.lazy_mode() as second:
        b = a + 1.0
    assert b.numpy() == 7.0
    assert second.materialisations == 1


def test_variables_read_and_assigned_lazily_keep_program_order():
    with df.lazy_mode() as recording:
        v = df.Variable(1.0)
        before = v.read_value()
        v.assign_add(2.0)
        after_add = v.read_value()
        v.assign(v * 10.0)
        after_assign = v + 0.0
    assert recording.materialisations == 0
    assert before.numpy() == 1.0
    assert after_add.numpy() == 3.0
    assert after_assign.numpy() == 30.0


def test_variables_made_in_one_run_serve_programs_recorded_after_it():
    with df.lazy_mode():
        a = df.Variable(np.ones(20))
        b = df.Variable(np.full(20, 2.0))
        sums = []
        for _ in range(3):
            sums.append(float(df.reduce_sum(a * b)))
            a.assign_add(b * 0.0 + 1.0)
    assert sums == [40.0, 80.0, 120.0]


def test_an_eager_variable_is_read_and_assigned_lazily_in_program_order():
    with df.eager_mode():
        v = df.Variable(1.0)
        with df.lazy_mode():
            before = v.read_value()
            v.assign_add(2.0)
            after = v * 10.0
        assert v.numpy() == 1.0  # nothing has run yet
        assert (before.numpy(), after.numpy()) == (1.0, 30.0)
        assert v.numpy() == 3.0
        v.assign(5.0)
        with df.lazy_mode():
            assert float(v + 1.0) == 6.0


def test_a_failed_run_leaves_an_eager_variable_as_it_was():
    with df.eager_mode():
        v = df.Variable(1.0)
        with df.lazy_mode():
            v.assign(7.0)
            bad = df.gather(df.constant([1.0, 2.0]), [5]) + v
            with pytest.raises(df.errors.InvalidArgumentError):
                bad.numpy()
        assert v.numpy() == 1.0


def test_an_assignment_nobody_reads_still_happens_once():
    with df.lazy_mode():
        v = df.Variable(0.0)
        for _ in range(3):
            v.assign_add(1.0)
        assert v.read_value().numpy() == 3.0
        v.assign_add(1.0)
        assert v.read_value().numpy() == 4.0


def test_a_training_loop_recorded_lazily_updates_its_variables():
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(32, 3)).astype(np.float32)
    ys = xs @ np.array([[1.0], [-2.0], [0.5]], np.float32)
    with df.lazy_mode():
        w = df.Variable(np.zeros((3, 1), np.float32))
        losses = []
        for _ in range(30):
            loss = df.reduce_mean(df.square(df.matmul(xs, w) - ys))
            (grad,) = df.gradients(loss, [w])
            w.assign_sub(0.1 * grad)
            losses.append(float(loss))
    assert losses[-1] < 0.05 * losses[0]


def test_a_program_recorded_again_runs_the_plan_made_for_it_the_first_time():
    rng = np.random.default_rng(1)
    batches = [rng.normal(size=(50,)) for _ in range(4)]
    with df.lazy_mode() as recording:
        total = df.Variable(0.0, dtype=df.float64)
        count = df.Variable(0)
        sums = []
        for batch in batches:
            step = df.reduce_sum(df.tanh(df.constant(batch) * 0.5))
            total.assign_add(step)
            count.assign_add(1)
            sums.append(float(step))
        final = float(total.read_value())
        assert int(count.read_value()) == 4
    np.testing.assert_allclose(sums, [np.tanh(b * 0.5).sum() for b in batches])
    np.testing.assert_allclose(final, sum(sums))
    # The first step also created the variable; the second recorded a new program; the third
    # and fourth recorded the second's again, and ran its plan with their data.
    assert recording.plan_reuses == 2
    assert recording.materialisations == 6
    assert len(recording.session._plans) == 4  # the reused runs made no plan


def test_a_long_lazy_loop_keeps_its_graph_from_growing():
    with df.lazy_mode() as recording:
        w = df.Variable(np.zeros(3))
        sizes = []
        for _ in range(30):
            loss = df.reduce_sum(df.square(w - df.constant([1.0, 2.0, 3.0], dtype=df.float64)))
            (grad,) = df.gradients(loss, [w])
            w.assign_sub(0.25 * grad)
            float(loss)
            sizes.append(len(recording.graph.get_operations()))
        np.testing.assert_allclose(w.read_value().numpy(), [1.0, 2.0, 3.0], rtol=1e-6)
    assert sizes[-1] == sizes[2]
    assert recording.plan_reuses == 28


def test_the_same_ops_on_another_line_make_a_plan_of_their_own():
    with df.lazy_mode() as recording:
        a = float(df.constant(1.0) + 1.0)
        b = float(df.constant(1.0) + 1.0)
    assert a == b == 2.0
    assert recording.plan_reuses == 0


def test_cond_and_while_loop_record_as_graph_control_flow():
    with df.lazy_mode() as recording:
        x = df.constant(5.0)
        y = df.cond(x > 3.0, lambda: x * 2.0, lambda: x - 1.0)
        (_, total) = df.while_loop(
            lambda i, s: i < 4, lambda i, s: (i + 1, s + df.cast(i, df.float32)), (0, 0.0)
        )
    assert y.numpy() == 10.0
    assert total.numpy() == 6.0
    types = {op.type for op in recording.graph.get_operations()}
    assert {"Switch", "Merge", "Enter", "Exit", "NextIteration"} <= types


def test_a_kernel_error_is_raised_at_materialisation_naming_the_recorded_line():
    with df.lazy_mode():
        bad = df.gather(df.constant([1.0, 2.0]), [5])  # the recorded line
        recorded_line = _this_line() - 1
        with pytest.raises(df.errors.InvalidArgumentError) as failure:
            bad.numpy()
    assert f"{__file__.rsplit('/', 1)[-1]}:{recorded_line}" in str(failure.value)
    assert "GatherV2" in str(failure.value) or "Gather" in str(failure.value)


def test_a_failed_materialisation_keeps_its_error_and_the_variables_intact():
    with df.lazy_mode() as recording:
        v = df.Variable(1.0)
        assert v.read_value().numpy() == 1.0
        v.assign(100.0)
        bad = df.gather(df.constant([1.0, 2.0]), [5])
        with pytest.raises(df.errors.InvalidArgumentError):
            bad.numpy()
        runs = recording.materialisations
        with pytest.raises(df.errors.InvalidArgumentError):
            bad.numpy()
        assert recording.materialisations == runs
        assert v.read_value().numpy() == 1.0


def test_a_shape_error_is_raised_where_the_op_is_recorded():
    with df.lazy_mode():
        with pytest.raises(ValueError, match="MatMul"):
            df.matmul(df.ones([2, 3]), df.ones([2, 3]))


def test_a_variable_handle_has_no_value_of_its_own():
    with df.lazy_mode():
        v = df.Variable(1.0)
        with pytest.raises(ValueError, match="read the variable"):
            v.handle.numpy()


def test_lazy_mode_records_inside_eager_mode_too():
    with df.eager_mode():
        eager_value = df.constant(2.0) * 2.0
        with df.lazy_mode() as recording:
            assert not df.executing_eagerly()
            y = eager_value * 10.0
            assert isinstance(y, df.LazyTensor)
        assert df.executing_eagerly()
        assert y.numpy() == 40.0
        assert recording.materialisations == 1


def test_an_op_outside_the_block_takes_a_lazy_tensor_as_a_value():
    with df.lazy_mode():
        y = df.constant(3.0) * 2.0
    with df.eager_mode():
        doubled = y * 2.0
        assert isinstance(doubled, df.EagerTensor)
        assert doubled.numpy() == 12.0
    with df.lazy_mode() as later:
        z = y + 1.0
    assert z.op.graph is later.graph
    assert z.numpy() == 7.0


def test_a_graph_op_on_a_lazy_tensor_is_refused_outside_a_function():
    with df.lazy_mode():
        y = df.constant(3.0) * 2.0
    with df.Graph().as_default():
        with pytest.raises(RuntimeError, match="capture"):
            df.identity(y)


def test_graph_mode_is_back_after_the_block():
    graph = df.Graph()
    with graph.as_default():
        with df.lazy_mode():
            pass
        y = df.constant(1.0) + 1.0
    assert not isinstance(y, df.LazyTensor)
    assert y.graph is graph


def _this_line() -> int:
    import inspect

    return inspect.currentframe().f_back.f_lineno
