"""``df.summary``: summaries for TensorBoard and the ``FileWriter`` that writes event files.

As in TensorFlow 1.x, each summary function adds an op whose value is a serialized ``Summary``
protocol buffer (a string scalar) and puts it in the ``SUMMARIES`` collection (or those named
by ``collections``); ``merge``/``merge_all`` join several into one; a ``FileWriter`` writes
them, with the graph and run metadata, to an event file that TensorBoard reads
(``events.out.tfevents.<time>.<host>.<pid>.<count>``, TFRecord framing with masked
CRC-32C).

The ops are TensorFlow's (``ScalarSummary``, ``HistogramSummary``, ``ImageSummary``,
``AudioSummaryV2``, ``TensorSummaryV2`` for text, ``MergeSummary``) with TensorFlow's op
names: a summary named ``loss`` under the name scope ``train`` is the op ``train/loss``, and
its tag is ``train/loss``.  The protos and the framing's CRC-32C come from the optional
package tensorboardX (`dataflow.framework.tensorboard_protos`); without it a summary function
raises an ``ImportError`` naming the extra to install.

Summary ops are ordinary ops: they run inside ``cond`` and ``while_loop``, have no gradient,
and save and load with ``df.io``.
"""

from __future__ import annotations

import collections
import io as _io
import itertools
import math
import os
import re
import socket
import struct
import threading
import time
import warnings
import wave
import zlib
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor, get_default_graph
from ..framework.graph_keys import GraphKeys
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from ..framework.tensorboard_protos import protos
from ..ops.math_ops import BOOL_TYPES, FLOAT_TYPES, NUMERIC_TYPES, check_dtype

__all__ = [
    "FileWriter",
    "FileWriterCache",
    "audio",
    "histogram",
    "image",
    "merge",
    "merge_all",
    "all_v2_summary_ops",
    "get_summary_description",
    "scalar",
    "summary_iterator",
    "tensor_summary",
    "text",
]

_STRING = frozenset({_dtypes.string})


# -- naming ----------------------------------------------------------------------------------------
_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w\.]")


def _clean_tag(name: str) -> str:
    """``name`` with the characters an op name cannot hold replaced by ``_``, and leading
    slashes removed, as TensorFlow's ``summary_op_util.clean_tag``."""
    if name is None:
        return None
    cleaned = _INVALID_TAG_CHARACTERS.sub("_", name).lstrip("/")
    return cleaned


def _summary_op(op_type: str, name: str, family, inputs_of, attrs: dict, collections) -> Tensor:
    """Creates the summary op ``op_type`` the way TensorFlow's ``summary_scope`` does: in a
    name scope ``[family/]name`` (made unique), whose name is also the op's and the tag.

    ``inputs_of(tag)`` makes the op's inputs inside that scope."""
    protos()  # the clear error when tensorboardX is missing, before anything is built
    name = _clean_tag(name)
    family = _clean_tag(family)
    graph = get_default_graph()
    with graph.name_scope(name if family is None else f"{family}/{name}") as scope:
        tag = scope.rstrip("/")
        if family is not None:
            tag = f"{family}/{tag}"
        inputs = inputs_of(tag)
        summary = apply_op(op_type, inputs, attrs, name=scope, graph=graph).outputs[0]
    for key in collections if collections is not None else [GraphKeys.SUMMARIES]:
        graph.add_to_collection(key, summary)
    return summary


def _tag_constant(tag: str, name: str = "tag") -> Tensor:
    return convert_to_tensor(tag, _dtypes.string, name=name)


def _check_scalar_tag(op, index: int = 0) -> None:
    tag = op.inputs[index]
    check_dtype(tag.dtype, _STRING, f"Input 'tag' of '{op.type}'")
    if not tag.shape.is_compatible_with([]):
        raise ValueError(f"tag must be a scalar, got shape {tag.shape}")


def _serialized(value) -> np.ndarray:
    """A serialized ``Summary`` as the value of a string scalar."""
    result = np.empty((), dtype=object)
    result[()] = value.SerializeToString()
    return result


def _summary_with(**value) -> np.ndarray:
    summary = protos().Summary()
    summary.value.add(**value)
    return _serialized(summary)


