"""`dataflow.framework.nest`: the structures ``Session.run`` takes as fetches and gives back, as
``tf.nest`` treats them: lists, tuples, namedtuples and dicts (by sorted key) are structure,
everything else is a leaf."""

import collections

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dataflow.framework import nest

Pair = collections.namedtuple("Pair", "first second")
leaves = st.one_of(st.integers(), st.text(max_size=3), st.none(), st.floats(allow_nan=False))
structures = st.recursive(
    leaves,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.lists(children, max_size=4).map(tuple),
        st.builds(Pair, children, children),
        st.dictionaries(st.text(max_size=2), children, max_size=3),
    ),
    max_leaves=12,
)


def reference_flatten(structure) -> list:
    """The leaves in order, written plainly."""
    if isinstance(structure, dict):
        return [leaf for key in sorted(structure) for leaf in reference_flatten(structure[key])]
    if isinstance(structure, (list, tuple)):
        return [leaf for child in structure for leaf in reference_flatten(child)]
    return [structure]


@given(structures)
def test_flatten_gives_the_leaves_in_order_and_pack_rebuilds_the_structure(structure):
    flat = nest.flatten(structure)
    assert flat == reference_flatten(structure)
    rebuilt = nest.pack_sequence_as(structure, flat)
    assert rebuilt == structure
    nest.assert_same_structure(rebuilt, structure)  # the same types: a tuple stays a tuple


@given(structures)
def test_pack_puts_new_leaves_where_the_old_ones_were(structure):
    numbered = nest.pack_sequence_as(structure, range(len(nest.flatten(structure))))
    assert nest.flatten(numbered) == list(range(len(nest.flatten(structure))))


def test_a_plain_list_of_leaves_comes_back_as_a_new_list_and_a_tuple_as_a_tuple():
    fetches = ["a", 1]
    flat = nest.flatten(fetches)
    assert flat == fetches and flat is not fetches
    assert nest.pack_sequence_as(("x", "y"), [1, 2]) == (1, 2)
    assert type(nest.pack_sequence_as(Pair(0, 0), [1, 2])) is Pair


def test_a_dicts_keys_or_values_view_is_a_list_even_inside_another_structure():
    d = {"b": 2, "a": 1}
    assert nest.flatten(d.values()) == [2, 1]
    assert nest.flatten([d.keys(), 3]) == ["b", "a", 3]
    assert nest.flatten([d, (4,)]) == [1, 2, 4]


def test_pack_with_the_wrong_number_of_leaves_is_a_value_error():
    with pytest.raises(ValueError, match="2 leaves but flat_sequence has 3"):
        nest.pack_sequence_as([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="3 leaves but flat_sequence has 1"):
        nest.pack_sequence_as([1, [2, 3]], [1])
