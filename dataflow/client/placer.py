"""The placer: one full device name for every op of a run, decided as TensorFlow 1.x's placer.

`place(graph, ops, config, cluster)` returns ``{op name: "/job:localhost/replica:0/task:0/
device:CPU:1"}`` for the ops of a run.  The rules, in the order they apply:

1. **Requested device.**  An op's ``device`` (what ``df.device`` scopes, device functions such
   as ``train.replica_device_setter``, and ``colocate_with`` recorded when it was built) is a
   partial name; the op may run on any available device that agrees with every field it sets.
2. **Colocation groups.**  Ops that share a ``loc:@<name>`` class (``colocate_with``) form one
   group, whose requested device merges its members'.  Members that name different jobs,
   replicas or tasks cannot be merged: an ``InvalidArgumentError``; different device types or
   indices are one too, unless ``allow_soft_placement`` (then the group drops them).
3. **Reference and resource edges.**  An op that takes a variable's handle (a ``resource``) or
   a TF1 reference at a position where it keeps it (``Assign``, ``AssignSub``, an optimizer's
   update) joins the variable's group: a variable's initializer, reads and updates run where
   the variable lives.  Where the op asked for another device, the variable's device wins, as
   in TensorFlow.  Function calls, which pass handles on to placed bodies, are exempt.
4. **Candidates.**  A group may run on the available devices that match its requested device;
   with soft placement and none matching, on those of the same job, replica and task (any
   type and index).  None left: ``InvalidArgumentError`` in TensorFlow's words, naming the op
   and the user's file:line.  Each op's own job, replica and task are checked first, so an
   op asking for a task that does not exist is named before any colocation conflict.
5. **Choice.**  Ops take their group's device once a member is placed; otherwise the group's
   first candidate, the default device first (``/job:localhost/replica:0/task:0/device:CPU:0``,
   or task 0 of the ``worker`` job in a cluster).  A generator (no data input, one output that
   is not a reference, such as a constant) is placed last, on the device of its consumers in
   the run when they agree and it may go there (TensorFlow's "heuristic A").

Available devices: without a cluster, this process's ``/job:localhost/replica:0/task:0``
with ``ConfigProto.device_count["CPU"]`` CPUs (default 1); with a cluster (a
``train.ClusterSpec`` or a ``{job: task count, addresses or {index: address}}`` dict), the
same CPUs on every ``/job:<name>/replica:0/task:<i>`` it lists, and no ``localhost``.

Groups are formed over the whole graph, so a variable is placed alike in every run whatever
part of the graph the run needs; requests are checked, and errors raised, only for the groups
the run's ops belong to.  The result is a pure function of its arguments.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..framework import errors
from ..framework.device import HOST_JOB, DeviceSpec

_FIELDS = ("job", "replica", "task", "device_type", "device_index")
# The word TensorFlow's merge error uses for each field.
_FIELD_WORDS = {
    "job": "jobs",
    "replica": "replicas",
    "task": "tasks",
    "device_type": "types",
    "device_index": "ids",
}
# Ops that forward a resource to placed function bodies instead of using it where they run.
_RESOURCE_COLOCATION_EXEMPT = frozenset({"PartitionedCall", "StatefulPartitionedCall"})


def place(graph, ops: Iterable, config, cluster=None, *, default_device=None) -> dict[str, str]:
    """The full device name of each of ``ops`` (Operations or op names of ``graph``), keyed by
    op name, under ``config`` (a ``ConfigProto``: ``allow_soft_placement``, ``device_count``)
    on this process or on ``cluster``; ``default_device`` (a partial name) overrides where
    ops that ask for nothing go.  Raises ``errors.InvalidArgumentError`` naming the op and
    its file:line when an op cannot be placed."""
    run_ops = _in_graph_order(graph, ops)
    soft = bool(getattr(config, "allow_soft_placement", False))
    cpus = max(int(getattr(config, "device_count", {}).get("CPU", 1)), 1)
    devices = available_devices(cpus, cluster)
    default = _default_device(devices, cluster, default_device)
    if not graph._has_devices:  # no op asks for anything: all on the default device
        name = default.to_string()
        return {op.name: name for op in run_ops}
    preferred = [default] + [d for d in devices if d != default]
    groups = _ColocationGroups(graph, soft)
    checked = set()
    for op in run_ops:
        if op._device not in checked:
            _check_request(op, groups.parsed(op._device), devices)
            checked.add(op._device)
    groups.raise_first_error({groups.find(op.name) for op in run_ops})
    candidates_of_request: dict[str, list[str]] = {}

    def candidates(op) -> list[str]:
        """The names of the devices ``op``'s group may run on, the default first."""
        spec = groups.spec[groups.find(op.name)]
        key = spec.to_string()
        if key not in candidates_of_request:
            found = _candidates(op, spec, devices, preferred, soft)
            candidates_of_request[key] = [d.to_string() for d in found]
        return candidates_of_request[key]

    return _choose(run_ops, groups, candidates)


