"""The framework: what a graph is made of, and the registries the layers above fill in.

Holds `Graph`, `Operation` and `Tensor` (`graph`), dtypes, shapes and specs, devices, errors,
`nest`, the op registry (`op_registry`: an op type's definition, inference and kernel), the
gradient registry (`gradient_registry`), source locations (`traceback_utils`), the
default-session stack (`session_stack`), the composite tensors (`SparseTensor`,
`RaggedTensor`, `IndexedSlices`), random seeds, resource containers, the platform's files
(`gfile`, `tfrecord`, `logging`, protocol buffers), and the intra-op threads that large kernels
share their blocks of work with (`intra_op`, which also holds BLAS to one thread meanwhile),
and the C allocator's thresholds, tuned at import so large arrays are reused (`memory`).

Layer: framework, the lowest of `dataflow`.  It may import `executor` and nothing else of the
project.

Invariant: no op, no Session, no picture lives here.  A higher layer that the framework needs
registers itself at import: the op modules their tensor conversions and gradients, the
client the default session (`session_stack`), `render` the picture of a graph
(`graph.register_svg_drawer`), tracing and the data layer their type specs.  Because
``import dataflow`` imports every layer, every registration is in place before user code runs.
"""
