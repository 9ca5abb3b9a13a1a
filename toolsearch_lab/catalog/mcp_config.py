"""MCP server configs as people already have them: Claude Desktop, VS Code, Cursor (and Claude Code).

| file | top-level key | a server |
|---|---|---|
| Claude Desktop ``claude_desktop_config.json`` | ``mcpServers`` | ``command``, ``args``, ``env`` (stdio) |
| Cursor ``.cursor/mcp.json``, Claude Code ``.mcp.json`` | ``mcpServers`` | as above, or ``url``+``headers`` |
| VS Code ``.vscode/mcp.json`` | ``servers`` | ``type`` (``stdio``, ``http``, ``sse``), then the same fields |

``cwd`` is accepted everywhere. A server with ``"disabled": true`` is skipped and listed in
``McpConfig.skipped`` (``"disabled"`` must be a boolean). Strings may use ``${VAR}`` and ``${env:VAR}``
(from the environment), ``${VAR:-default}`` (Claude Code: the default when the variable is unset or empty),
``${workspaceFolder}`` (the folder holding ``.vscode``/``.cursor``, else the config's folder) and
``${userHome}``. VS Code's ``${input:…}`` prompts cannot be answered here and are refused by name.

One bad entry costs only itself: an entry that is malformed (``args`` a string, ``disabled`` not a
boolean) or cannot be resolved (a variable that is not set and has no default, an ``envFile`` that cannot
be read) is named in ``McpConfig.invalid`` with the field at fault, and the other entries load. An entry
that ``servers=`` (the CLI's ``--server``) does not select is never resolved.

VS Code's ``envFile`` (a dotenv file: ``NAME=value`` lines, ``#`` comments, optional quotes) is read into
the server's ``env`` (``env`` wins on a name both give); it must be a regular file of at most
:data:`MAX_ENV_FILE_BYTES` (a FIFO or ``/dev/zero`` is refused by what it is, never read forever). FastMCP's
``"transport"`` key is read like ``"type"`` (``sse``, ``http``, ``streamable-http``, ``stdio``); the two
disagreeing is an error. A key named twice anywhere in the file is refused by name, since JSON would keep
the last one silently. Other keys a server entry may carry are listed in ``McpConfig.ignored``, each said
once with what the lab does instead (:func:`ignored_key_note`: for a key about credentials, such as Claude
Code's ``headersHelper`` or FastMCP's ``auth``, "no OAuth or header helper: set the header yourself").

Every ``env`` and ``headers`` value is held as a :class:`~toolsearch_lab.secrets.Secret`, so a config's
repr never shows it. What is *registered* as a secret (hidden from everything the lab shows, logs or sends
to a model, :mod:`toolsearch_lab.secrets`) is only what is one: every header value (but ``Accept``,
``Content-Type``…), URL userinfo, an ``env``/``envFile`` value or a ``${VAR}`` whose name says so or whose
value is key-shaped, the secret values written in ``args`` (``--token VALUE``, a key), and the variables
an entry marks with ``"secrets": ["NAME", …]`` (``env``/``envFile`` names or ``${NAME}`` variables). A
timezone, a region or a path in ``env`` stays visible, and the server's answers are never altered.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolsearch_lab.catalog.errors import CatalogError
from toolsearch_lab.jsonlimits import DuplicateKeyError, JsonLimitError, loads_unique, shown
from toolsearch_lab.schema import MAX_CATALOG_DEPTH
from toolsearch_lab.secrets import (
    Secret,
    argument_secrets,
    header_secret,
    redact_url,
    scrub,
    setting_secret,
    shown_arguments,
    url_secret,
)

if TYPE_CHECKING:
    from toolsearch_lab.catalog.mcp import McpConnection

__all__ = [
    "AUTH_KEY",
    "MAX_ENV_FILE_BYTES",
    "McpConfig",
    "McpServerConfig",
    "SET_THE_HEADER",
    "ignored_key_note",
    "load_mcp_config",
]

_VARIABLE = re.compile(r"\$\{([^}]*)\}")
# The keys a server entry may have that this loader reads or knows to be harmless (client-side settings).
_KNOWN_KEYS = frozenset(
    {"type", "transport", "command", "args", "env", "envFile", "cwd", "url", "headers", "disabled", "secrets"}
    | {"autoApprove", "alwaysAllow", "timeout", "description", "name", "gallery", "version", "dev"}
)
# A key about credentials, however a client spells it: Claude Code's headersHelper (a command printing the
# headers) and oauth, FastMCP's auth, the Messages API connector's authorization_token, Gemini CLI's
# authProviderType, a bearerToken or apiKey. The lab runs no OAuth flow and no helper: it sends the headers
# the entry gives.
AUTH_KEY = re.compile(r"auth|token|bearer|header|credential|api[_-]?key|secret|password", re.IGNORECASE)
SET_THE_HEADER = (
    'no OAuth or header helper: set the header yourself ("headers": {"Authorization": "Bearer ${env:TOKEN}"})'
)
# The most an envFile may hold: a dotenv file is a few hundred bytes; this stops a FIFO or a huge file.
MAX_ENV_FILE_BYTES = 1_000_000
_TRANSPORT_ALIASES = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamablehttp": "http",
    "streamable_http": "http",
    "sse": "sse",
}


@dataclass(frozen=True)
class McpServerConfig:
    """One server of a config file: how to start or reach it."""

    name: str
    transport: str  # "stdio", "http" or "sse"
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, Secret] = field(default_factory=dict)
    cwd: str | None = None
    url: Secret | None = None
    headers: Mapping[str, Secret] = field(default_factory=dict)
    # The registered secrets that are not env or header values: ${VAR}s that are secrets and the secret
    # values written in args, hidden from the connection's label and messages.
    secrets: tuple[Secret, ...] = field(default=(), repr=False)

    def __repr__(self) -> str:
        where = self.shown_command if self.command else self.shown_url
        env = f", env={sorted(self.env)}" if self.env else ""
        headers = f", headers={sorted(self.headers)}" if self.headers else ""
        return f"McpServerConfig({self.name!r}, {self.transport}: {where!r}{env}{headers})"

    @property
    def shown_url(self) -> str | None:
        return scrub(redact_url(self.url.reveal()) or "", self.secrets) if self.url is not None else None

    @property
    def shown_command(self) -> str:
        return scrub(" ".join(shown_arguments([self.command or "", *self.args])).strip(), self.secrets)

    def connect(
        self, *, timeout: float = 30.0, startup_timeout: float | None = None, pass_env: Iterable[str] = ()
    ) -> McpConnection:
        """Start (or reach) the server: an :class:`~toolsearch_lab.catalog.mcp.McpConnection`. ``pass_env``
        names variables of this process's environment to hand to a stdio server on top of the SDK's few
        defaults (``PATH``, ``HOME``…) and the config's own ``env``."""
        from toolsearch_lab.catalog import mcp

        startup = mcp.DEFAULT_STARTUP_TIMEOUT_S if startup_timeout is None else startup_timeout
        env: dict[str, str | Secret] = {name: os.environ[name] for name in pass_env if name in os.environ}
        env.update(self.env)  # Secrets as the config decided them: registered or not
        return mcp.McpConnection(
            self.command,
            self.args,
            env or None,
            cwd=self.cwd,
            url=self.url.reveal() if self.url is not None else None,
            headers={k: v.reveal() for k, v in self.headers.items()},
            transport=self.transport,
            name=self.name,
            secrets=self.secrets,
            timeout=timeout,
            startup_timeout=startup,
        )