# -- scalar ----------------------------------------------------------------------------------------
def _infer_scalar_summary(op):
    tags, values = op.inputs
    check_dtype(tags.dtype, _STRING, f"Input 'tags' of '{op.type}'")
    check_dtype(values.dtype, NUMERIC_TYPES, f"Input 'values' of '{op.type}'")
    if not tags.shape.is_compatible_with(values.shape):
        raise ValueError(f"tags and values are not the same shape: {tags.shape} != {values.shape}")
    return [(_dtypes.string, TensorShape([]))]


def _scalar_summary_kernel(attrs):
    def scalar_summary(tags, values):
        if tags.shape != values.shape:
            raise InvalidArgumentError(
                None,
                None,
                f"tags and values are not the same shape: {list(tags.shape)} != "
                f"{list(values.shape)}",
            )
        summary = protos().Summary()
        for tag, value in zip(tags.reshape(-1), values.reshape(-1).tolist()):
            summary.value.add(tag=tag.decode("utf-8", "replace"), simple_value=value)
        return _serialized(summary)

    return scalar_summary


define_op("ScalarSummary", _infer_scalar_summary, _scalar_summary_kernel)


def scalar(name: str, tensor, collections=None, family=None) -> Tensor:
    """A summary of one number: TensorBoard's scalars tab plots it against the step."""

    def inputs_of(tag):
        values = convert_to_tensor(tensor)
        if not values.shape.is_compatible_with([]):
            raise ValueError(
                f"summary.scalar '{name}' needs a scalar tensor, got '{values.name}' of shape "
                f"{values.shape}"
            )
        return [_tag_constant(tag, "tags"), values]

    return _summary_op("ScalarSummary", name, family, inputs_of, {}, collections)


# -- histogram -------------------------------------------------------------------------------------
def _default_bucket_limits() -> np.ndarray:
    """TensorFlow's histogram buckets: limits growing by 10% from 1e-12 to 1e20, mirrored for
    negative values, with 0 between and the largest double at each end."""
    positive = []
    v = 1.0e-12
    while v < 1.0e20:
        positive.append(v)
        v *= 1.1
    largest = np.finfo(np.float64).max
    negative = [-x for x in reversed(positive)]
    return np.array([-largest, *negative, 0.0, *positive, largest])


_BUCKET_LIMITS = _default_bucket_limits()


def _histogram_proto(values: np.ndarray):
    """TensorFlow's ``Histogram::EncodeToProto``: counts per default bucket (a value falls in
    the first bucket whose limit is above it), each run of empty buckets collapsed into one."""
    values = values.astype(np.float64).reshape(-1)
    buckets = np.minimum(
        np.searchsorted(_BUCKET_LIMITS, values, side="right"), len(_BUCKET_LIMITS) - 1
    )
    counts = np.bincount(buckets, minlength=len(_BUCKET_LIMITS))
    largest = float(_BUCKET_LIMITS[-1])
    histogram = protos().HistogramProto(
        min=float(values.min()) if values.size else largest,
        max=float(values.max()) if values.size else -largest,
        num=float(values.size),
        sum=float(values.sum()),
        sum_squares=float(np.dot(values, values)),
    )
    occupied = np.flatnonzero(counts)
    # Each occupied bucket, preceded by one bucket standing for the empty run before it (whose
    # limit is the last limit of that run), and one for the empty run after the last.
    limits, kept = [], []
    previous = -1
    for i in occupied:
        if i > previous + 1:
            limits.append(_BUCKET_LIMITS[i - 1])
            kept.append(0.0)
        limits.append(_BUCKET_LIMITS[i])
        kept.append(float(counts[i]))
        previous = i
    if previous < len(_BUCKET_LIMITS) - 1:
        limits.append(largest)
        kept.append(0.0)
    histogram.bucket_limit.extend(float(x) for x in limits)
    histogram.bucket.extend(kept)
    return histogram


def _infer_histogram_summary(op):
    _check_scalar_tag(op)
    check_dtype(op.inputs[1].dtype, NUMERIC_TYPES | BOOL_TYPES, f"Input 'values' of '{op.type}'")
    return [(_dtypes.string, TensorShape([]))]


def _histogram_summary_kernel(attrs):
    def histogram_summary(tag, values):
        tag = tag[()].decode("utf-8", "replace")
        if values.dtype.kind == "f" and not np.all(np.isfinite(values)):
            raise InvalidArgumentError(None, None, f"Nan in summary histogram for: {tag}")
        return _summary_with(tag=tag, histo=_histogram_proto(values))

    return histogram_summary


