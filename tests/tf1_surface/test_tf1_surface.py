"""Every name of TensorFlow's ``tf.compat.v1`` that builds or runs graphs exists in
``df.compat.v1`` with TensorFlow's parameters (names, order, defaults).

The target is TensorFlow 2.21's own listing (``tensorflow_compat_v1.json``, made by
``make_snapshot.py``).  Left out: the modules and names of `surface.EXCLUDED` and
`surface.EXCLUDED_NAMES`, each with its reason.  What is not done yet is in
``known_missing.txt``; that list may only shrink: a gap that is not on it fails, and so does
an entry that is no longer a gap (take it off).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import surface  # noqa: E402


def test_snapshot_is_tensorflows_listing_of_compat_v1():
    snapshot = surface.load_snapshot()
    assert snapshot["tensorflow_version"] == "2.21.0"
    root = snapshot["modules"][""]
    assert root["placeholder"]["params"][0] == {"kind": "POSITIONAL_OR_KEYWORD", "name": "dtype"}
    assert {"train", "nn", "math", "image", "data", "summary"} <= set(snapshot["modules"])


def test_exclusions_are_few_and_name_what_the_snapshot_has():
    modules = surface.load_snapshot()["modules"]
    assert len(surface.EXCLUDED) <= 25 and len(surface.EXCLUDED_NAMES) <= 8
    for module, reason in surface.EXCLUDED.items():
        assert module in modules and reason
    for names in surface.EXCLUDED_NAMES.values():
        for name in names:
            module, _, short = name.rpartition(".")
            assert short in modules[module], name


def test_every_tf1_name_and_parameter_exists_unless_known_missing():
    gaps = surface.gaps(surface.load_snapshot())
    known = set(surface.read_known_missing())
    new_gaps = [g for g in gaps if g not in known]
    assert new_gaps == []


def test_known_missing_lists_only_real_gaps():
    gaps = set(surface.gaps(surface.load_snapshot()))
    done = [g for g in surface.read_known_missing() if g not in gaps]
    assert done == [], "take these off known_missing.txt: they exist now"


def test_a_name_missing_or_a_parameter_out_of_place_is_a_gap():
    snapshot = {
        "modules": {
            "": {
                "placeholder": {
                    "kind": "function",
                    "params": [
                        {"kind": "POSITIONAL_OR_KEYWORD", "name": "shape"},
                        {"kind": "POSITIONAL_OR_KEYWORD", "name": "dtype"},
                        {"kind": "POSITIONAL_OR_KEYWORD", "name": "name", "default": "'p'"},
                        {"kind": "KEYWORD_ONLY", "name": "colour", "default": "None"},
                    ],
                },
                "no_such_name": {"kind": "function", "params": []},
            },
            "lite": {"TFLiteConverter": {"kind": "class", "params": []}},
        }
    }
    assert surface.gaps(snapshot) == [
        "no_such_name",
        "placeholder(colour): missing",
        "placeholder(dtype): not at position 1",
        "placeholder(name): default None is not 'p'",
        "placeholder(shape): not at position 0",
    ]
