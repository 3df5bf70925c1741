"""One local Ray for the tests of this package: clusters of the tests start their actors on it.

Ray takes seconds to start, so it starts once, the first time a test here asks for it, as a
RayCluster starts it (two CPUs, no dashboard, on the loopback address, with token
authentication), and stops when these tests end (so that it is not still running when a
notebook of the suite starts a Ray of its own).  `cluster` is a ps and two workers shared by
the tests that leave its tasks alive; a test that kills a task makes a cluster of its own.
"""

import pytest

import dataflow as df


@pytest.fixture(scope="package")
def local_ray():
    import ray  # in the test extra: a missing Ray fails these tests rather than skipping them

    from dataflow.distribute.ray_cluster import start_local_ray

    started = not ray.is_initialized()
    if started:
        start_local_ray(num_cpus=2)
    yield ray
    if started:
        ray.shutdown()


@pytest.fixture(scope="package")
def cluster(local_ray):
    cluster = df.distribute.RayCluster({"ps": 1, "worker": 2})
    yield cluster
    cluster.shutdown()
