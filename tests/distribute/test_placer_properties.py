"""A property of the placer: on random graphs with random device requests and colocations, it
either places every op so that each request is honoured and each colocation group shares one
device, or fails with TensorFlow's error for a request that truly cannot be met."""

from hypothesis import given, settings
from hypothesis import strategies as st

import dataflow as df
from dataflow.client.placer import place

REQUESTS = [
    "",
    "/cpu:0",
    "/cpu:1",
    "/cpu:2",
    "/gpu:0",
    "/job:localhost",
    "/job:localhost/task:0/cpu:1",
    "/job:ps",
    "/job:localhost/task:1",
]
FIELDS = ("job", "replica", "task", "device_type", "device_index")
ADDRESS = ("job", "replica", "task")


@st.composite
def programs(draw):
    """Ops as (inputs, request, index of an earlier op to colocate with or None)."""
    count = draw(st.integers(1, 8))
    ops = []
    for i in range(count):
        inputs = draw(st.lists(st.integers(0, i - 1), max_size=2)) if i else []
        colocate = draw(st.one_of(st.none(), st.integers(0, i - 1))) if i else None
        ops.append((inputs, draw(st.sampled_from(REQUESTS)), colocate))
    return ops, draw(st.integers(1, 3)), draw(st.booleans())


def build(program):
    built = []
    for i, (inputs, request, colocate) in enumerate(program):
        if inputs:
            op = df.add_n([built[j].outputs[0] for j in inputs], name=f"op{i}").op
        elif colocate is not None:
            with df.colocate_with(built[colocate]):
                op = df.constant(float(i), name=f"op{i}").op
        else:
            op = df.constant(float(i), name=f"op{i}").op
        if inputs and colocate is not None:
            op.attrs["_class"] = sorted(
                {g.decode() for g in built[colocate].colocation_groups()}
                | {g.decode() for g in op.colocation_groups()}
            )
        op._set_device(request)
        built.append(op)
    return built


def colocation_groups(ops):
    """Each op's group: ops sharing a ``loc:@`` class, transitively."""
    parent = {op.name: op.name for op in ops}

    def find(name):
        while parent[name] != name:
            name = parent[name]
        return name

    for op in ops:
        for group in op.colocation_groups():
            parent.setdefault(group.decode()[5:], group.decode()[5:])
            parent[find(group.decode()[5:])] = find(op.name)
    return {op.name: [o for o in ops if find(o.name) == find(op.name)] for op in ops}


def satisfies(device, request, fields=FIELDS):
    wanted = df.DeviceSpec.from_string(request)
    return all(getattr(wanted, f) in (None, getattr(device, f)) for f in fields)


def disagree(ops, fields):
    """Whether two of ``ops`` set one of ``fields`` differently."""
    for field in fields:
        values = {getattr(df.DeviceSpec.from_string(op.device), field) for op in ops}
        if len(values - {None}) > 1:
            return True
    return False


@settings(max_examples=150, deadline=None)
@given(programs())
def test_random_requests_are_honoured_or_refused_for_a_reason(case):
    program, cpus, soft = case
    devices = [df.DeviceSpec("localhost", 0, 0, "CPU", i) for i in range(cpus)]
    fields = ADDRESS if soft else FIELDS
    with df.Graph().as_default():
        ops = build(program)
        groups = colocation_groups(ops)
        config = df.ConfigProto(device_count={"CPU": cpus}, allow_soft_placement=soft)
        try:
            places = place(ops[0].graph, ops, config)
        except df.errors.InvalidArgumentError as error:
            message, op = str(error), error.op
            assert str(op.location) in message
            if "Cannot colocate nodes" in message:
                assert disagree(groups[op.name], fields)
            else:
                assert f"Cannot assign a device for operation {op.name}: " in message
                requests = [o.device for o in groups[op.name]]
                assert disagree(groups[op.name], fields) or not any(
                    all(satisfies(d, r, fields) for r in requests) for d in devices
                )
            return
    assert set(places) == {op.name for op in ops}
    for op in ops:
        device = df.DeviceSpec.from_string(places[op.name])
        assert device in devices
        assert satisfies(device, op.device, fields), (op.name, op.device, places[op.name])
        assert {places[o.name] for o in groups[op.name]} == {places[op.name]}
        group = groups[op.name]
        if soft and not disagree(group, FIELDS):
            if any(all(satisfies(d, o.device) for o in group) for d in devices):
                assert satisfies(device, op.device), "soft placement moved a placeable op"
