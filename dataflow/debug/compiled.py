"""The generated code of a plan's compiled regions (`dataflow.compiler`), to read."""

from __future__ import annotations


def compiled_source(sess, fetches, feed_dict=None) -> str:
    """The Python source of the compiled regions of the plan that runs ``fetches`` in
    ``sess`` (fed the keys of ``feed_dict``; its values are not used), one function per
    region, whole cond or whole loop and one line per op, each commented with the op's name,
    type and file:line.
    Nothing runs.  An empty string when the plan has no region to compile.
    """
    regions = sess._compiled_regions(fetches, list(feed_dict or ()))
    parts = []
    for region in regions:
        kind = getattr(region, "kind", "loop" if hasattr(region, "frame_name") else "region")
        header = f"# {kind} {region.name}: {len(region.members)} op(s)"
        parts.append(header + "\n" + region.source)
    return "\n".join(parts)
