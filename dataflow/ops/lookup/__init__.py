"""``df.lookup``: TensorFlow 1.x's ``tf.lookup`` (static tables and their initializers;
``df.lookup.experimental`` holds the mutable tables).

Layer: ops (``dataflow.ops``).
"""

from ..lookup_ops import (
    KeyValueTensorInitializer,
    StaticHashTable,
    StaticVocabularyTable,
    TextFileIndex,
    TextFileInitializer,
)
from . import experimental

__all__ = [
    "KeyValueTensorInitializer",
    "StaticHashTable",
    "StaticVocabularyTable",
    "TextFileIndex",
    "TextFileInitializer",
    "experimental",
]
