"""A matplotlib backend for the corpus runs: Agg, whose event loop returns at once.

Classic examples end with ``plt.show()``, ``f.show()`` and ``plt.waitforbuttonpress()``; on a
machine without a display the first two only warn with Agg, but the last waits for a click in
an event loop that never ends.  The runner selects this backend with
``MPLBACKEND=module://headless_backend``, so a program draws its figures and goes on.
"""

from __future__ import annotations

from matplotlib.backend_bases import _Backend
from matplotlib.backends.backend_agg import FigureCanvasAgg, _BackendAgg


class FigureCanvasHeadless(FigureCanvasAgg):
    def start_event_loop(self, timeout=0):
        """Nothing to wait for: no one can press a button."""


@_Backend.export
class _BackendHeadless(_BackendAgg):
    FigureCanvas = FigureCanvasHeadless
