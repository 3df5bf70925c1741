"""Run a corpus of classic public TensorFlow 1.x programs with only their import changed; print
what ran, the figure each reached, and TensorFlow's figure on the same data.

    python benchmarks/run_tf1_corpus.py CORPUS_DIR            # dataflow (TF figures cached)
    python benchmarks/run_tf1_corpus.py CORPUS_DIR --tf       # TensorFlow as well, refreshed
    python benchmarks/run_tf1_corpus.py CORPUS_DIR --only gan --only mnist_deep --timeout 900

The programs are not part of this repository: CORPUS_DIR holds them unchanged as
``<owner>/<repo>/<path>``, with ``manifest.json`` listing each one's ``repo``, ``path`` and
``commit`` and, optionally, ``figure``: what its output reports, as ``{"kind": ..., "pattern":
...}`` (a regular expression whose first group is the figure, of which the last match counts).

For each program the runner:

1. classifies it: a program that uses ``tf.contrib``, ``tf.estimator``, eager execution or
   ``tf.keras``, or that downloads anything (only MNIST is replaced, by a local stand-in), is
   out of scope and listed with the reason;
2. rewrites its import lines only (``import tensorflow as tf`` and ``import
   tensorflow.compat.v1 as tf`` become ``import dataflow as tf``, or for TensorFlow ``import
   tensorflow.compat.v1 as tf; tf.disable_v2_behavior()``; the MNIST reader becomes
   ``import mnist_standin as input_data``, scikit-learn's digits at 28x28, see
   ``tf1_corpus/mnist_standin.py``), each on its own line so line numbers stay;
3. shrinks its step counts: the assignments in STEP_CAPS (``name = <integer>`` on a line of
   its own, at any depth) are capped, and so is a literal ``range(N)`` heading a ``for`` loop
   beyond RANGE_CAP; which were, is printed;
4. runs it in a subprocess with a timeout, its working directory a fresh temporary directory;
   where unprivileged user namespaces exist (``unshare -rm``), that directory is also mounted
   over ``/tmp``, so the ``/tmp/...`` log directories and checkpoints programs hard-code
   neither collide nor stay (HOME and TMPDIR point into it too); matplotlib draws off screen
   and never waits for a click;
5. records whether it ran to the end (exit status 0) or its error (the exception line and
   the program line it came from) and the last figure it printed.

TensorFlow's results (``--tf``: TensorFlow 2.21's ``tf.compat.v1`` in graph mode, run from
``--tf-python``) are kept in ``CORPUS_DIR/tf_results.json`` and compared on later runs.
TensorFlow 2.21 comes with Keras 3, without which ``tf.nn.rnn_cell`` has no cells; when
``CORPUS_DIR/.tf_extra`` holds ``tf_keras`` (``pip install --no-deps --target
CORPUS_DIR/.tf_extra tf-keras==2.21.0``), the TensorFlow run takes its cells from there. Two
figures are in the same class as follows (CLASS_RULES says it again in the output):
accuracies within 5 points of each other, or both at least 90%; losses within a factor of 2
of each other (or both below 0.01); other values within 10%; exact values equal.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import io
import json
import math
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
import tokenize

SUPPORT_DIR = pathlib.Path(__file__).resolve().parent / "tf1_corpus"
MAX_JOBS = 2

STEP_CAPS = {
    "num_steps": 500,
    "training_steps": 500,
    "max_steps": 500,
    "training_iters": 25_600,  # compared with step * batch_size: 200 steps of 128
    "training_epochs": 1000,
    "total_epoch": 30,
    "num_epochs": 30,
    "n_epochs": 30,
    "epochs": 30,
}
RANGE_CAP = 1000

CLASS_RULES = (
    "same class: accuracies within 5 points or both >= 90%; losses within a factor of 2 "
    "(or both < 0.01); values within 10%; exact values equal"
)

OUT_OF_SCOPE_RULES = (
    (re.compile(r"\btf\s*\.\s*contrib\b|\btensorflow\s*\.\s*contrib\b"), "uses tf.contrib"),
    (re.compile(r"\btf\s*\.\s*estimator\b|\btensorflow\s*\.\s*estimator\b"), "uses tf.estimator"),
    (
        re.compile(r"enable_eager_execution|\btfe\s*\.|\btf\s*\.\s*eager\b"),
        "uses eager execution",
    ),
    (
        re.compile(r"\btf\s*\.\s*keras\b|from\s+tensorflow\s+import\s+keras|^\s*import\s+keras"),
        "uses tf.keras",
    ),
    (
        re.compile(r"\burllib\b|\burlretrieve\b|\brequests\s*\.\s*get\b|\bmaybe_download\b"),
        "downloads data other than MNIST",
    ),
)

TF_IMPORT = re.compile(r"^(\s*)import\s+tensorflow(?:\.compat\.v1)?\s+as\s+tf\s*(#.*)?$")
MNIST_IMPORT = re.compile(
    r"^(\s*)from\s+tensorflow\.examples\.tutorials\.mnist\s+import\s+input_data\s*(#.*)?$"
)
STEP_ASSIGNMENT = re.compile(r"^(\s*)([A-Za-z_]\w*)(\s*=\s*)(\d+)(\s*(?:#.*)?)$")
FOR_RANGE = re.compile(r"^(\s*for\s+.+\s+in\s+range\()(\d+)(\)\s*:.*)$")


@dataclasses.dataclass
class Program:
    repo: str
    path: str
    commit: str
    figure_kind: str | None = None
    figure_pattern: str | None = None
    timeout: float | None = None

    @property
    def name(self) -> str:
        return f"{self.repo}/{self.path}"

    @property
    def short_name(self) -> str:
        """The owner and the path without the folders every example lives in."""
        path = re.sub(r"^(tensorflow_v1/)?examples/|^tensorflow/examples/tutorials/", "", self.path)
        return f"{self.repo.split('/')[0]}:{path}"


@dataclasses.dataclass
class RunResult:
    """What one run of one program did."""

    finished: bool
    seconds: float
    figure: float | str | None = None
    error: str | None = None
    error_line: str | None = None
    missing_name: str | None = None
    timed_out: bool = False


# ---------------------------------------------------------------------------------------------
# Classification and rewriting (pure functions of the source text)


def code_without_comments(source: str) -> str:
    """The source's code without its comments and with every string literal emptied, so that
    ``tf.contrib`` in a comment or a docstring, or a URL in a message, classifies nothing."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return source
    kept = []
    for token in tokens:
        if token.type == tokenize.COMMENT:
            continue
        if token.type == tokenize.STRING or token.type in _F_STRING_TOKENS:
            kept.append('""')
        else:
            kept.append(token.string)
    return " ".join(kept)


