"""Image file formats read and written without TensorFlow: PNG, BMP and GIF here on numpy and
zlib, JPEG and WebP through the optional ``images`` extra.

Each decoder takes bytes from anywhere (a file, a record, a feed), so each one bounds what
the header declares before it allocates (`dataflow.framework.array_bounds`, and TensorFlow's own
limits on width and height), and raises `CodecError` naming what is wrong on corrupt data; the ops
(`dataflow.ops.image_codec_ops`) turn it into an ``InvalidArgumentError``.

The values are TensorFlow's: PNG is converted between channel counts and bit depths as
TensorFlow asks libpng to (gray from RGB with libpng's integer weights for 0.299 and 0.587,
16 bits to 8 by dropping the low byte, 8 to 16 by repeating it); GIF frames are composed as
TensorFlow composes them (each frame over the last, transparent pixels keeping the pixel
below); JPEG is libjpeg-turbo's, with TensorFlow's choice of DCT (the fast integer one by
default) and upsampling, through ``simplejpeg``, and written by Pillow with TensorFlow's
settings; WebP is libwebp's through Pillow.
"""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np

from ..framework.array_bounds import array_bytes

_EXTRA = "pip install 'dataflow[images]'"


class CodecError(ValueError):
    """The bytes are not a valid image of the format, or ask for more than may be allocated."""


def _bounded(dims, dtype) -> None:
    try:
        array_bytes(dims, np.dtype(dtype))
    except ValueError as e:
        raise CodecError(f"the image is too large: {e}") from None


# -- formats ---------------------------------------------------------------------------------------
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def sniff(data: bytes) -> str:
    """The format of ``data`` by its first bytes, as TensorFlow tells them apart: ``"jpeg"``,
    ``"png"``, ``"gif"``, ``"bmp"``, ``"webp"`` or ``""``."""
    if data.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if data.startswith(PNG_SIGNATURE):
        return "png"
    if data.startswith(b"GIF8"):
        return "gif"
    if data.startswith(b"BM"):
        return "bmp"
    if data.startswith(b"RIFF") and len(data) > 12 and data[8:12] == b"WEBP":
        return "webp"
    return ""


# -- PNG -------------------------------------------------------------------------------------------
_PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
_PNG_DEPTHS = {0: (1, 2, 4, 8, 16), 2: (8, 16), 3: (1, 2, 4, 8), 4: (8, 16), 6: (8, 16)}
_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2))
_ADAM7 += ((0, 1, 1, 2),)
# libpng's fixed-point weights for png_set_rgb_to_gray(0.299, 0.587), out of 32768
_GRAY_RED, _GRAY_GREEN = 29900 * 32768 // 100000, 58700 * 32768 // 100000
_GRAY_BLUE = 32768 - _GRAY_RED - _GRAY_GREEN


