"""The test session never touches the user's home cache."""

from __future__ import annotations

import os
from pathlib import Path

from toolsearch_lab.embed.cache import CACHE_ENV


def test_the_session_cache_is_a_temporary_folder_not_the_home_cache():
    root = Path(os.environ[CACHE_ENV]).resolve()
    assert root.name.startswith("toolsearch-lab-test-cache-")
    assert Path.home().resolve() / ".cache" not in root.parents