_F_STRING_TOKENS = {
    getattr(tokenize, name)
    for name in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END")
    if hasattr(tokenize, name)
}


def classify(source: str) -> tuple[bool, str]:
    """(in scope, reason): out of scope are programs using tf.contrib, tf.estimator, eager
    execution or tf.keras, and programs that download data (MNIST aside)."""
    code = code_without_comments(source)
    for pattern, reason in OUT_OF_SCOPE_RULES:
        if pattern.search(code) or (reason == "uses tf.keras" and _imports_keras(source)):
            return False, reason
    return True, "in scope"


def _imports_keras(source: str) -> bool:
    return any(re.match(r"^\s*(import|from)\s+keras\b", line) for line in source.splitlines())


def rewrite_imports(source: str, target: str) -> tuple[str, list[str]]:
    """The source with its TensorFlow and MNIST-reader imports replaced for ``target``
    ("dataflow" or "tensorflow"), line for line; and a note per replaced line."""
    if target not in ("dataflow", "tensorflow"):
        raise ValueError(f"unknown target {target!r}")
    tf_line = (
        "import dataflow as tf"
        if target == "dataflow"
        else "import tensorflow.compat.v1 as tf; tf.disable_v2_behavior()"
    )
    lines = source.split("\n")
    notes = []
    for number, line in enumerate(lines, start=1):
        if match := TF_IMPORT.match(line):
            lines[number - 1] = match.group(1) + tf_line
            notes.append(f"line {number}: {line.strip()} -> {tf_line}")
        elif match := MNIST_IMPORT.match(line):
            replacement = "import mnist_standin as input_data"
            lines[number - 1] = match.group(1) + replacement
            notes.append(f"line {number}: MNIST reader -> {replacement}")
    return "\n".join(lines), notes


