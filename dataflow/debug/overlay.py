"""The picture of a run: `RunOverlay` draws a ``RunMetadata`` onto ``df.render``'s graph.

``df.render(fetches, "run.png", run_metadata=metadata)`` draws the graph as usual and, on top:

==============  ============================================  ===========================
 op              drawn                                          third line of its label
==============  ============================================  ===========================
 ran             its usual colours, border thicker the more     total time, ``×n`` firings
                 of the run's time it took                      when more than one
 fed             its usual colours                              ``fed``
 fired dead      grey, dashed (an untaken branch: its inputs    ``dead``
                 were dead, so it passed deadness on)
 did not run     faded, dotted (not needed by the fetches,      ``not run``
                 never reached, or rewritten by a pass)
==============  ============================================  ===========================

Statistics name the ops that ran, after the Session's graph passes (`dataflow.passes`): the
ops of a chain fused into one kernel, or of a subgraph folded into a constant, are drawn as not
run, except the last one, whose name the kernel or the constant took over.  For a picture of
every op, run with ``RunOptions(rewrite_options=df.RewriterConfig(disable_meta_optimizer=True))``.

An op inside a loop usually both ran (in the iterations whose predicate held) and fired dead
(in the last one); it counts as *ran*.  Each loop's box gets the number of iterations of each
of its instances that ran and how often its body ran (the executor counts the final
predicate-only iteration too, so a body that ran n times had n + 1 iterations), and how many
instances only passed dead values through (a loop on an untaken branch, or started in an outer
loop's last iteration); a collapsed box says how many of its ops ran and their time.  The
tooltip of an op (SVG) has the details.

The overlay only adds to the attributes `dataflow.render` computed; the render module calls it
through three hooks (`decorate_node`, `decorate_loop`, `decorate_collapsed`) and knows nothing
else about runs.
"""

from __future__ import annotations

import html
from typing import Any

_SUBTLE = "#607D8B"
_RAN = "#1B5E20"
_DEAD = "#9E9E9E"
_NOT_RUN = "#B0BEC5"


