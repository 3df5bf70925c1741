"""TensorFlow's protocol buffer messages of ``tf.train`` and a few top-level ones, built with
protobuf's own message factory from declarations of their fields (TensorFlow's field numbers
and types), so what they serialize is byte for byte what TensorFlow's do, and the other way
round:

- ``tf.train.Example`` and its parts (``feature.proto``, ``example.proto``): ``BytesList``,
  ``FloatList``, ``Int64List``, ``Feature``, ``Features``, ``FeatureList``, ``FeatureLists``,
  ``Example``, ``SequenceExample``: what ``tf.io.parse_example`` reads and TFRecord files hold;
- ``SaverDef`` (``saver.proto``), ``JobDef`` and ``ClusterDef`` (``cluster.proto``);
- ``TensorInfo`` (``meta_graph.proto``) and ``LogMessage`` (``event.proto``).

They need protobuf, which comes with the ``tensorboard`` extra
(`dataflow.framework.tensorboard_protos`): `messages` builds them the first time one is asked for
and names the extra when it is missing.  Their full names are under the package ``dataflow``
(``dataflow.Example``), so that they never clash with TensorFlow's own if both are loaded into one
process.
"""

from __future__ import annotations

import functools
from types import SimpleNamespace

from .tensorboard_protos import INSTALL_HINT, MissingExtraError

_PACKAGE = "dataflow"

# message: [(field, number, type)]; a type is a scalar type, a message or enum of this file,
# "repeated T", "map<K,V>", or "oneof:<group> T".  ``packed`` is proto3's default.
_ENUMS = {
    "SaverDef.CheckpointFormatVersion": [("LEGACY", 0), ("V1", 1), ("V2", 2)],
    "LogMessage.Level": [
        ("UNKNOWN", 0),
        ("DEBUGGING", 10),
        ("INFO", 20),
        ("WARN", 30),
        ("ERROR", 40),
        ("FATAL", 50),
    ],
}
_MESSAGES = {
    # tensorflow/core/example/feature.proto
    "BytesList": [("value", 1, "repeated bytes")],
    "FloatList": [("value", 1, "repeated float")],
    "Int64List": [("value", 1, "repeated int64")],
    "Feature": [
        ("bytes_list", 1, "oneof:kind BytesList"),
        ("float_list", 2, "oneof:kind FloatList"),
        ("int64_list", 3, "oneof:kind Int64List"),
    ],
    "Features": [("feature", 1, "map<string,Feature>")],
    "FeatureList": [("feature", 1, "repeated Feature")],
    "FeatureLists": [("feature_list", 1, "map<string,FeatureList>")],
    # tensorflow/core/example/example.proto
    "Example": [("features", 1, "Features")],
    "SequenceExample": [("context", 1, "Features"), ("feature_lists", 2, "FeatureLists")],
    # tensorflow/core/protobuf/saver.proto
    "SaverDef": [
        ("filename_tensor_name", 1, "string"),
        ("save_tensor_name", 2, "string"),
        ("restore_op_name", 3, "string"),
        ("max_to_keep", 4, "int32"),
        ("sharded", 5, "bool"),
        ("keep_checkpoint_every_n_hours", 6, "float"),
        ("version", 7, "SaverDef.CheckpointFormatVersion"),
    ],
    # tensorflow/core/protobuf/cluster.proto
    "JobDef": [("name", 1, "string"), ("tasks", 2, "map<int32,string>")],
    "ClusterDef": [("job", 1, "repeated JobDef")],
    # tensorflow/core/util/event.proto
    "LogMessage": [("level", 1, "LogMessage.Level"), ("message", 2, "string")],
}

_SCALARS = {
    "double": 1,
    "float": 2,
    "int64": 3,
    "uint64": 4,
    "int32": 5,
    "bool": 8,
    "string": 9,
    "bytes": 12,
    "uint32": 13,
}
_TYPE_MESSAGE = 11
_TYPE_ENUM = 14


@functools.cache
def messages() -> SimpleNamespace:
    """The message classes, built on first use."""
    try:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    except ImportError as e:
        raise MissingExtraError(
            f"TensorFlow's protocol buffer messages need the package protobuf, which is not "
            f"installed ({e}); install it with: {INSTALL_HINT}"
        ) from None
    field_proto = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(
        name="dataflow/train_protos.proto", package=_PACKAGE, syntax="proto3"
    )
    declared = {}
    for name in _MESSAGES:
        outer, _, inner = name.partition(".")
        declared[name] = file.message_type.add(name=name)
    for enum_name, values in _ENUMS.items():
        outer, inner = enum_name.split(".")
        enum = declared[outer].enum_type.add(name=inner)
        for value_name, number in values:
            enum.value.add(name=value_name, number=number)

    def set_type(field, kind: str, owner) -> None:
        if kind in _SCALARS:
            field.type = _SCALARS[kind]
        elif kind in _ENUMS:
            field.type = _TYPE_ENUM
            field.type_name = f".{_PACKAGE}.{kind}"
        else:
            field.type = _TYPE_MESSAGE
            field.type_name = f".{_PACKAGE}.{kind}"

    for name, fields in _MESSAGES.items():
        message = declared[name]
        oneofs: dict[str, int] = {}
        for field_name, number, kind in fields:
            field = message.field.add(name=field_name, number=number)
            field.label = field_proto.LABEL_OPTIONAL
            if kind.startswith("repeated "):
                field.label = field_proto.LABEL_REPEATED
                set_type(field, kind.removeprefix("repeated "), message)
            elif kind.startswith("map<"):
                key, value = kind[4:-1].split(",")
                entry_name = "".join(p.capitalize() for p in field_name.split("_")) + "Entry"
                entry = message.nested_type.add(name=entry_name)
                entry.options.map_entry = True
                for entry_field, entry_number, entry_kind in (("key", 1, key), ("value", 2, value)):
                    f = entry.field.add(name=entry_field, number=entry_number)
                    f.label = field_proto.LABEL_OPTIONAL
                    set_type(f, entry_kind, entry)
                field.label = field_proto.LABEL_REPEATED
                field.type = _TYPE_MESSAGE
                field.type_name = f".{_PACKAGE}.{name}.{entry_name}"
            elif kind.startswith("oneof:"):
                group, kind = kind[len("oneof:") :].split(" ")
                if group not in oneofs:
                    oneofs[group] = len(message.oneof_decl)
                    message.oneof_decl.add(name=group)
                field.oneof_index = oneofs[group]
                set_type(field, kind, message)
            else:
                set_type(field, kind, message)
    pool = descriptor_pool.Default()
    try:
        pool.Add(file)
    except TypeError:  # already added (a reload of this module)
        pass
    return SimpleNamespace(
        **{
            name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.{name}"))
            for name in _MESSAGES
        }
    )


TRAIN_NAMES = (
    "BytesList",
    "FloatList",
    "Int64List",
    "Feature",
    "Features",
    "FeatureList",
    "FeatureLists",
    "Example",
    "SequenceExample",
    "SaverDef",
    "JobDef",
    "ClusterDef",
)
TOP_LEVEL_NAMES = ("LogMessage",)
