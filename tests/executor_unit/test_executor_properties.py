"""Random structured programs (ops, conds, bounded loops, nested) lowered by hand to executor
programs: `Plan.run` must agree with a plain-Python evaluation of the same structure, inline
and on a pool, with parallel_iterations 1 and 32.

A *block* is a list of statements over an environment of integer values (indices into a list
that each statement extends):

- ``("op", name, i, j, inline)``: ``OPS[name](env[i], env[j])``
- ``("const", c)``: ``c``
- ``("cond", p, true_block, false_block, true_picks, false_picks)``: if ``env[p]`` is even,
  run ``true_block`` on a copy of the environment and keep ``true_picks`` of it, else the other.
- ``("loop", t, inits, body, picks)``: ``state = env[inits]``; for ``i`` in
  ``range(env[t] % 4)``: run ``body`` on ``[i, *state, *env]`` and keep ``picks`` of it as the
  new state.  The loop's results are the final state.
"""

import time
from concurrent.futures import ThreadPoolExecutor

from executor_builder import Builder
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import executor

MODULUS = 997
OPS = {
    "add": lambda a, b: (a + b) % MODULUS,
    "sub": lambda a, b: (a - b) % MODULUS,
    "mul": lambda a, b: (a * b) % MODULUS,
    "max": lambda a, b: max(a, b),
}


# -- the structure ------------------------------------------------------------------------------


@st.composite
def blocks(draw, env_size: int, depth: int):
    statements = []
    size = env_size
    for _ in range(draw(st.integers(1, 4))):
        choices = ["op", "op", "const"] + (["cond", "loop"] if depth > 0 else [])
        kind = draw(st.sampled_from(choices))
        index = st.integers(0, size - 1)
        if kind == "op":
            inline = draw(st.sampled_from([True, False, None]))
            statement = ("op", draw(st.sampled_from(sorted(OPS))), draw(index), draw(index), inline)
            size += 1
        elif kind == "const":
            statement = ("const", draw(st.integers(0, MODULUS - 1)))
            size += 1
        elif kind == "cond":
            results = draw(st.integers(1, 2))
            true_block = draw(blocks(size, depth - 1))
            false_block = draw(blocks(size, depth - 1))
            true_size = size + _added(true_block, size)
            false_size = size + _added(false_block, size)
            true_picks = draw(
                st.lists(st.integers(0, true_size - 1), min_size=results, max_size=results)
            )
            false_picks = draw(
                st.lists(st.integers(0, false_size - 1), min_size=results, max_size=results)
            )
            statement = ("cond", draw(index), true_block, false_block, true_picks, false_picks)
            size += results
        else:
            inits = draw(st.lists(index, min_size=1, max_size=2))
            body_size = 1 + len(inits) + size
            body = draw(blocks(body_size, depth - 1))
            after = body_size + _added(body, body_size)
            picks = draw(
                st.lists(st.integers(0, after - 1), min_size=len(inits), max_size=len(inits))
            )
            statement = ("loop", draw(index), inits, body, picks)
            size += len(inits)
        statements.append(statement)
    return statements


def _added(block, env_size) -> int:
    """How many values ``block`` appends to an environment."""
    added = 0
    for statement in block:
        kind = statement[0]
        if kind in ("op", "const"):
            added += 1
        elif kind == "cond":
            added += len(statement[4])
        else:
            added += len(statement[2])
    return added


# -- the reference ------------------------------------------------------------------------------


def evaluate(block, env):
    env = list(env)
    for statement in block:
        kind = statement[0]
        if kind == "op":
            _, name, i, j, _ = statement
            env.append(OPS[name](env[i], env[j]))
        elif kind == "const":
            env.append(statement[1])
        elif kind == "cond":
            _, p, true_block, false_block, true_picks, false_picks = statement
            if env[p] % 2 == 0:
                branch = evaluate(true_block, env)
                env.extend(branch[k] for k in true_picks)
            else:
                branch = evaluate(false_block, env)
                env.extend(branch[k] for k in false_picks)
        else:
            _, t, inits, body, picks = statement
            state = [env[k] for k in inits]
            for i in range(env[t] % 4):
                body_env = evaluate(body, [i, *state, *env])
                state = [body_env[k] for k in picks]
            env.extend(state)
    return env


# -- the lowering -------------------------------------------------------------------------------


class Env:
    """Handles of an environment laid out as ``before + outer + after``: ``outer`` values reach
    this frame or branch through ``bring`` (a memoized Switch or constant Enter); ``before``
    (a loop's variables) and ``after`` (values made here) are used directly."""

    def __init__(self, before=(), outer=None, bring=None):
        self.before = list(before)
        self.outer = outer
        self.bring = bring
        self.outer_size = len(outer) if outer is not None else 0
        self.after = []

    def __len__(self):
        return len(self.before) + self.outer_size + len(self.after)

    def __getitem__(self, index):
        if index < len(self.before):
            return self.before[index]
        index -= len(self.before)
        if index < self.outer_size:
            return self.bring(self.outer[index])
        return self.after[index - self.outer_size]


