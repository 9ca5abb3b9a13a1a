"""Keeping secrets out of everything the package shows, logs or sends to a model, and nothing else.

**What is a secret.** A credential can reach us as ``api_key``, inside a URL (``http://user:KEY@host/v1``,
``?token=KEY``), as a header, or as a setting of an MCP server (``env``, ``envFile``, ``${VAR}``, ``args``).
:class:`Secret` holds one so that ``repr``/``vars()`` dumps and tracebacks show ``'***'``; creating one
**registers its value** in one process-wide registry unless it is made with ``register=False``. What is
registered: API keys, header values, URL userinfo, and a setting's value when its name says so or it is
key-shaped, or when the user marks it (:mod:`~toolsearch_lab.secrets.keys`, the one detector of
key-shaped strings). A timezone, a region, a path or ``NODE_ENV=production`` is never registered.

**Where it is hidden.** Data is kept as it came: snapshots, catalogs and transcripts are never altered.
Text is hidden where it leaves: :func:`scrub` hides every registered value by whole value (values shorter
than :data:`MIN_SCRUB_CHARS` never, since they match inside ordinary words), URL userinfo, ``Bearer``/
``Basic`` credentials and credential query parameters, in one pass whatever the registry's size
(:mod:`~toolsearch_lab.secrets.registry`). The CLI's terminal, widgets, log lines
(:class:`RedactingFilter`), error messages and the tool results the model reads go through it;
:func:`hide_keys` adds the detector for text whose secrets nobody registered (a replayed transcript).

The package is the bottom layer: it imports nothing else of toolsearch_lab.
"""

from toolsearch_lab.secrets.hiding import (
    HTTP_LOGGERS,
    SECRET_HIDDEN,
    RedactedError,
    RedactingFilter,
    hide_keys,
    install_log_redaction,
    scrub,
)
from toolsearch_lab.secrets.keys import (
    KEY_FORMATS,
    SENSITIVE_QUERY_KEYS,
    KeyFormat,
    KeyMatch,
    argument_secrets,
    find_keys,
    is_key,
    secret_name,
    secret_values,
    setting_secret,
    shown_arguments,
)
from toolsearch_lab.secrets.registry import (
    LONG_SECRET_CHARS,
    MIN_SCRUB_CHARS,
    REDACTED,
    Secret,
    isolated_registry,
    register_secret,
    registered_secret_count,
)
from toolsearch_lab.secrets.urls import (
    PLAIN_HEADERS,
    BaseUrl,
    header_secret,
    query_credentials,
    redact_url,
    split_url_credentials,
    split_url_query,
    url_secret,
)

__all__ = [
    "HTTP_LOGGERS",
    "KEY_FORMATS",
    "LONG_SECRET_CHARS",
    "MIN_SCRUB_CHARS",
    "PLAIN_HEADERS",
    "REDACTED",
    "SECRET_HIDDEN",
    "SENSITIVE_QUERY_KEYS",
    "BaseUrl",
    "KeyFormat",
    "KeyMatch",
    "RedactedError",
    "RedactingFilter",
    "Secret",
    "argument_secrets",
    "find_keys",
    "header_secret",
    "hide_keys",
    "install_log_redaction",
    "is_key",
    "isolated_registry",
    "query_credentials",
    "redact_url",
    "register_secret",
    "registered_secret_count",
    "scrub",
    "secret_name",
    "secret_values",
    "setting_secret",
    "shown_arguments",
    "split_url_credentials",
    "split_url_query",
    "url_secret",
]
