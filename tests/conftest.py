"""The whole test session uses its own embedding cache, never the user's ``~/.cache/toolsearch-lab``.

Set at import, before any test runs, so notebook kernels and CLI subprocesses started by the tests inherit
it; tests that need an empty cache of their own still set ``TOOLSEARCH_LAB_CACHE`` themselves.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from toolsearch_lab.compat import defer_iri_grammar
from toolsearch_lab.secrets import isolated_registry

_SESSION_CACHE = tempfile.mkdtemp(prefix="toolsearch-lab-test-cache-")
os.environ["TOOLSEARCH_LAB_CACHE"] = _SESSION_CACHE
# As toolsearch_lab.ui does: the test modules that import nbformat would otherwise compile jsonschema's IRI
# grammar while being collected (seconds of CPU), for a check no test makes in this process.
defer_iri_grammar()


def pytest_unconfigure(config):
    shutil.rmtree(_SESSION_CACHE, ignore_errors=True)


@pytest.fixture(autouse=True)
def _own_secret_registry():
    """Each test registers its own secrets: one test's values must not hide another test's text."""
    with isolated_registry():
        yield
