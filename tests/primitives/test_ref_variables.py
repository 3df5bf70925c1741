"""TF1's reference variables: a reference names a variable's storage, the Ref variants of the
control-flow primitives forward it so that an assign downstream updates the variable, and an op
that takes a value reads the reference when it runs.  Values pinned here are TF1's (graph mode,
control flow v1) for the same programs."""

import numpy as np
import pytest

import dataflow as df
from dataflow.ops import ref_variables
from primitives import raw_ops
from primitives.control_flow_ops import with_dependencies


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as graph:
        yield graph


def new_session(init=True) -> df.Session:
    sess = df.Session()
    if init:
        sess.run(df.global_variables_initializer())
    return sess


def test_a_variables_reference_has_the_ref_dtype_of_its_value():
    v = df.Variable(7)
    ref = v._ref()
    assert ref.dtype is df.int32_ref
    assert ref.dtype.is_ref_dtype and ref.dtype.base_dtype is df.int32
    assert ref is v._ref()  # one reference per variable
    assert df.float32.is_compatible_with(df.float32_ref)
    assert not df.float32_ref.is_compatible_with(df.float32)


def test_an_assign_through_a_ref_switch_updates_the_variable():
    v = df.Variable(7)
    output_false, output_true = raw_ops.switch(v._ref(), df.constant(True))
    assert output_true.op.type == "RefSwitch"
    assert output_true.dtype is df.int32_ref
    assigned = df.assign(output_true, 9)
    sess = new_session()
    assert sess.run(assigned) == 9
    assert sess.run(v) == 9


def test_an_assign_through_a_reference_on_the_untaken_branch_never_runs():
    v = df.Variable(7)
    output_false, _ = raw_ops.switch(v, df.constant(True))
    assigned = df.assign(output_false, 9)
    sess = new_session()
    with pytest.raises(df.errors.InvalidArgumentError, match="untaken|dead|no value"):
        sess.run(assigned)
    assert sess.run(v) == 7


def test_a_reference_entered_into_a_frame_is_assigned_there():
    v = df.Variable(7)
    entered = raw_ops.enter(v, "frame", is_constant=True)
    assert entered.op.type == "RefEnter"
    assigned = df.assign(entered, raw_ops.enter(df.constant(9), "frame"))
    out = raw_ops.exit(with_dependencies([assigned], entered))
    assert out.op.type == "RefExit" and out.dtype is df.int32_ref
    sess = new_session()
    assert sess.run(out) == 9
    assert sess.run(v) == 9


def test_an_op_that_takes_a_value_reads_the_reference_when_it_runs():
    v = df.Variable(7)
    ref = ref_variables.forwarding_identity(v)
    assert ref.op.type == "RefIdentity"
    assign = df.assign(ref, 9)
    with df.control_dependencies([assign]):
        doubled = ref * 2
    assert doubled.dtype is df.int32  # outputs of value ops are values
    assert new_session().run(doubled) == 18


def test_a_reference_stays_one_through_a_while_loop():
    x = df.Variable(0)._ref()

    def body(i, x):
        assert x.dtype is df.int32_ref
        return i + 1, ref_variables.ref_identity(x)

    i, out = df.while_loop(lambda i, x: i < 100, body, [df.constant(0), x], parallel_iterations=5)
    assert i.dtype is df.int32 and out.dtype is df.int32_ref
    assert new_session().run([i, out]) == [100, 0]


def test_control_flow_chooses_the_ref_variant_after_eager_mode_has_been_used_too():
    with df.eager_mode():  # from here on ops are built through the execution-mode hook
        assert float(df.constant(1.0) + 1.0) == 2.0
    x = df.Variable(0)._ref()
    _, out = df.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x), [df.constant(0), x])
    assert out.dtype is df.int32_ref and out.op.type == "RefExit"
    assert new_session().run(out) == 0


def test_a_reference_updated_in_nested_loops_counts_every_inner_iteration():
    counter = df.Variable(0)

    def outer_body(i, ref):
        def inner_body(j, inner_ref):
            with df.control_dependencies([df.assign_add(inner_ref, 1)]):
                return j + 1, ref_variables.ref_identity(inner_ref)

        _, ref = df.while_loop(lambda j, r: j < 3, inner_body, [df.constant(0), ref])
        return i + 1, ref

    _, ref = df.while_loop(
        lambda i, r: i < 4, outer_body, [df.constant(0), counter._ref()], parallel_iterations=1
    )
    sess = new_session()
    assert sess.run(ref) == 12
    assert sess.run(counter) == 12


def test_a_raw_variable_is_uninitialized_until_assigned():
    v = ref_variables.variable(shape=[1], dtype=df.float32, name="v")
    assert v.dtype is df.float32_ref and v.shape.as_list() == [1]
    initialized = df.is_variable_initialized(v)
    sess = new_session(init=False)
    assert not sess.run(initialized)
    with pytest.raises(df.errors.FailedPreconditionError, match="uninitialized value v"):
        sess.run(df.identity(v))
    assert sess.run(df.assign(v, [2.5])).tolist() == [2.5]
    assert sess.run(initialized)
    assert sess.run(df.identity(v)).tolist() == [2.5]
    assert sess.run(df.identity(v)).tolist() == [2.5]  # a failed run left the Session usable


