"""The workloads of `bench_training` in PyTorch, as its users write them: ``torch.nn`` modules
(NCHW convolutions, ``nn.LSTM``), ``CrossEntropyLoss`` and ``torch.optim.Adam``, eagerly and
under ``torch.compile`` (the model compiled; the optimizer's step stays eager, as PyTorch's
tutorials write it).

The weights come from `bench_training`'s file, in TensorFlow's layouts, and are converted here
so that each model computes the same function as TensorFlow's: filters HWIO -> OIHW, dense
weights transposed, the dense layer after LeNet's flatten reordered for NCHW
(`training_workloads.torch_fc1_rows`), the LSTM's gates reordered with the forget bias folded
in (`training_workloads.lstm_ifgo`; the second bias PyTorch's LSTM has is held at zero, not
trained, so that the cell has one bias as elsewhere), and TensorFlow's SAME padding of a strided 3x3
convolution (one row and column after, none before) made explicit.  Batch norm is
``BatchNorm2d`` in training mode with TensorFlow's epsilon; it also updates running
statistics, which the other frameworks' steps do not (a few elementwise ops).  PyTorch keeps
its default threads (one per core).
"""

from __future__ import annotations

import os

import numpy as np
import training_workloads as w


def try_import_torch():
    try:
        import torch

        torch.set_num_threads(os.cpu_count())  # PyTorch's default, whatever the environment says
        return torch
    except Exception:  # not installed, or unusable here
        return None


