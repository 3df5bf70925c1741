"""The protocol buffers of TensorBoard's files, from the optional package ``tensorboardX``.

Summaries, event files and ``GraphDef`` need TensorFlow's protos (``Summary``, ``Event``,
``GraphDef``, ``NodeDef``, ``AttrValue``, ``TensorProto``) and the TFRecord framing of event
files.  ``tensorboardX`` ships both (its protos are TensorFlow's, with the same field numbers,
so what it writes is what TensorBoard and TensorFlow read), and needs only ``protobuf`` and
``numpy``; it is the extra ``dataflow[tensorboard]``.  ``import dataflow`` never imports it:
`protos` does, the first time a summary, a writer or a ``GraphDef`` is made, and names the
extra when it is missing.

``RunMetadata`` (for ``FileWriter.add_run_metadata``) is not among tensorboardX's protos; the
few messages of it that TensorBoard's graph tab reads (the per-op times of ``StepStats``) are
declared here from TensorFlow's ``step_stats.proto`` and ``config.proto``, with the same field
numbers, and built by protobuf's own message factory.
"""

from __future__ import annotations

import functools
from types import SimpleNamespace

INSTALL_HINT = 'pip install "dataflow[tensorboard]"'


class MissingExtraError(ImportError):
    """A summary, event file or GraphDef was asked for without the ``tensorboard`` extra."""


@functools.cache
def protos() -> SimpleNamespace:
    """The proto modules and message classes, imported on first use."""
    try:
        from tensorboardX.proto import (
            attr_value_pb2,
            event_pb2,
            graph_pb2,
            node_def_pb2,
            summary_pb2,
            tensor_pb2,
            tensor_shape_pb2,
            types_pb2,
            versions_pb2,
        )
        from tensorboardX.record_writer import masked_crc32c
    except ImportError as e:
        raise MissingExtraError(
            "Summaries, event files and GraphDef need the optional package tensorboardX, which "
            f"is not installed ({e}); install it with: {INSTALL_HINT}"
        ) from None
    return SimpleNamespace(
        masked_crc32c=masked_crc32c,
        AttrValue=attr_value_pb2.AttrValue,
        Event=event_pb2.Event,
        SessionLog=event_pb2.SessionLog,
        TaggedRunMetadata=event_pb2.TaggedRunMetadata,
        NameAttrList=attr_value_pb2.NameAttrList,
        SummaryDescription=summary_pb2.SummaryDescription,
        GraphDef=graph_pb2.GraphDef,
        NodeDef=node_def_pb2.NodeDef,
        Summary=summary_pb2.Summary,
        SummaryMetadata=summary_pb2.SummaryMetadata,
        HistogramProto=summary_pb2.HistogramProto,
        TensorProto=tensor_pb2.TensorProto,
        TensorShapeProto=tensor_shape_pb2.TensorShapeProto,
        DataType=types_pb2.DataType,
        VersionDef=versions_pb2.VersionDef,
        RunMetadata=_run_metadata_class(),
    )


# TensorFlow's field numbers: NodeExecStats, DeviceStepStats and StepStats in
# core/framework/step_stats.proto, RunMetadata.step_stats in core/protobuf/config.proto.
_RUN_METADATA_MESSAGES = {
    "NodeExecStats": [
        ("node_name", 1, "string"),
        ("all_start_micros", 2, "int64"),
        ("op_start_rel_micros", 3, "int64"),
        ("op_end_rel_micros", 4, "int64"),
        ("all_end_rel_micros", 5, "int64"),
        ("timeline_label", 8, "string"),
        ("thread_id", 10, "uint32"),
    ],
    "DeviceStepStats": [("device", 1, "string"), ("node_stats", 2, "repeated NodeExecStats")],
    "StepStats": [("dev_stats", 1, "repeated DeviceStepStats")],
    "RunMetadata": [("step_stats", 1, "StepStats")],
}


def _run_metadata_class():
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    label = descriptor_pb2.FieldDescriptorProto
    scalar_types = {
        "string": label.TYPE_STRING,
        "int64": label.TYPE_INT64,
        "uint32": label.TYPE_UINT32,
    }
    package = "dataflow.tensorboard"
    file = descriptor_pb2.FileDescriptorProto(
        name="dataflow/tensorboard/run_metadata.proto", package=package, syntax="proto3"
    )
    for message_name, fields in _RUN_METADATA_MESSAGES.items():
        message = file.message_type.add(name=message_name)
        for field_name, number, kind in fields:
            repeated = kind.startswith("repeated ")
            kind = kind.removeprefix("repeated ")
            field = message.field.add(name=field_name, number=number)
            field.label = label.LABEL_REPEATED if repeated else label.LABEL_OPTIONAL
            if kind in scalar_types:
                field.type = scalar_types[kind]
            else:
                field.type = label.TYPE_MESSAGE
                field.type_name = f".{package}.{kind}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    descriptor = pool.FindMessageTypeByName(f"{package}.RunMetadata")
    return message_factory.GetMessageClass(descriptor)
