"""Shared fixtures. `x64` turns on 64-bit defaults for one test and always restores them."""
import pytest

import jitviz


@pytest.fixture
def x64():
    before = jitviz.config.enable_x64
    jitviz.config.update("enable_x64", True)
    try:
        yield
    finally:
        jitviz.config.update("enable_x64", before)


@pytest.fixture(autouse=True)
def _restore_x64():
    """No test may leave 64-bit mode on for the next one."""
    before = jitviz.config.enable_x64
    yield
    jitviz.config.update("enable_x64", before)
