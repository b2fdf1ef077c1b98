"""Shared test fixtures: the --update-golden flag and small synthetic profiles."""

import pytest


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite golden files from the current output instead of comparing")


@pytest.fixture
def update_golden(request):
    return request.config.getoption("--update-golden")