def shrink_steps(source: str) -> tuple[str, list[str]]:
    """The source with its step counts capped (STEP_CAPS assignments, literal ``for ... in
    range(N)`` beyond RANGE_CAP), line for line; and a note per capped line."""
    lines = source.split("\n")
    notes = []
    for number, line in enumerate(lines, start=1):
        assignment = STEP_ASSIGNMENT.match(line)
        if assignment and assignment.group(2) in STEP_CAPS:
            indent, name, equals, value, rest = assignment.groups()
            capped = min(int(value), STEP_CAPS[name])
            if capped != int(value):
                lines[number - 1] = f"{indent}{name}{equals}{capped}{rest}"
                notes.append(f"line {number}: {name} = {value} -> {capped}")
            continue
        loop = FOR_RANGE.match(line)
        if loop and int(loop.group(2)) > RANGE_CAP:
            lines[number - 1] = f"{loop.group(1)}{RANGE_CAP}{loop.group(3)}"
            notes.append(f"line {number}: range({loop.group(2)}) -> range({RANGE_CAP})")
    return "\n".join(lines), notes


def tf_names(source: str) -> set[str]:
    """The dotted ``tf.`` names a program's code uses (``tf.nn.dropout``, ``tf.train``), read
    from its tokens, comments and strings aside."""
    try:
        tokens = [
            token
            for token in tokenize.generate_tokens(io.StringIO(source).readline)
            if token.type not in (tokenize.NL, tokenize.COMMENT)
        ]
    except (tokenize.TokenError, SyntaxError):
        return set()
    names = set()
    for index, token in enumerate(tokens):
        if token.type != tokenize.NAME or token.string != "tf":
            continue
        if index > 0 and tokens[index - 1].string == ".":
            continue
        parts = ["tf"]
        position = index + 1
        while (
            position + 1 < len(tokens)
            and tokens[position].string == "."
            and tokens[position + 1].type == tokenize.NAME
        ):
            parts.append(tokens[position + 1].string)
            position += 2
        if len(parts) > 1:
            names.add(".".join(parts))
    return names


def first_missing(name: str, namespace) -> str | None:
    """The shortest prefix of a dotted ``tf.`` name that ``namespace`` (the module standing for
    ``tf``) lacks, or None; attributes of what is not a module are not followed, since they may
    be an instance's."""
    value = namespace
    parts = name.split(".")
    for depth, part in enumerate(parts[1:], start=2):
        if not isinstance(value, type(sys)):
            return None
        if not hasattr(value, part):
            return ".".join(parts[:depth])
        value = getattr(value, part)
    return None


# ---------------------------------------------------------------------------------------------
# Reading a run's output


NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
ACCURACY_LINE = re.compile(r"(?:accuracy|정확도)\D*?(" + NUMBER + ")", re.IGNORECASE)
MISSING_ATTRIBUTE = re.compile(r"module '([\w.]+)' has no attribute '(\w+)'")
MISSING_OBJECT_ATTRIBUTE = re.compile(r"'(\w+)' object has no attribute '(\w+)'")
UNEXPECTED_KEYWORD = re.compile(r"(\w+)\(\) got an unexpected keyword argument '(\w+)'")
TRACEBACK_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+)')


def extract_figure(output: str, kind: str | None, pattern: str | None) -> float | str | None:
    """The figure a run reports: the last match of ``pattern`` (its first group), or without
    one the number on the last line that names an accuracy."""
    regex = re.compile(pattern, re.MULTILINE) if pattern else ACCURACY_LINE
    matches = regex.findall(output)
    if not matches:
        return None
    last = matches[-1]
    if isinstance(last, tuple):
        last = last[0]
    if kind == "text":
        return last
    try:
        return float(last)
    except ValueError:
        return last


def as_fraction(accuracy: float) -> float:
    """An accuracy printed as a percentage, as a fraction."""
    return accuracy / 100.0 if accuracy > 1.0 else accuracy


