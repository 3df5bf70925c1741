"""``df.autograph.experimental``: TF1's ``tf.autograph.experimental`` (the optional
conversions `Feature`, `do_not_convert` and the loop directive `set_loop_options`)."""

from .conversion import Feature, do_not_convert
from .operators import set_loop_options

__all__ = ["Feature", "do_not_convert", "set_loop_options"]