@dataclass(frozen=True)
class McpConfig:
    """The servers of one config file, in file order (or in the order ``servers=`` named them), the names
    of those marked disabled, the keys it ignores, and the entries that could not be used."""

    servers: tuple[McpServerConfig, ...]
    source: str
    skipped: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()  # "server: key" for keys of a server entry this loader does not use
    # {server: why its entry cannot be used}: malformed, or naming a variable that is not set. Each costs
    # only itself: connect_mcp_config names it beside the servers that failed to start.
    invalid: Mapping[str, str] = field(default_factory=dict)

    def select(self, names: Sequence[str] | None) -> McpConfig:
        """Only the servers named (in the order given); an unknown name is an error listing the known."""
        if not names:
            return self
        by_name = {s.name: s for s in self.servers}
        _check_selection(names, [*by_name, *self.invalid, *self.skipped], self.source)
        chosen = dict.fromkeys(names)
        return McpConfig(
            tuple(by_name[n] for n in chosen if n in by_name),
            self.source,
            tuple(n for n in self.skipped if n in chosen),
            tuple(i for i in self.ignored if i.partition(": ")[0] in chosen),
            {n: why for n, why in self.invalid.items() if n in chosen},
        )


def ignored_key_note(key: str) -> str:
    """What the lab does instead of an entry's key it does not use: for a key about credentials
    (:data:`AUTH_KEY`), :data:`SET_THE_HEADER`."""
    advice = SET_THE_HEADER if AUTH_KEY.search(key) else "not used by this loader"
    return f"config key {key!r} is ignored: {advice}"


