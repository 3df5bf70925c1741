"""Every public name of `dataflow`, `primitives` and `executor` stays where users find it.

``public_names.json`` records, by dotted path, each public function, class, constant and
module reachable from the three packages (see `public_names` for what counts), with the
signatures of functions and classes.  Moving code between modules must not lose any of them:
a path that no longer resolves, or resolves to something of another kind or signature, fails
here.  New public names are recorded deliberately (``python tests/api/public_names.py``, which
only adds), so that the record stays complete and a later loss is noticed.
"""

import json

import public_names

RECORD = json.loads(public_names.RECORD.read_text())


def test_the_record_covers_the_three_packages():
    packages = {path.split(".")[0] for path in RECORD}
    assert packages == {"dataflow", "primitives", "executor"}
    assert RECORD["dataflow.Session"].startswith("class(")
    assert RECORD["dataflow.compat.v1.train"] == "module dataflow.train"


def test_every_recorded_name_still_resolves_to_the_same_kind_and_signature():
    lost, changed = public_names.differences(RECORD)
    assert not lost, f"{len(lost)} public names are gone:\n  " + "\n  ".join(lost)
    assert not changed, f"{len(changed)} public names changed:\n  " + "\n  ".join(changed)


def test_every_public_name_is_recorded():
    found = public_names.walk(*public_names.roots())
    new = sorted(set(found) - set(RECORD))
    assert not new, (
        f"{len(new)} public names are not in {public_names.RECORD.name}; if they are meant to "
        "be public, record them with `python tests/api/public_names.py`:\n  " + "\n  ".join(new)
    )
