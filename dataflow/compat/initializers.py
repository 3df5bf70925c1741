"""``df.initializers``: TensorFlow 1.x's ``tf.initializers`` names for the initializers of
`dataflow.ops.init_ops` and the variables' initializer ops."""

from ..ops.init_ops import Constant as constant
from ..ops.init_ops import GlorotNormal as glorot_normal
from ..ops.init_ops import GlorotUniform as glorot_uniform
from ..ops.init_ops import Identity as identity
from ..ops.init_ops import Ones as ones
from ..ops.init_ops import Orthogonal as orthogonal
from ..ops.init_ops import RandomNormal as random_normal
from ..ops.init_ops import RandomUniform as random_uniform
from ..ops.init_ops import TruncatedNormal as truncated_normal
from ..ops.init_ops import UniformUnitScaling as uniform_unit_scaling
from ..ops.init_ops import VarianceScaling as variance_scaling
from ..ops.init_ops import Zeros as zeros
from ..ops.init_ops import he_normal, he_uniform, lecun_normal, lecun_uniform
from ..ops.variables import global_variables_initializer as global_variables
from ..ops.variables import local_variables_initializer as local_variables
from ..ops.variables import variables_initializer as variables
from .legacy import tables_initializer

__all__ = [
    "constant",
    "global_variables",
    "glorot_normal",
    "glorot_uniform",
    "he_normal",
    "he_uniform",
    "identity",
    "lecun_normal",
    "lecun_uniform",
    "local_variables",
    "ones",
    "orthogonal",
    "random_normal",
    "random_uniform",
    "tables_initializer",
    "truncated_normal",
    "uniform_unit_scaling",
    "variables",
    "variance_scaling",
    "zeros",
]
