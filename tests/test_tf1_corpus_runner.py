"""The TF1 corpus runner's own logic (``benchmarks/run_tf1_corpus.py``), without the corpus:
which programs are in scope, what the import and step rewrites change (and that they change
nothing else), how figures are read and compared, the MNIST stand-in, and that a run leaves no
files behind and cannot hang."""

from __future__ import annotations

import importlib.util
import pathlib
import sys
import textwrap

import numpy as np
import pytest

BENCHMARKS = pathlib.Path(__file__).resolve().parent.parent / "benchmarks"


def load_module(name: str, path: pathlib.Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


runner = load_module("run_tf1_corpus", BENCHMARKS / "run_tf1_corpus.py")
standin = load_module("mnist_standin", BENCHMARKS / "tf1_corpus" / "mnist_standin.py")

PROGRAM = textwrap.dedent(
    '''\
    """A classic: see https://example.org/mnist for the data."""
    from __future__ import print_function
    import tensorflow as tf
    from tensorflow.examples.tutorials.mnist import input_data
    mnist = input_data.read_data_sets("/tmp/data/", one_hot=True)

    num_steps = 100000  # train long
    batch_size = 128
    display_step = 1000
    def main():
        max_steps = 20
        for i in range(20000):
            pass
        for i in range(100):
            pass
    '''
)


# --- imports -------------------------------------------------------------------------------


def test_tensorflow_import_becomes_dataflow_on_the_same_line():
    rewritten, notes = runner.rewrite_imports(PROGRAM, "dataflow")
    lines = rewritten.split("\n")
    assert lines[2] == "import dataflow as tf"
    assert lines[3] == "import mnist_standin as input_data"
    assert len(lines) == len(PROGRAM.split("\n"))
    assert len(notes) == 2


def test_every_other_line_is_left_as_written():
    rewritten, _ = runner.rewrite_imports(PROGRAM, "dataflow")
    changed = [
        number
        for number, (old, new) in enumerate(zip(PROGRAM.split("\n"), rewritten.split("\n")))
        if old != new
    ]
    assert changed == [2, 3]


def test_compat_v1_import_and_indented_import_are_rewritten():
    source = "import tensorflow.compat.v1 as tf\nif True:\n    import tensorflow as tf  # again\n"
    rewritten, _ = runner.rewrite_imports(source, "dataflow")
    assert rewritten == "import dataflow as tf\nif True:\n    import dataflow as tf\n"


def test_tensorflow_target_gets_compat_v1_in_graph_mode_on_one_line():
    rewritten, _ = runner.rewrite_imports("import tensorflow as tf\nx = 1\n", "tensorflow")
    assert rewritten == ("import tensorflow.compat.v1 as tf; tf.disable_v2_behavior()\nx = 1\n")


def test_commented_and_unrelated_imports_are_untouched():
    source = "# import tensorflow as tf\nimport tensorflow_datasets as tfds\nimport numpy as np\n"
    rewritten, notes = runner.rewrite_imports(source, "dataflow")
    assert rewritten == source
    assert notes == []


def test_unknown_target_is_refused():
    with pytest.raises(ValueError, match="unknown target"):
        runner.rewrite_imports(PROGRAM, "jax")


# --- step counts ---------------------------------------------------------------------------


def test_step_assignments_beyond_their_cap_are_capped_and_reported():
    shrunk, notes = runner.shrink_steps(PROGRAM)
    lines = shrunk.split("\n")
    assert lines[6] == "num_steps = 500  # train long"
    assert notes[0] == "line 7: num_steps = 100000 -> 500"


def test_step_counts_within_their_cap_and_other_names_stay():
    shrunk, notes = runner.shrink_steps(PROGRAM)
    lines = shrunk.split("\n")
    assert lines[7] == "batch_size = 128"
    assert lines[8] == "display_step = 1000"
    assert lines[10] == "    max_steps = 20"
    assert not any("max_steps" in note or "batch_size" in note for note in notes)


def test_literal_for_range_beyond_the_cap_is_capped_and_short_loops_stay():
    shrunk, notes = runner.shrink_steps(PROGRAM)
    lines = shrunk.split("\n")
    assert lines[11] == f"    for i in range({runner.RANGE_CAP}):"
    assert lines[13] == "    for i in range(100):"
    assert notes[-1] == f"line 12: range(20000) -> range({runner.RANGE_CAP})"
    assert len(lines) == len(PROGRAM.split("\n"))


# --- scope ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("from tensorflow.contrib import rnn", "uses tf.contrib"),
        ("x = tf.contrib.layers.flatten(x)", "uses tf.contrib"),
        ("est = tf.estimator.Estimator(model_fn)", "uses tf.estimator"),
        ("tf.enable_eager_execution()", "uses eager execution"),
        ("model = tf.keras.Sequential()", "uses tf.keras"),
        ("import keras", "uses tf.keras"),
        ("import urllib", "downloads data other than MNIST"),
        ("urllib.request.urlretrieve(url, 'text8.zip')", "downloads data other than MNIST"),
    ],
)
def test_programs_needing_more_than_tf1_graph_mode_are_out_of_scope(line, reason):
    assert runner.classify(f"import tensorflow as tf\n{line}\n") == (False, reason)


