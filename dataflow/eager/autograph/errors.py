"""The errors AutoGraph and tracing raise about the user's program as staged code.

``StagingError`` is TensorFlow's class for a program that cannot be staged as written: here, a
``df.function`` that calls itself with the signature it is being traced for (the trace would
never end).  Recursion on Python values works, since each value is a trace of its own.

Layer: eager (``dataflow.eager.autograph``); no imports.
"""


class AutoGraphError(Exception):
    """The base of the errors AutoGraph raises about staging a program."""


class StagingError(AutoGraphError):
    """A program that cannot be staged as written (TensorFlow's ``StagingError``)."""
