"""``df.logging``: TensorFlow 1.x's ``tf.logging``, on Python's logging.

Messages go to the ``"dataflow"`` logger, printed to stderr as ``INFO:dataflow:message``
(TensorFlow prints ``INFO:tensorflow:message``).  Only messages at the verbosity or above are
shown; the verbosity starts at ``WARN``, as TensorFlow's.
"""

from __future__ import annotations

import logging as _logging
import sys as _sys
import threading as _threading

DEBUG = _logging.DEBUG
INFO = _logging.INFO
WARN = _logging.WARN
ERROR = _logging.ERROR
FATAL = _logging.FATAL

_logger = None
_logger_lock = _threading.Lock()
_counts: dict = {}


class _StderrHandler(_logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is when a message is logged (a notebook or a test
    may replace it after the first message)."""

    @property
    def stream(self):
        return _sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


def get_logger() -> _logging.Logger:
    """The ``"dataflow"`` logger, given a stderr handler and the ``WARN`` level on first use
    (unless the application configured one)."""
    global _logger
    with _logger_lock:
        if _logger is None:
            logger = _logging.getLogger("dataflow")
            if not logger.handlers:
                handler = _StderrHandler()
                handler.setFormatter(_logging.Formatter(_logging.BASIC_FORMAT, None))
                logger.addHandler(handler)
                logger.propagate = False
            if logger.level == _logging.NOTSET:
                logger.setLevel(WARN)
            _logger = logger
        return _logger


def set_verbosity(v: int) -> None:
    """Shows the messages of level ``v`` and above (``df.logging.INFO``, ...)."""
    get_logger().setLevel(v)


def get_verbosity() -> int:
    return get_logger().getEffectiveLevel()


def log(level: int, msg, *args, **kwargs) -> None:
    get_logger().log(level, msg, *args, **kwargs)


def debug(msg, *args, **kwargs) -> None:
    get_logger().debug(msg, *args, **kwargs)


def info(msg, *args, **kwargs) -> None:
    get_logger().info(msg, *args, **kwargs)


def warning(msg, *args, **kwargs) -> None:
    get_logger().warning(msg, *args, **kwargs)


warn = warning


def error(msg, *args, **kwargs) -> None:
    get_logger().error(msg, *args, **kwargs)


def fatal(msg, *args, **kwargs) -> None:
    get_logger().fatal(msg, *args, **kwargs)


def vlog(level: int, msg, *args, **kwargs) -> None:
    """``log`` at a verbose ``level``, as TensorFlow's (same levels here)."""
    get_logger().log(level, msg, *args, **kwargs)


def log_if(level: int, msg, condition, *args) -> None:
    if condition:
        log(level, msg, *args)


def _count_call(key) -> int:
    with _logger_lock:
        count = _counts.get(key, 0)
        _counts[key] = count + 1
        return count


def log_every_n(level: int, msg, n: int, *args) -> None:
    """Logs the 1st, (n+1)th, (2n+1)th... time this line is reached."""
    caller = _sys._getframe(1)
    count = _count_call((caller.f_code.co_filename, caller.f_lineno))
    log_if(level, msg, count % n == 0, *args)


def log_first_n(level: int, msg, n: int, *args) -> None:
    """Logs the first ``n`` times this line is reached."""
    caller = _sys._getframe(1)
    count = _count_call((caller.f_code.co_filename, caller.f_lineno))
    log_if(level, msg, count < n, *args)


def flush() -> None:
    for handler in get_logger().handlers:
        handler.flush()


def TaskLevelStatusMessage(msg) -> None:  # noqa: N802 (TensorFlow's name)
    """Logs ``msg`` at ``ERROR`` level, as TensorFlow's ``TaskLevelStatusMessage`` does."""
    error(msg)