def test_mentions_in_comments_and_docstrings_do_not_count():
    source = (
        '"""Compare with tf.contrib.learn; data from urllib."""\n'
        "import tensorflow as tf  # not tf.keras\n"
        "# from tensorflow.contrib import rnn\n"
        "x = tf.constant('see tf.estimator docs')\n"
    )
    assert runner.classify(source) == (True, "in scope")
    assert runner.classify(PROGRAM) == (True, "in scope")


# --- figures -------------------------------------------------------------------------------


def test_the_last_match_of_the_pattern_is_the_figure():
    output = "Step 1, Loss: 9.5\nStep 1000, Loss: 3.25\nDone\n"
    assert runner.extract_figure(output, "loss", r"Loss: ([-0-9.e]+)") == 3.25


def test_without_a_pattern_the_last_accuracy_line_is_the_figure():
    output = "Accuracy: 0.5\nTesting Accuracy: 0.875\n정확도: 91.5\n"
    assert runner.extract_figure(output, None, None) == 91.5
    assert runner.extract_figure("no figure here\n", None, None) is None


def test_accuracy_classes_are_within_five_points_or_both_high():
    assert runner.same_class("accuracy", 0.91, 0.87)
    assert not runner.same_class("accuracy", 0.80, 0.86)
    assert runner.same_class("accuracy", 0.90, 0.99)
    assert runner.same_class("accuracy", 93.0, 0.95)  # a percentage against a fraction
    assert runner.same_class("accuracy", None, 0.9) is None


def test_loss_classes_are_within_a_factor_of_two():
    assert runner.same_class("loss", 1.0, 1.9)
    assert not runner.same_class("loss", 1.0, 2.5)
    assert runner.same_class("loss", 0.001, 0.009)
    assert not runner.same_class("loss", float("nan"), 1.0)


def test_exact_and_text_figures_must_be_equal():
    assert runner.same_class("exact", 12.0, 12.0)
    assert not runner.same_class("exact", 12.0, 12.5)
    assert runner.same_class("text", "Hello", "Hello")
    assert runner.same_class("value", 2.0, 2.1)
    assert not runner.same_class("value", 2.0, 2.5)


# --- failures ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("exception", "name"),
    [
        ("AttributeError: module 'dataflow' has no attribute 'random_normal'", "tf.random_normal"),
        ("AttributeError: module 'dataflow.nn' has no attribute 'dropout'", "tf.nn.dropout"),
        ("AttributeError: 'Variable' object has no attribute 'op'", "Variable.op"),
        (
            "TypeError: placeholder() got an unexpected keyword argument 'shape'",
            "placeholder(shape=)",
        ),
        ("ValueError: shapes do not match", None),
    ],
)
def test_a_failure_names_the_tf1_name_it_misses(exception, name):
    assert runner.missing_name(exception) == name


def test_a_failure_is_located_at_the_programs_own_line():
    stderr = textwrap.dedent(
        """\
        Traceback (most recent call last):
          File "/tmp/work/prog.py", line 2, in <module>
            y = tf.mul(a, b)
          File "/site-packages/dataflow/__init__.py", line 9, in __getattr__
        AttributeError: module 'dataflow' has no attribute 'mul'
        """
    )
    exception, line, missing = runner.describe_error(
        stderr, "prog.py", ["a = 1", "y = tf.mul(a, b)"]
    )
    assert exception == "AttributeError: module 'dataflow' has no attribute 'mul'"
    assert line == "line 2: y = tf.mul(a, b)"
    assert missing == "tf.mul"


# --- runs ----------------------------------------------------------------------------------


def plain_program(name: str) -> object:
    return runner.Program(repo="owner/repo", path=f"dir/{name}.py", commit="0" * 40)


def test_a_run_reads_the_figure_and_leaves_no_file_behind(tmp_path):
    marker = f"/tmp/tf1corpus-test-{tmp_path.name}"
    source = (
        "import os\n"
        f"open({marker!r}, 'w').write('x')\n"
        "open('checkpoint', 'w').write('x')\n"
        "print('Accuracy:', 0.75)\n"
        "print('cwd', os.getcwd())\n"
    )
    private_tmp = runner.private_tmp_supported()
    result = runner.run_program(
        plain_program("writes"), source, "dataflow", sys.executable, 60, private_tmp, ""
    )
    assert result.finished, result.error
    assert result.figure == 0.75
    if private_tmp:
        assert not pathlib.Path(marker).exists()
    else:
        pathlib.Path(marker).unlink()


