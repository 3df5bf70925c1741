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
 rewritten       faded, dotted, in the passes' colour (a        ``fused``, ``folded``, ...
                 graph pass took it out of the plan)
 did not run     faded, dotted (not needed by the fetches,      ``not run``
                 or never reached)
==============  ============================================  ===========================

The Session runs its graph passes (`dataflow.passes`) before it runs a plan, so the ops that
ran are not always the user's: statistics are drawn on the user's op each execution stands for
(``NodeExecStats.original_op_name``: a fused chain's kernel on the last op of the chain, a
hoisted op on the op that was moved), with the type that ran when it differs, and the ops a pass
took out of the plan say what happened to them (``RunMetadata.rewritten_ops``): the other ops
of a fused chain "fused", a folded subgraph "folded", a merged duplicate "merged".  For a
picture in which every op runs as written, run with
``RunOptions(rewrite_options=df.RewriterConfig(disable_meta_optimizer=True))``.

An op inside a loop usually both ran (in the iterations whose predicate held) and fired dead
(in the last one); it counts as *ran*.  Each loop's box gets the number of iterations of each
of its instances that ran and how often its body ran (the executor counts the final
predicate-only iteration too, so a body that ran n times had n + 1 iterations), and how many
instances only passed dead values through (a loop on an untaken branch, or started in an outer
loop's last iteration).  A collapsed box sums up its ops (how many ran, with their firings and
time, how many fired dead or were rewritten by the passes) and, for a collapsed loop, gives its
iterations.  The tooltip of an op (SVG) has the details.

