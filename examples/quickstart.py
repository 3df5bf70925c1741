"""Quickstart: build a graph with a cond and a while_loop, run it, and render it.

Run with ``python examples/quickstart.py``; it prints the results and writes
``quickstart.png`` (drawn by Graphviz's ``dot`` when it is installed, else by the Graphviz that
dataflow installs).
"""

import dataflow as df

x = df.placeholder(df.float32, shape=[], name="x")
n = df.placeholder(df.int32, shape=[], name="n")

# In-graph if/else: only the taken branch runs.
y = df.cond(x > 0, lambda: x * 2.0, lambda: -x, name="abs_times_two")

# In-graph loop: multiply y by 1.5, n times.
i0 = df.constant(0, name="i0")
_, z = df.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, v * 1.5), [i0, y], name="grow")

with df.Session() as sess:
    for feed in ({x: 3.0, n: 4}, {x: -2.0, n: 0}):
        result = sess.run({"y": y, "z": z}, feed_dict=feed)
        print(f"x={feed[x]:5.1f} n={feed[n]}  ->  y={result['y']:.3f}  z={result['z']:.4f}")

df.render(z, "quickstart.png")
print("wrote quickstart.png")