def test_an_uninitialized_reference_may_be_switched_when_no_taken_op_reads_it():
    # TF1's testUninitializedRefIdentity: the branch that reads the variable does not run.
    v = ref_variables.variable(shape=[1], dtype=df.float32, name="v")
    output_false, output_true = raw_ops.ref_switch(v, df.is_variable_initialized(v))
    with df.control_dependencies([ref_variables.ref_identity(output_false)]):
        assign = df.assign(v, [1.0])
    with df.control_dependencies([ref_variables.ref_identity(output_true)]):
        read = df.identity(v)
    merged = raw_ops.merge([assign, read])
    sess = new_session(init=False)
    assert sess.run(merged.output).tolist() == [1.0]
    assert sess.run(merged.output).tolist() == [1.0]  # now the read branch runs


def test_raw_variables_with_one_shared_name_share_storage():
    a = ref_variables.variable([], df.int32, name="a", shared_name="counter")
    b = ref_variables.variable([], df.int32, name="b", shared_name="counter")
    sess = new_session(init=False)
    sess.run(df.assign(a, 5))
    assert sess.run(df.assign_add(b, 1)) == 6
    assert sess.run(df.identity(a)) == 6


def test_ref_merge_forwards_the_reference_that_arrives():
    v = df.Variable(np.array([1.0], np.float32))
    output_false, output_true = raw_ops.ref_switch(v, df.constant(False))
    merged, index = raw_ops.ref_merge([output_false, output_true])
    assert merged.op.type == "RefMerge" and merged.dtype is df.float32_ref
    sess = new_session()
    assert sess.run(df.assign(merged, [4.0])).tolist() == [4.0]
    assert sess.run(index) == 0
    assert sess.run(v).tolist() == [4.0]


def test_ref_select_forwards_the_chosen_reference_and_keeps_only_a_shared_shape():
    index = df.placeholder(df.int32)
    same = ref_variables.ref_select(index, [df.Variable([[1, 2]]), df.Variable([[3, 4]])])
    assert same.shape.as_list() == [1, 2]
    first, second = df.Variable([[1, 2]]), df.Variable([[2], [1]])
    chosen = ref_variables.ref_select(index, [first, second])
    assert chosen.shape.ndims is None
    sess = new_session()
    sess.run(df.assign(chosen, [[7], [8]], validate_shape=False), {index: 1})
    assert sess.run(second).tolist() == [[7], [8]]
    assert sess.run(first).tolist() == [[1, 2]]
    with pytest.raises(df.errors.OpError, match="out of range"):
        sess.run(df.identity(chosen), {index: 2})


def test_ref_builders_refuse_values():
    with pytest.raises(TypeError, match="needs a reference"):
        raw_ops.ref_switch(df.constant(1.0), df.constant(True))
    with pytest.raises(TypeError, match="needs a reference"):
        ref_variables.ref_identity(df.constant(1.0))
    with pytest.raises(TypeError, match="needs a Variable or a reference"):
        df.assign(df.constant(1.0), 2.0)


def test_a_merge_of_a_reference_and_a_value_says_to_read_the_reference():
    v = df.Variable(1.0)
    with pytest.raises(TypeError, match="read it first"):
        raw_ops.merge([v._ref(), df.constant(2.0)])


def test_tuple_gates_indexed_slices_part_by_part():
    v = df.Variable(np.array([[0.0, 1.0], [10.0, 11.0]], np.float32))
    rows = df.IndexedSlices(with_dependencies([v.initializer], v._ref()), df.constant([1]))
    (gated,) = df.tuple([rows])
    assert isinstance(gated, df.IndexedSlices)
    sess = new_session(init=False)
    assert sess.run(df.gather(gated.values, gated.indices)).tolist() == [[10.0, 11.0]]


@pytest.mark.parametrize("dtype", [df.qint8, df.quint8, df.qint16, df.quint16, df.qint32])
def test_quantized_values_pass_through_switch_and_merge(dtype):
    value = df.constant(np.array([42]), dtype)
    assert value.dtype is dtype and dtype.is_quantized and not dtype.is_integer
    output_false, output_true = raw_ops.switch(value, df.constant(True))
    result = new_session().run(raw_ops.merge([output_false, output_true]).output)
    assert result.dtype == dtype.as_numpy_dtype and int(result[0][0]) == 42


def test_a_quantized_reference_switches_and_merges():
    var = ref_variables.variable(shape=[1], dtype=df.qint8, name="v")
    sess = new_session(init=False)
    sess.run(df.assign(var, df.constant(np.array([42]), df.qint8)))
    merged = raw_ops.ref_merge(raw_ops.ref_switch(var, df.constant(True)))
    assert int(sess.run(merged.output)[0][0]) == 42


@pytest.mark.parametrize("dtype", [df.uint16, df.uint32, df.uint64])
def test_wide_unsigned_values_pass_through_switch_and_merge(dtype):
    value = df.constant(np.array([2**15 + 1]), dtype)
    output_false, output_true = raw_ops.switch(value, df.constant(False))
    result = new_session().run(raw_ops.merge([output_false, output_true]).output)
    assert result.dtype == dtype.as_numpy_dtype and result.tolist() == [2**15 + 1]
