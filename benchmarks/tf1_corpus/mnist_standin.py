"""A local stand-in for ``tensorflow.examples.tutorials.mnist.input_data``: scikit-learn's
handwritten digits, upsampled to MNIST's 28x28 and split like MNIST, so that classic TF1
programs run without downloading anything.

The corpus runner (``benchmarks/run_tf1_corpus.py``) rewrites
``from tensorflow.examples.tutorials.mnist import input_data`` to
``import mnist_standin as input_data``; the same module serves the dataflow run and the
TensorFlow run, so both see the same images in the same batches.

What a program reads is what TF1's module gives: ``read_data_sets(dir, one_hot=...)`` returns
``train``, ``validation`` and ``test`` data sets whose ``images`` are float32 in [0, 1] of
shape (N, 784) (or (N, 28, 28, 1) with ``reshape=False``), whose ``labels`` are uint8 class
numbers or float64 one-hot rows, with ``num_examples``, ``epochs_completed`` and
``next_batch(n, shuffle=True)``.  The differences, all because the digits are few (1797, not
70000): the split is 1297 / 100 / 400 instead of 55000 / 5000 / 10000; ``next_batch`` always
returns ``n`` examples, going through as many epochs as that takes, where TF1's returns fewer
when ``n`` exceeds an epoch; and the order is shuffled by a fixed seed, so every run sees the
same batches.  ``dir`` is ignored and nothing is written.
"""

from __future__ import annotations

import collections

import numpy as np

TRAIN_SIZE = 1297
VALIDATION_SIZE = 100
TEST_SIZE = 400
IMAGE_SIDE = 28
SPLIT_SEED = 0

Datasets = collections.namedtuple("Datasets", ["train", "validation", "test"])


def bilinear_matrix(source_size: int, target_size: int) -> np.ndarray:
    """The (target_size, source_size) matrix that resamples a row of pixels bilinearly, the
    first and last pixels kept in place: ``M @ image @ M.T`` resizes a square image."""
    positions = np.linspace(0.0, source_size - 1, target_size)
    lower = np.floor(positions).astype(int)
    upper = np.minimum(lower + 1, source_size - 1)
    upper_weight = positions - lower
    matrix = np.zeros((target_size, source_size))
    rows = np.arange(target_size)
    np.add.at(matrix, (rows, lower), 1.0 - upper_weight)
    np.add.at(matrix, (rows, upper), upper_weight)
    return matrix


def digits_as_mnist() -> tuple[np.ndarray, np.ndarray]:
    """All 1797 digits as (N, 28, 28) float32 images in [0, 1] and (N,) uint8 labels."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    small = digits.images / 16.0  # scikit-learn's pixels are 0..16
    resize = bilinear_matrix(small.shape[1], IMAGE_SIDE)
    images = np.einsum("ij,njk,lk->nil", resize, small, resize)
    return np.clip(images, 0.0, 1.0).astype(np.float32), digits.target.astype(np.uint8)


def dense_to_one_hot(labels: np.ndarray, num_classes: int = 10) -> np.ndarray:
    """Class numbers as float64 one-hot rows, the dtype TF1's reader gives."""
    one_hot = np.zeros((len(labels), num_classes))
    one_hot[np.arange(len(labels)), labels] = 1.0
    return one_hot


class DataSet:
    """One split: its arrays and a cursor that hands out batches epoch after epoch."""

    def __init__(self, images: np.ndarray, labels: np.ndarray, seed: int):
        self._images = images
        self._labels = labels
        self._rng = np.random.RandomState(seed)
        self._order = np.arange(len(images))
        self._position = 0
        self._epochs_completed = 0
        self._shuffled_once = False

    @property
    def images(self) -> np.ndarray:
        return self._images

    @property
    def labels(self) -> np.ndarray:
        return self._labels

    @property
    def num_examples(self) -> int:
        return len(self._images)

    @property
    def epochs_completed(self) -> int:
        return self._epochs_completed

    def next_batch(self, batch_size: int, fake_data: bool = False, shuffle: bool = True):
        """The next ``batch_size`` (images, labels); the order is reshuffled at each epoch
        when ``shuffle`` (as TF1's, from the first batch on)."""
        if fake_data:
            raise ValueError("the MNIST stand-in has no fake data")
        if shuffle and not self._shuffled_once:
            self._order = self._rng.permutation(self.num_examples)
            self._shuffled_once = True
        taken: list[np.ndarray] = []
        wanted = batch_size
        while wanted > 0:
            available = self.num_examples - self._position
            count = min(wanted, available)
            taken.append(self._order[self._position : self._position + count])
            self._position += count
            wanted -= count
            if self._position == self.num_examples:
                self._epochs_completed += 1
                self._position = 0
                if shuffle:
                    self._order = self._rng.permutation(self.num_examples)
        indices = np.concatenate(taken) if taken else np.zeros(0, dtype=int)
        return self._images[indices], self._labels[indices]


def read_data_sets(
    train_dir=None,
    fake_data=False,
    one_hot=False,
    dtype=np.float32,
    reshape=True,
    validation_size=VALIDATION_SIZE,
    seed=None,
    source_url=None,
) -> Datasets:
    """The digits split into train / validation / test, with TF1's arguments (``train_dir``
    and ``source_url`` are ignored: nothing is downloaded or written)."""
    if fake_data:
        raise ValueError("the MNIST stand-in has no fake data")
    images, labels = digits_as_mnist()
    order = np.random.RandomState(SPLIT_SEED).permutation(len(images))
    images, labels = images[order], labels[order]
    if np.dtype(dtype) == np.uint8:
        images = np.round(images * 255.0).astype(np.uint8)
    images = images.reshape(-1, IMAGE_SIDE * IMAGE_SIDE) if reshape else images[..., None]
    targets = dense_to_one_hot(labels) if one_hot else labels
    test_start = len(images) - TEST_SIZE
    train_end = test_start - validation_size
    base_seed = 0 if seed is None else int(seed)
    return Datasets(
        train=DataSet(images[:train_end], targets[:train_end], base_seed + 1),
        validation=DataSet(
            images[train_end:test_start], targets[train_end:test_start], base_seed + 2
        ),
        test=DataSet(images[test_start:], targets[test_start:], base_seed + 3),
    )


def load_mnist(train_dir="MNIST-data"):
    """TF1's other entry point, the same splits with class-number labels."""
    return read_data_sets(train_dir)