define_op("HistogramSummary", _infer_histogram_summary, _histogram_summary_kernel)


def histogram(name: str, values, collections=None, family=None) -> Tensor:
    """A summary of the distribution of ``values`` (any shape): TensorBoard's histograms and
    distributions tabs.  A NaN or infinity is an error when it runs, as in TensorFlow."""

    def inputs_of(tag):
        return [_tag_constant(tag), convert_to_tensor(values)]

    return _summary_op("HistogramSummary", name, family, inputs_of, {}, collections)


# -- image -----------------------------------------------------------------------------------------
_IMAGE_TYPES = FLOAT_TYPES | frozenset({_dtypes.uint8})


def encode_png(pixels: np.ndarray) -> bytes:
    """``pixels`` (height, width, channels of uint8; 1, 3 or 4 channels) as a PNG file: one
    IDAT chunk of unfiltered rows, compressed with zlib, as the PNG specification lays out."""
    height, width, channels = pixels.shape
    color_type = {1: 0, 2: 4, 3: 2, 4: 6}[channels]

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    rows = np.zeros((height, 1 + width * channels), dtype=np.uint8)  # filter byte 0 per row
    rows[:, 1:] = pixels.reshape(height, width * channels)
    header = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows.tobytes(), 6))
        + chunk(b"IEND", b"")
    )


def _as_uint8_image(image: np.ndarray, bad_color: np.ndarray) -> np.ndarray:
    """TensorFlow's ImageSummary scaling of one image: uint8 as it is; floats scaled so that
    the largest finite value is 255 when none is negative, else so that the largest magnitude
    is 127 around 128 (truncated toward zero); pixels with a non-finite channel get
    ``bad_color``."""
    if image.dtype == np.uint8:
        return image
    image = image.astype(np.float32)
    finite = np.isfinite(image)
    low = float(image[finite].min()) if finite.any() else math.inf
    high = float(image[finite].max()) if finite.any() else -math.inf
    if low < 0:
        largest = max(abs(low), abs(high))
        scale, offset = (0.0 if largest < 1e-6 else 127.0 / largest), 128.0
    else:
        scale, offset = (0.0 if high < 1e-6 else 255.0 / high), 0.0
    with np.errstate(invalid="ignore"):
        scaled = np.where(finite, image * np.float32(scale) + np.float32(offset), 0)
    result = scaled.astype(np.uint8)
    bad = ~finite.all(axis=-1)
    result[bad] = bad_color[: image.shape[-1]]
    return result


def _infer_image_summary(op):
    _check_scalar_tag(op)
    tensor = op.inputs[1]
    check_dtype(tensor.dtype, _IMAGE_TYPES, f"Input 'tensor' of '{op.type}'")
    _check_image_shape(tensor.shape.as_list() if tensor.shape.rank is not None else None)
    if op.attrs["max_images"] < 1:
        raise ValueError(f"max_outputs must be at least 1, got {op.attrs['max_images']}")
    return [(_dtypes.string, TensorShape([]))]


def _check_image_shape(dims) -> None:
    if dims is None:
        return
    if len(dims) != 4 or dims[3] not in (1, 3, 4, None):
        raise ValueError(f"Tensor must be 4-D with last dim 1, 3, or 4, not {dims}")


def _image_summary_kernel(attrs):
    max_images, bad_color = attrs["max_images"], np.asarray(attrs["bad_color"], np.uint8)

    def image_summary(tag, tensor):
        try:
            _check_image_shape(list(tensor.shape))
        except ValueError as e:
            raise InvalidArgumentError(None, None, str(e)) from None
        tag = tag[()].decode("utf-8", "replace")
        summary = protos().Summary()
        count = min(max_images, tensor.shape[0])
        for i in range(count):
            pixels = _as_uint8_image(tensor[i], bad_color)
            height, width, channels = pixels.shape
            summary.value.add(
                tag=f"{tag}/image" if max_images == 1 else f"{tag}/image/{i}",
                image=protos().Summary.Image(
                    height=height,
                    width=width,
                    colorspace=channels,
                    encoded_image_string=encode_png(pixels),
                ),
            )
        return _serialized(summary)

    return image_summary


define_op("ImageSummary", _infer_image_summary, _image_summary_kernel)


