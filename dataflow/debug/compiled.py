"""The generated code of a plan's compiled regions (`dataflow.client.compiler`), to read."""

from __future__ import annotations


def compiled_source(sess, fetches, feed_dict=None, native: bool = False) -> str:
    """The Python source of the compiled regions of the plan that runs ``fetches`` in
    ``sess`` (fed the keys of ``feed_dict``; its values are not used), one function per
    region, whole cond or whole loop and one line per op, each commented with the op's name,
    type and file:line.  With ``native``, each header also says whether the region runs
    natively (numba, `dataflow.client.compiler.native`) or in Python and why, and the native code
    of a region follows its Python code (without it, the text is the same with or without numba).
    Each cond and loop that stays interpreted gets a line at the end that says why.  Nothing
    runs.  An empty string when the plan has nothing to compile and nothing to explain.
    """
    from dataflow.client.compiler import native as native_tier

    regions, refusals = sess._compile_report(fetches, list(feed_dict or ()))
    parts = []
    for region in regions:
        kind = getattr(region, "kind", "loop" if hasattr(region, "frame_name") else "region")
        text = f"# {kind} {region.name}: {len(region.members)} op(s)"
        if native:
            text += f", runs {native_tier.status(region)}"
        text += "\n" + region.source
        if native and isinstance(region.function, native_tier._Tier):
            text += f"# its native code (numba):\n{region.function.source}"
        parts.append(text)
    for what, reason in refusals.items():
        parts.append(f"# {what} stays interpreted: {reason}\n")
    return "\n".join(parts)
