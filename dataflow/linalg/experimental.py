"""``df.linalg.experimental``: TensorFlow's experimental linear algebra (the conjugate
gradient method on a `LinearOperator`)."""

from .linear_operator_structured import conjugate_gradient

__all__ = ["conjugate_gradient"]
