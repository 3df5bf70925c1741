"""The test suite's root.

Pytest puts this directory on ``sys.path`` when it loads this file, before any test module, so
helpers shared by several test folders (``bitwise``, ``rerun``) import the same way from all
of them.
"""