def image(name: str, tensor, max_outputs: int = 3, collections=None, family=None) -> Tensor:
    """A summary of the first ``max_outputs`` images of ``tensor`` ([batch, height, width,
    channels] with 1, 3 or 4 channels; uint8, or floats scaled per image as TensorFlow does),
    tagged ``name/image/0``, ... (``name/image`` when ``max_outputs`` is 1)."""

    def inputs_of(tag):
        return [_tag_constant(tag), convert_to_tensor(tensor)]

    attrs = {
        "max_images": int(max_outputs),
        "bad_color": np.array([255, 0, 0, 255], dtype=np.uint8),
    }
    return _summary_op("ImageSummary", name, family, inputs_of, attrs, collections)


# -- audio -----------------------------------------------------------------------------------------
def encode_wav(samples: np.ndarray, sample_rate: int) -> bytes:
    """``samples`` (frames, channels of floats in [-1, 1]) as a 16-bit PCM WAV file."""
    pcm = np.round(np.clip(samples, -1.0, 1.0) * 32767.0).astype("<i2")
    buffer = _io.BytesIO()
    with wave.open(buffer, "wb") as file:
        file.setnchannels(samples.shape[1])
        file.setsampwidth(2)
        file.setframerate(sample_rate)
        file.writeframes(pcm.tobytes())
    return buffer.getvalue()


def _infer_audio_summary(op):
    _check_scalar_tag(op)
    tensor, rate = op.inputs[1:]
    check_dtype(tensor.dtype, frozenset({_dtypes.float32}), f"Input 'tensor' of '{op.type}'")
    check_dtype(rate.dtype, frozenset({_dtypes.float32}), f"Input 'sample_rate' of '{op.type}'")
    if tensor.shape.rank is not None and tensor.shape.rank not in (2, 3):
        raise ValueError(f"Tensor must be 3-D or 2-D, got shape {tensor.shape}")
    return [(_dtypes.string, TensorShape([]))]


def _audio_summary_kernel(attrs):
    max_outputs = attrs["max_outputs"]

    def audio_summary(tag, tensor, sample_rate):
        tag = tag[()].decode("utf-8", "replace")
        if tensor.ndim == 2:
            tensor = tensor[:, :, np.newaxis]
        rate = float(sample_rate)
        if rate <= 0:
            raise InvalidArgumentError(None, None, f"sample_rate must be > 0, got {rate}")
        summary = protos().Summary()
        for i in range(min(max_outputs, tensor.shape[0])):
            frames, channels = tensor.shape[1:]
            summary.value.add(
                tag=f"{tag}/audio" if max_outputs == 1 else f"{tag}/audio/{i}",
                audio=protos().Summary.Audio(
                    sample_rate=rate,
                    num_channels=channels,
                    length_frames=frames,
                    encoded_audio_string=encode_wav(tensor[i], int(rate)),
                    content_type="audio/wav",
                ),
            )
        return _serialized(summary)

    return audio_summary


define_op("AudioSummaryV2", _infer_audio_summary, _audio_summary_kernel)


def audio(
    name: str, tensor, sample_rate, max_outputs: int = 3, collections=None, family=None
) -> Tensor:
    """A summary of the first ``max_outputs`` clips of ``tensor`` ([batch, frames, channels]
    or [batch, frames], floats in [-1, 1]) as WAV files at ``sample_rate`` Hz."""

    def inputs_of(tag):
        rate = convert_to_tensor(sample_rate, _dtypes.float32, name="sample_rate")
        return [_tag_constant(tag), convert_to_tensor(tensor), rate]

    attrs = {"max_outputs": int(max_outputs)}
    return _summary_op("AudioSummaryV2", name, family, inputs_of, attrs, collections)


# -- text ------------------------------------------------------------------------------------------
def _infer_tensor_summary(op):
    _check_scalar_tag(op)
    check_dtype(op.inputs[2].dtype, _STRING, f"Input 'serialized_summary_metadata' of '{op.type}'")
    return [(_dtypes.string, TensorShape([]))]


def _tensor_summary_kernel(attrs):
    from .graph_def import make_tensor_proto

    def tensor_summary(tag, tensor, metadata):
        return _summary_with(
            tag=tag[()].decode("utf-8", "replace"),
            metadata=protos().SummaryMetadata.FromString(metadata[()]),
            tensor=make_tensor_proto(tensor),
        )

    return tensor_summary


