"""``df.python_io``: TF1's ``tf.python_io``, the TFRecord file writer and reader in Python."""

from ..framework.tfrecord import (
    TFRecordCompressionType,
    TFRecordOptions,
    TFRecordWriter,
    tf_record_iterator,
)

__all__ = ["TFRecordCompressionType", "TFRecordOptions", "TFRecordWriter", "tf_record_iterator"]
