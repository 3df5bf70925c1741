"""The training examples: they learn what they claim, and run as scripts."""

import importlib.util
import pathlib
import shutil
import subprocess
import sys

import pytest

pytest.importorskip("sklearn", reason="the digits example needs scikit-learn (test extra)")

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _run_script(name, *args, cwd):
    return subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=240,
        check=True,
    ).stdout


def test_mlp_reaches_95_percent_on_held_out_digits():
    mlp = _load("train_mlp_digits")
    history = mlp.train(log=lambda line: None)
    assert history.test_accuracy[-1] >= 0.95
    # It learned rather than started there, and the loss kept falling.
    assert history.test_accuracy[0] < history.test_accuracy[-1]
    assert history.train_loss[-1] < 0.2 * history.train_loss[0]
    assert len(history.step_loss) == 10 * 22  # 1347 training images in batches of 64


def test_mlp_split_holds_out_a_quarter_of_the_digits_stratified():
    mlp = _load("train_mlp_digits")
    train_images, test_images, train_labels, test_labels = mlp.load_data()
    assert (len(train_images), len(test_images)) == (1347, 450)
    assert sorted(set(test_labels)) == list(range(10))
    assert train_images.dtype.name == "float32" and train_images.max() <= 1.0


needs_dot = pytest.mark.skipif(
    shutil.which("dot") is None, reason="Graphviz's dot program is not installed"
)


@needs_dot
def test_mlp_script_trains_plots_and_draws_the_step(tmp_path):
    args = ["--epochs", "2", "--plot", "curves.png", "--graph", "step.png"]
    out = _run_script("train_mlp_digits", *args, cwd=tmp_path)
    assert out.count("epoch ") == 2 and "test accuracy:" in out
    assert (tmp_path / "curves.png").read_bytes().startswith(b"\x89PNG")
    assert (tmp_path / "step.png").read_bytes().startswith(b"\x89PNG")
