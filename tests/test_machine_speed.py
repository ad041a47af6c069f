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


def test_commands_the_tests_start_answer_sigint_however_the_suite_was_started():
    """A suite started in the background (SIGINT ignored, and inherited) still interrupts the batches it stops."""
    import signal
    import subprocess
    import sys

    ignoring = "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); "
    shows = "import subprocess, sys; print(subprocess.run([sys.executable, '-c', 'import signal; print(signal.getsignal(signal.SIGINT))'], capture_output=True, text=True).stdout.strip())"
    inherited = subprocess.run([sys.executable, "-c", ignoring + shows], capture_output=True, text=True, timeout=300, check=True)
    assert inherited.stdout.strip() == "1"  # SIG_IGN: what a background start gives every command below it
    answered = subprocess.run(
        [sys.executable, "-c", ignoring + "from tests.conftest import answer_interrupts; answer_interrupts(); " + shows],
        capture_output=True, text=True, timeout=300, check=True, cwd=str(__import__("tests.conftest").conftest.REPO),
    )
    assert answered.stdout.strip() == "<built-in function default_int_handler>"
    assert signal.getsignal(signal.SIGINT) is not signal.SIG_IGN
