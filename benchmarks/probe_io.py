"""Graph files at scale and under attack: prints figures, asserts nothing.

    python benchmarks/probe_io.py            # chains of 10k, 50k and 200k ops, and hostile files
    python benchmarks/probe_io.py --quick    # chains of 10k and 50k ops, fewer repeats

1. Save and load times of chains of 10k, 50k and 200k ops beside the time to build them
   (target: each within 2x the build).  Two kinds of chain: every step multiplies by a new
   scalar constant (half the ops are Consts, each an array in the file), or by one of two
   constants made once (two arrays in the file, every other op a Mul).  Each figure is a median
   over repeats, all three timed in turn within a round; on a shared machine, read the ratios.
2. Hostile and damaged files, each loaded in a fresh Python process: what load_graph says, how
   long it takes (median of processes that do not trace allocations), and the memory it used,
   as the peak of traced allocations (tracemalloc, in one more process) and as the growth of
   the process's peak resident size (VmHWM on Linux, else ru_maxrss) over its peak before
   loading.  The child's
   address space is capped at 4 GiB, so that a regression fails rather than takes the
   machine's memory.
"""

from __future__ import annotations

# First, before numpy is imported: importing harness pins BLAS threads.
from harness import describe_machine

# isort: split
import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

import numpy as np

import dataflow as df

CHILD_ADDRESS_SPACE = 4 * 2**30


# -- 1. save and load at scale ------------------------------------------------------------------
def chain(ops: int, shared_constants: bool) -> df.Graph:
    """A chain of about ``ops`` ops: a placeholder, then Muls by scalar constants, each a new
    Const (half the ops) or one of two made once."""
    graph = df.Graph()
    with graph.as_default():
        y = df.placeholder(df.float32, [4], name="x")
        if shared_constants:
            factors = (df.constant(np.float32(0.5)), df.constant(np.float32(2.0)))
            for step in range(ops - 3):
                y = y * factors[step % 2]
        else:
            for step in range((ops - 1) // 2):
                y = y * np.float32(1.0 + step * 1e-7)
    return graph


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def probe_scale(sizes: list[int], repeats: dict[int, int]) -> None:
    print("1. save and load beside build (medians; ratios to the build time)")
    print(
        f"   {'chain':<18}{'ops':>8}{'arrays':>8}{'build s':>9}{'save s':>9}{'load s':>9}"
        f"{'save/build':>12}{'load/build':>12}{'file MB':>9}"
    )
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "chain.dfg")
        for shared in (False, True):
            kind = "two constants" if shared else "a constant a step"
            for size in sizes:
                builds, saves, loads = [], [], []
                for _ in range(repeats[size]):
                    seconds, graph = timed(functools.partial(chain, size, shared))
                    builds.append(seconds)
                    saves.append(timed(functools.partial(df.io.save_graph, graph, path))[0])
                    seconds, loaded = timed(functools.partial(df.io.load_graph, path))
                    loads.append(seconds)
                    ops = len(graph.get_operations())
                    same = len(loaded.get_operations()) == ops
                    del graph, loaded
                with zipfile.ZipFile(path) as archive:
                    arrays = len(archive.namelist()) - 1
                build, save, load = (statistics.median(t) for t in (builds, saves, loads))
                print(
                    f"   {kind:<18}{ops:>8}{arrays:>8}{build:>9.2f}{save:>9.2f}{load:>9.2f}"
                    f"{save / build:>12.2f}{load / build:>12.2f}"
                    f"{os.path.getsize(path) / 1e6:>9.1f}"
                    + ("" if same else "   (the loaded graph has another number of ops!)"),
                    flush=True,
                )