def _check_selection(names: Sequence[str], known: Sequence[str], source: str) -> None:
    unknown = [n for n in names if n not in known]
    if unknown:
        raise CatalogError(
            f"{source}: no server named {unknown[0]!r}; the config has {', '.join(known) or 'none'}"
        )


def load_mcp_config(
    config: str | os.PathLike[str] | Mapping[str, Any],
    *,
    environ: Mapping[str, str] | None = None,
    servers: Sequence[str] | None = None,
) -> McpConfig:
    """Read a config file (or its parsed JSON) in any of the formats above. ``servers``: only these entries
    (in this order; an unknown name is an error listing the config's); the others are never resolved, so
    their variables need not be set. An entry that cannot be used is named in ``McpConfig.invalid`` and
    the others load."""
    environ = os.environ if environ is None else environ
    if isinstance(config, Mapping):
        document, source, folder = config, "mcp config", Path.cwd()
    else:
        path = Path(config).expanduser()
        source = str(path)
        try:
            document = loads_unique(path.read_text(encoding="utf-8"), source, MAX_CATALOG_DEPTH)
        except FileNotFoundError:
            raise CatalogError(f"{source}: no such MCP config file") from None
        except DuplicateKeyError as exc:
            raise CatalogError(str(exc)) from None
        except (UnicodeDecodeError, json.JSONDecodeError, JsonLimitError) as exc:
            raise CatalogError(f"{source}: not a JSON MCP config ({exc})") from None
        folder = path.resolve().parent
        if folder.name in (".vscode", ".cursor"):
            folder = folder.parent
    if not isinstance(document, Mapping):
        raise CatalogError(f"{source}: an MCP config is a JSON object, got {type(document).__name__}")
    key = "mcpServers" if "mcpServers" in document else "servers" if "servers" in document else None
    if key is None:
        raise CatalogError(
            f"{source}: no 'mcpServers' (Claude Desktop, Cursor) or 'servers' (VS Code) object; "
            f"top-level keys: {', '.join(map(str, document)) or 'none'}"
        )
    entries = document[key]
    if not isinstance(entries, Mapping):
        raise CatalogError(
            f"{source}: {key!r} must map server names to servers, got {type(entries).__name__}"
        )
    variables = {"workspaceFolder": str(folder), "userHome": str(Path.home())}
    if servers:
        _check_selection(servers, [str(name) for name in entries], source)
    chosen = [(n, entries[n]) for n in dict.fromkeys(servers)] if servers else list(entries.items())
    loaded: list[McpServerConfig] = []
    skipped: list[str] = []
    ignored: list[str] = []
    invalid: dict[str, str] = {}
    for name, entry in chosen:
        where = f"{source}: server {name!r}"
        try:  # each entry on its own: a bad one is named in ``invalid``, and the others load
            if _disabled(entry, where):
                skipped.append(str(name))
                continue
            ignored += [f"{name}: {key}" for key in entry if key not in _KNOWN_KEYS]
            loaded.append(_server(str(name), entry, where, variables, environ))
        except CatalogError as exc:
            invalid[str(name)] = str(exc)
    return McpConfig(tuple(loaded), source, tuple(skipped), tuple(ignored), invalid)


