"""``df.audio``: WAV files as ``tf.compat.v1.audio`` reads and writes them."""

from ..ops.audio_ops import decode_wav, encode_wav

__all__ = ["decode_wav", "encode_wav"]
