"""Managing checkpoint files and the index of a checkpoint directory, as TF1's
``tf.train`` functions of ``checkpoint_management.py`` do: `generate_checkpoint_state_proto`,
`update_checkpoint_state`, `get_checkpoint_mtimes`, `remove_checkpoint` and
`checkpoints_iterator`.

The files are dataflow's (`dataflow.io.saver`): a checkpoint ``prefix`` is the one file
``prefix.npz`` (TensorFlow's V1 and V2 layouts are one file here), and the index file
(``checkpoint`` by default) is JSON with TensorFlow's fields of ``CheckpointState``.
"""

from __future__ import annotations

import glob
import json
import os
import re
import time
from typing import Optional

from ..framework import logging as _logging
from .dfg import _atomic_write
from .saver import _INDEX, CheckpointState, _checkpoint_file, latest_checkpoint

__all__ = [
    "checkpoints_iterator",
    "generate_checkpoint_state_proto",
    "get_checkpoint_mtimes",
    "remove_checkpoint",
    "update_checkpoint_state",
]


def generate_checkpoint_state_proto(
    save_dir,
    model_checkpoint_path,
    all_model_checkpoint_paths=None,
    all_model_checkpoint_timestamps=None,
    last_preserved_timestamp=None,
) -> CheckpointState:
    """The `CheckpointState` of a directory: ``model_checkpoint_path`` is appended to
    ``all_model_checkpoint_paths`` (oldest first) unless it is its last element; when
    ``save_dir`` is relative, relative paths are made relative to it.  ``ValueError`` if
    timestamps are given and are not one per path."""
    paths = list(all_model_checkpoint_paths) if all_model_checkpoint_paths is not None else []
    if not paths or paths[-1] != model_checkpoint_path:
        _logging.info(
            "%s is not in all_model_checkpoint_paths. Manually adding it.", model_checkpoint_path
        )
        paths.append(model_checkpoint_path)
    if all_model_checkpoint_timestamps and len(all_model_checkpoint_timestamps) != len(paths):
        raise ValueError(
            "Checkpoint timestamps, if provided, must match checkpoint paths (got paths "
            f"{paths} and timestamps {list(all_model_checkpoint_timestamps)})"
        )
    save_dir = os.fspath(save_dir)
    if not os.path.isabs(save_dir):
        if not os.path.isabs(model_checkpoint_path):
            model_checkpoint_path = os.path.relpath(model_checkpoint_path, save_dir)
        paths = [p if os.path.isabs(p) else os.path.relpath(p, save_dir) for p in paths]
    return CheckpointState(
        model_checkpoint_path,
        paths,
        [float(t) for t in all_model_checkpoint_timestamps or ()],
        float(last_preserved_timestamp or 0.0),
    )


def update_checkpoint_state(
    save_dir,
    model_checkpoint_path,
    all_model_checkpoint_paths=None,
    latest_filename=None,
    all_model_checkpoint_timestamps=None,
    last_preserved_timestamp=None,
) -> None:
    """Writes the index file ``latest_filename`` (default ``checkpoint``) of ``save_dir`` from
    `generate_checkpoint_state_proto`'s state, atomically.  ``RuntimeError`` if the checkpoint
    path is the index file itself."""
    save_dir = os.fspath(save_dir)
    state = generate_checkpoint_state_proto(
        save_dir,
        os.fspath(model_checkpoint_path),
        all_model_checkpoint_paths,
        all_model_checkpoint_timestamps,
        last_preserved_timestamp,
    )
    index_file = os.path.join(save_dir, latest_filename or _INDEX)
    if index_file == state.model_checkpoint_path:
        raise RuntimeError(
            f"Save path '{model_checkpoint_path}' conflicts with path used for checkpoint "
            "state.  Please use a different save path."
        )
    index = {
        "model_checkpoint_path": state.model_checkpoint_path,
        "all_model_checkpoint_paths": list(state.all_model_checkpoint_paths),
    }
    if state.all_model_checkpoint_timestamps:
        index["all_model_checkpoint_timestamps"] = list(state.all_model_checkpoint_timestamps)
    if state.last_preserved_timestamp:
        index["last_preserved_timestamp"] = state.last_preserved_timestamp
    text = json.dumps(index, indent=1).encode("utf-8")
    _atomic_write(index_file, lambda f: f.write(text))


