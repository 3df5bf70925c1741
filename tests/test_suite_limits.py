"""The suite's own limits: a test that hangs fails the suite instead of stopping it."""


def test_every_test_has_a_time_limit_that_also_ends_a_test_hung_in_a_thread(pytestconfig):
    """pytest-timeout, configured in setup.cfg: a limit far above any test's time, and the
    method that ends a run whose hung work is on other threads (a signal only reaches the
    main thread, and tests/upstream uses SIGALRM itself)."""
    assert pytestconfig.pluginmanager.hasplugin("timeout")
    assert 120 <= float(pytestconfig.getini("timeout")) <= 900
    assert pytestconfig.getini("timeout_method") == "thread"
