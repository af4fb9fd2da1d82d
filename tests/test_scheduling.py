"""The two-worker schedule of tests/conftest.py names modules that exist: a renamed module would
otherwise silently lose its place (a kernel module run beside another, a long one started last)."""

from __future__ import annotations

from conftest import KERNEL_MODULES, LONG_UNITS, ROOT, scheduling_unit


def test_the_scheduled_units_name_existing_modules():
    for stem in KERNEL_MODULES:
        assert (ROOT / "tests" / f"{stem}.py").is_file(), stem
    for unit in LONG_UNITS:
        assert unit == "kernel" or (ROOT / unit).is_file(), unit
    assert len(set(LONG_UNITS)) == len(LONG_UNITS)


def test_kernel_modules_form_one_unit_and_others_their_own():
    assert scheduling_unit("tests/test_validate.py::test_x") == "kernel"
    assert scheduling_unit("tests/test_ktrace.py::test_y[1]") == "kernel"
    assert scheduling_unit("tests/test_wheel.py::test_z") == "tests/test_wheel.py"
