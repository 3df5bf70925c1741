"""Ops on files and their bytes: ``tf.io.read_file``, ``write_file``, ``matching_files`` and
the web-safe base64 codec ``encode_base64``/``decode_base64``."""

from __future__ import annotations

import base64
import glob
import os
import re
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError, NotFoundError
from ..framework.graph import name_scope
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from .string_ops import _check_string_input, _strings

__all__ = [
    "decode_base64",
    "encode_base64",
    "match_filenames_once",
    "matching_files",
    "read_file",
    "write_file",
]


def _text(value) -> str:
    value = value.item() if isinstance(value, np.ndarray) else value
    return value.decode() if isinstance(value, bytes) else str(value)


def _scalar_string(op, index: int, what: str):
    tensor = _check_string_input(op, index, what)
    if tensor.shape.ndims not in (None, 0):
        raise ValueError(f"{what} must be a scalar, got shape {tensor.shape}")
    return tensor


# -- ReadFile / WriteFile --------------------------------------------------------------------------
def _infer_read_file(op):
    _scalar_string(op, 0, "filename")
    return [(_dtypes.string, TensorShape([]))]


def _read_file(filename):
    path = _text(filename)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise NotFoundError(None, None, f"{path}; No such file or directory") from None
    except IsADirectoryError:
        raise InvalidArgumentError(None, None, f"{path}; Is a directory") from None
    return _strings((), [data])


define_op("ReadFile", _infer_read_file, lambda attrs: _read_file, stateful=True)


def read_file(filename, name: Optional[str] = None):
    """The bytes of the file ``filename`` (a string scalar), as a string scalar."""
    filename = convert_to_tensor(filename, _dtypes.string, name="filename")
    return apply_op("ReadFile", (filename,), {}, name or "ReadFile").outputs[0]


def _infer_write_file(op):
    _scalar_string(op, 0, "filename")
    _scalar_string(op, 1, "contents")
    return []


def _write_file(filename, contents):
    path = _text(filename)
    directory = os.path.dirname(path)
    if directory:
        os.makedirs(directory, exist_ok=True)
    data = contents.item() if isinstance(contents, np.ndarray) else contents
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else str(data).encode())
    return ()


define_op("WriteFile", _infer_write_file, lambda attrs: _write_file, stateful=True)


def write_file(filename, contents, name: Optional[str] = None):
    """An op that writes ``contents`` (a string scalar) to the file ``filename``, replacing it
    and making its directory when missing."""
    filename = convert_to_tensor(filename, _dtypes.string, name="filename")
    contents = convert_to_tensor(contents, _dtypes.string, name="contents")
    return apply_op("WriteFile", (filename, contents), {}, name or "WriteFile")


# -- MatchingFiles ---------------------------------------------------------------------------------
def _infer_matching_files(op):
    pattern = _check_string_input(op, 0, "pattern")
    if pattern.shape.ndims not in (None, 0, 1):
        raise ValueError(f"pattern must be a scalar or a vector, got shape {pattern.shape}")
    return [(_dtypes.string, TensorShape([None]))]


def _matching_files(pattern):
    found = sorted({p for each in np.ravel(pattern) for p in glob.glob(_text(each))})
    return _strings((len(found),), [p.encode() for p in found])


define_op("MatchingFiles", _infer_matching_files, lambda attrs: _matching_files, stateful=True)


def matching_files(pattern, name: Optional[str] = None):
    """The sorted names of the files that match the glob ``pattern`` (a string or a vector of
    them); none matching gives an empty vector."""
    pattern = convert_to_tensor(pattern, _dtypes.string, name="pattern")
    return apply_op("MatchingFiles", (pattern,), {}, name or "MatchingFiles").outputs[0]


def match_filenames_once(pattern, name: Optional[str] = None):
    """A local variable (initialized by ``local_variables_initializer``) holding the names of
    the files that match ``pattern`` when it is initialized."""
    from ..framework.graph_keys import GraphKeys
    from .variables import Variable

    with name_scope(name or "matching_filenames") as scope:
        return Variable(
            matching_files(pattern),
            trainable=False,
            validate_shape=False,
            collections=[GraphKeys.LOCAL_VARIABLES],
            name=scope,
        )


# -- EncodeBase64 / DecodeBase64 -------------------------------------------------------------------
def _infer_same_strings(op):
    x = _check_string_input(op)
    return [(_dtypes.string, x.shape)]


def _encode_base64_kernel(attrs):
    pad = attrs["pad"]

    def encode_base64(x):
        out = [base64.urlsafe_b64encode(bytes(v)) for v in x.reshape(-1)]
        return _strings(x.shape, out if pad else [v.rstrip(b"=") for v in out])

    return encode_base64


_WEB_SAFE_BASE64 = re.compile(rb"[A-Za-z0-9_-]*")


def _decode_base64(x):
    out = []
    for v in x.reshape(-1):
        data = bytes(v).rstrip(b"=")
        if not _WEB_SAFE_BASE64.fullmatch(data):
            raise InvalidArgumentError(None, None, "Invalid character found in base64.")
        if len(data) % 4 == 1:
            raise InvalidArgumentError(None, None, "Base64 string length cannot be 1 modulo 4.")
        out.append(base64.urlsafe_b64decode(data + b"=" * (-len(data) % 4)))
    return _strings(x.shape, out)


define_op("EncodeBase64", _infer_same_strings, _encode_base64_kernel)
define_op("DecodeBase64", _infer_same_strings, lambda attrs: _decode_base64)


def encode_base64(input, pad: bool = False, name: Optional[str] = None):  # noqa: A002
    """Each string in web-safe base64 (``-`` and ``_`` for ``+`` and ``/``), with its ``=``
    padding only when ``pad``."""
    x = convert_to_tensor(input, _dtypes.string, name="input")
    return apply_op("EncodeBase64", (x,), {"pad": bool(pad)}, name or "EncodeBase64").outputs[0]


def decode_base64(input, name: Optional[str] = None):  # noqa: A002
    """Each web-safe base64 string decoded (padding optional)."""
    x = convert_to_tensor(input, _dtypes.string, name="input")
    return apply_op("DecodeBase64", (x,), {}, name or "DecodeBase64").outputs[0]


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import NotDifferentiable  # noqa: E402

for _type in ("ReadFile", "WriteFile", "MatchingFiles", "EncodeBase64", "DecodeBase64"):
    NotDifferentiable(_type)
