"""Run at the start of every corpus program (the runner puts this directory on PYTHONPATH).

It appends the directories named in ``TF1_CORPUS_APPEND_PATH`` to ``sys.path``: the
TensorFlow environment has no scikit-learn, matplotlib or scipy, which the MNIST stand-in and
some programs import, so the TensorFlow run borrows them from the environment that runs the
corpus.  Appended, they come after TensorFlow's own packages, which win where both have one.
"""

import os
import sys

for _directory in os.environ.get("TF1_CORPUS_APPEND_PATH", "").split(os.pathsep):
    if _directory and _directory not in sys.path:
        sys.path.append(_directory)
