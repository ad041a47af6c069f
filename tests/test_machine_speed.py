"""The suite's own settings judge no test by how fast the machine is (it must pass on a loaded one)."""

from hypothesis import HealthCheck, settings

from tests.conftest import suppressed


def test_hypothesis_times_nothing_in_any_test():
    assert settings.default.deadline is None
    assert HealthCheck.too_slow in settings.default.suppress_health_check


def test_a_test_that_suppresses_a_health_check_of_its_own_keeps_the_suite_s():
    own = settings(suppress_health_check=suppressed(HealthCheck.function_scoped_fixture))
    assert set(own.suppress_health_check) == {HealthCheck.too_slow, HealthCheck.function_scoped_fixture}
    assert own.deadline is None
