"""The names of the standard collections of a graph (TensorFlow's ``GraphKeys``): variables,
trainable variables, losses, summaries, queue runners, update ops and the rest."""

from __future__ import annotations


class GraphKeys:
    """The names of the standard collections (``Graph.get_collection``), as in TensorFlow."""

    GLOBAL_VARIABLES = "variables"
    VARIABLES = GLOBAL_VARIABLES
    TRAINABLE_VARIABLES = "trainable_variables"
    LOCAL_VARIABLES = "local_variables"
    MODEL_VARIABLES = "model_variables"
    METRIC_VARIABLES = "metric_variables"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    CONCATENATED_VARIABLES = "concatenated_variables"
    TRAINABLE_RESOURCE_VARIABLES = "trainable_resource_variables"
    REGULARIZATION_LOSSES = "regularization_losses"
    UPDATE_OPS = "update_ops"
    TRAIN_OP = "train_op"
    GLOBAL_STEP = "global_step"
    QUEUE_RUNNERS = "queue_runners"
    EVAL_STEP = "eval_step"
    LOSSES = "losses"
    SUMMARIES = "summaries"
    SUMMARY_OP = "summary_op"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    TABLE_INITIALIZERS = "table_initializer"
    ASSET_FILEPATHS = "asset_filepaths"
    RESOURCES = "resources"
    LOCAL_RESOURCES = "local_resources"
    SAVERS = "savers"
    SAVEABLE_OBJECTS = "saveable_objects"
    ACTIVATIONS = "activations"
    WEIGHTS = "weights"
    BIASES = "biases"
    COND_CONTEXT = "cond_context"
    WHILE_CONTEXT = "while_context"
    # Not in TensorFlow: every op a `gradients` call added (rendering draws them as backward).
    BACKWARD_OPS = "backward_ops"