def _disabled(entry: Any, where: str) -> bool:
    """Whether the entry is marked ``"disabled": true``; a value that is not a boolean is an error (the
    string ``"true"`` would otherwise start a server its user meant to switch off)."""
    if not isinstance(entry, Mapping):
        raise CatalogError(f"{where} must be an object, got {type(entry).__name__}")
    disabled = entry.get("disabled", False)
    if not isinstance(disabled, bool):
        raise CatalogError(f"{where}: 'disabled' must be true or false, got {shown(disabled, 40)}")
    return disabled


def _server(
    name: str, entry: Mapping[str, Any], where: str, variables: dict[str, str], environ: Mapping[str, str]
) -> McpServerConfig:
    substituted: list[Secret] = []
    marked = _marked(entry, where)
    names: set[str] = set()  # the variables the entry uses: what "secrets" may name

    def text(field_name: str, value: Any) -> str:
        if not isinstance(value, str):
            raise CatalogError(f"{where}: {field_name!r} must be a string, got {type(value).__name__}")
        expanded, from_env = _expand(value, f"{where}: {field_name!r}", variables, environ)
        names.update(from_env)
        for var, found in from_env.items():
            secret = setting_secret(var, found, marked=var in marked)
            if secret.registered:
                substituted.append(secret)
        return expanded

    transport = _transport(entry, where)
    if transport == "stdio":
        if "command" not in entry:
            raise CatalogError(f"{where}: a stdio server needs 'command' (or give 'url' for an HTTP server)")
        args = entry.get("args", [])
        if not isinstance(args, list):
            raise CatalogError(f"{where}: 'args' must be a list of strings, got {type(args).__name__}")
        env = entry.get("env", {})
        if not isinstance(env, Mapping):
            raise CatalogError(f"{where}: 'env' must be an object, got {type(env).__name__}")
        cwd = entry.get("cwd")
        command = text("command", entry["command"])
        arguments = tuple(text(f"args[{i}]", a) for i, a in enumerate(args))
        substituted.extend(Secret(v) for v in argument_secrets(arguments))
        environment: dict[str, Secret] = {}
        if "envFile" in entry:
            for var, value in _env_file(text("envFile", entry["envFile"]), where, variables).items():
                environment[var] = setting_secret(var, value, marked=var in marked)
        for var, value in env.items():
            environment[str(var)] = setting_secret(str(var), text(f"env.{var}", value), marked=var in marked)
        directory = text("cwd", cwd) if cwd is not None else None
        _check_marked(marked, names | set(environment), where)
        return McpServerConfig(
            name, "stdio", command, arguments, environment, directory, secrets=tuple(substituted)
        )
    if "url" not in entry:
        raise CatalogError(f"{where}: an {transport} server needs 'url'")
    headers = entry.get("headers", {})
    if not isinstance(headers, Mapping):
        raise CatalogError(f"{where}: 'headers' must be an object, got {type(headers).__name__}")
    url = url_secret(text("url", entry["url"]))
    fields = {str(k): header_secret(str(k), text(f"headers.{k}", v)) for k, v in headers.items()}
    _check_marked(marked, names, where)
    return McpServerConfig(name, transport, url=url, headers=fields, secrets=tuple(substituted))


def _transport(entry: Mapping[str, Any], where: str) -> str:
    """The server's transport from ``type`` (Claude Code, VS Code) or ``transport`` (FastMCP), else from
    whether it has a ``url``."""
    declared = {}
    for key in ("type", "transport"):
        if key in entry:
            value = str(entry[key]).strip().lower()
            if value not in _TRANSPORT_ALIASES:
                raise CatalogError(f"{where}: {key!r} must be stdio, http or sse, got {entry[key]!r}")
            declared[key] = _TRANSPORT_ALIASES[value]
    if len(set(declared.values())) > 1:
        raise CatalogError(
            f"{where}: 'type' says {declared['type']} but 'transport' says {declared['transport']}; keep one"
        )
    return next(iter(declared.values()), "http" if "url" in entry else "stdio")


