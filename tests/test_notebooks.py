"""Every notebook under notebooks/ runs top to bottom without an error.

Notebooks that draw graphs draw them with the system's ``dot`` when it is installed and with
the Graphviz installed with dataflow otherwise, so none is skipped for lack of ``dot``.
"""

import dataclasses
import pathlib
import re

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = sorted((pathlib.Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ holds no notebook"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path, tmp_path):
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()
    assert_prints_pinned_values(path.name, notebook)


# -- What the notebooks print, against what their text says ---------------------------------------
#
# A notebook's prose states results: values, iteration counts, gradients, which branch ran, the
# key words of an error.  PINNED lists them per notebook, beside the code cell that prints each.
# `test_notebook_runs` checks them in the outputs of its fresh execution, and
# `test_stored_outputs_show_the_pinned_values` in the outputs saved in the .ipynb, which are what
# a reader sees without running anything.  A change to the runtime that alters what a notebook
# prints fails until the notebook, its prose and this table say the new thing.


@dataclasses.dataclass(frozen=True)
class Near:
    """A number printed where ``text`` has ``{}``, within ``tolerance`` of ``value``: for results
    that depend on the order of floating-point sums (a training run's loss or accuracy)."""

    text: str
    value: float
    tolerance: float


Shown = str | Near


@dataclasses.dataclass(frozen=True)
class Pin:
    """What the one code cell whose source contains ``cell`` prints, and where the prose says so.

    Each of ``shows`` must appear in the cell's printed output (stdout and the cell's value, not
    its pictures): text in which any run of whitespace matches any other, ``…`` stands for any
    text, and which starts and ends at a whitespace boundary (so ``8.0`` does not match
    ``18.0``); or a `Near`.  ``stated``, if given, is the notebook's prose that states the
    values: it must appear in one of its markdown cells."""

    cell: str
    shows: tuple[Shown, ...]
    stated: str = ""


def pin(cell: str, *shows: Shown, stated: str = "") -> Pin:
    return Pin(cell, shows, stated)


PINNED = {
    "01_graphs_and_sessions.ipynb": [
        pin(
            "print(d)",
            'Tensor("a:0", shape=(2, 2), dtype=float32)',
            'Tensor("add:0", shape=(2, 1), dtype=float32)',
            "dtype: <dtype: 'float32'> shape: (2, 1)",
            stated='The name of a tensor is `"<op name>:<output index>"`.',
        ),
        pin(
            "print(graph)",
            "c -> float32(2, 1) = MatMul(a:0, b:0, transpose_a=False, transpose_b=False)",
            "add -> float32(2, 1) = Add(mul:0, add/y:0)",
            stated="one op per line, with the dtype and shape of its outputs and the names of its "
            "inputs",
        ),
        pin(
            "if d[0, 0] > 3.0:",
            "Using the tensor 'Greater:0' as a Python bool is not allowed:",
            "Use df.cond(pred, true_fn, false_fn)",
            stated="The error message points at the in-graph alternative, `df.cond`",
        ),
        pin(
            "print(sess.run(d))",
            "[[ 5.] [11.]]",
            "{'product': array([[2.], [5.]], dtype=float32), 'a and c by name': "
            "[array([[1., 2.], [3., 4.]], dtype=float32), array([[2.], [5.]], dtype=float32)]}",
            stated="the results come back in the same shape",
        ),
        pin(
            "feed_dict={x: np.ones((5, 3))}",
            "(?, 3) (?, 2)",
            "[[2. 5.] [2. 5.]]",
            "35.0",
            stated="A placeholder's shape may leave dimensions unknown (`None`)",
        ),
        pin(
            "for feed in ({}, {x: np.ones((2, 4))}):",
            "InvalidArgumentError -> op 'x' (Placeholder) created at Cell In[…], line 3: "
            "You must feed a value for placeholder tensor",
            "ValueError -> Cannot feed value of shape (2, 4) for Tensor 'x:0', which has shape "
            "(?, 3) (created at Cell In[…], line 3;",
            stated="reported with the placeholder's name and the file and line that created it",
        ),
        pin(
            "feed_dict={y: np.ones((4, 2))}",
            "8.0",
            stated="Here we feed `y` directly, so `x` needs no value and the matmul does not run",
        ),
        pin(
            'print("after three increments:"',
            "before init: op 'counter/read' (ReadVariableOp) created at Cell In[…], line 3: "
            "Attempting to use uninitialized value counter",
            "after three increments: 3",
            stated="A variable must be initialised before it is read.",
        ),
        pin(
            "fetched[1] = 200.0",
            "after editing the fetched copy: [0. 0. 0.]",
            "after editing the fed array: [1. 1. 1.]",
            stated="changing those numpy arrays afterwards never changes the variable",
        ),
        pin(
            "ordered_read = counter.read_value()      # runs after",
            "read control inputs: []",
            "read_1 control inputs: ['update']",
            stated="In the picture the control edge is the dashed one.",
        ),
        pin(
            'print("fetching only the ordered read:"',
            "update returned 1 | plain read: 0 | ordered read: 1",
            "fetching only the ordered read: 2 | the counter is now 2",
            stated="In the same run the ordered read saw the update and the plain read did not.",
        ),
        pin(
            "# the only change: created first",
            "update returned 1 | plain read: 1 | ordered read: 1",
            stated="the same program gives the other answer",
        ),
        pin(
            'same_as_step = df.no_op(name="same_as_step")',
            "step: a NoOp with control inputs ['add_all', 'count']",
            "same_as_step: a NoOp with control inputs ['add_all', 'count']",
            "running the group returns None",
            "total: 10.0 values seen: 4",
            stated="running it runs all of them, and its result is `None`",
        ),
        pin(
            'checked_x = df.identity(x, name="checked_x")',
            "root of [4, 9]: [2. 3.]",
            "scaled, of [4, -9]: [ 8. -18.] (the check did not run)",
            "root of [4, -9]: op 'check/Assert' (Assert) created at Cell In[…], line 4: "
            "assertion failed: [x has a negative entry:] [4 -9]",
            stated="a check that nothing depends on is silently never made",
        ),
        pin(
            'after_doubling = df.identity(x, name="after_doubling")',
            "flag = True: y = 6.0, after_doubling = 3.0",
            "flag = False: Fetched tensors hold no value at the end of the run: "
            "after_doubling (Retval[1] does not have value): … untaken branch",
            "fired dead: ['maybe_double/switch_t', 'maybe_double/doubled/y', "
            "'maybe_double/doubled', 'after_doubling']",
            "running the group with flag = False returns None",
            stated="With `flag = False` the whole true branch fired dead, and so did "
            "`after_doubling`, through its control edge alone",
        ),
    ],
    "02_control_flow.ipynb": [
        pin(
            "calls[branch] += 1",
            "1.0 -> 1.0 2.0 -> 2.0 -3.0 -> 3.0",
            "{'true': 2, 'false': 1}",
            stated="At run time only one side of each Switch is live, so only one branch runs.",
        ),
        pin('name="factorial"', "[1.0, 1.0, 2.0, 6.0, 24.0, 120.0, 720.0]"),
        pin(
            'frame = "summation"',
            "[0, 0, 1, 3, 6, 10] == [0, 0, 1, 3, 6, 10]",
            stated="This loop sums the integers below `n`",
        ),
        pin(
            "wrong = i_body + 1",
            "The graph cannot run: node 'add_2' has inputs from different frames: 'root' (from "
            "node "
            "'Const_2') and 'summation' (from node 'Identity')",
            "add_2 (Add) created at Cell In[…], line 2",
            stated="naming the op and both frames",
        ),
        pin(
            "inside.append(doubled)",
            "Cannot use 'loop/mul' as input to 'add' because 'loop/mul' is in a while loop.",
            "'loop/mul' (created at Cell In[…], line 6) is computed inside while loop 'loop', "
            "and op 'add' (Add, at Cell In[…], line 11) is not in that loop.",
            "Tensor 'loop/mul:0' may not be fed: it lies inside the while loop frame 'loop'",
            stated="Keeping a tensor from the body and using it after the loop is refused while "
            "the graph is built, at the line that does it",
        ),
        pin(
            'name="even_or_odd"',
            "result: 18",
            "iterations per loop instance: {'loop': [5]}",
            "loop/even_or_odd/add loop[iter 0 of root] 0 loop/even_or_odd/sub loop[iter 0 of root] "
            "1 loop/even_or_odd/add loop[iter 0 of root] 2 loop/even_or_odd/sub "
            "loop[iter 0 of root] 3",
            stated="`loop_iterations` says 5 for `n = 4`",
        ),
        pin(
            "for s in metadata.dead_step_stats:",
            "loop/even_or_odd/sub loop[iter 0 of root] 0 loop/even_or_odd/add loop[iter 0 of root] "
            "1 loop/even_or_odd/sub loop[iter 0 of root] 2 loop/even_or_odd/add "
            "loop[iter 0 of root] 3 loop/even_or_odd/add loop[iter 0 of root] 4 "
            "loop/even_or_odd/sub loop[iter 0 of root] 4",
            stated="Each iteration's untaken arithmetic op shows up here, and in iteration 4 both "
            "do",
        ),
        pin(
            "def looping():",
            "5 -1",
            stated="A loop in a branch that is not taken is dead too",
        ),
    ],
    "03_autodiff_and_training.ipynb": [
        pin(
            "forward_ops = len(graph.get_operations())",
            "the gradients are graph tensors: gradients/mul_grad/Mul:0 gradients/loss_grad/Mul_1:0",
            stated="Each forward op has its dual under `gradients/<op name>_grad`",
        ),
        pin(
            'got = sess.run({"loss": loss, "d/dw": grad_w, "d/db": grad_b}, feed)',
            "{'loss': np.float32(6.25), 'd/dw': np.float32(10.0), 'd/db': np.float32(5.0)}",
            "by hand: d/dw = 10.0 d/db = 5.0",
            stated="Calculus tells us `d loss / d w = 2 (prediction - target) x` and "
            "`d loss / d b = 2 (prediction - target)`",
        ),
        pin(
            "inspect.getsource",
            '@RegisterGradient("Square")',
            stated='registered with `@df.RegisterGradient("Square")` next to the op',
        ),
        pin(
            "(grad_bias,) = df.gradients",
            "gradient of the bias: [5. 5. 5.]",
            stated="each bias entry gets gradient 5",
        ),
        pin(
            "backward_muls = sorted(",
            "x = 3.0: dy/dw = 3.0 of those, ran: ['gradients/choose/mul_grad/Mul_1']",
            "x = -3.0: dy/dw = 4.0 of those, ran: ['gradients/choose/Square_grad/Mul_1']",
            "taken out by the graph passes: "
            "{'gradients/choose/Square_grad/Mul': 'fused (elementwise_fusion)'}",
            stated="With `x = -3` it is `2w = 4` and only the false branch's ran.",
        ),
        pin(
            'name="power"',
            "n = 0: y = 1.0000 dy/dx = 0.0000 (n x^(n-1) = 0.0000) iterations per loop: "
            "{'power': [1], 'gradients/power_grad': [1]}",
            "n = 1: y = 1.5000 dy/dx = 1.0000 (n x^(n-1) = 1.0000) iterations per loop: "
            "{'power': [2], 'gradients/power_grad': [2]}",
            "n = 2: y = 2.2500 dy/dx = 3.0000 (n x^(n-1) = 3.0000) iterations per loop: "
            "{'power': [3], 'gradients/power_grad': [3]}",
            "n = 5: y = 7.5938 dy/dx = 25.3125 (n x^(n-1) = 25.3125) iterations per loop: "
            "{'power': [6], 'gradients/power_grad': [6]}",
            stated="the one that ends the loop, as an iteration too: hence `n + 1`). Even `n = 0` "
            "works: neither body runs, and the gradient is 0.",
        ),
        pin(
            "for _ in range(100):",
            Near("w = {}", 2.0, 0.05),
            Near("b = {}", -1.0, 0.05),
            "steps: 100",
            stated="Fitting the line `target = 2x - 1` from noisy points",
        ),
        pin(
            "train_test_split(",
            "train: (1347, 64) test: (450, 64)",
            stated="We hold out a quarter of the images",
        ),
        pin(
            "order_rng = np.random.default_rng(0)",
            "after 220 steps:",
            Near("test accuracy {}%", 97.8, 1.0),
            stated="the network recognizes about 98% of the digits it has never seen",
        ),
        pin(
            '"StackPushV2"',
            "loops in the graph: ['rnn/over_time/LoopCond', "
            "'gradients/rnn/over_time_grad/backward_count/LoopCond']",
            "values the forward loop saves in each iteration (10):",
            "'rnn/over_time/Tanh',",
            "'rnn/over_time/strided_slice',",
            "'rnn/over_time/Identity_1']",
            stated="Three are tensors: the input slice `strided_slice`",
        ),
        pin(
            "copy_last = np.mean(",
            Near("held-out loss: {} before training,", 0.67, 0.05),
            Near("{} after 150 steps;", 0.041, 0.015),
            "copying the last value: 0.2048; noise: 0.0100",
            Near("of the later ones, on average: {}", 0.03, 0.01),
            stated="The held-out loss falls more than tenfold, far below what copying the last "
            "value achieves",
        ),
    ],
    "04_graph_optimization.ipynb": [
        pin(
            'unused = df.exp(x, name="unused")',
            "pruning: 5 -> 5 ops (no change)",
            "8 ops in the graph, 5 needed by y",
            stated="`optimize` (like the Session) starts from a copy of just what the fetches "
            "need, which already leaves `unused` out",
        ),
        pin(
            'name="rotation"',
            "constant_folding: 15 -> 15 ops (folded 7)",
            "pruning: 15 -> 7 ops (removed 8)",
            stated="a whole constant subgraph becomes one constant",
        ),
        pin(
            'name="maybe_dropout"',
            "constant_folding: 12 -> 6 ops (switches with a constant predicate removed 3, "
            "folded 1)",
            "pruning: 6 -> 4 ops (removed 2)",
            stated="The `Merge` that joined the branches is left with one input and disappears "
            "too.",
        ),
        pin(
            "b = -(-a) + 0.0",
            "-0.0 + 0.0 = 0.0 -0.0 * 1.0 = -0.0",
            "arithmetic: 10 -> 7 ops (transposes of transposes combined 1, identity elements "
            "removed 1, double negations removed 1)",
            stated="So `x + 0.0` stays",
        ),
        pin(
            "def normalize(v):",
            "common_subexpression: 13 -> 9 ops (merged 4)",
            stated="one of them is enough",
        ),
        pin(
            'name="accumulate"',
            "loop_invariant_motion: 25 -> 28 ops (ops moved out of loops 2)",
            stated="the pass moves it before the loop and enters its result instead",
        ),
        pin(
            'fused.get_attr("steps")',
            "elementwise_fusion: 23 -> 12 ops (ops fused 12, fused kernels 1)",
            "['Mul', [0, 1], 'mul', 'Cell In[…], line 6']",
            "['Sub', [-1, 9], 'sub_2', 'Cell In[…], line 6']",
            stated="the pass replaces the chain by one `FusedElementwise` op",
        ),
        pin(
            "tracemalloc.start()",
            "passes off … peak 2.00 arrays, first values [-0.41415733 -0.37380445 -0.21063189]",
            "default pipeline … peak 1.00 arrays, first values "
            "[-0.41415733 -0.37380445 -0.21063189]",
            stated="Both pipelines give the same bits.",
        ),
        pin(
            "by_effect = {}",
            "merged (common_subexpression) 6 ops: add_1/y, add_2/y, mul_1/y, mul_2/y, sub_1/y, "
            "sub_2/y",
            "fused (elementwise_fusion) 11 ops: Abs, Abs_1, Abs_2, add, add_1, add_2, mul, mul_1, "
            "mul_2, sub, sub_1",
            "kernels that ran: ['x:0', 'mul/y', 'add/y', 'sub/y', 'sub_2', 'y']",
            stated="which runs under the name of its last op",
        ),
        pin(
            'shared = df.sin(x, name="shared")',
            "inplace: 5 -> 5 ops (ops writing into an input 2)",
            "add writes into the buffer of Cos:0",
            "y writes into the buffer of add:0",
        ),
        pin(
            "inverse = df.pow(k, -1)",
            "elementwise_fusion: 6 -> 4 ops (ops fused 3, fused kernels 1) - ops taken out: "
            "['Abs', 'Pow']",
            "InvalidArgumentError op 'Pow' (Pow) created at Cell In[…], line 4 failed: "
            "ValueError: Integers to negative integer powers are not allowed.",
            "inputs: int32(3,), int32()",
            stated="When the `Pow` step fails inside it, the error still names `Pow`, the line "
            "that built it and its own inputs",
        ),
        pin(
            "print(df.debug.compiled_source(sess, [y, z], {x: 0.0}))",
            "# region scaled/y..z: 6 op(s)",
            "def make(const1, scalar1, k2, np_float32, const3, scalar3, k5, k6, locate):",
            "v2 = scalar1 * in0 if type(in0) is np_float32 else k2(in0, v1) # 'scaled' (Mul) at "
            "'Cell In[…], line 4'",
            "v4 = scalar3 + v2 # 'shifted' (Add) at 'Cell In[…], line 5'",
            "v5 = k5(v4) # 'y' (Square) at 'Cell In[…], line 6'",
            "return (v5, v6,)",
            "y, z = [np.float32(49.0), np.int32(49)]",
            stated="`v4 = scalar3 + v2`: once both operands are known to be numpy scalars",
        ),
        pin(
            'for mode in ("off", "force"):',
            "off first run … ns per op)",
            "force first run … ns per op)",
            "compiling costs the first run about … ms more",
            "same result: True float32 300.5",
            stated="The compiled plan runs the chain several times faster, and the result has the "
            "same bits and the same type (`float32`).",
        ),
        pin(
            "accumulated.assign_add(y",
            "# cond branch: 8 op(s) # region mul/y..Greater: 5 op(s)",
            "update: 9.0 update: 18.0",
            "a run with statistics records every op: ['x:0', 'accumulated', 'mul/y', 'add/y', "
            "'add', 'Greater/y', 'Greater', 'branch/Switch', …]",
            stated="A region and a whole `cond`: the arithmetic before the `cond`",
        ),
    ],
    "05_debugging_static_graphs.ipynb": [
        pin(
            'print("inside the body, step is", step)',
            'inside the body, step is Tensor("sum/step:0", shape=(), dtype=float32)',
            "result: nan",
            stated="The `print` ran once and printed a symbol, not ten numbers; the result is "
            "`nan`",
        ),
        pin(
            "def refuse_three(k):",
            "InvalidArgumentError",
            "op 'count/check' (PyFunc) created at Cell In[…], line 9 in loop 'count', "
            "iteration 3 (frame instance count[iter 0 of root]) failed: "
            "ValueError: iteration 3 is not allowed",
            stated="and inside a loop the iteration",
        ),
        pin(
            "def wait_for_server(v):",
            "DeadlineExceededError after",
            "The run did not finish within timeout_in_ms=200;",
            "Still running: op 'ask_server' (PyFunc) created at Cell In[…], line 10.",
            stated="stops the run at the deadline and names the ops still running",
        ),
        pin(
            'df.debug.add_debug_tensor_watch(options, "sum/gap", 0)',
            "sum[iter 0 of root] 0 7.0 0.1429",
            "sum[iter 0 of root] 6 1.0 1.0000 sum[iter 0 of root] 7 0.0 inf "
            "sum[iter 0 of root] 8 -1.0 -1.0000 sum[iter 0 of root] 9 -2.0 -0.5000",
            stated="Ten values, one per iteration.",
        ),
        pin(
            "report = df.debug.find_inf_or_nan(",
            "The first nan/inf of the run was produced by op 'sum/step' (RealDiv) created at "
            "Cell In[…], line 7 in iteration 7 of frame instance sum[iter 0 of root]",
            "sum/gap:0 float32() min=0 max=0",
            stated="The divisor `sum/gap` was 0 in iteration 7.",
        ),
        pin('name="shrink"', "result: 25.0"),
        pin(
            "trace = df.debug.chrome_trace(run_md)",
            "grow iteration 0 starts at",
            "grow iteration 4 starts at",
            '"name": "grow/double",',
            '"frame": "grow[iter 0 of root]",',
            '"iteration": 0,',
            stated="a second process holds a track per loop instance with a slice per iteration",
        ),
    ],
    "06_tf1_programs.ipynb": [
        pin(
            'mnist = input_data.read_data_sets("MNIST_data")\nprint(',
            "train: (1297, 784) test: (400, 784)",
            stated="split like MNIST into training, validation and test images (1297 / 100 / 400)",
        ),
        pin(
            "def deepnn(x):",
            "trainable variables: ['conv1/Variable:0', 'conv1/Variable_1:0', 'conv2/Variable:0', "
            "'conv2/Variable_1:0', 'fc1/Variable:0', 'fc1/Variable_1:0', 'fc2/Variable:0', "
            "'fc2/Variable_1:0']",
            stated="(`conv1/Variable:0` for the first `tf.Variable` made under the name scope "
            "`conv1`)",
        ),
        pin(
            "train_writer = tf.summary.FileWriter(",
            Near("minibatch loss {} at step 0,", 2.4, 0.15),
            Near("{} at step 199;", 0.3, 0.25),
            Near("test accuracy {}%", 98.0, 1.5),
            stated="recognizes about 98% of the 400 test digits it never trained on",
        ),
        pin(
            "cell = tf.nn.rnn_cell.BasicLSTMCell(num_units)",
            "state: LSTMStateTuple ; variables: ['rnn/basic_lstm_cell/kernel:0', "
            "'rnn/basic_lstm_cell/bias:0', 'W_out:0', 'b_out:0']",
            stated="`rnn/basic_lstm_cell/kernel` and `bias`, and the state is an `LSTMStateTuple`",
        ),
        pin(
            "lstm_sess.run(tf.global_variables_initializer())",
            Near("over the last 20 steps; test accuracy {}%", 94.0, 2.5),
            Near("reading only the top 14 rows: test accuracy {}%", 16.0, 8.0),
            "outputs of a 14-row sequence after row 14: 0.0",
            stated="reaches about 94% on the test digits",
        ),
        pin(
            "events = EventAccumulator(",
            "scalars: ['cross_entropy', 'minibatch_accuracy'] histograms: ['conv1/weights'] "
            "images: ['input/image/0', 'input/image/1', 'input/image/2', 'input/image/3']",
            "the same values as the run fetched: True",
            stated="two scalars at each of the 200 steps, the same values the training loop "
            "fetched",
        ),
        pin(
            "convert_variables_to_constants(sess,",
            "frozen, of which variables: 0",
            stated="replaces every variable by a constant holding its trained value",
        ),
        pin(
            '"--fetch", "prediction"]',
            '{"prediction": [2, 7, 4, 0, 4]}',
            "true labels: [2, 7, 4, 0, 4]",
            stated="the predictions come back as JSON",
        ),
        pin(
            "tf1_while_cond.pb",
            "out for x = [1, 2, 3], n = 4: 6.1666665",
            stated="6.1666665 for `x = [1, 2, 3]`, `n = 4`",
        ),
        pin(
            'name="newton")',
            "read back from newton.pb: [1.4142135 3. 4. ]",
            "predictions read back from digits_cnn.pb: [2, 7, 4, 0, 4]",
            stated="classifies the five digits as the served file did",
        ),
    ],
    "07_static_vs_dynamic.ipynb": [
        pin(
            "broken = df.function(normalise, experimental_graph_breaks=True)",
            "with graph breaks: 1.4353415966033936 eagerly: 1.4353415966033936",
            ".numpy() of a tensor -- `scale = float(df.reduce_max(df.abs(y)).numpy())`",
            stated="`graph_breaks()` reports each cut with the user's line and the reason",
        ),
        pin('print("eager:", step(', "eager: 2.496132 0.83204395"),
        pin(
            "result = step(df.constant(up))",
            "lazy: 2.4961318969726562 after 2 runs",
            stated="the rest is recorded and runs when `float()` asks for the result: two runs",
        ),
        pin(
            "traced = df.function(step, autograph=False)",
            "traced: Using the tensor 'Greater:0' as a Python bool is not allowed",
            stated="the trace fails at once",
        ),
        pin(
            "traced_converted = df.function(step)",
            "converted: 2.496132 0.83204395",
            "['Merge', 'Switch']",
            stated="gives the eager answers for both inputs",
        ),
        pin(
            "print(df.autograph.to_code(step))",
            "y, = ag__.if_stmt(df.reduce_sum(y) > 0, if_true, if_false, (y,))",
        ),
        pin(
            "traced_clip = df.function(clip, autograph=False)",
            "threshold 0.5: traced [0.5 0.5 1. ]",
            "threshold -5: traced [0.5 0.5 1. ] eager [ 0.5 -0.2 1. ] traces: 1",
            stated="it silently keeps clipping at 0.5",
        ),
        pin(
            "clip_converted = df.function(clip_at)",
            "threshold -5.0: converted [ 0.5 -0.2 1. ]",
            "traces: 1",
        ),
        pin(
            "def scale(x, factor):",
            "traces: 6",
            "was traced 6 times; this trace … because argument 'factor' is the Python value 5.0, "
            "was 4.0",
            stated="from the fifth trace on `df.function` warns",
        ),
        pin(
            "def positive_part(x):",
            "UnboundLocalError: 'kept' is defined in only the true branch of the if",
        ),
        pin("chain_recording.plan_reuses", "lazy runs that reused the chain's plan: 15 of 16"),
        pin(
            "item, reports = df.passes.optimize(graph, [chained], [fed])",
            "the chain's graph: 61 ops before the passes, 11 after",
            "elementwise_fusion: 46 -> 11 ops (ops fused 36, fused kernels 1)",
        ),
        pin(
            "def peak_arrays(fn):",
            "graph: peak 2.0 arrays of 8 MB",
            stated="the peak is the input and the result",
        ),
        pin(
            "def bad(x):",
            "lazy: op 'GatherV2' (GatherV2) created at Cell In[…], line 2: gather index 5 is "
            "not in [0, 3)",
        ),
        pin('df.io.save_graph(concrete.graph, "chain.dfg")', "61 ops; same result: True"),
    ],
    "08_partitioning_and_distribution.ipynb": [
        pin(
            "ps_process = subprocess.Popen(",
            "Ray head started",
            "ps serving",
        ),
        pin(
            'server = df.train.Server(cluster, job_name="worker", task_index=0)',
            "weights on /job:ps/task:0 | the product on /job:worker/task:0",
            Near("global step 200, accuracy on the 397 held-out digits {}", 0.88, 0.03),
        ),
        pin(
            "messages = sess._master.last_step_messages",
            "StepMessages(calls=2, replies=2, between_tasks=9, bytes=22104)",
            stated="Seven values cross between the two processes in a step.",
        ),
        pin(
            'print("ps process exit status:", ps_process.wait(timeout=60))',
            "stopped the Ray head",
            "ps process exit status: 0",
        ),
        pin(
            "placement = place(graph, graph.get_operations(), THREE_CPUS)",
            "read ReadVariableOp asked for /device:CPU:0 placed on CPU:2",
            "w2_seen Identity asked for /device:CPU:0 placed on CPU:0",
            stated="The `ReadVariableOp` called `read` asked for `/device:CPU:0` and was placed on "
            "`CPU:2`, with its variable `w2`.",
        ),
        pin(
            "options=df.RunOptions(output_partition_graphs=True), run_metadata=metadata",
            "loss: 0.057600003",
            "CPU:0: 7 ops, sends ['target:0 -> CPU:2', 'w2_seen:0 -> CPU:2', 'x:0 -> CPU:1']",
            "CPU:1: 6 ops, sends ['hidden:0 -> CPU:2']",
            "CPU:2: 10 ops, sends ['read:0 -> CPU:0']",
            stated="Five pairs carry the values",
        ),
        pin(
            "three_devices = steps_for(",
            "steps on one device: [0, 8, 16, 111]",
            "steps on three devices: [0, 8, 16, 111]",
            "the same: True",
        ),
        pin(
            "receives the predicate:",
            "CPU:1 {'Enter': 1, 'Switch': 2, 'NextIteration': 1, 'Merge': 2} receives the "
            "predicate: ['loop/LoopCond:0']",
            "CPU:2 {'Enter': 1, 'Switch': 1, 'NextIteration': 1, 'Merge': 1} receives the "
            "predicate: ['loop/LoopCond:0']",
            stated="`CPU:1` and `CPU:2` each hold only a control loop, one Enter, Merge, Switch "
            "and NextIteration and no Exit, fed `loop/LoopCond:0` through a `_Recv`",
        ),
        pin(
            "class ListeningRendezvous(",
            "CPU:0->CPU:1 loop/LoopCond:0 loop[iter 0 of root]:1",
            "CPU:1->CPU:0 loop/collatz/Merge:0 loop[iter 0 of root]:1 dead",
            "a full key: /job:localhost/replica:0/task:0/device:CPU:0;1;"
            "/job:localhost/replica:0/task:0/device:CPU:1;loop/LoopCond:0;loop[iter 0 of root]:0",
            stated="in iteration 1 the body is dead, and its value travels as dead",
        ),
        pin("per_pair = (split - one) / length", "… us per Send/Recv pair"),
        pin(
            "cluster = df.distribute.RayCluster(",
            "['/job:ps/task:0', '/job:worker/task:0']",
            "w, read by another session of the cluster: [0.6999999 0.40000004 0.09999996]",
            stated="the variable lives on the task, not in the client",
        ),
        pin(
            "scaled = df.multiply(ray_loss, scale",
            "scaled: 2.3999996",
            "a task's partition: 7 ops, ['_Recv']",
            "a task's partition: 2 ops, ['_Send']",
            stated="a step that fails anywhere changes no variable anywhere",
        ),
        pin(
            "bandwidth = (16 << 20)",
            "GB/s",
            "cluster shut down: True",
        ),
        pin(
            "t_apply = median_seconds(",
            "parameters P = 30.0 kB (7510 floats)",
            stated="(64 inputs, 100 hidden units, 10 classes, batches of 64)",
        ),
        pin(
            "terms = {",
            "512 1 … at the ps",
            "1 1 … latency",
            stated="from 64 on the **ps** dominates by far",
        ),
    ],
    "09_from_graph_to_machine.ipynb": [
        pin(
            'print("y =", sess.run(y, feed))',
            "y = 8.568699",
            "ops in the graph: 52",
        ),
        pin(
            "item, reports = optimize(graph, [y], [x, n])",
            "constant_folding: … (folded 1)",
            "pruning: … (removed 2)",
            "elementwise_fusion: … (ops fused 9, fused kernels 3)",
            "the graph: 52 ops as written, 40 after the passes",
            stated="`constant_folding` computed `rate` once",
        ),
        pin(
            "plan = lower_graph(graph, [y], (x, n), df.passes.DEFAULT_PIPELINE)",
            "40 nodes:",
            "ENTER loop/Enter inputs [(2, 0)] enters frame 'loop'",
            stated="control flow becomes the primitives",
        ),
        pin(
            "for threads in (1, 2):",
            "inter_op_parallelism_threads=1: the matrix products ran on 1 thread(s)",
            "inter_op_parallelism_threads=2: the matrix products ran on 2 thread(s)",
            "on MainThread",
            "on dataflow-inter-op_…",
            "speed-up",
            stated="one branch runs on the thread that called `run` and the other on a thread",
        ),
        pin(
            "source = df.debug.compiled_source(sess, y, feed)",
            "compiled functions:",
            "# cond loop/step: 12 op(s)",
            "# loop loop: 22 op(s)",
            "def make(… locate, monotonic, stop_error, check_every, check_seconds):",
            "in2_scalar = in2[()] # 'loop/Enter_2' (Enter) at …",
            "if v17: # 'loop/step/Switch' (Switch) at 'Cell In[…], line 8'",
            "v28 = vc28_38 # the Merges",
            "np_float32(v12) if type(v12) is np_int32 else kc28_24(v12)",
            "compiled y = 8.568699",
            stated="the cond is not called but written inside the loop's code",
        ),
        pin(
            'available = getattr(compiler, "native_available", None)',
            "native tier: available",
            "# cond loop/step: 12 op(s), runs native (numba, compiled in … s)",
            "# loop loop: 22 op(s), runs native (numba, compiled in … s)",
            "native … same bits: True",
            "def loop(budget, limit, var0, var1, var0_a, var1_a, in0, in1, in0_a, in1_a):",
            "v16 = np.add(var1, v15) # 'while/add_1' (Add) at …",
            stated="its loop, with `i % 3` and the `cond` inside, becomes one",
        ),
        pin(
            "layers = [(",
            "graph as written … True",
            "+ graph passes … True",
            "+ compiled regions … True",
            "+ native code … True",
            "scheduling, 2 threads on the independent branches:",
            stated="Every variant must give the same result, bit for bit.",
        ),
        pin(
            "graph, init, train, loss, batch_feed = lenet_step()",
            "summed op time of one training step, by op type:",
            "Conv2DBackpropFilter",
            "Conv2DBackpropInput",
            "Conv2D",
            stated="The three convolution kernels lead",
        ),
        pin(
            "operands = floor_products()",
            "11 products, 2.16 billion multiply-adds a step",
            stated="Timing those products alone with numpy's BLAS gives the **GEMM floor**",
        ),
        pin(
            "textbook = {",
            "textbook convolutions … ms a step, … the floor",
            "blocked convolutions … ms a step, … the floor",
            "GEMM floor … ms a step, 1.00x the floor",
            "the same loss after the same steps: True",
            stated="Both give the same loss",
        ),
    ],
    "10_the_tf2_way.ipynb": [
        pin(
            'print("submodules:"',
            "submodules: ['dense', 'dense']",
            "trainable variables: ['b:0', 'w:0', 'b:0', 'w:0']",
            stated="`variables`, `trainable_variables` and\n`submodules` find them by walking",
        ),
        pin(
            "eager_step = make_step(",
            Near("step 0: eager {}", 1.2903, 0.001),
            Near("function {}", 1.2903, 0.001),
            "traces: 1",
            stated="Both start from the same weights, so they print the same losses.",
        ),
        pin(
            "def bump(x):",
            "result: 3.0",
            "result: 6.0",
            stated="the counter went from 0 to\n3 to 6",
        ),
        pin(
            "def tally(n):",
            'tracing tally with Tensor("n:0", shape=(), dtype=int32)',
            "evens counted: 4",
            stated="The Python `print` line appeared once",
        ),
        pin(
            "fresh_model, fresh_optimizer = Classifier()",
            "saved: ckpt-1",
            Near("uninterrupted: [{},", 0.7679, 0.001),
            Near("resumed: [{},", 0.7679, 0.001),
            stated="The restored run printed the same three losses as the uninterrupted one.",
        ),
    ],
    "11_models_from_elsewhere.ipynb": [
        pin(
            "light = os.path.join(",
            "opset 9, 105 nodes:",
            "26 Conv",
            "39 ConstantOfShape",
            stated="as a 15 KB file",
        ),
        pin(
            "model = df.onnx.import_model(path)",
            "inputs: {'data_0': [1, 3, 224, 224]}",
            "outputs: {'softmaxout_1': [1, 1000, 1, 1]}",
            "matches: True",
            stated="its expected output is stored beside the model",
        ),
        pin(
            'ways = [("as imported"',
            "as imported … same bits: True",
            "+ graph passes … same bits: True",
            "+ compiled regions … same bits: True",
            stated="Every way gives the same bits:",
        ),
        pin(
            "softmax = next(",
            "logits match: True",
            stated="The logits agree to float32 rounding",
        ),
        pin(
            "loop_graph = df.Graph()",
            "inside the Loop: … 'If', …",
            "n=0: dataflow [1. 2. 3.], onnxruntime [1. 2. 3.]",
            "n=4: dataflow [ 7. 11. 15.], onnxruntime [ 7. 11. 15.]",
            stated="becomes a `Loop` whose body",
        ),
        pin(
            "graph_def = df.GraphDef()",
            "425 nodes; the most common types:",
            "('DepthwiseConv2dNative', 17),",
            stated="frozen by TensorFlow 2.21",
        ),
        pin(
            "mobilenet = df.Graph()",
            "the output: mobilenet/predictions/Softmax:0 (?, 10)",
            "matches: True",
            stated="The outputs match TensorFlow's to float32 rounding",
        ),
    ],
}


def _squeeze(text: str) -> str:
    return " ".join(text.split())


_NUMBER = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"


def _regex(text: str) -> str:
    return ".*?".join(re.escape(part) for part in _squeeze(text).split("…"))


def _pattern(shown: Shown) -> re.Pattern:
    if isinstance(shown, Near):
        before, after = shown.text.split("{}")
        body = _regex(before) + (" " if before.endswith(" ") else "") + _NUMBER
        body += (" " if after.startswith(" ") else "") + _regex(after)
    else:
        body = _regex(shown)
    return re.compile(r"(?<!\S)" + body + r"(?!\S)")


def printed_output(cell) -> str:
    """What a code cell printed: its stdout, its value's text and any error, not its pictures."""
    parts = []
    for output in cell.get("outputs", []):
        if output.output_type == "stream" and output.name == "stdout":
            parts.append(output.text)
        elif output.output_type == "execute_result":
            parts.append("\n" + output.data.get("text/plain", "") + "\n")
        elif output.output_type == "error":
            parts.append(f"\n{output.ename}: {output.evalue}\n")
    return "".join(parts)


def _missing(shown: Shown, output: str) -> str:
    """Why ``output`` does not show ``shown``, or "" when it does."""
    squeezed = _squeeze(output)
    if not isinstance(shown, Near):
        return "" if _pattern(shown).search(squeezed) else f"does not show {shown!r}"
    match = _pattern(shown).search(squeezed)
    if match is None:
        return f"does not show a number in {shown.text!r}"
    number = float(match.group(1))
    if abs(number - shown.value) > shown.tolerance:
        return f"shows {number} in {shown.text!r}, not {shown.value} ± {shown.tolerance}"
    return ""


def pin_mismatches(notebook, pins: list[Pin]) -> list[str]:
    """One line per pin that ``notebook``'s outputs or prose do not bear out."""
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    prose = _squeeze(" ".join(c.source for c in notebook.cells if c.cell_type == "markdown"))
    problems = []
    for p in pins:
        cells = [cell for cell in code if p.cell in cell.source]
        if len(cells) != 1:
            problems.append(f"{len(cells)} code cells contain {p.cell!r}; a pin names exactly one")
            continue
        output = printed_output(cells[0])
        for shown in p.shows:
            why = _missing(shown, output)
            if why:
                problems.append(
                    f"the cell with {p.cell!r} {why}; it printed:\n    "
                    + output.strip().replace("\n", "\n    ")
                )
        if p.stated and _squeeze(p.stated) not in prose:
            problems.append(f"no markdown cell says {p.stated!r}")
    return problems


def assert_prints_pinned_values(name: str, notebook) -> None:
    """Checks ``notebook``, freshly executed, against its row of PINNED."""
    problems = pin_mismatches(notebook, PINNED[name])
    assert not problems, f"{name}, executed now:\n" + "\n".join(problems)


def test_every_notebook_pins_what_its_text_states():
    assert sorted(PINNED) == [path.name for path in NOTEBOOKS]
    assert all(PINNED[path.name] for path in NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_outputs_show_the_pinned_values(path):
    problems = pin_mismatches(nbformat.read(path, as_version=4), PINNED[path.name])
    assert not problems, (
        f"{path.name}, as saved (run it top to bottom and save it, e.g. `jupyter nbconvert "
        f"--to notebook --execute --inplace notebooks/{path.name}`):\n" + "\n".join(problems)
    )


def _notebook(prose: str, source: str, printed: str):
    cell = nbformat.v4.new_code_cell(source)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=printed)]
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(prose), cell])