def same_class(kind: str | None, ours, theirs) -> bool | None:
    """Whether two figures are in the same accuracy class (see CLASS_RULES); None when either
    is missing."""
    if ours is None or theirs is None:
        return None
    if kind in ("exact", "text"):
        if isinstance(ours, float) and isinstance(theirs, float):
            return math.isclose(ours, theirs, rel_tol=1e-6, abs_tol=1e-9)
        return ours == theirs
    if not (isinstance(ours, float) and isinstance(theirs, float)):
        return False
    if not (math.isfinite(ours) and math.isfinite(theirs)):
        return False
    if kind in (None, "accuracy"):
        a, b = as_fraction(ours), as_fraction(theirs)
        return abs(a - b) <= 0.05 + 1e-9 or (a >= 0.9 and b >= 0.9)
    if kind == "loss":
        if abs(ours) < 0.01 and abs(theirs) < 0.01:
            return True
        if ours <= 0 or theirs <= 0:
            return abs(ours - theirs) <= 0.5 * max(abs(ours), abs(theirs))
        return max(ours, theirs) / min(ours, theirs) <= 2.0
    return math.isclose(ours, theirs, rel_tol=0.10, abs_tol=1e-6)


def describe_error(stderr: str, program_file: str, source_lines: list[str]):
    """(exception line, program line it was raised from, missing name) of a failed run."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    exception = None
    for line in reversed(lines):
        if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning)\b", line):
            exception = line.strip()
            break
    if exception is None and lines:
        exception = lines[-1].strip()
    program_line = None
    for line in lines:
        frame = TRACEBACK_FRAME.match(line)
        if frame and os.path.basename(frame.group(1)) == program_file:
            number = int(frame.group(2))
            text = source_lines[number - 1].strip() if 0 < number <= len(source_lines) else ""
            program_line = f"line {number}: {text}"
    return exception, program_line, missing_name(exception or "")


def failure_key(result: RunResult) -> str:
    """What groups a failure with others: the missing name, else the error without the
    program's own file and line."""
    if result.missing_name:
        return result.missing_name
    error = re.sub(r" at \S+\.py:\d+", "", result.error or "unknown")
    return error if len(error) <= 110 else error[:107] + "..."


def missing_name(exception: str) -> str | None:
    """The TF1 name a failure says is missing (``tf.nn.dropout``, ``Variable.op``,
    ``placeholder(shape=)``), or None."""
    if match := MISSING_ATTRIBUTE.search(exception):
        module, attribute = match.groups()
        prefix = "tf" + module[len("dataflow") :] if module.startswith("dataflow") else module
        return f"{prefix}.{attribute}"
    if match := MISSING_OBJECT_ATTRIBUTE.search(exception):
        return f"{match.group(1)}.{match.group(2)}"
    if match := UNEXPECTED_KEYWORD.search(exception):
        return f"{match.group(1)}({match.group(2)}=)"
    return None


# ---------------------------------------------------------------------------------------------
# Running


def private_tmp_supported(python: str = sys.executable) -> bool:
    """Whether ``unshare -rm`` can give a program a /tmp of its own on this machine, without
    hiding what the run needs: not when ``python``'s environment or this repository (an
    editable install's code) lives under /tmp, as in a checkout made there."""
    if shutil.which("unshare") is None:
        return False
    tmp = pathlib.Path("/tmp").resolve()
    needed = [pathlib.Path(python).parent.parent, pathlib.Path(__file__).resolve().parent.parent]
    if any(path.absolute().is_relative_to(tmp) for path in needed):
        return False
    with tempfile.TemporaryDirectory(prefix="tf1corpus-probe-") as probe:
        try:
            completed = subprocess.run(
                ["unshare", "-rm", "sh", "-c", 'mount --bind "$0" /tmp', probe],
                capture_output=True,
                timeout=20,
            )
        except (OSError, subprocess.TimeoutExpired):
            return False
    return completed.returncode == 0


