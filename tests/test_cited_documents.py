"""The documents that docstrings, comments and the README cite are in the repository."""

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CITING = ["dataflow", "executor", "primitives", "tests", "benchmarks", "examples", "docs"]
CITATION = re.compile(r"[\w./-]+\.md\b")


def _citing_files():
    yield os.path.join(ROOT, "README.md")
    for top in CITING:
        for folder, _, names in os.walk(os.path.join(ROOT, top)):
            for name in names:
                if name.endswith((".py", ".md")):
                    yield os.path.join(folder, name)


def test_every_document_cited_in_the_repository_is_in_it_at_the_path_given():
    """A citation names its document by its path from the repository's root, or from the
    citing file's own folder (a document citing one beside it)."""
    missing = []
    for path in _citing_files():
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for cited in set(CITATION.findall(text)):
            beside = os.path.join(os.path.dirname(path), cited)
            if not (os.path.isfile(os.path.join(ROOT, cited)) or os.path.isfile(beside)):
                missing.append(f"{os.path.relpath(path, ROOT)} cites {cited}")
    assert not missing, "\n".join(sorted(missing))


def test_the_executors_contract_and_the_architecture_are_in_docs():
    for path in ("docs/control-flow-semantics.md", "docs/architecture.md", "docs/style.md"):
        assert os.path.isfile(os.path.join(ROOT, path)), path