def _models(torch):
    """The module classes, made once ``torch`` is imported."""
    nn = torch.nn
    functional = torch.nn.functional

    def linear(weight, bias):
        layer = nn.Linear(*weight.shape)
        with torch.no_grad():
            layer.weight.copy_(torch.from_numpy(np.ascontiguousarray(weight.T)))
            layer.bias.copy_(torch.from_numpy(bias))
        return layer

    def conv(filters, stride=1, bias=None):
        height, _, cin, cout = filters.shape
        padding = height // 2 if stride == 1 else 0
        layer = nn.Conv2d(cin, cout, height, stride, padding, bias=bias is not None)
        with torch.no_grad():
            layer.weight.copy_(
                torch.from_numpy(np.ascontiguousarray(filters.transpose(3, 2, 0, 1)))
            )
            if bias is not None:
                layer.bias.copy_(torch.from_numpy(bias))
        return layer

    class MLP(nn.Module):
        def __init__(self, a):
            super().__init__()
            self.layers = nn.Sequential(
                linear(a["w1"], a["w1_b"]),
                nn.ReLU(),
                linear(a["w2"], a["w2_b"]),
                nn.ReLU(),
                linear(a["w3"], a["w3_b"]),
            )

        def forward(self, x):
            return self.layers(x)

    class LeNet(nn.Module):
        def __init__(self, a):
            super().__init__()
            self.conv1 = conv(a["conv1"], bias=a["conv1_b"])
            self.conv2 = conv(a["conv2"], bias=a["conv2_b"])
            self.fc1 = linear(w.torch_fc1_rows(a["fc1"], 7, 7, 64), a["fc1_b"])
            self.fc2 = linear(a["fc2"], a["fc2_b"])

        def forward(self, x):
            x = functional.max_pool2d(torch.relu(self.conv1(x)), 2)
            x = functional.max_pool2d(torch.relu(self.conv2(x)), 2)
            x = torch.relu(self.fc1(torch.flatten(x, 1)))
            return self.fc2(x)

    def norm(a, name):
        layer = nn.BatchNorm2d(a[name + "_gamma"].shape[0], eps=w.BN_EPSILON)
        with torch.no_grad():
            layer.weight.copy_(torch.from_numpy(a[name + "_gamma"]))
            layer.bias.copy_(torch.from_numpy(a[name + "_beta"]))
        return layer

    class Block(nn.Module):
        def __init__(self, a, k, stride):
            super().__init__()
            name = f"block{k}"
            self.stride = stride
            self.conv_a, self.norm_a = conv(a[name + "_a"], stride), norm(a, name + "_a")
            self.conv_b, self.norm_b = conv(a[name + "_b"]), norm(a, name + "_b")
            self.skip = conv(a[name + "_skip"], stride) if name + "_skip" in a else None

        def forward(self, x):
            # TensorFlow's SAME for a strided 3x3: pad one after, none before.
            padded = functional.pad(x, (0, 1, 0, 1)) if self.stride != 1 else x
            inner = torch.relu(self.norm_a(self.conv_a(padded)))
            inner = self.norm_b(self.conv_b(inner))
            return torch.relu(inner + (self.skip(x) if self.skip is not None else x))

    class ResNet(nn.Module):
        def __init__(self, a):
            super().__init__()
            self.stem, self.stem_norm = conv(a["stem"]), norm(a, "stem")
            self.blocks = nn.Sequential(
                *(Block(a, k, stride) for k, (_, _, stride) in enumerate(w.RESNET_BLOCKS))
            )
            self.fc = linear(a["fc"], a["fc_b"])

        def forward(self, x):
            x = self.blocks(torch.relu(self.stem_norm(self.stem(x))))
            return self.fc(x.mean(dim=(2, 3)))

    def lstm_weights(a):
        kernel, bias = w.lstm_ifgo(a["kernel"], a["bias"])
        inputs = w.RNN_INPUTS
        return (
            torch.from_numpy(np.ascontiguousarray(kernel[:inputs].T)),
            torch.from_numpy(np.ascontiguousarray(kernel[inputs:].T)),
            torch.from_numpy(bias),
        )

    class LSTM(nn.Module):
        """``nn.LSTM`` (batch first), the last hidden state to a dense layer."""

        def __init__(self, a):
            super().__init__()
            self.lstm = nn.LSTM(w.RNN_INPUTS, w.RNN_HIDDEN, batch_first=True)
            weight_ih, weight_hh, bias = lstm_weights(a)
            with torch.no_grad():
                self.lstm.weight_ih_l0.copy_(weight_ih)
                self.lstm.weight_hh_l0.copy_(weight_hh)
                self.lstm.bias_ih_l0.copy_(bias)
                self.lstm.bias_hh_l0.zero_()
            self.lstm.bias_hh_l0.requires_grad_(False)  # one bias, as the other frameworks
            self.out = linear(a["out"], a["out_b"])

        def forward(self, x):
            _, (h, _) = self.lstm(x)
            return self.out(h[0])

    class LoopRNN(nn.Module):
        """The same LSTM by hand: a Python loop over the time steps of one ``LSTMCell``."""

        def __init__(self, a):
            super().__init__()
            self.cell = nn.LSTMCell(w.RNN_INPUTS, w.RNN_HIDDEN)
            weight_ih, weight_hh, bias = lstm_weights(a)
            with torch.no_grad():
                self.cell.weight_ih.copy_(weight_ih)
                self.cell.weight_hh.copy_(weight_hh)
                self.cell.bias_ih.copy_(bias)
                self.cell.bias_hh.zero_()
            self.cell.bias_hh.requires_grad_(False)  # one bias, as the other frameworks
            self.out = linear(a["out"], a["out_b"])

        def forward(self, x):
            h = x.new_zeros(x.shape[0], w.RNN_HIDDEN)
            c = x.new_zeros(x.shape[0], w.RNN_HIDDEN)
            for t in range(x.shape[1]):
                h, c = self.cell(x[:, t], (h, c))
            return self.out(h)

    return {
        "mlp": MLP,
        "mlp-tf2": MLP,
        "lenet": LeNet,
        "resnet": ResNet,
        "lstm": LSTM,
        "rnn-while": LoopRNN,
    }


def torch_cases(torch) -> dict:
    """`harness.Partner`'s cases: ``eager <workload>`` and ``compiled <workload>`` make a
    training step of the workload from a file of arrays; ``losses`` gives the losses of the
    first steps of a new model."""
    models = _models(torch)

    def make(workload: str, path: str, compiled: bool = False):
        arrays = w.read_arrays(path)
        model = models[workload](arrays)
        optimizer = torch.optim.Adam(model.parameters(), lr=w.LEARNING_RATE, eps=w.EPSILON)
        x = torch.from_numpy(arrays["x"])
        if x.dim() == 4:
            x = x.permute(0, 3, 1, 2).contiguous()  # NHWC -> NCHW, once
        labels = torch.from_numpy(arrays["labels"].astype(np.int64))
        loss_of = torch.nn.CrossEntropyLoss()
        forward = torch.compile(model) if compiled else model

        def step():
            optimizer.zero_grad()
            loss = loss_of(forward(x), labels)
            loss.backward()
            optimizer.step()
            return float(loss)

        return step

    def losses(workload: str, path: str, steps: int, compiled: bool = False):
        step = make(workload, path, compiled)
        return [step() for _ in range(steps)]

    return {
        **w.cases_per_workload("eager", make),
        **w.cases_per_workload("compiled", lambda workload, path: make(workload, path, True)),
        "losses": losses,
    }