def test_a_failing_run_reports_its_exception_and_line():
    source = "x = 1\nraise KeyError('no such thing')\n"
    result = runner.run_program(
        plain_program("fails"), source, "dataflow", sys.executable, 60, False, ""
    )
    assert not result.finished
    assert result.error == "KeyError: 'no such thing'"
    assert result.error_line == "line 2: raise KeyError('no such thing')"


def test_a_run_that_hangs_is_killed_at_its_timeout():
    source = "import time\nprint('Accuracy: 0.5', flush=True)\ntime.sleep(600)\n"
    result = runner.run_program(
        plain_program("hangs"), source, "dataflow", sys.executable, 1.0, False, ""
    )
    assert result.timed_out and not result.finished
    assert result.seconds < 30
    assert result.figure == 0.5


# --- the MNIST stand-in --------------------------------------------------------------------


@pytest.fixture(scope="module")
def mnist():
    return standin.read_data_sets("/nonexistent/", one_hot=True)


def test_standin_images_are_flat_28x28_floats_in_the_unit_interval(mnist):
    assert mnist.train.images.shape == (standin.TRAIN_SIZE, 784)
    assert mnist.train.images.dtype == np.float32
    assert mnist.train.images.min() == 0.0 and mnist.train.images.max() == 1.0
    assert mnist.validation.num_examples == standin.VALIDATION_SIZE
    assert mnist.test.images.shape == (standin.TEST_SIZE, 784)


def test_standin_labels_are_one_hot_floats_or_class_numbers(mnist):
    assert mnist.train.labels.shape == (standin.TRAIN_SIZE, 10)
    assert mnist.train.labels.dtype == np.float64
    assert np.all(mnist.train.labels.sum(axis=1) == 1.0)
    numbered = standin.read_data_sets(None, reshape=False)
    assert numbered.train.labels.dtype == np.uint8
    assert numbered.train.images.shape == (standin.TRAIN_SIZE, 28, 28, 1)
    np.testing.assert_array_equal(np.argmax(mnist.train.labels, axis=1), numbered.train.labels)


def test_standin_splits_do_not_share_examples(mnist):
    train = {row.tobytes() for row in mnist.train.images}
    assert not any(row.tobytes() in train for row in mnist.test.images)


def test_next_batch_goes_through_every_example_once_per_epoch():
    data = standin.read_data_sets(None).train
    seen = np.concatenate([data.next_batch(100)[1] for _ in range(13)])[: data.num_examples]
    assert data.epochs_completed == 1
    np.testing.assert_array_equal(np.sort(seen), np.sort(data.labels))


def test_next_batch_returns_the_size_asked_even_beyond_an_epoch():
    data = standin.read_data_sets(None).train
    images, labels = data.next_batch(5000)
    assert images.shape == (5000, 784) and labels.shape == (5000,)
    assert data.epochs_completed == 5000 // data.num_examples


def test_batches_are_the_same_in_every_run():
    first = standin.read_data_sets(None).train.next_batch(64)[1]
    second = standin.read_data_sets(None).train.next_batch(64)[1]
    np.testing.assert_array_equal(first, second)
    unshuffled = standin.read_data_sets(None).train
    np.testing.assert_array_equal(
        unshuffled.next_batch(64, shuffle=False)[1], unshuffled.labels[:64]
    )


# --- what the programs use -----------------------------------------------------------------


def test_the_tf_names_a_program_uses_are_read_from_its_code():
    source = (
        "import tensorflow as tf  # tf.comment_only\n"
        "x = tf.nn.dropout(tf.placeholder(tf.float32), 0.5)\n"
        "s = 'tf.in_a_string'\n"
        "y = other.tf.attribute\n"
    )
    assert runner.tf_names(source) == {"tf.nn.dropout", "tf.placeholder", "tf.float32"}


def test_the_first_missing_prefix_of_a_name_is_reported():
    import types

    fake_tf = types.ModuleType("fake_tf")
    fake_tf.nn = types.ModuleType("fake_tf.nn")
    fake_tf.nn.relu = lambda x: x
    fake_tf.Variable = type("Variable", (), {})
    assert runner.first_missing("tf.nn.relu", fake_tf) is None
    assert runner.first_missing("tf.nn.dropout", fake_tf) == "tf.nn.dropout"
    assert runner.first_missing("tf.summary.scalar", fake_tf) == "tf.summary"
    assert runner.first_missing("tf.Variable.anything", fake_tf) is None
