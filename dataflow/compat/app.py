"""``df.app``: TensorFlow 1.x's ``tf.app`` (``flags`` and ``run``)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Optional

from . import flags


def run(main: Optional[Callable] = None, argv: Optional[list] = None):
    """Parses the flags in ``argv`` (default ``sys.argv``), calls ``main`` (default the
    ``main`` of the ``__main__`` module) with the arguments left, and exits with what it
    returns, as TensorFlow 1.x's ``tf.app.run``."""
    remaining = flags.FLAGS(sys.argv if argv is None else argv, known_only=True)
    main = main or sys.modules["__main__"].main
    sys.exit(main(remaining))