def available_devices(cpus: int = 1, cluster=None) -> list[DeviceSpec]:
    """The devices ops may be placed on, as full `DeviceSpec`s in TensorFlow's order: by job
    name, then task, then CPU index (see the module docstring)."""
    tasks = {HOST_JOB: [0]} if cluster is None else cluster_tasks(cluster)
    return [
        DeviceSpec(job, 0, task, "CPU", index)
        for job in sorted(tasks)
        for task in tasks[job]
        for index in range(cpus)
    ]


def cluster_tasks(cluster) -> dict[str, list[int]]:
    """``{job: [task indices]}`` of a cluster: a ``train.ClusterSpec`` or a dict from job name
    to a task count, a list of addresses or a ``{task index: address}`` dict."""
    jobs = cluster.as_dict() if hasattr(cluster, "as_dict") else cluster
    if not isinstance(jobs, Mapping):
        raise TypeError(f"A cluster is a ClusterSpec or a dict of jobs, got {cluster!r:.80}")
    tasks = {}
    for job, members in jobs.items():
        if isinstance(members, int) and not isinstance(members, bool):
            tasks[str(job)] = list(range(members))
        elif isinstance(members, Mapping):
            tasks[str(job)] = sorted(int(i) for i in members)
        elif isinstance(members, (list, tuple)):
            tasks[str(job)] = list(range(len(members)))
        else:
            raise TypeError(
                f"The tasks of job {job!r} are a count, a list of addresses or a dict from "
                f"task index to address, got {members!r:.80}"
            )
    return tasks


def _in_graph_order(graph, ops: Iterable) -> list:
    chosen = {graph.get_operation_by_name(op) if isinstance(op, str) else op for op in ops}
    return [op for op in graph._ops if op in chosen]


def _default_device(devices: list, cluster, default_device) -> DeviceSpec:
    if default_device is not None:
        wanted = DeviceSpec.from_string(default_device)
        for device in devices:
            if _matches(device, wanted):
                return device
        raise ValueError(
            f"The default device {default_device!r} is none of the available devices "
            f"[ {_names(devices)} ]"
        )
    if cluster is not None:
        for device in devices:
            if device.job == "worker":
                return device
    return devices[0]


