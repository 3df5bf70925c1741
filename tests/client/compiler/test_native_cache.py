"""The native tier's disk cache (`dataflow.client.compiler.native`): only a directory of the user's
own that nobody else may write is used, a module runs only as the source it was made from,
whatever the file holds, a failure to compile leaves the Python tier running, and the cache
stays within its bound."""

import os
import pickle
import stat
import warnings

import pytest
from forking import in_forked_child

pytest.importorskip("numba")

import dataflow as df  # noqa: E402
from dataflow.client import compiler  # noqa: E402
from dataflow.client.compiler import native, native_cache  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_process(tmp_path, monkeypatch):
    """Compilation and the native tier forced, a cache directory of this test's own, and no
    module loaded yet: each test starts as a new process would."""
    monkeypatch.setenv("DATAFLOW_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(native_cache, "_modules", {})
    monkeypatch.setattr(native_cache, "_refused_directories", {})
    monkeypatch.setattr(native, "_failure_reported", False)
    monkeypatch.setattr(native_cache, "_written_since_eviction", None)
    monkeypatch.setattr(native, "_worker", None)
    previous_mode = compiler.set_mode("force")
    previous_native = compiler.set_native("force")
    yield
    compiler.set_mode(previous_mode)
    compiler.set_native(previous_native)
    native._stop_worker()  # one a test started (monkeypatch then restores the one before)


def scale_and_shift(scale: float):
    x = df.placeholder(df.float64, [])
    return x, x * scale + 1.0


def run_once(x, y, value=2.0):
    """``y`` fed ``value`` for ``x``, and the native tier of its one region."""
    with df.Session() as sess:
        result = sess.run(y, {x: value})
        (region,) = next(iter(sess._plans.values())).compiled.regions
    return result, region.function


def source_of(x, y) -> str:
    """The native module source of ``y``'s region, made in a cache of its own."""
    directory = native.cache_directory()
    os.environ["DATAFLOW_CACHE_DIR"] += "-scratch"
    try:
        return run_once(x, y)[1].source
    finally:
        os.environ["DATAFLOW_CACHE_DIR"] = os.path.dirname(directory)
        native_cache._modules.clear()


def module_path(source: str) -> str:
    return os.path.join(native.cache_directory(), f"df_{native.cache_key(source)}.py")


def mode_of(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_the_cache_directories_are_made_for_their_owner_alone(tmp_path, monkeypatch):
    root = tmp_path / "new" / "cache"
    monkeypatch.setenv("DATAFLOW_CACHE_DIR", str(root))
    x, y = scale_and_shift(3.0)
    result, tier = run_once(x, y)
    assert result == 7.0 and tier.native is not None
    for path in (root, root / "native", root / "native" / "__pycache__"):
        assert mode_of(path) == 0o700, path
    assert os.path.exists(module_path(tier.source))


@pytest.mark.parametrize("shared", ["cache", "native", "__pycache__"])
def test_a_cache_directory_others_may_write_is_refused_with_one_warning(tmp_path, shared):
    x, y = scale_and_shift(3.0)
    source = source_of(x, y)
    marker = tmp_path / "payload ran"
    payload = f"open({str(marker)!r}, 'w').close()\n"
    path = module_path(source)
    os.makedirs(os.path.join(os.path.dirname(path), "__pycache__"))
    with open(path, "w") as f:
        f.write(payload + source)
    numba_index = os.path.join(os.path.dirname(path), "__pycache__", "planted.nbi")
    with open(numba_index, "wb") as f:
        pickle.dump("not read", f)
    shared_path = {
        "cache": os.path.dirname(native.cache_directory()),
        "native": native.cache_directory(),
        "__pycache__": os.path.dirname(numba_index),
    }[shared]
    os.chmod(shared_path, 0o777)
    before = sorted(os.listdir(native.cache_directory()))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result, tier = run_once(x, y)
        x2, y2 = scale_and_shift(4.0)
        result2, tier2 = run_once(x2, y2)
    assert (result, result2) == (7.0, 9.0)
    assert tier.native is not None and tier2.native is not None  # compiled in memory
    assert not marker.exists()
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(messages) == 1, messages
    assert shared_path in messages[0] and "DATAFLOW_CACHE_DIR" in messages[0]
    assert sorted(os.listdir(native.cache_directory())) == before


def test_a_cache_directory_of_another_user_is_refused(monkeypatch):
    user = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: user + 1)
    x, y = scale_and_shift(3.0)
    with pytest.warns(RuntimeWarning, match="belongs to user id"):
        result, tier = run_once(x, y)
    assert result == 7.0 and tier.native is not None
    assert not os.path.exists(native.cache_directory())


def test_a_cache_path_that_is_a_file_leaves_native_code_in_memory(tmp_path, monkeypatch):
    not_a_directory = tmp_path / "a file"
    not_a_directory.write_text("")
    monkeypatch.setenv("DATAFLOW_CACHE_DIR", str(not_a_directory))
    x, y = scale_and_shift(3.0)
    with pytest.warns(RuntimeWarning, match="a file"):
        result, tier = run_once(x, y)
    assert result == 7.0 and tier.native is not None


def test_a_payload_prepended_to_a_cached_module_never_runs(tmp_path):
    x, y = scale_and_shift(3.0)
    source = source_of(x, y)
    marker = tmp_path / "payload ran"
    path = module_path(source)
    os.makedirs(os.path.dirname(path), mode=0o700)
    with open(path, "w") as f:
        f.write(f"open({str(marker)!r}, 'w').close()\n" + source)
    result, tier = run_once(x, y)
    assert result == 7.0 and tier.native is not None
    assert not marker.exists()
    with open(path) as f:
        assert f.read() == source


def test_a_cached_module_with_a_changed_constant_is_discarded_with_its_machine_code():
    """The planted module and numba's machine code for it, as a process that imported the
    planted file would have left them: neither is used."""
    x, y = scale_and_shift(3.0)
    source = source_of(x, y)
    planted = source.replace("np.float64(3.0)", "np.float64(5.0)")
    assert planted != source and len(planted) == len(source)
    path = module_path(source)
    os.makedirs(os.path.join(os.path.dirname(path), "__pycache__"), mode=0o700)
    with open(path, "w") as f:
        f.write(planted)
    module = native._run_module("planted_module", planted, path)
    assert module.region(2.0, False)[0] == 11.0  # numba compiled and cached the planted code
    assert os.listdir(os.path.join(os.path.dirname(path), "__pycache__"))
    result, tier = run_once(x, y)
    assert result == 7.0 and tier.native is not None
    assert tier.native(2.0, False)[0] == 7.0
    assert tier.dispatcher.stats.cache_hits == {}


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty"])
def test_a_damaged_cached_module_is_written_again_and_compiled(damage):
    x, y = scale_and_shift(3.0)
    source = source_of(x, y)
    path = module_path(source)
    os.makedirs(os.path.dirname(path), mode=0o700)
    with open(path, "w") as f:
        f.write({"truncated": source[: len(source) // 2], "garbage": "\x00)(", "empty": ""}[damage])
    result, tier = run_once(x, y)
    assert result == 7.0 and tier.native is not None
    with open(path) as f:
        assert f.read() == source


def test_a_new_process_runs_the_cached_entry_without_writing_it_again():
    x, y = scale_and_shift(3.0)
    _, tier = run_once(x, y)
    path = module_path(tier.source)
    written = os.stat(path).st_mtime_ns
    native_cache._modules.clear()
    result, tier = run_once(x, y)
    assert result == 7.0 and tier.dispatcher.stats.cache_hits
    assert os.stat(path).st_mtime_ns == written


def test_a_failed_compilation_runs_python_and_warns_once(monkeypatch):
    compile_native = native._compile
    failures = []

    def failing_once_per_source(source, *arguments):
        if source not in failures:
            failures.append(source)
            raise OSError("no space left on the device")
        return compile_native(source, *arguments)

    monkeypatch.setattr(native, "_compile", failing_once_per_source)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = [run_once(*scale_and_shift(scale)) for scale in (3.0, 4.0)]
    assert [result for result, _ in results] == [7.0, 9.0]
    for _, tier in results:
        assert tier.native is None
        assert "no space left on the device" in tier.status()
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(messages) == 1 and "no space left on the device" in messages[0], messages


def test_the_background_compiler_goes_on_after_a_damaged_entry_or_a_failure(monkeypatch):
    """In "auto" mode one thread compiles every region: a damaged cached module, or any
    failure, may not stop it, or every later region of the process stays in Python."""
    compiler.set_native("auto")
    compile_native = native._compile
    fail = []

    def failing_when_asked(*arguments):
        if fail:
            raise RuntimeError("numba broke")
        return compile_native(*arguments)

    monkeypatch.setattr(native, "_compile", failing_when_asked)

    def compiled_in_background(scale, damaged=False):
        x, y = scale_and_shift(scale)
        if damaged:
            compiler.set_native("force")
            path = module_path(source_of(x, y))
            compiler.set_native("auto")
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            with open(path, "w") as f:
                f.write("region = None\n")
        with df.Session() as sess:
            for _ in range(native.AUTO_AFTER_CALLS):
                assert sess.run(y, {x: 2.0}) == 2.0 * scale + 1.0
            (region,) = next(iter(sess._plans.values())).compiled.regions
            assert region.function.pending.wait(timeout=120)
            assert sess.run(y, {x: 2.0}) == 2.0 * scale + 1.0
        return region.function

    assert compiled_in_background(3.0, damaged=True).native is not None
    fail.append(True)
    with pytest.warns(RuntimeWarning, match="numba broke"):
        assert compiled_in_background(4.0).native is None
    fail.clear()
    assert compiled_in_background(5.0).native is not None


def make_entry(directory, key: str, size: int, used: float) -> None:
    """A cache entry of key ``key``: a module and two numba files, ``size`` bytes each, last
    used at ``used``."""
    paths = [
        os.path.join(directory, f"df_{key}.py"),
        os.path.join(directory, "__pycache__", f"df_{key}.region-5.py3.nbi"),
        os.path.join(directory, "__pycache__", f"df_{key}.region-5.py3.1.nbc"),
    ]
    for path in paths:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        with open(path, "wb") as f:
            f.write(b"#" * size)
        os.utime(path, (used, used))


def entries(directory) -> set:
    found = set()
    for folder in (directory, os.path.join(directory, "__pycache__")):
        found |= {name.split(".")[0][3:] for name in os.listdir(folder) if name.startswith("df_")}
    return found


def test_eviction_removes_the_least_recently_used_entries_whole(tmp_path):
    directory = tmp_path / "native"
    for k, key in enumerate(["a", "b", "c", "d"]):
        make_entry(directory, key, 100, used=1_000_000 + [3, 1, 4, 2][k])
    native.evict(str(directory), limit=1200)
    assert entries(directory) == {"a", "b", "c", "d"}  # 1200 bytes: within the bound
    native.evict(str(directory), limit=1000)
    assert entries(directory) == {"a", "c"}  # down to 750 bytes, the oldest first
    assert len(os.listdir(directory / "__pycache__")) == 4


def test_writing_entries_keeps_the_cache_within_its_bound(monkeypatch):
    directory = native.cache_directory()
    for key in ("old1", "old2", "old3"):
        make_entry(directory, key, 20_000, used=1_000_000)
    os.chmod(os.path.dirname(directory), 0o700)
    monkeypatch.setattr(native_cache, "CACHE_LIMIT_BYTES", 100_000)
    monkeypatch.setattr(native_cache, "EVICT_EVERY", 1)
    x, y = scale_and_shift(3.0)
    _, first = run_once(x, y)
    x, y = scale_and_shift(4.0)
    _, second = run_once(x, y)  # written after the first's machine code: the cache is full
    kept = entries(directory)
    assert {native.cache_key(t.source) for t in (first, second)} <= kept
    assert len(kept) < 5


def test_a_used_entry_counts_as_recent(monkeypatch):
    x, y = scale_and_shift(3.0)
    _, tier = run_once(x, y)
    path = module_path(tier.source)
    os.utime(path, (1_000_000, os.stat(path).st_mtime))
    native_cache._modules.clear()
    run_once(x, y)
    assert os.stat(path).st_atime > 1_000_000


# -- the compile process ----------------------------------------------------------------------
def long_chain(x):
    """A region whose native function is long enough for the compile process."""
    y = x
    for k in range(native.PROCESS_MIN_LINES):
        y = y * 0.5 + float(k)
    return y


def compiled_in_auto_mode(x, y, value):
    """The native tier of ``y``'s one region once "auto" mode compiled it in the background,
    and the value of its last run."""
    compiler.set_native("auto")
    with df.Session() as sess:
        for _ in range(native.AUTO_AFTER_CALLS):
            sess.run(y, {x: value})
        (region,) = next(iter(sess._plans.values())).compiled.regions
        assert region.function.pending.wait(timeout=120)
        return region.function, sess.run(y, {x: value})


def test_auto_mode_has_a_child_process_compile_a_long_function():
    """This process loads numba's machine code from the cache; the child compiled it, so
    the runs meanwhile did not share the GIL with numba's compiler."""
    x = df.placeholder(df.float64, [])
    y = long_chain(x)
    tier, value = compiled_in_auto_mode(x, y, 3.0)
    assert tier.native is not None
    assert tier.source.count("\n") >= native.PROCESS_MIN_LINES
    assert sum(tier.dispatcher.stats.cache_hits.values()) == 1
    assert not tier.dispatcher.stats.cache_misses
    compiler.set_native("off")
    want, _ = run_once(x, y, 3.0)
    assert value == want


def test_auto_mode_compiles_here_when_the_child_process_fails(monkeypatch):
    monkeypatch.setattr(native, "_WORKER_SOURCE", "raise SystemExit(3)")
    x = df.placeholder(df.float64, [])
    y = long_chain(x)
    tier, value = compiled_in_auto_mode(x, y, 3.0)
    assert tier.native is not None
    assert sum(tier.dispatcher.stats.cache_misses.values()) == 1
    assert native._worker is False


def test_auto_mode_compiles_a_short_function_here():
    x, y = scale_and_shift(3.0)
    tier, value = compiled_in_auto_mode(x, y, 2.0)
    assert value == 7.0 and tier.native is not None
    assert sum(tier.dispatcher.stats.cache_misses.values()) == 1


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_compiles_in_the_background_too():
    """The child of a fork has no compile thread (threads do not survive a fork): it starts
    its own, or its regions would stay in Python."""
    x, y = scale_and_shift(3.0)
    assert compiled_in_auto_mode(x, y, 2.0)[0].native is not None  # the thread is running

    def in_the_child():
        x, y = scale_and_shift(4.0)
        compiler.set_native("auto")
        with df.Session() as sess:
            for _ in range(native.AUTO_AFTER_CALLS):
                sess.run(y, {x: 2.0})
            (region,) = next(iter(sess._plans.values())).compiled.regions
            compiled = region.function.pending.wait(timeout=60)
            return compiled, region.function.native is not None, float(sess.run(y, {x: 2.0}))

    assert in_forked_child(in_the_child) == repr((True, True, 9.0))


def test_a_numba_cache_directory_others_may_write_is_refused(tmp_path, monkeypatch):
    """numba's own cache directory (``NUMBA_CACHE_DIR``) holds the pickles it loads: it is
    checked as the cache directory is."""
    import numba

    shared = tmp_path / "numba cache"
    shared.mkdir()
    os.chmod(shared, 0o777)
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(shared))
    x, y = scale_and_shift(3.0)
    with pytest.warns(RuntimeWarning, match="NUMBA_CACHE_DIR"):
        result, tier = run_once(x, y)
    assert result == 7.0 and tier.native is not None
    assert not any(files for _, _, files in os.walk(shared))