class RunOverlay:
    """What one run did, per op name and per loop frame, ready to decorate a picture."""

    def __init__(self, run_metadata: Any):
        if not hasattr(run_metadata, "step_stats"):
            raise TypeError(
                f"run_metadata must be a df.RunMetadata filled in by Session.run, got "
                f"{run_metadata!r}"
            )
        self.time: dict[str, float] = {}
        self.firings: dict[str, int] = {}
        self.frames: dict[str, set] = {}
        self.fed: set[str] = set()
        self.dead: dict[str, int] = {}
        # Per loop frame name: iterations of each instance that ran live, in order of start.
        self.instance_iterations: dict[str, dict[str, int]] = {}
        for stat in sorted(run_metadata.step_stats, key=lambda s: s.start):
            if stat.frame != "root":
                instances = self.instance_iterations.setdefault(stat.frame.split("[", 1)[0], {})
                instances[stat.frame] = max(instances.get(stat.frame, 0), stat.iteration + 1)
        for stat in run_metadata.step_stats:
            name = stat.node_name
            op_name, colon, slot = name.rpartition(":")
            if colon and slot.isdigit():  # a fed tensor's value entering the run
                self.fed.add(op_name)
                continue
            self.time[name] = self.time.get(name, 0.0) + (stat.end - stat.start)
            self.firings[name] = self.firings.get(name, 0) + 1
            self.frames.setdefault(name, set()).add(stat.frame)
        for stat in getattr(run_metadata, "dead_step_stats", ()) or ():
            self.dead[stat.node_name] = self.dead.get(stat.node_name, 0) + 1
        self.loop_iterations: dict[str, list[int]] = {
            name: list(counts)
            for name, counts in (getattr(run_metadata, "loop_iterations", {}) or {}).items()
        }
        self.total_time = sum(self.time.values())

    def status(self, op_name: str) -> str:
        """``"ran"``, ``"fed"``, ``"dead"`` or ``"not run"``."""
        if op_name in self.firings:
            return "ran"
        if op_name in self.fed:
            return "fed"
        if op_name in self.dead:
            return "dead"
        return "not run"

    # -- hooks called by dataflow.render -----------------------------------------------------------
    def decorate_node(self, op: Any, attrs: dict) -> None:
        status = self.status(op.name)
        tooltip = attrs.get("tooltip", op.name)
        if status == "ran":
            seconds = self.time[op.name]
            count = self.firings[op.name]
            line = format_seconds(seconds) + (f" · ×{count}" if count > 1 else "")
            share = seconds / self.total_time if self.total_time > 0 else 0.0
            attrs["penwidth"] = f"{max(float(attrs.get('penwidth', 1)), 1.5 + 4 * share):.2f}"
            attrs["label"] = _add_line(attrs.get("label", op.name), line, _RAN)
            details = f"ran {count}× for {format_seconds(seconds)} ({share:.0%} of the run)"
            frames = sorted(self.frames.get(op.name, ()))
            if frames != ["root"]:
                more = " ..." if len(frames) > 4 else ""
                details += "; frames: " + ", ".join(frames[:4]) + more
            if op.name in self.dead:
                details += f"; fired dead {self.dead[op.name]}×"
            attrs["tooltip"] = f"{tooltip}\\n{details}"
        elif status == "fed":
            attrs["label"] = _add_line(attrs.get("label", op.name), "fed", _RAN)
            attrs["tooltip"] = f"{tooltip}\\nits value was fed"
        else:
            colour = _DEAD if status == "dead" else _NOT_RUN
            attrs["label"] = _add_line(
                attrs.get("label", op.name), status, colour, dim=status == "not run"
            )
            attrs["style"] = _with_line_style(
                attrs.get("style", ""), "dashed" if status == "dead" else "dotted"
            )
            attrs["color"] = colour
            attrs["fontcolor"] = colour
            if status == "dead":
                attrs["fillcolor"] = "#F5F5F5"
                attrs["tooltip"] = (
                    f"{tooltip}\\nfired dead {self.dead[op.name]}× (an untaken branch): "
                    "its kernel never ran"
                )
            else:
                attrs["tooltip"] = (
                    f"{tooltip}\\ndid not run (not needed, never reached, or folded or fused "
                    "away by a graph pass)"
                )

    def decorate_loop(self, frame_name: str, attrs: dict) -> None:
        counts = list(self.instance_iterations.get(frame_name, {}).values())
        # The executor also counts instances that only passed dead values through (a loop on
        # an untaken branch, or in the last iteration of an outer loop).
        dead_instances = len(self.loop_iterations.get(frame_name, ())) - len(counts)
        if not counts:
            line = "fired dead: did not run" if dead_instances > 0 else "did not run"
        else:
            if len(counts) == 1:
                line = _iterations_text(counts[0])
            elif len(counts) <= 6:
                line = f"{len(counts)} instances: " + ", ".join(map(str, counts)) + " iterations"
            else:
                line = (
                    f"{len(counts)} instances, {min(counts)} to {max(counts)} iterations each, "
                    f"{sum(counts)} in all"
                )
            if dead_instances > 0:
                line += f"; {dead_instances} more fired dead"
        attrs["label"] = _add_line(attrs.get("label", frame_name), line, _RAN)

    def decorate_collapsed(self, ops: list, attrs: dict) -> None:
        ran = [op for op in ops if op.name in self.firings]
        seconds = sum(self.time[op.name] for op in ran)
        line = f"{len(ran)} of {len(ops)} ran" + (f" · {format_seconds(seconds)}" if ran else "")
        attrs["label"] = _add_line(attrs.get("label", ""), line, _RAN if ran else _NOT_RUN)

    def add_legend(self, digraph) -> None:
        """A key of the overlay's four states, beside the picture's own legend."""
        samples = [
            ("ran", {"label": _add_line("op", "1.2 ms · ×3", _RAN), "penwidth": "3"}),
            ("fed", {"label": _add_line("placeholder", "fed", _RAN)}),
            (
                "dead",
                {
                    "label": _add_line("op", "dead", _DEAD),
                    "style": "rounded,filled,dashed",
                    "color": _DEAD,
                    "fontcolor": _DEAD,
                    "fillcolor": "#F5F5F5",
                },
            ),
            (
                "not run",
                {
                    "label": _add_line("op", "not run", _NOT_RUN, dim=True),
                    "style": "rounded,dotted",
                    "color": _NOT_RUN,
                    "fontcolor": _NOT_RUN,
                },
            ),
        ]
        with digraph.subgraph(name="cluster_run_legend") as legend:
            legend.attr(label="<<b>this run</b>>", style="rounded", color="#CFD8DC")
            previous = None
            for status, attrs in samples:
                node_id = f"[run legend] {status}"
                base = {"style": "rounded,filled", "fillcolor": "#FFFFFF", "color": "#546E7A"}
                legend.node(node_id, shape="box", fontsize="9", **{**base, **attrs})
                if previous is not None:
                    legend.edge(previous, node_id, style="invis")
                previous = node_id


def format_seconds(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1.0:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:.3g} s"


def _iterations_text(count: int) -> str:
    body = count - 1
    plural = "" if count == 1 else "s"
    return f"{count} iteration{plural} (body ran {body}×)"


def _add_line(label: str, line: str, colour: str, dim: bool = False) -> str:
    """``label`` with ``line`` below it.  A Graphviz HTML label is ``<...>``; a plain label
    never starts with ``<`` (op names cannot hold one), so it is escaped into one."""
    size = 7 if dim else 8
    extra = f'<br/><font point-size="{size}" color="{colour}">{html.escape(line)}</font>'
    if label.startswith("<") and label.endswith(">"):
        return label[:-1] + extra + ">"
    return f"<{html.escape(label)}{extra}>"


def _with_line_style(style: str, line_style: str) -> str:
    parts = [p for p in style.split(",") if p and p not in ("dashed", "dotted", "solid", "bold")]
    return ",".join(parts + [line_style])