def run_program(
    program: Program,
    source: str,
    target: str,
    python: str,
    timeout: float,
    private_tmp: bool,
    append_path: str,
    legacy_keras: bool = False,
) -> RunResult:
    """Run ``source`` (already rewritten) as ``program``'s file in a fresh temporary directory
    and read what it did; nothing it writes outlives the run."""
    program_file = os.path.basename(program.path)
    root = pathlib.Path(tempfile.mkdtemp(prefix="tf1corpus-"))
    try:
        (root / "work").mkdir()
        (root / "home").mkdir()
        shutil.copytree(SUPPORT_DIR, root / "support", ignore=shutil.ignore_patterns("__pycache__"))
        (root / "work" / program_file).write_text(source)
        seen_root = pathlib.Path("/tmp") if private_tmp else root
        environment = dict(os.environ)
        environment.update(
            PYTHONPATH=str(seen_root / "support"),
            PYTHONDONTWRITEBYTECODE="1",
            MPLBACKEND="module://headless_backend",
            MPLCONFIGDIR=str(seen_root / "matplotlib"),
            TMPDIR=str(seen_root),
            HOME=str(seen_root / "home"),
            TF_CPP_MIN_LOG_LEVEL="2",
            OMP_NUM_THREADS="1",
            OPENBLAS_NUM_THREADS="1",
            MKL_NUM_THREADS="1",
            TF_NUM_INTEROP_THREADS="1",
            TF_NUM_INTRAOP_THREADS="1",
            TF1_CORPUS_APPEND_PATH=append_path if target == "tensorflow" else "",
        )
        if target == "tensorflow" and legacy_keras:
            environment["TF_USE_LEGACY_KERAS"] = "1"
        command = [python, program_file]
        if private_tmp:
            command = [
                "unshare",
                "-rm",
                "sh",
                "-c",
                'mount --bind "$0" /tmp && cd /tmp/work && exec "$@"',
                str(root),
                *command,
            ]
        started = time.monotonic()
        process = subprocess.Popen(
            command,
            cwd=root / "work",
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            start_new_session=True,
        )
        try:
            stdout, stderr = process.communicate(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            stdout, stderr = process.communicate()
            timed_out = True
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        seconds = time.monotonic() - started
        figure = extract_figure(stdout, program.figure_kind, program.figure_pattern)
        if timed_out:
            return RunResult(
                False, seconds, figure, error=f"timed out after {timeout:.0f} s", timed_out=True
            )
        if process.returncode == 0:
            return RunResult(True, seconds, figure)
        exception, program_line, missing = describe_error(stderr, program_file, source.split("\n"))
        return RunResult(
            False,
            seconds,
            figure,
            error=exception or f"exit status {process.returncode}",
            error_line=program_line,
            missing_name=missing,
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# The corpus


def load_corpus(corpus_dir: pathlib.Path) -> list[Program]:
    """The programs ``manifest.json`` lists (or every .py file under the directory)."""
    manifest = corpus_dir / "manifest.json"
    if not manifest.exists():
        return [
            Program(repo="/".join(path.relative_to(corpus_dir).parts[:2]), path="", commit="")
            for path in sorted(corpus_dir.rglob("*.py"))
        ]
    programs = []
    for entry in json.loads(manifest.read_text())["programs"]:
        figure = entry.get("figure") or {}
        programs.append(
            Program(
                repo=entry["repo"],
                path=entry["path"],
                commit=entry.get("commit", ""),
                figure_kind=figure.get("kind"),
                figure_pattern=figure.get("pattern"),
                timeout=entry.get("timeout"),
            )
        )
    return programs


def format_figure(kind: str | None, figure) -> str:
    if figure is None:
        return "-"
    if isinstance(figure, str):
        return repr(figure) if len(figure) < 24 else repr(figure[:21] + "...")
    if kind in (None, "accuracy"):
        return f"acc {as_fraction(figure):.3f}"
    return f"{kind} {figure:.4g}"


def describe_run(kind: str | None, result: RunResult | None) -> str:
    if result is None:
        return "not run"
    if result.finished:
        return f"ok {format_figure(kind, result.figure)} ({result.seconds:.0f} s)"
    if result.timed_out:
        return f"TIMEOUT ({result.seconds:.0f} s)"
    return "FAIL " + failure_key(result)[:34]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus_dir", type=pathlib.Path)
    parser.add_argument("--tf", action="store_true", help="also run under TensorFlow")
    parser.add_argument(
        "--tf-python",
        default=sys.executable,
        help="a Python that has tensorflow installed (default: this one)",
    )
    parser.add_argument(
        "--only", action="append", help="run the programs whose name has this (repeatable)"
    )
    parser.add_argument(
        "--timeout", type=float, default=600.0, help="seconds per run (a manifest may say more)"
    )
    parser.add_argument(
        "--tf-extra",
        type=pathlib.Path,
        default=None,
        help="packages for the TensorFlow run (default: CORPUS_DIR/.tf_extra, if there)",
    )
    parser.add_argument("--jobs", type=int, default=MAX_JOBS, help=f"at most {MAX_JOBS}")
    parser.add_argument("--json", type=pathlib.Path, default=None, help="write results here")
    args = parser.parse_args(argv)

    corpus_dir = args.corpus_dir.resolve()
    programs = [
        p for p in load_corpus(corpus_dir) if not args.only or any(o in p.name for o in args.only)
    ]
    tf_cache_path = corpus_dir / "tf_results.json"
    tf_cache = json.loads(tf_cache_path.read_text()) if tf_cache_path.exists() else {}
    private_tmp = private_tmp_supported()
    tf_extra = args.tf_extra or corpus_dir / ".tf_extra"
    legacy_keras = (tf_extra / "tf_keras").is_dir()
    append_path = os.pathsep.join(
        [*([str(tf_extra)] if tf_extra.is_dir() else []), sysconfig.get_paths()["purelib"]]
    )
    jobs = max(1, min(args.jobs, MAX_JOBS))

    print(f"corpus: {corpus_dir} ({len(programs)} programs)")
    print(
        f"step caps: {', '.join(f'{k} <= {v}' for k, v in STEP_CAPS.items())}; "
        f"literal for-loop range(N) <= {RANGE_CAP}"
    )
    print(
        f"isolation: {'a private /tmp per run (unshare -rm)' if private_tmp else 'cwd only'}"
        f"; {jobs} run(s) at a time; timeout {args.timeout:.0f} s"
    )
    if args.tf:
        print(
            f"TensorFlow: {args.tf_python}"
            + (", TF1 RNN cells from tf_keras (TF_USE_LEGACY_KERAS=1)" if legacy_keras else "")
        )
    print(CLASS_RULES)
    print()

    plans = []
    for program in programs:
        source = (corpus_dir / program.repo / program.path).read_text()
        in_scope, reason = classify(source)
        shrunk, step_notes = shrink_steps(source)
        plans.append((program, source, in_scope, reason, shrunk, step_notes))

    tasks = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for program, _, in_scope, _, shrunk, _ in plans:
            if not in_scope:
                continue
            targets = [("dataflow", sys.executable)]
            if args.tf:
                targets.append(("tensorflow", args.tf_python))
            for target, python in targets:
                rewritten, _ = rewrite_imports(shrunk, target)
                tasks[(program.name, target)] = pool.submit(
                    run_program,
                    program,
                    rewritten,
                    target,
                    python,
                    max(args.timeout, program.timeout or 0),
                    private_tmp,
                    append_path,
                    legacy_keras,
                )
        keys = {future: key for key, future in tasks.items()}
        results = {}
        for done, future in enumerate(concurrent.futures.as_completed(keys), start=1):
            name, target = keys[future]
            results[(name, target)] = future.result()
            kind = next(plan[0].figure_kind for plan in plans if plan[0].name == name)
            print(
                f"[{done}/{len(tasks)}] {target}: {name}: "
                f"{describe_run(kind, results[(name, target)])}",
                file=sys.stderr,
                flush=True,
            )

    for (name, target), result in results.items():
        if target == "tensorflow":
            tf_cache[name] = dataclasses.asdict(result)
    if args.tf:
        tf_cache_path.write_text(json.dumps(tf_cache, indent=1, sort_keys=True))

    rows = []
    for program, _, in_scope, reason, _, step_notes in plans:
        ours = results.get((program.name, "dataflow"))
        cached = tf_cache.get(program.name)
        theirs = RunResult(**cached) if cached else None
        rows.append((program, in_scope, reason, step_notes, ours, theirs))
    print_report(rows, args.tf)
    print_missing_names(plans)

    if args.json:
        args.json.write_text(
            json.dumps(
                [
                    {
                        "program": program.name,
                        "commit": program.commit,
                        "in_scope": in_scope,
                        "reason": reason,
                        "step_overrides": step_notes,
                        "dataflow": dataclasses.asdict(ours) if ours else None,
                        "tensorflow": dataclasses.asdict(theirs) if theirs else None,
                    }
                    for program, in_scope, reason, step_notes, ours, theirs in rows
                ],
                indent=1,
            )
        )
    return 0


def print_report(rows, ran_tf: bool) -> None:
    """The table, the totals, and the failures grouped by what they miss."""
    print("step counts shrunk:")
    for program, in_scope, _, step_notes, _, _ in rows:
        if in_scope and step_notes:
            print(f"  {program.short_name}: {'; '.join(step_notes)}")
    print()
    width = max(len(program.short_name) for program, *_ in rows)
    header = f"{'program':<{width}}  {'in scope?':<32}  {'TF1':<28}  {'dataflow':<40}  same?"
    print(header)
    print("-" * len(header))
    in_scope_count = ran_here = tf_ran = tf_failed = same = comparable = 0
    for program, in_scope, reason, _, ours, theirs in rows:
        kind = program.figure_kind
        verdict = ""
        if in_scope:
            in_scope_count += 1
            ran_here += bool(ours and ours.finished)
            tf_ran += bool(theirs and theirs.finished)
            tf_failed += bool(theirs and not theirs.finished)
            if theirs and theirs.finished:
                comparable += 1
                match = (
                    same_class(kind, ours.figure, theirs.figure) if ours and ours.finished else None
                )
                same += bool(match)
                verdict = {True: "yes", False: "NO", None: "-"}[match]
        print(
            f"{program.short_name:<{width}}  {('yes' if in_scope else 'no: ' + reason):<32}  "
            f"{describe_run(kind, theirs) if in_scope else '':<28}  "
            f"{describe_run(kind, ours) if in_scope else '':<40}  {verdict}"
        )
    print()
    print(
        f"{ran_here} of {in_scope_count} in-scope programs run to the end here; "
        f"{same} of the {comparable} that run to the end under TensorFlow reach TF's "
        f"accuracy class ({CLASS_RULES})."
    )
    if not ran_tf:
        print("(TensorFlow figures from tf_results.json; --tf runs TensorFlow again.)")
    print(
        f"{len(rows) - in_scope_count} programs out of scope; {tf_failed} in-scope programs "
        "do not run to the end under TensorFlow 2.21's tf.compat.v1 either; "
        f"{in_scope_count - tf_ran - tf_failed} have no TensorFlow result yet."
    )

    groups: dict[str, list[str]] = {}
    for program, in_scope, _, _, ours, _ in rows:
        if in_scope and ours and not ours.finished:
            where = f" ({ours.error_line})" if ours.error_line else ""
            groups.setdefault(failure_key(ours), []).append(program.short_name + where)
    if groups:
        print()
        print("failures here, grouped by what is missing:")
        for key, names in sorted(groups.items(), key=lambda item: (-len(item[1]), item[0])):
            print(f"  {key}  [{len(names)}]")
            for name in names:
                print(f"      {name}")


def print_missing_names(plans) -> None:
    """Every TF1 name the in-scope programs use that dataflow lacks, read from their code (not
    only the first one each run stumbles on), with the programs using it."""
    try:
        import dataflow
    except ImportError:
        return
    users: dict[str, list[str]] = {}
    for program, source, in_scope, _, _, _ in plans:
        if not in_scope:
            continue
        for missing in sorted({first_missing(n, dataflow) for n in tf_names(source)} - {None}):
            users.setdefault(missing, []).append(program.short_name)
    if not users:
        return
    print()
    print("TF1 names the in-scope programs use that dataflow lacks (read from their code):")
    for name, programs in sorted(users.items(), key=lambda item: (-len(item[1]), item[0])):
        print(f"  {name}  [{len(programs)}]  {', '.join(programs)}")


if __name__ == "__main__":
    sys.exit(main())
