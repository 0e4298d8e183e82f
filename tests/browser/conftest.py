"""Every test in this folder drives a real Streamlit server and headless Chromium: each is
marked ``browser``, so ``make test-fast`` (``-m "not browser"``) leaves the folder out."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.browser)