def test_a_pin_matches_whole_words_and_any_whitespace():
    notebook = _notebook("The sum is\n18.", "print(total)", "total:   18.0\n[[ 5.]\n [11.]]\n")
    assert pin_mismatches(notebook, [pin("print(total)", "total: 18.0", "[[ 5.] [11.]]")]) == []
    assert pin_mismatches(notebook, [pin("print(total)", "8.0", stated="sum is 18.")]) == [
        "the cell with 'print(total)' does not show '8.0'; it printed:\n"
        "    total:   18.0\n    [[ 5.]\n     [11.]]"
    ]


def test_an_ellipsis_in_a_pin_stands_for_any_text():
    notebook = _notebook("", "run()", "passes off 13.5 ms per run, peak 2.00 arrays\n")
    assert pin_mismatches(notebook, [pin("run()", "passes off … peak 2.00 arrays")]) == []
    assert len(pin_mismatches(notebook, [pin("run()", "passes off … peak 1.00 arrays")])) == 1


def test_a_near_pin_allows_its_tolerance_and_no_more():
    notebook = _notebook("", "train()", "test accuracy 97.78%\n")
    assert pin_mismatches(notebook, [pin("train()", Near("test accuracy {}%", 97.8, 0.5))]) == []
    assert pin_mismatches(notebook, [pin("train()", Near("test accuracy {}%", 99.0, 0.5))]) == [
        "the cell with 'train()' shows 97.78 in 'test accuracy {}%', not 99.0 ± 0.5; "
        "it printed:\n    test accuracy 97.78%"
    ]


def test_a_pin_names_exactly_one_cell_and_prose_that_exists():
    notebook = _notebook("Only one branch runs.", "run(1)", "1\n")
    notebook.cells.append(nbformat.v4.new_code_cell("run(2)"))
    assert pin_mismatches(notebook, [pin("run(", "1"), pin("run(1)", "1", stated="Both run.")]) == [
        "2 code cells contain 'run('; a pin names exactly one",
        "no markdown cell says 'Both run.'",
    ]