# -- 2. hostile and damaged files ---------------------------------------------------------------
def write_member_stream(path: str, name: str, pieces, repeat: int) -> None:
    """A file whose member ``name`` is ``pieces[0] + pieces[1] * repeat + pieces[2]``,
    compressed, written a megabyte at a time."""
    head, body, tail = pieces
    block = body * max(1, 2**20 // len(body))
    large = len(head) + repeat * len(body) + len(tail) >= 2**31
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open(name, "w", force_zip64=large) as member:
            member.write(head)
            left = repeat * len(body)
            while left > 0:
                member.write(block[:left])
                left -= len(block)
            member.write(tail)


def lie_about_size(path: str, declared: int) -> None:
    """Rewrites the uncompressed size that the central directory of a one-member archive (not
    zip64) declares for its member."""
    with zipfile.ZipFile(path) as archive:
        entry = archive.start_dir
    with open(path, "r+b") as f:
        f.seek(entry)
        if f.read(4) != b"PK\x01\x02":
            raise RuntimeError(f"{path}: no central directory entry at {entry}")
        f.seek(entry + 24)
        f.write(declared.to_bytes(4, "little"))


def small_graph_file(path: str) -> None:
    """A graph of a loop and a constant, saved as save_graph writes it."""
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float32, [2], name="x")
        c = df.constant(np.float32([1.0, 2.0]), name="c")
        df.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * c), [0, x])
    df.io.save_graph(graph, path)


def flip_byte_in_member(path: str, member: str) -> None:
    """Flips the middle byte of the compressed data of ``member``."""
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(member)
    with open(path, "r+b") as f:
        f.seek(info.header_offset + 26)
        name_length, extra_length = (int.from_bytes(f.read(2), "little") for _ in range(2))
        at = info.header_offset + 30 + name_length + extra_length + info.compress_size // 2
        f.seek(at)
        byte = f.read(1)[0]
        f.seek(at)
        f.write(bytes([byte ^ 0xFF]))


