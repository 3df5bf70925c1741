"""Resource containers (``tf.compat.v1.container``): the namespace of the Session resources
(queues, lookup tables, accumulators) that ops made inside ``with container(name):`` name.

Two resources share one Session object when they have the same container and ``shared_name``;
a resource made in another container is another object, as in TensorFlow's resource manager.
An op records its container in its ``container`` attribute.
"""

from __future__ import annotations

import contextlib

from .graph import get_default_graph

__all__ = ["container", "current_container", "resource_key"]


def current_container() -> str:
    """The container of the default graph's current ``container`` block (``""`` outside)."""
    return getattr(get_default_graph(), "_resource_container", "")


@contextlib.contextmanager
def container(container_name):
    """Inside, the stateful resources made in the default graph belong to ``container_name``
    (yielded)."""
    graph = get_default_graph()
    previous = getattr(graph, "_resource_container", "")
    graph._resource_container = container_name
    try:
        yield container_name
    finally:
        graph._resource_container = previous


def resource_key(attrs: dict) -> str:
    """The Session's key of the resource of a handle op's ``attrs``: its shared name, under
    its container when it has one."""
    container_name = attrs.get("container", "")
    shared = attrs["shared_name"]
    return f"{container_name}/{shared}" if container_name else shared