def lower(
    b: Builder, block, env: Env, pivot, parallel_iterations, names, loop=None, completer=None
):
    """Appends the handles of ``block``'s values to ``env``.  ``loop`` is the loop whose body
    this is (None in the root frame and in a branch), for TensorFlow's rule that an op whose
    inputs are all loop invariants gets a control input from the loop's pivot.  With a
    ``completer`` (`Completer`), an op whose ``inline`` is None is asynchronous, completed
    by it from another thread, and every other op's kernel lets other threads run first."""

    def control_for(*inputs):
        if loop is not None and all(loop.is_invariant(h) for h in inputs):
            return [loop.pivot]
        return []

    for statement in block:
        kind = statement[0]
        if kind == "op":
            _, name, i, j, inline = statement
            x, y = env[i], env[j]
            control = control_for(x, y)
            if completer is None:
                env.after.append(b.op(OPS[name], x, y, inline=inline, control=control))
            elif inline is None:
                start = completer.kernel(OPS[name])
                env.after.append(b.op(start, x, y, control=control, asynchronous=True))
            else:
                env.after.append(b.op(_yielding(OPS[name]), x, y, inline=inline, control=control))
        elif kind == "const":
            env.after.append(b.const(statement[1], control=[pivot] if pivot else []))
        elif kind == "cond":
            _, p, true_block, false_block, true_picks, false_picks = statement
            value = env[p]
            pred = b.op(lambda v: v % 2 == 0, value, inline=True, control=control_for(value))

            def branch_fn(block, picks):
                def fn(branch):
                    inner = Env(outer=env, bring=branch.outer)
                    lower(
                        b, block, inner, branch.pivot, parallel_iterations, names, None, completer
                    )
                    return [inner[k] for k in picks]

                return fn

            env.after.extend(
                b.cond(
                    pred,
                    branch_fn(true_block, true_picks),
                    branch_fn(false_block, false_picks),
                    name=f"cond_{next(names)}",
                )
            )
        else:
            _, t, inits, body, picks = statement
            trip = env[t]
            start = b.const(0, control=[pivot] if pivot else [])

            # Called at once by ``while_loop``; the defaults pin this statement's values.
            def cond_fn(loop, trip=trip):
                return b.op(
                    lambda count, limit: count < limit % 4,
                    loop.vars[0],
                    loop.outer(trip),
                    inline=True,
                )

            def body_fn(loop, body=body, picks=picks):
                inner = Env(loop.vars, outer=env, bring=loop.outer)
                lower(b, body, inner, loop.pivot, parallel_iterations, names, loop, completer)
                step = b.op(lambda count: count + 1, loop.vars[0], inline=True)
                return [step] + [inner[k] for k in picks]

            exits = b.while_loop(
                cond_fn,
                body_fn,
                [start] + [env[k] for k in inits],
                name=f"loop_{next(names)}",
                parallel_iterations=parallel_iterations,
            )
            env.after.extend(exits[1:])


def build(block, inputs, parallel_iterations, completer=None):
    b = Builder()
    env = Env([b.arg(f"x{k}") for k in range(len(inputs))])
    lower(b, block, env, None, parallel_iterations, iter(range(10**6)), None, completer)
    return b.program([env[k] for k in range(len(env))])


def _yielding(kernel):
    """``kernel``, letting other threads run before it computes (as a slow kernel would)."""

    def run(*args):
        time.sleep(0)
        return kernel(*args)

    return run


class Completer:
    """Completes asynchronous kernels from threads of its own, as a rendezvous completes a
    receive from the thread of the sender: each call of a kernel made by `kernel` is completed
    later, from one of ``threads`` threads."""

    def __init__(self, threads: int):
        self._threads = ThreadPoolExecutor(threads, thread_name_prefix="test-completer")

    def kernel(self, compute):
        def start(done, *args):
            self._threads.submit(_yielding(lambda: done(compute(*args))))

        return start

    def close(self) -> None:
        self._threads.shutdown()


# -- the property -------------------------------------------------------------------------------


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    data=st.data(),
    inputs=st.lists(st.integers(0, MODULUS - 1), min_size=1, max_size=3),
)
def test_random_programs_agree_with_the_reference(pool, data, inputs):
    block = data.draw(blocks(len(inputs), depth=2), label="block")
    expected = evaluate(block, inputs)
    for parallel_iterations in (1, 32):
        plan = executor.prepare(build(block, inputs, parallel_iterations))
        assert plan.run(inputs) == expected
        assert plan.run(inputs, pool=pool) == expected


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    data=st.data(),
    inputs=st.lists(st.integers(0, MODULUS - 1), min_size=1, max_size=3),
)
def test_random_programs_whose_kernels_complete_on_other_threads_agree_with_the_reference(
    pool, data, inputs
):
    # The threads that complete the asynchronous kernels fire what their values make ready
    # themselves, while other values still arrive: every run must still end with every value.
    block = data.draw(blocks(len(inputs), depth=2), label="block")
    expected = evaluate(block, inputs)
    completer = Completer(3)
    try:
        for parallel_iterations in (1, 32):
            plan = executor.prepare(build(block, inputs, parallel_iterations, completer))
            for _ in range(5):
                assert plan.run(inputs) == expected
                assert plan.run(inputs, pool=pool) == expected
    finally:
        completer.close()