class PngInfo:
    """What a PNG's chunks say: its header, palette, transparency and compressed data."""

    def __init__(self, data: bytes):
        if not data.startswith(PNG_SIGNATURE):
            raise CodecError("not a PNG: the signature is missing")
        self.palette = None
        self.trns = None
        idat = []
        pos = len(PNG_SIGNATURE)
        header = None
        while True:
            if pos + 8 > len(data):
                raise CodecError("the PNG ends before its IEND chunk")
            length, kind = struct.unpack_from(">I4s", data, pos)
            if length > 2**31 - 1 or pos + 12 + length > len(data):
                raise CodecError(f"the PNG chunk {kind!r} runs past the end of the data")
            body = data[pos + 8 : pos + 8 + length]
            (crc,) = struct.unpack_from(">I", data, pos + 8 + length)
            pos += 12 + length
            critical = not kind[0] & 0x20
            if zlib.crc32(kind + body) != crc:
                if critical:
                    raise CodecError(f"the PNG chunk {kind!r} has a bad CRC")
                continue  # libpng drops an ancillary chunk with a bad CRC
            if header is None and kind != b"IHDR":
                raise CodecError("the PNG does not start with an IHDR chunk")
            if kind == b"IHDR":
                if header is not None or length != 13:
                    raise CodecError("the PNG has a bad IHDR chunk")
                header = struct.unpack(">IIBBBBB", body)
            elif kind == b"PLTE":
                if length % 3 or not 0 < length <= 768:
                    raise CodecError("the PNG has a bad palette")
                self.palette = np.frombuffer(body, np.uint8).reshape(-1, 3)
            elif kind == b"tRNS":
                self.trns = body
            elif kind == b"IDAT":
                idat.append(body)
            elif kind == b"IEND":
                break
            elif critical:
                raise CodecError(f"the PNG has an unknown critical chunk {kind!r}")
        width, height, depth, color, compression, filtering, interlace = header
        if color not in _PNG_CHANNELS or depth not in _PNG_DEPTHS[color]:
            raise CodecError(f"the PNG has colour type {color} with bit depth {depth}")
        if compression or filtering or interlace > 1:
            raise CodecError("the PNG has an unknown compression, filter or interlace method")
        if color == 3 and self.palette is None:
            raise CodecError("the PNG has a palette colour type but no palette")
        if not idat:
            raise CodecError("the PNG has no image data")
        if not 0 < width < 2**27 or not 0 < height < 2**27 or width * height >= 2**29:
            raise CodecError(f"PNG size too large for int: {width} by {height}")
        self.width, self.height, self.depth, self.color = width, height, depth, color
        self.interlaced = bool(interlace)
        self.samples = _PNG_CHANNELS[color]
        self.compressed = b"".join(idat)

    @property
    def has_alpha(self) -> bool:
        return bool(self.color & 4)

    @property
    def channels(self) -> int:
        """The channels TensorFlow decodes the PNG to when asked for 0."""
        if self.color == 3:
            return 4 if self.trns is not None else 3
        return self.samples


def _passes(info: PngInfo):
    """(x0, y0, dx, dy) of each pass of the image (one pass when not interlaced)."""
    return _ADAM7 if info.interlaced else ((0, 0, 1, 1),)


def _row_bytes(info: PngInfo, width: int) -> int:
    return (width * info.samples * info.depth + 7) // 8