define_op("TensorSummaryV2", _infer_tensor_summary, _tensor_summary_kernel)


def text(name: str, tensor, collections=None) -> Tensor:
    """A summary of a string tensor, shown as Markdown in TensorBoard's text tab."""

    def inputs_of(tag):
        value = convert_to_tensor(tensor)
        if value.dtype is not _dtypes.string:
            raise ValueError(
                f"Expected tensor {value.name} to have dtype string, got {value.dtype}"
            )
        metadata = protos().SummaryMetadata()
        metadata.plugin_data.plugin_name = "text"
        serialized = convert_to_tensor(
            metadata.SerializeToString(), _dtypes.string, name="serialized_summary_metadata"
        )
        return [_tag_constant(tag), value, serialized]

    return _summary_op("TensorSummaryV2", name, None, inputs_of, {}, collections)


def tensor_summary(
    name: str,
    tensor,
    summary_description=None,
    collections=None,
    summary_metadata=None,
    family=None,
    display_name=None,
) -> Tensor:
    """A summary holding ``tensor`` whole, as a ``TensorProto`` (``tf.summary.tensor_summary``):
    its ``SummaryMetadata`` is ``summary_metadata`` (a ``SummaryMetadata`` proto, default
    empty) with ``summary_description`` and ``display_name`` set where given; the tag is
    ``[family/]name`` under the name scopes, as the other summaries'."""
    metadata = protos().SummaryMetadata()
    if summary_metadata is not None:
        metadata.CopyFrom(summary_metadata)
    if summary_description is not None:
        metadata.summary_description = summary_description
    if display_name is not None:
        metadata.display_name = display_name
    serialized_metadata = metadata.SerializeToString()

    def inputs_of(tag):
        serialized = convert_to_tensor(
            serialized_metadata, _dtypes.string, name="serialized_summary_metadata"
        )
        return [_tag_constant(tag), convert_to_tensor(tensor), serialized]

    return _summary_op("TensorSummaryV2", name, family, inputs_of, {}, collections)


def get_summary_description(node_def):
    """The ``SummaryDescription`` stored (as JSON) in the ``description`` attribute of the
    ``NodeDef`` of a ``TensorSummary`` op; ``ValueError`` for a node of any other op (the
    ``TensorSummaryV2`` ops `tensor_summary` makes included, as in TensorFlow)."""
    if node_def.op != "TensorSummary":
        raise ValueError(f"Can't get_summary_description on {node_def.op}")
    from google.protobuf import json_format

    description = protos().SummaryDescription()
    json_format.Parse(node_def.attr["description"].s.decode("utf-8"), description)
    return description


# The collection of TensorFlow 2's summary ops (tf.summary.write and the ops built on it).
_SUMMARY_V2_COLLECTION = "_SUMMARY_V2"


def all_v2_summary_ops():
    """The TensorFlow 2 style summary ops of the default graph (its ``_SUMMARY_V2``
    collection); the TF1 ops of this module (`scalar`, `tensor_summary`, ...) are not among
    them.  None when executing eagerly."""
    graph = get_default_graph()
    if graph._eager:
        return None
    return graph.get_collection(_SUMMARY_V2_COLLECTION)


def summary_iterator(path):
    """The ``Event`` protos of the event file ``path``, in order (``tf.train.summary_iterator``):
    its TFRecords, each checked by its CRCs (a damaged file raises ``DataLossError``)."""
    from ..framework.tfrecord import tf_record_iterator

    event_class = protos().Event
    for record in tf_record_iterator(path):
        yield event_class.FromString(bytes(record))


# -- merging ---------------------------------------------------------------------------------------
def _infer_merge_summary(op):
    if not op.inputs:
        raise ValueError("merge needs at least one summary")
    for i, t in enumerate(op.inputs):
        check_dtype(t.dtype, _STRING, f"Input 'inputs[{i}]' of '{op.type}'")
    return [(_dtypes.string, TensorShape([]))]


