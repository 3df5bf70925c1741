from concurrent.futures import ThreadPoolExecutor

import pytest


@pytest.fixture(scope="module")
def pool():
    """A pool of two inter-op threads, named ``test-pool-*``, shared by a module's tests."""
    with ThreadPoolExecutor(2, thread_name_prefix="test-pool") as pool:
        yield pool
