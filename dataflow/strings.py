"""``df.strings``: the string ops under the names of ``tf.compat.v1.strings``."""

from .ops.string_ops import as_string, lower, reduce_join, regex_replace, substr, upper
from .ops.string_ops import string_join as join
from .ops.string_ops import string_length as length
from .ops.string_ops import string_strip as strip
from .ops.string_ops import string_to_number as to_number

__all__ = [
    "as_string",
    "join",
    "length",
    "lower",
    "reduce_join",
    "regex_replace",
    "strip",
    "substr",
    "to_number",
    "upper",
]