def _marked(entry: Mapping[str, Any], where: str) -> frozenset[str]:
    """The variables an entry marks as secrets (``"secrets": ["NAME", ...]``), whatever their names."""
    names = entry.get("secrets", [])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise CatalogError(
            f"{where}: 'secrets' must be a list of variable names (env, envFile or ${{NAME}}), "
            f"got {names!r:.80}"
        )
    return frozenset(names)


def _check_marked(marked: frozenset[str], names: set[str], where: str) -> None:
    unknown = sorted(marked - names)
    if unknown:
        raise CatalogError(
            f"{where}: 'secrets' names {unknown[0]!r}, which is no env or envFile entry and no ${{VAR}} of "
            f"this server; it uses {', '.join(sorted(names)) or 'none'}"
        )


def _env_file(path_text: str, where: str, variables: dict[str, str]) -> dict[str, str]:
    """VS Code's ``envFile``: ``NAME=value`` lines (``export`` allowed, ``#`` comments, one pair of
    quotes stripped). Relative paths are from the workspace folder."""
    path = Path(path_text).expanduser()
    if not path.is_absolute():
        path = Path(variables["workspaceFolder"]) / path
    try:
        lines = _read_env_file(path).splitlines()
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise CatalogError(f"{where}: 'envFile' {str(path)!r} cannot be read ({exc})") from None
    values: dict[str, str] = {}
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, equals, value = line.removeprefix("export ").partition("=")
        name, value = name.strip(), value.strip()
        if not equals or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise CatalogError(f"{where}: 'envFile' {str(path)!r} line {number} is not NAME=value")
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        values[name] = value
    return values


def _read_env_file(path: Path) -> str:
    """The text of a regular file of at most :data:`MAX_ENV_FILE_BYTES`. Opened without blocking and
    checked on the open file, so a FIFO, a device (``/dev/zero``) or a file growing while it is read is
    refused by what it is, never read forever."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as file:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ValueError(f"not a regular file but {_file_kind(mode)}")
        data = file.read(MAX_ENV_FILE_BYTES + 1)
    if len(data) > MAX_ENV_FILE_BYTES:
        raise ValueError(f"larger than {MAX_ENV_FILE_BYTES:,} bytes (MAX_ENV_FILE_BYTES)")
    return data.decode("utf-8")


def _file_kind(mode: int) -> str:
    kinds = {stat.S_ISFIFO: "a FIFO", stat.S_ISCHR: "a character device", stat.S_ISBLK: "a block device"}
    kinds |= {stat.S_ISDIR: "a directory", stat.S_ISSOCK: "a socket"}
    return next((kind for test, kind in kinds.items() if test(mode)), "not a file")


def _expand(
    value: str, where: str, variables: dict[str, str], environ: Mapping[str, str]
) -> tuple[str, dict[str, str]]:
    """``value`` with its ``${…}`` variables replaced, and the values that came from the environment (or
    a default written in the config), by variable name."""
    from_env: dict[str, str] = {}

    def replace(match: re.Match[str]) -> str:
        ref = match.group(1).strip()
        if ref.startswith("input:"):
            raise CatalogError(
                f"{where}: {match.group(0)} is a VS Code prompt, which cannot be answered here; "
                "put the value in an environment variable and write ${env:NAME}"
            )
        if ref in variables:
            return variables[ref]
        ref, has_default, default = ref.partition(":-")
        var = ref[4:] if ref.startswith("env:") else ref
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", var):
            raise CatalogError(f"{where}: {match.group(0)} is not a variable this loader knows")
        if not environ.get(var) and has_default:
            from_env[var] = default  # written in the config itself, but a key there is a key all the same
            return default
        if var not in environ:
            raise CatalogError(f"{where}: environment variable {var!r} is not set (used as {match.group(0)})")
        from_env[var] = environ[var]
        return environ[var]

    return _VARIABLE.sub(replace, value), from_env