def _merge_summary_kernel(attrs):
    def merge_summary(*inputs):
        merged = protos().Summary()
        tags = set()
        for serialized in (s for array in inputs for s in array.reshape(-1)):
            try:
                summary = protos().Summary.FromString(serialized)
            except Exception:  # protobuf's DecodeError, whichever implementation raises it
                raise InvalidArgumentError(
                    None, None, "Could not parse one of the summary inputs"
                ) from None
            for value in summary.value:
                if value.tag in tags:
                    raise InvalidArgumentError(
                        None, None, f"Duplicate tag {value.tag} found in summary inputs"
                    )
                tags.add(value.tag)
                merged.value.append(value)
        return _serialized(merged)

    return merge_summary


define_op("MergeSummary", _infer_merge_summary, _merge_summary_kernel)


def merge(inputs, collections=None, name: Optional[str] = None) -> Tensor:
    """One summary holding the values of all of ``inputs``; a tag found twice is an error when
    it runs, as in TensorFlow."""
    protos()
    graph = get_default_graph()
    with graph.name_scope(name or "Merge"):
        tensors = [convert_to_tensor(x) for x in inputs]
        summary = apply_op("MergeSummary", tensors, {}, None, graph).outputs[0]
    for key in collections or []:
        graph.add_to_collection(key, summary)
    return summary


def merge_all(key: str = GraphKeys.SUMMARIES, scope=None, name: Optional[str] = None):
    """``merge`` of every summary in the collection ``key`` (optionally only those whose
    names match ``scope``), or ``None`` when there is none."""
    summaries = get_default_graph().get_collection(key, scope=scope)
    if not summaries:
        return None
    return merge(summaries, name=name)


# -- writing event files ---------------------------------------------------------------------------
def _summary_proto(summary):
    """A ``Summary`` from what ``add_summary`` takes: the bytes a summary op returned, or a
    ``Summary`` proto (tensorboardX's, or TensorFlow's, which has the same fields)."""
    if isinstance(summary, np.ndarray) and summary.dtype == object and summary.shape == ():
        summary = summary[()]
    if isinstance(summary, bytes):
        return protos().Summary.FromString(summary)
    if hasattr(summary, "SerializeToString"):
        return protos().Summary.FromString(summary.SerializeToString())
    raise TypeError(
        f"add_summary takes a serialized Summary (the value of a summary op) or a Summary "
        f"proto, got {type(summary).__name__}"
    )


def _run_metadata_proto(run_metadata):
    """TensorFlow's ``RunMetadata`` of a `dataflow.RunMetadata`: one ``NodeExecStats`` per op
    that ran, on the host device, with times in microseconds since the first op started."""
    proto = protos().RunMetadata()
    device = proto.step_stats.dev_stats.add(device="/job:localhost/replica:0/task:0/device:CPU:0")
    stats = list(run_metadata.step_stats)
    origin = min((s.start for s in stats), default=0.0)
    threads: dict = {}
    for s in stats:
        start = int(round((s.start - origin) * 1e6))
        duration = max(int(round((s.end - s.start) * 1e6)), 0)
        device.node_stats.add(
            node_name=s.node_name,
            all_start_micros=start,
            op_start_rel_micros=0,
            op_end_rel_micros=duration,
            all_end_rel_micros=duration,
            timeline_label=f"{s.node_name} = {s.op_type}()",
            thread_id=threads.setdefault(s.thread, len(threads)),
        )
    return proto


class _EventFile:
    """One event file, opened exclusively under a name no other writer has: TensorFlow's
    ``events.out.tfevents.<second>.<host>.<pid>.<count><suffix>``.  The name alone would do
    in one process; opening with ``"xb"`` (and trying the next count when the name is taken)
    keeps a writer of another process, or one on another host sharing the directory, from
    emptying a file that is in use.  Records are TFRecords: the length, its masked CRC-32C,
    the serialized ``Event``, its masked CRC-32C."""

    def __init__(self, logdir: str, suffix: str):
        self._protos = protos()
        second = int(time.time())
        host = socket.gethostname()
        while True:
            name = f"events.out.tfevents.{second:010d}.{host}.{os.getpid()}.{next(_file_numbers)}"
            try:
                self._file = open(os.path.join(logdir, name + suffix), "xb")  # noqa: SIM115
                break
            except FileExistsError:
                continue
        self._lock = threading.Lock()
        self.write_event(self._protos.Event(wall_time=time.time(), file_version="brain.Event:2"))

    def write_event(self, event) -> None:
        data = event.SerializeToString()
        header = struct.pack("<Q", len(data))
        crc = self._protos.masked_crc32c
        record = header + struct.pack("<I", crc(header)) + data + struct.pack("<I", crc(data))
        with self._lock:
            self._file.write(record)

    def flush(self) -> None:
        with self._lock:
            self._file.flush()
            os.fsync(self._file.fileno())

    def close(self) -> None:
        self.flush()
        with self._lock:
            self._file.close()


