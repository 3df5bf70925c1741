"""``df.io`` and the files a graph lives in: the ``.dfg`` format (`dfg`), TensorFlow's GraphDef
(`graph_def`), frozen graphs (`graph_util`), ONNX models (`onnx`, reached as ``df.onnx``), event
files (`summary`), checkpoints (`saver`, `checkpoint_utils`, `checkpoint_management`) and meta
graphs (`meta_graph`).

Layer: io, above the client (a checkpoint is written by running a graph) and the eager front
ends; below distribute, nn and training.  It may import the framework, ops, primitives,
autodiff, passes, client and eager; nothing above.

Invariant: a file from elsewhere is untrusted.  Reading one never runs code from it (JSON, NPY
without pickle, protocol buffers parsed as data) and every size it declares is bounded before
anything is allocated; a damaged or hostile file raises an error that names the file and the
part at fault.

This package is also TensorFlow's ``tf.io`` namespace: the names of `dfg` and TensorFlow's file,
parsing and codec ops below.
"""

from .dfg import *  # noqa: F403
from .dfg import (  # noqa: F401
    MAX_JSON_BYTES,
    MAX_JSON_DEPTH,
    MAX_JSON_VALUES,
    MAX_SCOPE_BYTES,
    document_to_graph,
    graph_from_bytes,
    import_graph_bytes,
)
from .dfg_format import MAX_OUTPUTS  # noqa: F401
from .dfg_save import (  # noqa: F401
    STALE_TEMPORARY_SECONDS,
    document_bytes,
    graph_to_bytes,
    graph_to_document,
)

# isort: split
# Names ``df.io`` has offered since the format's module also held its imports; kept so that
# code reaching them here still works.
from executor.program import NodeKind  # noqa: F401

from ..framework.array_bounds import (  # noqa: F401
    MAX_ARRAY_BYTES,
    MAX_RANK,
    MAX_SHAPE_ELEMENTS,
    array_bytes,
)
from ..framework.graph import (  # noqa: F401
    DATA_TEXT_ATTRS,
    Graph,
    Operation,
    SourceLocation,
    Tensor,
    control_character,
)
from ..framework.graph_keys import GraphKeys  # noqa: F401
from ..framework.graph_walk import gc_paused, topological_order  # noqa: F401
from ..framework.op_registry import get_op_def  # noqa: F401
from ..framework.tensor_shape import TensorShape  # noqa: F401
from .dfg import __all__ as _dfg_all  # noqa: F401

# isort: split
# -- TensorFlow's GraphDef (dataflow/io/graph_def.py; needs the "tensorboard" extra) ---------------
from .graph_def import (  # noqa: E402, F401
    GraphDefError,
    export_graph_def,
    import_graph_def,
    load_graph_def,
    write_graph,
)

# isort: split
# -- TensorFlow's file functions and queues under ``tf.io`` ---------------------------------------
from ..framework.gfile import io_gfile as gfile  # noqa: E402, F401
from ..ops.queue_ops import (  # noqa: E402, F401
    PaddingFIFOQueue,
    PriorityQueue,
    QueueBase,
    RandomShuffleQueue,
)
from ..ops.string_ops import decode_raw  # noqa: E402, F401

# isort: split
# -- file ops, tf.train.Example parsing and TFRecord files -----------------------------------------
from ..framework.tfrecord import (  # noqa: E402, F401
    TFRecordCompressionType,
    TFRecordOptions,
    TFRecordWriter,
    tf_record_iterator,
)
from ..ops.csv_ops import decode_csv  # noqa: E402, F401
from ..ops.io_ops import (  # noqa: E402, F401
    decode_base64,
    encode_base64,
    match_filenames_once,
    matching_files,
    read_file,
    write_file,
)
from ..ops.parsing_ops import (  # noqa: E402, F401
    FixedLenFeature,
    FixedLenSequenceFeature,
    RaggedFeature,
    SparseFeature,
    VarLenFeature,
    decode_compressed,
    decode_json_example,
    parse_example,
    parse_sequence_example,
    parse_single_example,
    parse_single_sequence_example,
)
from ..ops.tensor_proto_ops import (  # noqa: E402, F401
    deserialize_many_sparse,
    parse_tensor,
    serialize_many_sparse,
    serialize_sparse,
    serialize_tensor,
)

# isort: split
# -- image files -----------------------------------------------------------------------------------
from ..ops.image_codec_ops import (  # noqa: E402, F401
    decode_and_crop_jpeg,
    decode_bmp,
    decode_gif,
    decode_image,
    decode_jpeg,
    decode_png,
    decode_webp,
    encode_jpeg,
    encode_png,
    extract_jpeg_shape,
    is_jpeg,
)
from ..ops.proto_ops import decode_proto, encode_proto  # noqa: E402, F401