def hostile_files(directory: str) -> list[tuple[str, str]]:
    """``(description, path)`` of each hostile or damaged file."""
    files = []

    def path_of(name):
        return os.path.join(directory, name + ".dfg")

    bomb = path_of("memory_bomb")
    write_member_stream(bomb, "graph.json", (b"[", b"{},", b"{}]"), 85_000_000)
    files.append(("memory bomb: 255 MB of [{},{},...]", bomb))

    deep = path_of("deep")
    write_member_stream(deep, "graph.json", (b"", b"[", b""), 10_000_000)
    files.append(("10 million nested [", deep))

    honest = path_of("zip_bomb")
    write_member_stream(honest, "graph.json", (b"{", b" ", b"}"), 2**30)
    files.append(("zip bomb: 1 GiB of JSON spaces", honest))

    lying = path_of("lying_zip_bomb")
    write_member_stream(lying, "graph.json", (b"{", b" ", b"}"), 2**28)
    lie_about_size(lying, 1000)
    files.append(("zip bomb: 256 MiB declared as 1 KB", lying))

    under = path_of("zip_bomb_under_the_limit")
    write_member_stream(under, "graph.json", (b"{", b" ", b"}"), df.io.MAX_JSON_BYTES - 2)
    files.append(("255 MB of JSON spaces (at the limit)", under))

    graph = df.Graph()
    with graph.as_default():
        df.constant(np.zeros(4, np.float32), name="c")
    document, _ = df.io.graph_to_document(graph)
    document["ops"][0]["attrs"]["value"]["array"]["shape"] = [2**15, 2**15]
    big = path_of("big_declared_array")
    with zipfile.ZipFile(big, "w") as archive:
        archive.writestr("graph.json", json.dumps(document))
        archive.writestr("arrays/a0.npy", b"")
    files.append(("array declared 32768x32768 float32", big))

    graph = df.Graph()
    with graph.as_default():
        df.no_op(name="op")
    document, _ = df.io.graph_to_document(graph)
    document["ops"][0]["name"] = "/".join(["a"] * 100_000)
    nested = path_of("nested_name")
    with zipfile.ZipFile(nested, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("graph.json", json.dumps(document))
    files.append(("an op name nested 100k scopes deep", nested))

    for member in ("graph.json", "arrays/a0.npy"):
        flipped = path_of("flipped_" + member.replace("/", "_").replace(".", "_"))
        small_graph_file(flipped)
        flip_byte_in_member(flipped, member)
        files.append((f"a flipped byte in {member}", flipped))

    cut = path_of("truncated")
    small_graph_file(cut)
    with open(cut, "r+b") as f:
        f.truncate(os.path.getsize(cut) * 2 // 3)
    files.append(("a file cut at two thirds", cut))
    return files


def run_child(path: str, trace: bool) -> dict:
    command = [sys.executable, os.path.abspath(__file__), "--load-one", path]
    result = subprocess.run(
        command + (["--trace"] if trace else []), capture_output=True, text=True, timeout=600
    )
    try:
        return json.loads(result.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return {"outcome": f"child failed: {result.stderr.strip()[-200:]}"}


def probe_hostile(repeats: int) -> None:
    print(
        f"2. hostile and damaged files, each loaded in a fresh process (address space capped at "
        f"{CHILD_ADDRESS_SPACE // 2**30} GiB)"
    )
    print("   (time: median of processes; traced: tracemalloc peak; rss: growth of peak RSS)")
    print(f"   {'file':<38}{'size KB':>9}{'time s':>9}{'traced MB':>11}{'rss MB':>9}  outcome")
    with tempfile.TemporaryDirectory() as directory:
        for description, path in hostile_files(directory):
            untraced = [run_child(path, trace=False) for _ in range(repeats)]
            traced = run_child(path, trace=True)
            seconds = statistics.median(r.get("seconds", float("nan")) for r in untraced)
            rss = max(r.get("rss_mb", float("nan")) for r in untraced)
            print(
                f"   {description:<38}{os.path.getsize(path) / 1e3:>9.0f}{seconds:>9.2f}"
                f"{traced.get('traced_mb', float('nan')):>11.1f}{rss:>9.1f}"
                f"  {untraced[-1]['outcome']}",
                flush=True,
            )


def peak_resident_mb() -> float:
    """The peak resident size of this process, in MiB: VmHWM where Linux gives it, for it
    starts afresh at ``exec``, unlike ``ru_maxrss``, which starts from the parent's peak."""
    import resource

    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 2**10  # in kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10  # KiB on Linux


def load_one(path: str, trace: bool) -> None:
    """In the child: load ``path`` and print one JSON line of what happened."""
    import resource
    import tracemalloc

    resource.setrlimit(resource.RLIMIT_AS, (CHILD_ADDRESS_SPACE, CHILD_ADDRESS_SPACE))
    before = peak_resident_mb()
    if trace:
        tracemalloc.start()
    start = time.perf_counter()
    try:
        graph = df.io.load_graph(path)
        outcome = f"loaded, {len(graph.get_operations())} ops"
    except Exception as e:
        outcome = f"{type(e).__name__}: {str(e).replace(os.path.dirname(path) + '/', '')}"
    seconds = time.perf_counter() - start
    report = {
        "outcome": outcome[:110],
        "seconds": seconds,
        "rss_mb": peak_resident_mb() - before,
    }
    if trace:
        report["traced_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
    print(json.dumps(report))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="chains of 10k and 50k ops")
    parser.add_argument("--load-one", metavar="FILE", help=argparse.SUPPRESS)
    parser.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.load_one:
        load_one(args.load_one, args.trace)
        return
    sizes = [10_000, 50_000] if args.quick else [10_000, 50_000, 200_000]
    repeats = {10_000: 3 if args.quick else 5, 50_000: 1 if args.quick else 3, 200_000: 1}
    hostile_repeats = 1 if args.quick else 3
    print(
        describe_machine(
            repeats={f"{k // 1000}k ops": v for k, v in repeats.items() if k in sizes}
            | {"hostile files": hostile_repeats}
        )
    )
    probe_scale(sizes, repeats)
    probe_hostile(hostile_repeats)


if __name__ == "__main__":
    main()
