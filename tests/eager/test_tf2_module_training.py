"""A model written the TensorFlow 2 way end to end: a df.Module, a GradientTape and an
optimizer inside a df.function, and an object-based checkpoint of the module and optimizer.

What TensorFlow 2 guarantees and these tests state: variables are found through the module's
attributes (lists, dicts, nested modules), one trace serves every step, and a training run
restored from a checkpoint (model and optimizer slots) goes on exactly as the run that was
never interrupted.
"""

import numpy as np

import dataflow as df


class Dense(df.Module):
    def __init__(self, n_in, n_out, activation=None, seed=0, name=None):
        super().__init__(name=name)
        rng = np.random.default_rng(seed)
        self.w = df.Variable(rng.normal(size=(n_in, n_out)).astype(np.float32) * 0.5, name="w")
        self.b = df.Variable(np.zeros(n_out, np.float32), name="b")
        self.activation = activation

    @df.Module.with_name_scope
    def __call__(self, x):
        y = df.matmul(x, self.w) + self.b
        return self.activation(y) if self.activation else y


class Classifier(df.Module):
    def __init__(self):
        super().__init__(name="classifier")
        self.layers = [Dense(4, 8, df.nn.relu, seed=1), Dense(8, 3, seed=2)]
        self.extra = {"scale": df.Variable(1.0, name="scale", trainable=False)}

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x * self.extra["scale"]


DATA = np.random.default_rng(3).normal(size=(16, 4)).astype(np.float32)
LABELS = (np.arange(16) % 3).astype(np.int32)


def trainer(model, optimizer):
    @df.function
    def step(x, labels):
        with df.GradientTape() as tape:
            loss = df.reduce_mean(
                df.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=model(x))
            )
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return step


def test_the_module_finds_its_variables_through_lists_dicts_and_submodules(eager):
    model = Classifier()
    assert [type(m).__name__ for m in model.submodules] == ["Dense", "Dense"]
    assert len(model.variables) == 5
    assert len(model.trainable_variables) == 4  # the scale is not trainable


def test_training_in_a_function_traces_once_and_lowers_the_loss(eager):
    model = Classifier()
    step = trainer(model, df.train.AdamOptimizer(0.05))
    losses = [float(step(DATA, LABELS)) for _ in range(30)]
    assert step.experimental_get_tracing_count() == 1
    assert losses[-1] < losses[0] * 0.5


def test_a_run_restored_from_a_checkpoint_goes_on_as_the_uninterrupted_run(eager, tmp_path):
    model, optimizer = Classifier(), df.train.AdamOptimizer(0.05)
    step = trainer(model, optimizer)
    checkpoint = df.train.Checkpoint(model=model, optimizer=optimizer)
    manager = df.train.CheckpointManager(checkpoint, str(tmp_path), max_to_keep=2)
    for _ in range(5):
        step(DATA, LABELS)
    manager.save()
    uninterrupted = [float(step(DATA, LABELS)) for _ in range(5)]

    fresh_model, fresh_optimizer = Classifier(), df.train.AdamOptimizer(0.05)
    fresh_step = trainer(fresh_model, fresh_optimizer)
    fresh_step(DATA, LABELS)  # makes the optimizer's slots, which the restore then overwrites
    status = df.train.Checkpoint(model=fresh_model, optimizer=fresh_optimizer).restore(
        manager.latest_checkpoint
    )
    status.assert_existing_objects_matched()
    resumed = [float(fresh_step(DATA, LABELS)) for _ in range(5)]
    np.testing.assert_allclose(resumed, uninterrupted, rtol=1e-6)


def test_a_module_without_variables_yet_can_be_checkpointed(eager, tmp_path):
    class Lazy(df.Module):
        def __init__(self):
            super().__init__()
            self.v = None

    checkpoint = df.train.Checkpoint(model=Lazy(), step=df.Variable(3))
    path = checkpoint.save(str(tmp_path / "ckpt"))
    restored = df.train.Checkpoint(model=Lazy(), step=df.Variable(0))
    restored.restore(path)
    assert int(restored.step.numpy()) == 3