class FileWriter:
    """Writes summaries, the graph and run metadata to an event file in ``logdir``, for
    TensorBoard.  Mirrors ``tf.compat.v1.summary.FileWriter``.

    Events are written in order by a background thread, at most ``max_queue`` waiting (an add
    blocks while the queue is full), and the file is flushed every ``flush_secs`` seconds;
    ``flush`` returns when every event added before it is on disk, ``close`` writes every
    event added before it, flushes and closes the file (``reopen`` starts a new one in the
    same directory).  ``graph`` (or ``graph_def``) is written at once, as `add_graph` does.
    Each writer has a file of its own (`_EventFile`), whatever other writers of the
    directory, in this process or another, opened in the same second.

    As in TensorFlow, an event added once the writer is closed is dropped with a warning;
    so is one whose add was still waiting for room in the queue when ``close`` began.
    """

    def __init__(
        self,
        logdir,
        graph=None,
        max_queue: int = 10,
        flush_secs: float = 120,
        graph_def=None,
        filename_suffix: Optional[str] = None,
        session=None,
    ):
        self._protos = protos()
        self._logdir = str(logdir)
        self._max_queue = max_queue
        self._flush_secs = flush_secs
        self._filename_suffix = filename_suffix or ""
        # Guards the queue and the counts below; notified whenever any of them changes.
        self._changed = threading.Condition()
        self._closed = True
        self.reopen()
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)

    # -- the writing thread --------------------------------------------------------------------
    def reopen(self) -> None:
        """Opens a new event file in the same directory after `close`; does nothing while the
        writer is open."""
        with self._changed:
            if not self._closed:
                return
            os.makedirs(self._logdir, exist_ok=True)
            self._file = _EventFile(self._logdir, self._filename_suffix)
            self._pending: collections.deque = collections.deque()
            self._added = 0  # events accepted into the queue
            self._written = 0  # of those, events the thread has written (or failed to)
            self._failure: Optional[BaseException] = None
            self._closed = False
            self._thread = threading.Thread(
                target=self._write_events, name=f"FileWriter({self._logdir})", daemon=True
            )
            self._thread.start()

    def _write_events(self) -> None:
        """The writing thread: writes the queued events in order, flushing every
        ``flush_secs``, until the writer is closed and the queue is empty."""
        next_flush = time.monotonic() + self._flush_secs
        while True:
            with self._changed:
                while not self._pending and not self._closed:
                    remaining = next_flush - time.monotonic()
                    if remaining <= 0:
                        break
                    self._changed.wait(remaining)
                if not self._pending and self._closed:
                    return
                event = self._pending.popleft() if self._pending else None
                self._changed.notify_all()  # room in the queue
            try:
                if event is not None:
                    self._file.write_event(event)
                if time.monotonic() >= next_flush:
                    self._file.flush()
                    next_flush = time.monotonic() + self._flush_secs
            except BaseException as e:  # reported by the next flush or close
                self._failure = e
            finally:
                if event is not None:
                    with self._changed:
                        self._written += 1
                        self._changed.notify_all()

    def _check_failure(self) -> None:
        failure, self._failure = self._failure, None
        if failure is not None:
            raise OSError(f"writing events to {self._logdir} failed: {failure}") from failure

    def get_logdir(self) -> str:
        """The directory the event file is written in."""
        return self._logdir

    def add_event(self, event) -> None:
        """Adds an ``Event`` proto to the file; waits while ``max_queue`` events wait to be
        written.  Once the writer is closed it is dropped, with TensorFlow's warning."""
        with self._changed:
            while not self._closed and 0 < self._max_queue <= len(self._pending):
                self._changed.wait()
            if not self._closed:
                self._pending.append(event)
                self._added += 1
                self._changed.notify_all()
                return
        _warn_closed()

    def flush(self) -> None:
        """Returns when every event added so far is written and flushed to disk."""
        with self._changed:
            if self._closed:
                return
            added = self._added
            while self._written < added and self._thread.is_alive():
                self._changed.wait()
        self._file.flush()
        self._check_failure()

    def close(self) -> None:
        """Writes every event added so far, stops the writing thread, flushes and closes the
        file.  Adds waiting for room in the queue meanwhile are dropped (see the class)."""
        with self._changed:
            if self._closed:
                return
            self._closed = True
            self._changed.notify_all()
        self._thread.join()
        self._file.close()
        self._check_failure()

    def __enter__(self) -> FileWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- events --------------------------------------------------------------------------------
    def _event(self, global_step=None, **fields):
        event = self._protos.Event(wall_time=time.time(), **fields)
        if global_step is not None:
            event.step = int(global_step)
        return event

    def add_summary(self, summary, global_step=None) -> None:
        """Adds a summary: the value a summary op returned from a run (``bytes``), or a
        ``Summary`` proto.  ``global_step`` is the step TensorBoard plots it at."""
        self.add_event(self._event(global_step, summary=_summary_proto(summary)))

    def add_session_log(self, session_log, global_step=None) -> None:
        """Adds a ``SessionLog`` proto (``START`` tells TensorBoard to drop later steps)."""
        log = self._protos.SessionLog.FromString(session_log.SerializeToString())
        self.add_event(self._event(global_step, session_log=log))

    def add_graph(self, graph=None, global_step=None, graph_def=None) -> None:
        """Adds ``graph`` (a `Graph`) or ``graph_def`` (a ``GraphDef``) for TensorBoard's
        graph tab, as TensorFlow's ``GraphDef`` (`dataflow.io.export_graph_def`)."""
        from .graph_def import export_graph_def

        if graph is not None and graph_def is not None:
            raise ValueError("Please pass only graph, or graph_def (deprecated), but not both.")
        if graph is None and graph_def is None:
            raise ValueError("add_graph needs a graph or a graph_def")
        if graph is not None:
            # Every op is drawn, those outside the op set shared with TensorFlow by type only.
            graph_def = export_graph_def(graph, for_display=True)
        serialized = graph_def if isinstance(graph_def, bytes) else graph_def.SerializeToString()
        self.add_event(self._event(global_step, graph_def=serialized))

    def add_run_metadata(self, run_metadata, tag: str, global_step=None) -> None:
        """Adds the statistics of one run (a ``RunMetadata`` filled by ``Session.run``) under
        ``tag``: TensorBoard's graph tab shows each op's compute time for it."""
        proto = _run_metadata_proto(run_metadata)
        tagged = self._protos.TaggedRunMetadata(
            tag=str(tag), run_metadata=proto.SerializeToString()
        )
        self.add_event(self._event(global_step, tagged_run_metadata=tagged))