class _ColocationGroups:
    """Union-find over the op names of a graph (rules 2 and 3 of the module docstring).

    ``spec[root]`` is the merged requested device of the group whose representative is
    ``root``; ``error[root]`` the first ``InvalidArgumentError`` its members' requests made
    (with its rank in the order the graph's ops made them), raised only if a run needs the
    group.  A ``loc:@name`` class whose op is not in the graph (a
    graph loaded without it) still groups the ops that name it."""

    def __init__(self, graph, soft: bool):
        self.parent: dict[str, str] = {}
        self.spec: dict[str, DeviceSpec] = {}
        self.error: dict[str, tuple[int, errors.InvalidArgumentError]] = {}
        self._graph = graph
        self._parsed: dict[str, DeviceSpec] = {}
        for op in graph._ops:
            self._add(op.name, self.parsed(op._device))
            for group in op.attrs.get("_class", ()):
                if group.startswith("loc:@"):
                    self._colocate(op, group[len("loc:@") :], soft)
        for op in graph._ops:
            if op.type in _RESOURCE_COLOCATION_EXEMPT:
                continue
            kept = _kept_reference_slots(op)
            for slot, tensor in enumerate(op._inputs):
                dtype = tensor._dtype
                if dtype.name == "resource" or (dtype.is_ref_dtype and slot in kept):
                    self._join_resource_user(tensor._op, op)

    def parsed(self, device: str) -> DeviceSpec:
        """``device`` parsed, once per distinct string (the result is shared: not to be
        changed)."""
        spec = self._parsed.get(device)
        if spec is None:
            spec = self._parsed[device] = DeviceSpec.from_string(device)
        return spec

    def find(self, name: str) -> str:
        parent = self.parent
        root = name
        while parent[root] != root:
            root = parent[root]
        while parent[name] != root:
            parent[name], name = root, parent[name]
        return root

    def raise_first_error(self, roots: set[str]) -> None:
        """Raises the error the graph's ops made first among the groups of ``roots``."""
        found = [self.error[root] for root in roots if root in self.error]
        if found:
            raise min(found, key=lambda ranked: ranked[0])[1]

    def _add(self, name: str, spec: DeviceSpec) -> None:
        if name not in self.parent:
            self.parent[name] = name
            self.spec[name] = spec

    def _colocate(self, op, group_name: str, soft: bool) -> None:
        self._add(group_name, DeviceSpec())
        joining, group = self.find(op.name), self.find(group_name)
        if joining == group:
            return
        try:
            merged = _merge(self.spec[joining], self.spec[group], soft)
        except _Conflict as conflict:
            anchor = self._graph._ops_by_name.get(group_name)
            where = errors.describe_op(anchor) if anchor is not None else f"'{group_name}'"
            error = errors.InvalidArgumentError(
                None, op, f"Cannot colocate nodes {errors.describe_op(op)} and {where}: {conflict}"
            )
            self.error.setdefault(group, (len(self.error), error))
            merged = self.spec[group]
        self._union(group, joining, merged)

    def _join_resource_user(self, source, user) -> None:
        owner, joining = self.find(source.name), self.find(user.name)
        if owner == joining:
            return
        owner_spec, joining_spec = self.spec[owner], self.spec[joining]
        try:
            merged = _merge(owner_spec, joining_spec, soft=False)
        except _Conflict:  # the variable's device wins over its user's request
            merged = owner_spec
        self._union(owner, joining, merged)

    def _union(self, root: str, other: str, spec: DeviceSpec) -> None:
        self.parent[other] = root
        self.spec[root] = spec
        if other in self.error:
            self.error[root] = min(self.error.pop(other), self.error.get(root, (1 << 62, None)))


def _kept_reference_slots(op) -> tuple:
    slots = op._op_def.extra.get("ref_inputs", ())
    return tuple(range(len(op._inputs))) if slots == "all" else slots


class _Conflict(Exception):
    """Two device requests that cannot be merged, in TensorFlow's words."""


def _merge(first: DeviceSpec, second: DeviceSpec, soft: bool) -> DeviceSpec:
    """``first`` with the fields only ``second`` sets; a field both set differently is a
    `_Conflict`, except a device type or index under soft placement, which is dropped (a
    dropped type takes the index with it)."""
    merged = first.replace()
    for field in _FIELDS:
        mine, theirs = getattr(first, field), getattr(second, field)
        if theirs is None or mine == theirs:
            continue
        if mine is None:
            setattr(merged, field, theirs)
        elif soft and field in ("device_type", "device_index"):
            setattr(merged, field, None)
        else:
            raise _Conflict(
                f"Cannot merge devices with incompatible {_FIELD_WORDS[field]}: "
                f"'{first.to_string()}' and '{second.to_string()}'"
            )
    if merged.device_type is None:
        merged.device_index = None
    return merged