The overlay only adds to the attributes `dataflow.render` computed; the render module calls it
through three hooks (`decorate_node`, `decorate_loop`, `decorate_collapsed`) and knows nothing
else about runs.
"""

from __future__ import annotations

import html
from collections import Counter
from typing import Any, Optional

_RAN = "#1B5E20"
_DEAD = "#9E9E9E"
_NOT_RUN = "#B0BEC5"
_REWRITTEN = "#7E57C2"


class RunOverlay:
    """What one run did, per op name and per loop frame, ready to decorate a picture."""

    def __init__(self, run_metadata: Any):
        if not hasattr(run_metadata, "step_stats"):
            raise TypeError(
                f"run_metadata must be a df.RunMetadata filled in by Session.run, got "
                f"{run_metadata!r}"
            )
        self.time: dict[str, float] = {}
        # Per user op: the ops that ran in its place, (name, type) -> firings (usually just
        # the op itself; after graph passes, e.g. a hoisted copy and the Enter it feeds).
        self.executions: dict[str, dict[tuple[str, str], int]] = {}
        self.frames: dict[str, set] = {}
        self.fed: set[str] = set()
        self.dead: dict[str, int] = {}
        self.rewritten: dict[str, str] = dict(getattr(run_metadata, "rewritten_ops", {}) or {})
        # Per loop frame name: iterations of each instance that ran live, in order of start.
        self.instance_iterations: dict[str, dict[str, int]] = {}
        for stat in sorted(run_metadata.step_stats, key=lambda s: s.start):
            if stat.frame != "root":
                instances = self.instance_iterations.setdefault(stat.frame.split("[", 1)[0], {})
                instances[stat.frame] = max(instances.get(stat.frame, 0), stat.iteration + 1)
        for stat in run_metadata.step_stats:
            name = getattr(stat, "original_op_name", "") or stat.node_name
            op_name, colon, slot = name.rpartition(":")
            if colon and slot.isdigit():  # a fed tensor's value entering the run
                self.fed.add(op_name)
                continue
            ran = self.executions.setdefault(name, {})
            ran[stat.node_name, stat.op_type] = ran.get((stat.node_name, stat.op_type), 0) + 1
            self.time[name] = self.time.get(name, 0.0) + (stat.end - stat.start)
            self.frames.setdefault(name, set()).add(stat.frame)
        for stat in getattr(run_metadata, "dead_step_stats", ()) or ():
            name = getattr(stat, "original_op_name", "") or stat.node_name
            self.dead[name] = self.dead.get(name, 0) + 1
        self.loop_iterations: dict[str, list[int]] = {
            name: list(counts)
            for name, counts in (getattr(run_metadata, "loop_iterations", {}) or {}).items()
        }
        self.total_time = sum(self.time.values())

    def ran_as(self, op: Any) -> tuple[tuple[str, str], int]:
        """The op that ran in ``op``'s place, as (name, type), and its number of firings: one
        of ``op``'s own type when there is one (a hoisted copy, not the Enter it feeds)."""
        executions = self.executions[op.name]
        same_type = [key for key in executions if key[1] == op.type]
        key = same_type[0] if same_type else max(executions, key=executions.get)
        return key, executions[key]

    def status(self, op_name: str) -> str:
        """``"ran"``, ``"fed"``, ``"dead"``, ``"rewritten"`` or ``"not run"``."""
        if op_name in self.executions:
            return "ran"
        if op_name in self.fed:
            return "fed"
        if op_name in self.dead:
            return "dead"
        if op_name in self.rewritten:
            return "rewritten"
        return "not run"

    # -- hooks called by dataflow.render -----------------------------------------------------------
    def decorate_node(self, op: Any, attrs: dict) -> None:
        status = self.status(op.name)
        tooltip = attrs.get("tooltip", op.name)
        if status == "ran":
            seconds = self.time[op.name]
            ran_as, count = self.ran_as(op)
            line = format_seconds(seconds) + (f" · ×{count}" if count > 1 else "")
            if ran_as[1] != op.type:
                line += f" · as {ran_as[1]}"
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
            if ran_as != (op.name, op.type):
                details += f"; ran as '{ran_as[0]}' ({ran_as[1]}), after the graph passes"
            attrs["tooltip"] = f"{tooltip}\\n{details}"
        elif status == "fed":
            attrs["label"] = _add_line(attrs.get("label", op.name), "fed", _RAN)
            attrs["tooltip"] = f"{tooltip}\\nits value was fed"
        elif status == "rewritten":
            what = self.rewritten[op.name]
            attrs["label"] = _add_line(
                attrs.get("label", op.name), what.split(" ", 1)[0], _REWRITTEN, dim=True
            )
            attrs["style"] = _with_line_style(attrs.get("style", ""), "dotted")
            attrs["color"] = _REWRITTEN
            attrs["tooltip"] = (
                f"{tooltip}\\n{what}: a graph pass took it out of the plan; another op did its work"
            )
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
                attrs["tooltip"] = f"{tooltip}\\ndid not run (not needed, or never reached)"

    def decorate_loop(self, frame_name: str, attrs: dict) -> None:
        attrs["label"] = _add_line(
            attrs.get("label", frame_name), self._loop_text(frame_name), _RAN
        )

    def _loop_text(self, frame_name: str) -> str:
        """The iterations of each instance of a loop that ran, and how many only passed dead
        values through."""
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
        return line

    def decorate_collapsed(self, ops: list, attrs: dict, loop_frame: Optional[str] = None) -> None:
        """Sums up a collapsed box: how many of its ops ran, fired dead, were rewritten by the
        graph passes, and their time; and the iterations of the loop whose frame is
        ``loop_frame`` when the box is that loop."""
        statuses = Counter(self.status(op.name) for op in ops)
        ran = [op for op in ops if op.name in self.executions]
        seconds = sum(self.time[op.name] for op in ran)
        firings = sum(sum(self.executions[op.name].values()) for op in ran)
        line = f"{len(ran)} of {len(ops)} ran"
        if firings > len(ran):
            line += f" ({firings} firings)"
        if ran:
            line += f" · {format_seconds(seconds)}"
        others = [
            f"{statuses[status]} {word}"
            for status, word in (("dead", "fired dead"), ("rewritten", "rewritten"))
            if statuses[status]
        ]
        if others:
            line += " · " + ", ".join(others)
        label = _add_line(attrs.get("label", ""), line, _RAN if ran else _NOT_RUN)
        if loop_frame is not None:
            label = _add_line(label, self._loop_text(loop_frame), _RAN)
        attrs["label"] = label
        tooltip = attrs.get("tooltip", "")
        details = ", ".join(f"{count} {status}" for status, count in sorted(statuses.items()))
        attrs["tooltip"] = f"{tooltip}\\n{details}" if tooltip else details

    def add_legend(self, digraph) -> None:
        """A key of the overlay's states, beside the picture's own legend."""
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
                "rewritten",
                {
                    "label": _add_line("op", "fused", _REWRITTEN, dim=True),
                    "style": "rounded,filled,dotted",
                    "color": _REWRITTEN,
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
