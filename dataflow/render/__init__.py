"""Pictures of graphs (layer 14 of `docs/architecture.md`): `digraph` lays a graph out as a
Graphviz digraph (clusters for scopes, conds and loops; labels; styles), `engine` turns its DOT
text into an image with the system's ``dot`` or the Graphviz that pip installs, and `overlay`
paints a run's statistics onto the picture.  It reads graphs and never changes them; a Graph
shows itself in Jupyter through what `digraph` registers with the framework.

Layer: render, above training and below debug; it may import every layer below it (it
uses only the framework).
"""

from . import digraph, engine, overlay
from .digraph import FORMATS, GraphvizNotFoundError, Picture, graph_to_digraph, render

__all__ = ["GraphvizNotFoundError", "Picture", "graph_to_digraph", "render"]