def _matches(device: DeviceSpec, spec: DeviceSpec) -> bool:
    return all(
        getattr(spec, field) is None or getattr(spec, field) == getattr(device, field)
        for field in _FIELDS
    )


def _matching(spec: DeviceSpec, devices: list, soft: bool) -> list:
    found = [d for d in devices if _matches(d, spec)]
    if not found and soft:
        anywhere_here = spec.replace(device_type=None, device_index=None)
        found = [d for d in devices if _matches(d, anywhere_here)]
    return found


def _check_request(op, spec: DeviceSpec, devices: list) -> None:
    """Raises the error for an op whose own device request names a job, replica or task that
    has no device, before colocation is considered (as TensorFlow checks it)."""
    if not _matching(spec, devices, soft=True):
        raise _unplaceable(op, spec, devices)


def _candidates(op, spec: DeviceSpec, devices: list, preferred: list, soft: bool) -> list:
    matching = _matching(spec, preferred, soft)
    if not matching:
        raise _unplaceable(op, spec, devices)
    return matching


def _unplaceable(op, spec: DeviceSpec, devices: list) -> errors.InvalidArgumentError:
    why = (
        f"was explicitly assigned to {spec.to_string()} but available devices are "
        f"[ {_names(devices)} ]. Make sure the device specification refers to a valid device."
    )
    if spec.device_type == "GPU" and _matching(spec, devices, soft=True):
        why += " The requested device appears to be a GPU, but CUDA is not enabled."
    return errors.InvalidArgumentError(
        None,
        op,
        f"Cannot assign a device for operation {op.name}: {errors.describe_op(op)} {why}",
    )


def _names(devices: list) -> str:
    return ", ".join(d.to_string() for d in devices)


def _is_generator(op) -> bool:
    outputs = op._outputs
    return not op._inputs and len(outputs) == 1 and not outputs[0]._dtype.is_ref_dtype


def _choose(run_ops: list, groups: _ColocationGroups, candidates) -> dict:
    """Rule 5: every op on its group's device, or its group's first candidate (``candidates(op)``
    raises for a group none suits, naming the first op the placer visits); generators last,
    beside their consumers in the run when those agree."""
    chosen_for_group: dict[str, str] = {}
    placement: dict[str, str] = {}
    generators = []
    for op in run_ops:
        if _is_generator(op):
            generators.append(op)
            continue
        root = groups.find(op.name)
        device = chosen_for_group.get(root) or candidates(op)[0]
        chosen_for_group[root] = placement[op.name] = device
    if generators:
        consumers = _consumers_in_run(run_ops, {op.name for op in generators})
        for op in generators:
            root = groups.find(op.name)
            device = chosen_for_group.get(root)
            if device is None:
                options = candidates(op)
                beside = {placement.get(c.name) for c in consumers.get(op.name, ())}
                device = options[0]
                if len(beside) == 1 and None not in beside and next(iter(beside)) in options:
                    (device,) = beside
                chosen_for_group[root] = device
            placement[op.name] = device
    return {op.name: placement[op.name] for op in run_ops}


def _consumers_in_run(run_ops: list, wanted: set[str]) -> dict[str, list[Any]]:
    """The ops of the run that take a data or control input from each op named in ``wanted``."""
    consumers: dict[str, list[Any]] = {}
    for op in run_ops:
        sources = {t._op.name for t in op._inputs} | {c.name for c in op._control_inputs}
        for name in sources & wanted:
            consumers.setdefault(name, []).append(op)
    return consumers