def get_checkpoint_mtimes(checkpoint_prefixes) -> list:
    """The modification times (seconds since the epoch) of the checkpoints of
    ``checkpoint_prefixes`` (glob patterns allowed) that exist; missing ones are left out, so
    the list may be shorter than the prefixes."""
    mtimes = []

    def match_maybe_append(pattern: str) -> bool:
        names = sorted(glob.glob(pattern))
        if names:
            mtimes.append(os.stat(names[0]).st_mtime_ns / 1e9)
            return True
        return False

    for prefix in checkpoint_prefixes:
        prefix = os.fspath(prefix)
        if not match_maybe_append(_checkpoint_file(prefix)):
            match_maybe_append(prefix)
    return mtimes


def _meta_graph_filename(checkpoint_filename: str, meta_graph_suffix: str = "meta") -> str:
    basename = re.sub(r"-[\d\?]+-of-\d+$", "", checkpoint_filename)
    return ".".join([basename, meta_graph_suffix])


def _delete_file_if_exists(pattern: str) -> None:
    for path in glob.glob(pattern):
        try:
            os.remove(path)
        except FileNotFoundError:
            _logging.warning(
                "Hit NotFoundError when deleting '%s', possibly because another process/thread "
                "is also deleting/moving the same file",
                path,
            )


def remove_checkpoint(checkpoint_prefix, checkpoint_format_version=2, meta_graph_suffix="meta"):
    """Deletes the checkpoint ``checkpoint_prefix`` (its ``.npz`` file) and its meta graph file
    ``<prefix>.<meta_graph_suffix>``, those that exist.  ``checkpoint_format_version``
    (``SaverDef.V1``/``V2``) chooses between TensorFlow's file layouts; here both are the one
    ``.npz`` file, as `Saver`'s ``write_version``."""
    if checkpoint_format_version not in (0, 1, 2):
        raise ValueError(
            "remove_checkpoint: checkpoint_format_version is SaverDef.LEGACY, V1 or V2 "
            f"(0, 1 or 2), got {checkpoint_format_version!r}"
        )
    prefix = os.fspath(checkpoint_prefix)
    _delete_file_if_exists(glob.escape(_meta_graph_filename(prefix, meta_graph_suffix)))
    _delete_file_if_exists(glob.escape(_checkpoint_file(prefix)))


def _wait_for_new_checkpoint(
    checkpoint_dir, last_checkpoint=None, seconds_to_sleep=1, timeout=None
) -> Optional[str]:
    _logging.info("Waiting for new checkpoint at %s", checkpoint_dir)
    stop_time = time.time() + timeout if timeout is not None else None
    while True:
        checkpoint_path = latest_checkpoint(checkpoint_dir)
        if checkpoint_path is None or checkpoint_path == last_checkpoint:
            if stop_time is not None and time.time() + seconds_to_sleep > stop_time:
                return None
            time.sleep(seconds_to_sleep)
        else:
            _logging.info("Found new checkpoint at %s", checkpoint_path)
            return checkpoint_path


def checkpoints_iterator(checkpoint_dir, min_interval_secs=0, timeout=None, timeout_fn=None):
    """Yields the newest checkpoint of ``checkpoint_dir`` each time a new one appears, waiting
    (polling once a second) up to ``timeout`` seconds for it (forever when None), and at least
    ``min_interval_secs`` between two.  When the wait times out the iterator stops, unless
    ``timeout_fn`` is given and returns False (then it waits again)."""
    checkpoint_path = None
    while True:
        new_checkpoint_path = _wait_for_new_checkpoint(
            checkpoint_dir, checkpoint_path, timeout=timeout
        )
        if new_checkpoint_path:
            start = time.time()
            checkpoint_path = new_checkpoint_path
            yield checkpoint_path
            time_to_next_eval = start + min_interval_secs - time.time()
            if time_to_next_eval > 0:
                time.sleep(time_to_next_eval)
        elif timeout_fn is None:
            _logging.info("Timed-out waiting for a checkpoint (without timeout_fn).")
            return
        if timeout_fn is not None and timeout_fn():
            _logging.info("Done. No new checkpoints will be generated.")
            return
