"""`df.cond` inside a df.function follows TensorFlow's functional cond (cond_v2), which TF1 code
gets there: no ``strict`` (a singleton list stays a list) and no IndexedSlices from one branch
only.  In a TF1 graph, cond keeps TF1's rules."""

import pytest

import dataflow as df


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as g:
        yield g


def singleton_cond(**kwargs):
    return df.cond(df.constant(True), lambda: [df.constant(1)], lambda: [df.constant(2)], **kwargs)


def test_in_a_function_a_singleton_list_stays_a_list_whatever_strict_says():
    @df.function
    def f():
        # TF1 code may pass a tensor where ``strict`` goes: the functional cond never reads it.
        passed_a_tensor = df.cond(
            df.constant(True), lambda: [df.constant(1)], lambda: [df.constant(2)], df.constant(0)
        )
        return singleton_cond(), singleton_cond(strict=True), passed_a_tensor

    results = f.get_concrete_function().structured_outputs
    assert [type(r) for r in results] == [list, list, list]
    with df.Session() as sess:
        assert sess.run(f()) == ([1], [1], [1])


def test_in_a_tf1_graph_a_singleton_list_is_unpacked_unless_strict():
    unpacked, kept = singleton_cond(), singleton_cond(strict=True)
    assert isinstance(unpacked, df.Tensor) and isinstance(kept, list)
    with df.Session() as sess:
        assert sess.run([unpacked, kept]) == [1, [1]]


def indexed_slices_or_tensor():
    values, indices = df.constant([10]), df.constant([0])
    return df.cond(
        df.constant(True),
        lambda: df.IndexedSlices(values + 1, indices),
        lambda: values + 1,
    )


def test_in_a_function_indexed_slices_from_one_branch_only_cannot_be_reconciled():
    @df.function
    def f():
        return indexed_slices_or_tensor()

    with pytest.raises(
        TypeError,
        match=r"(?s)^Cannot reconcile tf.cond 0-th outputs in cond 'cond' "
        r"\(.*test_cond_in_functions.py:\d+;.*branches returned: \(IndexedSlices\(",
    ):
        f.get_concrete_function()


def test_in_a_tf1_graph_indexed_slices_from_one_branch_only_is_a_structure_mismatch():
    with pytest.raises(ValueError, match="Incompatible return values of 'true_fn' and 'false_fn'"):
        indexed_slices_or_tensor()
