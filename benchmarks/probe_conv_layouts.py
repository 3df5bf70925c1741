"""The generic ``Conv`` kernel on channels-first data, as it runs now and by the channels-last
path (move the channels last, convolve, move them back), over every convolution of ONNX's
light models: the time of all of one model's convolutions, the two paths timed in turn in the
same rounds (`harness.paired_median_times`), one intra-op thread.

    python benchmarks/probe_conv_layouts.py
    python benchmarks/probe_conv_layouts.py --models shufflenet,squeezenet --repeats 9

The inputs are the convolutions' own, taken from one run of the imported model (fed as
``bench_interchange.py`` feeds it, batch 1); both paths' outputs are checked to agree.
"""

from __future__ import annotations

# First, before numpy is imported: importing harness pins BLAS threads.
from harness import describe_machine, paired_median_times

# isort: split
import argparse
import sys

import numpy as np
from bench_interchange import LIGHT_MODELS, light_model


def convolutions(name: str) -> list:
    """``(attrs, input, filter)`` of every Conv of light model ``name`` at batch 1."""
    import dataflow as df

    model, feeds, _ = light_model(name, 1)
    graph = df.Graph()
    with graph.as_default():
        imported = df.onnx.import_model(model.SerializeToString())
    ops = [op for op in graph.get_operations() if op.type == "Conv"]
    with df.Session(graph=graph) as sess:
        values = sess.run(
            [[op.inputs[0], op.inputs[1]] for op in ops],
            {imported.inputs[k]: v for k, v in feeds.items()},
        )
    return [(dict(op.attrs, intra_op_threads=1), x, f) for op, (x, f) in zip(ops, values)]


def main(argv=None) -> int:
    from dataflow.ops import conv_geometry

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(LIGHT_MODELS))
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    print(describe_machine(args.repeats, intra_op_threads=1))
    print(f"{'model':14} {'convs':>5} {'channels last':>13} {'as they lie':>11} {'ratio':>6}")
    for name in args.models.split(","):
        cases = convolutions(name)

        def channels_last(cases=cases):
            outputs = []
            for attrs, x, f in cases:
                attrs = dict(attrs, data_format="CHANNELS_LAST")
                y = conv_geometry._conv_kernel_last(np.moveaxis(x, 1, -1), f, attrs)
                outputs.append(np.ascontiguousarray(np.moveaxis(y, -1, 1)))
            return outputs

        def channels_first(cases=cases):
            return [conv_geometry._conv_kernel_first(x, f, attrs) for attrs, x, f in cases]

        for a, b in zip(channels_last(), channels_first()):
            np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-4)
        last, first = paired_median_times(channels_last, channels_first, repeats=args.repeats)
        print(
            f"{name:14} {len(cases):5d} {last * 1e3:13.2f} {first * 1e3:11.2f} {first / last:6.2f}",
            flush=True,
        )
    print("(ms for all of a model's convolutions; ratio: as they lie / channels last)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
