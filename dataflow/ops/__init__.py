"""Every op of the library, one module per family: its definition, shape and dtype
inference, kernel and gradient, registered with the framework's registries at import.
Variables (`variables`, `ref_variables`, `resource_variable_ops`), initializers and
variable scopes are here too: they are made of ops.

Layer: ops, just above the framework; it may import `executor` and the framework, never
control flow (`primitives`), autodiff, the Session or anything above.

Invariant: one place per op.  An op type is defined once (`op_registry.define_op`); graph
mode, eager mode, tracing and the compiler all run that definition.
"""