def _warn_closed() -> None:
    warnings.warn(
        "Attempting to use a closed FileWriter. The operation will be a noop unless the "
        "FileWriter is explicitly reopened.",
        stacklevel=3,
    )


_file_numbers = itertools.count()


class FileWriterCache:
    """One `FileWriter` per directory, shared by whoever asks for it (as TensorFlow's)."""

    _writers: dict = {}
    _lock = threading.Lock()

    @staticmethod
    def get(logdir) -> FileWriter:
        with FileWriterCache._lock:
            writer = FileWriterCache._writers.get(str(logdir))
            if writer is None:
                writer = FileWriterCache._writers[str(logdir)] = FileWriter(logdir)
            return writer

    @staticmethod
    def clear() -> None:
        """Closes and forgets every cached writer."""
        with FileWriterCache._lock:
            for writer in FileWriterCache._writers.values():
                writer.close()
            FileWriterCache._writers.clear()


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import NotDifferentiable  # noqa: E402

for _type in (
    "ScalarSummary HistogramSummary ImageSummary AudioSummaryV2 TensorSummaryV2 MergeSummary"
).split():
    NotDifferentiable(_type)


def __getattr__(name: str):
    """TensorFlow's summary protocol buffer messages (``df.summary.Summary``, ``Event``,
    ``SessionLog``, ``TaggedRunMetadata``), from the optional tensorboardX."""
    if name in ("Event", "SessionLog", "Summary", "SummaryDescription", "TaggedRunMetadata"):
        return getattr(protos(), name)
    raise AttributeError(f"module 'dataflow.summary' has no attribute '{name}'")