def _unfilter(raw: bytes, rows: int, row_bytes: int, bpp: int) -> np.ndarray:
    """The rows of one pass with their PNG filters undone."""
    out = np.zeros((rows, row_bytes), np.uint8)
    prior = np.zeros(row_bytes, np.uint8)
    for y in range(rows):
        start = y * (row_bytes + 1)
        kind = raw[start]
        line = np.frombuffer(raw, np.uint8, row_bytes, start + 1)
        if kind == 0:
            current = line.copy()
        elif kind == 2:
            current = line + prior
        elif kind == 1:
            padded = np.zeros(-(-row_bytes // bpp) * bpp, np.uint8)
            padded[:row_bytes] = line
            current = np.cumsum(padded.reshape(-1, bpp), axis=0, dtype=np.uint8).reshape(-1)
            current = current[:row_bytes].copy()
        elif kind in (3, 4):
            current = bytearray(line.tobytes())
            up = prior.tobytes()
            for i in range(row_bytes):
                left = current[i - bpp] if i >= bpp else 0
                if kind == 3:
                    current[i] = (current[i] + ((left + up[i]) >> 1)) & 0xFF
                    continue
                corner = up[i - bpp] if i >= bpp else 0
                p = left + up[i] - corner
                pa, pb, pc = abs(p - left), abs(p - up[i]), abs(p - corner)
                guess = left if pa <= pb and pa <= pc else up[i] if pb <= pc else corner
                current[i] = (current[i] + guess) & 0xFF
            current = np.frombuffer(bytes(current), np.uint8)
        else:
            raise CodecError(f"the PNG has an unknown filter type {kind} in row {y}")
        out[y] = current
        prior = out[y]
    return out


def _unpack(rows: np.ndarray, info: PngInfo, width: int) -> np.ndarray:
    """Samples ``[rows, width, samples]`` (uint8, or uint16 for 16-bit images) of packed rows."""
    depth, count = info.depth, width * info.samples
    if depth == 16:
        values = rows.view(">u2")[:, :count].astype(np.uint16)
    elif depth == 8:
        values = rows[:, :count]
    else:
        per_byte = 8 // depth
        shifts = np.arange(8 - depth, -1, -depth, dtype=np.uint8)
        values = (rows[:, :, None] >> shifts) & ((1 << depth) - 1)
        values = values.reshape(rows.shape[0], rows.shape[1] * per_byte)[:, :count]
    return values.reshape(rows.shape[0], width, info.samples)


def _png_samples(info: PngInfo) -> np.ndarray:
    """The image's samples ``[height, width, samples]`` at its own bit depth."""
    _bounded((info.height, _row_bytes(info, info.width) + 1), np.uint8)
    expected = 0
    shapes = []
    for x0, y0, dx, dy in _passes(info):
        width = max(0, -(-(info.width - x0) // dx))
        height = max(0, -(-(info.height - y0) // dy))
        if width and height:
            expected += height * (_row_bytes(info, width) + 1)
        shapes.append((width, height))
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(info.compressed, expected)
    except zlib.error as e:
        raise CodecError(f"the PNG's image data does not inflate: {e}") from None
    if len(raw) < expected:
        raise CodecError(f"Not enough image data: {len(raw)} bytes of {expected}")
    dtype = np.uint16 if info.depth == 16 else np.uint8
    _bounded((info.height, info.width, info.samples), dtype)
    samples = np.zeros((info.height, info.width, info.samples), dtype)
    bpp = max(1, info.samples * info.depth // 8)
    at = 0
    for (x0, y0, dx, dy), (width, height) in zip(_passes(info), shapes):
        if not width or not height:
            continue
        row_bytes = _row_bytes(info, width)
        size = height * (row_bytes + 1)
        rows = _unfilter(raw[at : at + size], height, row_bytes, bpp)
        at += size
        samples[y0::dy, x0::dx] = _unpack(rows, info, width)
    return samples


def decode_png(data: bytes, channels: int = 0, bits: int = 8) -> np.ndarray:
    """The PNG ``data`` as ``[height, width, channels]`` of uint8 (``bits`` 8) or uint16
    (``bits`` 16); ``channels`` 0 keeps the image's own (a palette gives RGB, or RGBA with a
    transparency chunk)."""
    info = PngInfo(data)
    channels = channels or info.channels
    _bounded((info.height, info.width, channels), np.uint16 if bits == 16 else np.uint8)
    samples = _png_samples(info)
    depth = info.depth
    want_alpha = channels % 2 == 0
    full = (1 << depth) - 1
    alpha = None
    if info.color == 3:
        palette = np.zeros((256, 3), np.uint8)
        palette[: len(info.palette)] = info.palette
        indices = samples[..., 0]
        color = palette[indices]
        if want_alpha and info.trns is not None:
            table = np.full(256, 255, np.uint8)
            trns = np.frombuffer(info.trns[:256], np.uint8)
            table[: len(trns)] = trns
            alpha = table[indices]
        depth = 8
    else:
        color = samples[..., :-1] if info.has_alpha else samples
        if info.has_alpha and want_alpha:
            alpha = samples[..., -1]
        elif want_alpha and info.trns is not None:
            if info.color == 0 and len(info.trns) >= 2:
                key = np.array(struct.unpack(">H", info.trns[:2]), np.uint32) & full
            elif info.color == 2 and len(info.trns) >= 6:
                key = np.array(struct.unpack(">3H", info.trns[:6]), np.uint32) & full
            else:
                key = None
            if key is not None:
                same = np.all(color == key.astype(color.dtype), axis=-1)
                alpha = np.where(same, 0, full).astype(color.dtype)
        if info.color in (0, 4) and depth < 8:
            color = (color.astype(np.uint16) * (255 // full)).astype(np.uint8)
            if alpha is not None:
                alpha = (alpha.astype(np.uint16) * (255 // full)).astype(np.uint8)
    if want_alpha and alpha is None:
        # png_set_add_alpha with TensorFlow's filler (1 << bit_depth) - 1, cut to the bytes
        # of the samples it is added to, as libpng does
        filler = full if depth == 16 else full & 0xFF
        alpha = np.full(color.shape[:2], filler, color.dtype)
    gray = color.shape[-1] == 1
    if channels < 3 and not gray:
        wide = color.astype(np.uint32)
        red, green, blue = wide[..., 0], wide[..., 1], wide[..., 2]
        weighted = _GRAY_RED * red + _GRAY_GREEN * green + _GRAY_BLUE * blue
        # libpng truncates 8-bit gray and rounds 16-bit gray
        weighted = (weighted + (16384 if depth == 16 else 0)) >> 15
        same = (red == green) & (red == blue)
        color = np.where(same, red, weighted).astype(color.dtype)[..., None]
    elif channels >= 3 and gray:
        color = np.repeat(color, 3, axis=-1)
    planes = [color] if alpha is None else [color, alpha[..., None]]
    image = np.concatenate(planes, axis=-1)
    if depth == 16 and bits == 8:
        return (image >> 8).astype(np.uint8)
    if depth <= 8 and bits == 16:
        return image.astype(np.uint16) * 257
    return image.astype(np.uint16 if bits == 16 else np.uint8)


def png_shape(data: bytes) -> tuple[int, int, int]:
    info = PngInfo(data)
    return info.height, info.width, info.channels


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def _filter_rows(image: np.ndarray, bpp: int) -> bytes:
    """The rows of ``image`` (``[height, row_bytes]`` of uint8) filtered as libpng filters
    them by default: for each row the filter whose output has the least sum of absolute
    values (bytes read as signed)."""
    height, row_bytes = image.shape
    out = bytearray()
    prior = np.zeros(row_bytes, np.int16)
    for y in range(height):
        row = image[y].astype(np.int16)
        left = np.concatenate([np.zeros(bpp, np.int16), row[:-bpp]])[:row_bytes]
        corner = np.concatenate([np.zeros(bpp, np.int16), prior[:-bpp]])[:row_bytes]
        p = left + prior - corner
        pa, pb, pc = np.abs(p - left), np.abs(p - prior), np.abs(p - corner)
        paeth = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, prior, corner))
        candidates = (row, row - left, row - prior, row - ((left + prior) >> 1), row - paeth)
        best, best_sum, best_bytes = 0, None, None
        for kind, filtered in enumerate(candidates):
            filtered = (filtered & 0xFF).astype(np.uint8)
            signed = filtered.astype(np.int16)
            total = int(np.minimum(signed, 256 - signed).sum())
            if best_sum is None or total < best_sum:
                best, best_sum, best_bytes = kind, total, filtered
        out.append(best)
        out += best_bytes.tobytes()
        prior = row
    return bytes(out)


def encode_png(image: np.ndarray, compression: int = -1) -> bytes:
    """``image`` (``[height, width, channels]`` of uint8 or uint16, 1 to 4 channels) as PNG
    bytes, compressed at zlib level ``compression`` (-1 for zlib's default)."""
    height, width, channels = image.shape
    if channels not in (1, 2, 3, 4):
        raise CodecError(f"image must have 1, 2, 3, or 4 channels, got {channels}")
    if not height or not width:
        raise CodecError(f"cannot encode an empty image of shape {list(image.shape)}")
    if not -1 <= compression <= 9:
        raise CodecError(f"compression should be in [-1,9], got {compression}")
    depth = 16 if image.dtype == np.uint16 else 8
    color = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    rows = image.astype(">u2" if depth == 16 else np.uint8).reshape(height, -1)
    raw = _filter_rows(rows.view(np.uint8).reshape(height, -1), channels * depth // 8)
    window = 15
    if len(raw) <= 16384:  # libpng shrinks zlib's window to the data
        half = 1 << (window - 1)
        while len(raw) + 262 <= half:
            half >>= 1
            window -= 1
        window = max(window, 9)
    packer = zlib.compressobj(compression, zlib.DEFLATED, window, 9, zlib.Z_FILTERED)
    stream = bytearray(packer.compress(raw) + packer.flush())
    info = stream[0] >> 4
    if len(raw) <= 16384 and len(raw) <= 1 << (info + 7):
        # libpng claims the smallest window the data fits in, in zlib's header
        half = 1 << (info + 7)
        while info > 0 and len(raw) <= half:
            half >>= 1
            info -= 1
        stream[0] = (stream[0] & 0x0F) | (info << 4)
        level = stream[1] & 0xE0
        stream[1] = level + 0x1F - ((stream[0] << 8) + level) % 0x1F
    stream = bytes(stream)
    header = struct.pack(">IIBBBBB", width, height, depth, color, 0, 0, 0)
    parts = [PNG_SIGNATURE, _chunk(b"IHDR", header)]
    parts += [_chunk(b"IDAT", stream[i : i + 8192]) for i in range(0, len(stream), 8192)]
    parts.append(_chunk(b"IEND", b""))
    return b"".join(parts)


# -- BMP -------------------------------------------------------------------------------------------
def decode_bmp(data: bytes, channels: int = 0) -> np.ndarray:
    """An uncompressed BMP of 8, 24 or 32 bits per pixel as ``[height, width, channels]``
    uint8 (RGB or RGBA order), as TensorFlow reads it."""
    if channels == 1:
        raise CodecError(f"`channels` must be 0, 3 or 4 for BMP, but got {channels}")
    if len(data) < 32:
        raise CodecError(
            "Incomplete bmp content, requires at least 32 bytes to find the header size, "
            f"width, height, and bpp, got {len(data)} bytes"
        )
    (offset,) = struct.unpack_from("<i", data, 10)
    width, height = struct.unpack_from("<ii", data, 18)
    (bpp,) = struct.unpack_from("<h", data, 28)
    source = bpp // 8
    if source not in (1, 3, 4):
        raise CodecError(
            f"Number of channels inherent in the image must be 1, 3 or 4, was {source}"
        )
    if width <= 0:
        raise CodecError("Width must be positive")
    if height == 0:
        raise CodecError("Height must be nonzero")
    if offset < 0:
        raise CodecError("header size must be nonnegative")
    rows = abs(height)
    if width * rows >= (2**31 - 1) // 8:
        raise CodecError("Total possible pixel bytes must be less than 2^30")
    row_size = (source * width + 3) // 4 * 4
    difference = len(data) - offset - row_size * rows
    if difference:
        raise CodecError(
            "Input size should match (header_size + row_size * abs_height) but they differ "
            f"by {difference}"
        )
    channels = channels or source
    _bounded((rows, width, channels), np.uint8)
    pixels = np.frombuffer(data, np.uint8, row_size * rows, offset).reshape(rows, row_size)
    pixels = pixels[:, : width * source].reshape(rows, width, source)
    if height > 0:
        pixels = pixels[::-1]
    if source == 1:
        color = np.repeat(pixels, 3, axis=-1) if channels >= 3 else pixels
        alpha = None
    else:
        color = pixels[..., 2::-1]
        alpha = pixels[..., 3:4] if source == 4 else None
    if channels == 4:
        alpha = np.full((rows, width, 1), 255, np.uint8) if alpha is None else alpha
        return np.ascontiguousarray(np.concatenate([color, alpha], axis=-1))
    return np.ascontiguousarray(color)


# -- GIF -------------------------------------------------------------------------------------------
def _lzw(data: bytes, minimum: int, count: int) -> bytes:
    """The ``count`` colour indices of GIF LZW ``data`` with code size ``minimum``."""
    if not 2 <= minimum <= 8:
        raise CodecError(f"the GIF has an LZW code size of {minimum}")
    clear, end = 1 << minimum, (1 << minimum) + 1
    table = [bytes([i]) for i in range(clear)] + [b"", b""]
    size = minimum + 1
    out = bytearray()
    previous = None
    bits = value = 0
    for byte in data:
        value |= byte << bits
        bits += 8
        while bits >= size:
            code = value & ((1 << size) - 1)
            value >>= size
            bits -= size
            if code == clear:
                del table[clear + 2 :]
                size, previous = minimum + 1, None
                continue
            if code == end:
                return bytes(out[:count])
            if previous is None:
                if code >= len(table):
                    raise CodecError("the GIF's image data is corrupt")
                entry = table[code]
            elif code < len(table):
                entry = table[code]
                table.append(previous + entry[:1])
            elif code == len(table):
                entry = previous + previous[:1]
                table.append(entry)
            else:
                raise CodecError("the GIF's image data is corrupt")
            out += entry
            if len(out) >= count:
                return bytes(out[:count])
            previous = entry
            if len(table) == 1 << size and size < 12:
                size += 1
    return bytes(out[:count])


def _gif_blocks(data: bytes, pos: int) -> tuple[bytes, int]:
    parts = []
    while True:
        if pos >= len(data):
            raise CodecError("the GIF ends inside a block")
        length = data[pos]
        pos += 1
        if not length:
            return b"".join(parts), pos
        parts.append(data[pos : pos + length])
        pos += length


def _gif_table(data: bytes, pos: int, flags: int) -> tuple[np.ndarray, int]:
    size = 3 << ((flags & 7) + 1)
    if pos + size > len(data):
        raise CodecError("the GIF ends inside a colour table")
    table = np.frombuffer(data, np.uint8, size, pos).reshape(-1, 3)
    return table, pos + size


def decode_gif(data: bytes, first_only: bool = False) -> np.ndarray:
    """The frames of GIF ``data`` as ``[frames, height, width, 3]`` uint8 on the logical
    screen, composed as TensorFlow composes them: a frame starts as the frame before it (the
    first as black) and its transparent pixels keep what was there."""
    if len(data) < 13 or data[:3] != b"GIF":
        raise CodecError("not a GIF: the signature is missing")
    width, height, flags = struct.unpack_from("<HHB", data, 6)
    pos = 13
    global_table = None
    if flags & 0x80:
        global_table, pos = _gif_table(data, pos, flags)
    frames = []
    transparent = -1
    while True:
        if pos >= len(data):
            raise CodecError("the GIF ends before its trailer")
        kind = data[pos]
        pos += 1
        if kind == 0x3B:
            break
        if kind == 0x21:
            if pos >= len(data):
                raise CodecError("the GIF ends inside an extension")
            label = data[pos]
            body, pos = _gif_blocks(data, pos + 1)
            if label == 0xF9 and len(body) >= 4:
                transparent = body[3] if body[0] & 1 else -1
            continue
        if kind != 0x2C:
            raise CodecError(f"the GIF has an unknown block 0x{kind:02x}")
        if pos + 9 > len(data):
            raise CodecError("the GIF ends inside an image descriptor")
        left, top, frame_width, frame_height, frame_flags = struct.unpack_from("<HHHHB", data, pos)
        pos += 9
        table = global_table
        if frame_flags & 0x80:
            table, pos = _gif_table(data, pos, frame_flags)
        if pos >= len(data):
            raise CodecError("the GIF ends inside an image")
        minimum = data[pos]
        compressed, pos = _gif_blocks(data, pos + 1)
        if table is None:
            raise CodecError("missing color map")
        if not frames:
            _bounded((1, height, width, 3), np.uint8)
        _bounded((len(frames) + 1, height, width, 3), np.uint8)
        _bounded((frame_height, frame_width), np.uint8)
        count = frame_width * frame_height
        indices = np.frombuffer(_lzw(compressed, minimum, count), np.uint8)
        if len(indices) < count:
            indices = np.concatenate([indices, np.zeros(count - len(indices), np.uint8)])
        indices = indices.reshape(frame_height, frame_width)
        if frame_flags & 0x40 and frame_height:
            order = [row for start, step in ((0, 8), (4, 8), (2, 4), (1, 2))
                     for row in range(start, frame_height, step)]  # fmt: skip
            placed = np.empty_like(indices)
            placed[order] = indices
            indices = placed
        canvas = frames[-1].copy() if frames else np.zeros((height, width, 3), np.uint8)
        bottom, right = min(top + frame_height, height), min(left + frame_width, width)
        if bottom > top and right > left:
            window = indices[: bottom - top, : right - left]
            keep = window == transparent
            if np.any(window[~keep] >= len(table)):
                bad = int(window[~keep].max())
                raise CodecError(f"found color index {bad} outside of color map range {len(table)}")
            colors = table[np.minimum(window, len(table) - 1)]
            region = canvas[top:bottom, left:right]
            if not frames:
                region[keep] = 0
            region[~keep] = colors[~keep]
        frames.append(canvas)
        transparent = -1
        if first_only:
            break
    if not frames:
        raise CodecError("Gif file does not contain any image")
    return np.stack(frames)


# -- JPEG ------------------------------------------------------------------------------------------
def _simplejpeg():
    try:
        import simplejpeg
    except ImportError:
        raise CodecError(
            f"decoding JPEG needs the simplejpeg package (libjpeg-turbo): {_EXTRA}"
        ) from None
    return simplejpeg


def _pillow():
    try:
        from PIL import Image
    except ImportError:
        raise CodecError(f"this image format needs the Pillow package: {_EXTRA}") from None
    return Image


_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def jpeg_header(data: bytes) -> tuple[int, int, int, bool]:
    """(height, width, components, Adobe marker seen) from the JPEG's frame header."""
    if not data.startswith(b"\xff\xd8"):
        raise CodecError("not a JPEG: the start-of-image marker is missing")
    pos, adobe = 2, False
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:  # stray bytes between segments, which libjpeg skips
            pos += 1
            continue
        marker = data[pos + 1]
        if marker == 0xFF:
            pos += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):
            pos += 2
            continue
        (length,) = struct.unpack_from(">H", data, pos + 2)
        if length < 2 or pos + 2 + length > len(data):
            raise CodecError("the JPEG ends inside a marker segment")
        if marker == 0xEE and data[pos + 4 : pos + 9] == b"Adobe":
            adobe = True
        if marker in _SOF:
            if length < 8:
                raise CodecError("the JPEG has a bad frame header")
            _, height, width, components = struct.unpack_from(">BHHB", data, pos + 4)
            if not height or not width or components not in (1, 3, 4):
                raise CodecError(f"the JPEG has a bad frame of {height}x{width}x{components}")
            return height, width, components, adobe
        if marker == 0xDA:
            break
        pos += 2 + length
    raise CodecError("the JPEG has no frame header")


def _without_stray_bytes(data: bytes) -> bytes:
    """``data`` without bytes between the segments of its header: libjpeg skips them with a
    warning (TensorFlow decodes such files), where TurboJPEG's header reader stops."""
    parts, pos = [data[:2]], 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            while pos < len(data) and data[pos] != 0xFF:
                pos += 1
            if pos >= len(data):
                return data
            continue
        marker = data[pos + 1]
        if marker == 0xFF:
            pos += 1
            continue
        if marker == 0xDA:  # the first scan: the rest is entropy-coded data
            parts.append(data[pos:])
            return b"".join(parts)
        if marker in (0x01, *range(0xD0, 0xD8)):
            parts.append(data[pos : pos + 2])
            pos += 2
            continue
        (length,) = struct.unpack_from(">H", data, pos + 2)
        parts.append(data[pos : pos + 2 + length])
        pos += 2 + length
    return data


def decode_jpeg(
    data: bytes,
    channels: int = 0,
    ratio: int = 1,
    fancy_upscaling: bool = True,
    fast_dct: bool = True,
) -> np.ndarray:
    """The JPEG ``data`` as ``[height, width, channels]`` uint8, scaled down by ``ratio``
    (1, 2, 4 or 8), with libjpeg-turbo's fast or accurate integer DCT."""
    height, width, components, adobe = jpeg_header(data)
    if channels == 4:
        raise CodecError("JPEG does not support 4 channels")
    channels = channels or (1 if components == 1 else 3)
    _bounded((-(-height // ratio), -(-width // ratio), channels), np.uint8)
    simplejpeg = _simplejpeg()
    options = {
        "fastdct": fast_dct,
        "fastupsample": not fancy_upscaling,
        "min_height": -(-height // ratio),
        "min_width": -(-width // ratio),
        "min_factor": ratio,
    }
    try:
        if components == 4:
            if channels == 1:
                raise CodecError("a CMYK JPEG cannot be decoded to one channel")
            cmyk = simplejpeg.decode_jpeg(data, colorspace="CMYK", **options).astype(np.int32)
            ink, black = cmyk[..., :3], cmyk[..., 3:]
            # TensorFlow's conversion: Adobe's CMYK is stored inverted
            rgb = ink * black // 255 if adobe else (255 - ink) * (255 - black) // 255
            return rgb.astype(np.uint8)
        space = "GRAY" if channels == 1 else "RGB"
        data = _without_stray_bytes(data)
        try:
            image = simplejpeg.decode_jpeg(data, colorspace=space, **options)
        except ValueError as e:
            if "Premature end" in str(e):
                raise  # a truncated JPEG is an error in TensorFlow too
            # libjpeg's other warnings (corrupt data it can step over) do not stop TensorFlow
            image = simplejpeg.decode_jpeg(data, colorspace=space, strict=False, **options)
    except ValueError as e:
        raise CodecError(f"Invalid JPEG data: {e}") from None
    return np.ascontiguousarray(image).reshape(image.shape[0], image.shape[1], channels)


def _jpeg_segments(data: bytes, units: int, x_density: int, y_density: int, xmp: bytes) -> bytes:
    """``data`` with TensorFlow's JFIF density and, when given, its XMP segment."""
    if data[2:4] == b"\xff\xe0" and data[6:11] == b"JFIF\x00":
        data = data[:13] + struct.pack(">BHH", units, x_density, y_density) + data[18:]
        insert_at = 4 + struct.unpack_from(">H", data, 4)[0]
    else:
        insert_at = 2
    if xmp:
        body = b"http://ns.adobe.com/xap/1.0/\x00" + xmp
        if len(body) + 2 > 0xFFFF:
            raise CodecError("xmp_metadata is too long for a JPEG segment")
        segment = b"\xff\xe1" + struct.pack(">H", len(body) + 2) + body
        data = data[:insert_at] + segment + data[insert_at:]
    return data


def encode_jpeg(
    image: np.ndarray,
    quality: int = 95,
    progressive: bool = False,
    optimize_size: bool = False,
    chroma_downsampling: bool = True,
    density_unit: int = 1,
    x_density: int = 300,
    y_density: int = 300,
    xmp: bytes = b"",
) -> bytes:
    """``image`` (``[height, width, 1 or 3]`` uint8) as JPEG bytes with TensorFlow's settings,
    by libjpeg-turbo through Pillow."""
    height, width, channels = image.shape
    if channels not in (1, 3):
        raise CodecError(f"image must have 1 or 3 channels, got {channels}")
    if not height or not width:
        raise CodecError(f"cannot encode an empty image of shape {list(image.shape)}")
    if not 0 <= quality <= 100:
        raise CodecError(f"quality must be in [0,100], got {quality}")
    Image = _pillow()
    picture = Image.fromarray(np.ascontiguousarray(image[..., 0] if channels == 1 else image))
    out = io.BytesIO()
    options = {"quality": int(quality), "progressive": progressive, "optimize": optimize_size}
    if channels == 3:
        options["subsampling"] = 2 if chroma_downsampling else 0
    picture.save(out, "JPEG", **options)
    return _jpeg_segments(out.getvalue(), density_unit, x_density, y_density, xmp)


# -- WebP ------------------------------------------------------------------------------------------
def decode_webp(data: bytes, channels: int = 0) -> np.ndarray:
    """The frames of WebP ``data`` as ``[frames, height, width, channels]`` uint8: RGB, or
    RGBA for an image with alpha and for every animation (as libwebp gives them)."""
    if sniff(data) != "webp":
        raise CodecError("Failed to decode WebP header.")
    Image = _pillow()
    try:
        picture = Image.open(io.BytesIO(data), formats=["WEBP"])
        animated = getattr(picture, "n_frames", 1) > 1
        own = 4 if animated or "A" in picture.mode else 3
        if channels and channels != own:
            raise CodecError("Number of channels requested does not match input")
        if animated and channels not in (0, 4):
            raise CodecError("WebP Animation must be 4 channel RGBA")
        _bounded((getattr(picture, "n_frames", 1), picture.height, picture.width, own), np.uint8)
        frames = []
        for index in range(getattr(picture, "n_frames", 1)):
            picture.seek(index)
            frames.append(np.asarray(picture.convert("RGBA" if own == 4 else "RGB")))
    except CodecError:
        raise
    except Exception as e:  # Pillow raises many kinds on corrupt data
        raise CodecError(f"Failed to decode WebP image: {e}") from None
    return np.stack(frames)
