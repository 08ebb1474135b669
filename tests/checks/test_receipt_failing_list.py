"""A long list of failing tests is named in part and counted; the receipt's data keeps every id."""

from __future__ import annotations

from protoagent.checks.receipts import MAX_TESTS_SHOWN, CheckReceipt


def _receipt(failed: tuple[str, ...]) -> CheckReceipt:
    return CheckReceipt(
        check_id="unittest",
        phase="baseline",
        outcome="failed",
        exit_code=1,
        tests_run=970,
        dependency_revisions={},
        argv=("python", "-m", "unittest"),
        cwd=".",
        duration_s=0.5,
        artifact=None,
        failed_tests=failed,
    )


def test_a_long_failing_list_names_the_first_tests_and_counts_the_rest() -> None:
    failed = tuple(f"tests.test_toc.TestTOC.test_case_{i}" for i in range(51))
    output = _receipt(failed).to_output("Traceback (most recent call last): ...")
    line = output.text.splitlines()[1]
    assert line.startswith("failing tests: tests.test_toc.TestTOC.test_case_0, ")
    assert f"test_case_{MAX_TESTS_SHOWN - 1} … and" in line
    assert f"test_case_{MAX_TESTS_SHOWN}," not in line
    assert line.endswith(f"… and {51 - MAX_TESTS_SHOWN} more (51 or more failing)")
    assert output.data["failed_tests"] == list(failed)
    assert output.text.splitlines()[2].startswith("Traceback")


def test_a_short_failing_list_is_named_whole() -> None:
    failed = ("test_a.py::test_one", "test_a.py::test_two")
    line = _receipt(failed).to_output().text.splitlines()[1]
    assert line == "failing tests: test_a.py::test_one, test_a.py::test_two"
