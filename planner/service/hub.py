"""Models named by Hugging Face Hub id: ``org/name`` or ``org/name@revision``.

The config.json (with its ``quantization_config``) is read through ``huggingface_hub`` from the
local Hugging Face cache, or from the Hub when the cache lacks it and the network is allowed.
The safetensors index's ``metadata.total_size``, when the repo has one, is read the same way as
a cross-check of the planner's weight bytes. ``HF_TOKEN`` is passed for gated and private repos;
with ``HF_HUB_OFFLINE=1`` only the cache is read. Where the cache lives follows
``huggingface_hub``: ``HF_HUB_CACHE``, else ``$HF_HOME/hub``, else
``~/.cache/huggingface/hub``; the environment is read at each call, so a test (or a user) can
point it at another folder.

Without network the answer comes at once: before the first download of a process, one TCP
connection to the Hub (or to the HTTPS proxy in force) is tried with a short timeout
(:data:`HUB_PROBE_TIMEOUT_S`); when it fails, the process reads the cache only, as with
``HF_HUB_OFFLINE``. (``huggingface_hub`` itself retries a failed request five times over about
25 s.)

``huggingface_hub`` is imported only when a Hub id is resolved: start-up stays light.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planner.core.errors import ConfigError, PlannerError, echo
from planner.core.files import read_regular
from planner.spec.architecture import ModelSpec
from planner.spec.catalog import read_config_text
from planner.spec.hf_config import spec_from_config

HUB_ID = re.compile(r"^(?P<repo>[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)(?:@(?P<rev>[\w./-]+))?$")
"""``org/name`` with an optional ``@revision`` (a branch, tag or commit)."""

REPO_ID_MAX_CHARS = 96
"""The Hub's longest repo id (``org/name``), as ``huggingface_hub`` validates it."""

REVISION_MAX_CHARS = 200
"""The longest revision read (a branch, tag or 40-hex commit; the cache keeps it as a file
name, which the system limits to 255 bytes)."""

HUB_PROBE_TIMEOUT_S = 3.0
"""Seconds the one connection to the Hub may take before the process reads the cache only."""

INDEX_FILE = "model.safetensors.index.json"
SIDE_QUANT_FILES = ("quantize_config.json", "hf_quant_config.json")
"""Where older AutoGPTQ checkpoints (``quantize_config.json``) and NVIDIA ModelOpt checkpoints
(``hf_quant_config.json``) keep their quantization settings instead of config.json."""
MAX_SIDE_FILE_BYTES = 16 << 20
"""Largest side file read from a repo (a safetensors index of a 1T-parameter model is a
few hundred KiB; quantization settings a few KiB)."""


class HubError(PlannerError):
    """A Hub id that cannot be resolved: not cached and not reachable, gated, or unknown."""


@dataclass(frozen=True, slots=True)
class HubConfig:
    """A config.json read for a Hub id."""

    repo_id: str
    revision: str
    """The revision asked for (``main`` when none was given)."""
    commit: str
    """The commit the files were read at (the snapshot's 40-hex sha)."""
    config: dict[str, Any]
    """The parsed config.json, with a side file's quantization settings merged in as
    ``quantization_config`` when config.json has none."""
    index_total_bytes: int | None
    """``metadata.total_size`` of ``model.safetensors.index.json`` (None when absent)."""

    @property
    def source_url(self) -> str:
        """The config.json on huggingface.co at the commit it was read at."""
        return f"https://huggingface.co/{self.repo_id}/blob/{self.commit}/config.json"

    @property
    def name(self) -> str:
        """The default model name: the repo's name part (``Llama-2-13B-GPTQ``)."""
        return self.repo_id.split("/", 1)[1]


def parse_hub_id(ref: str) -> tuple[str, str | None] | None:
    """``(repo_id, revision or None)`` when ``ref`` reads as a Hub id, else None."""
    match = HUB_ID.match(ref.strip())
    if match is None:
        return None
    return match["repo"], match["rev"]


def check_hub_id(ref: str, repo_id: str, revision: str | None) -> None:
    """Refuse a Hub id the Hub cannot hold (:class:`HubError` saying the rule): a repo id
    over :data:`REPO_ID_MAX_CHARS`, ``--`` or ``..`` in it, a part ending in ``-`` or ``.``, a
    revision over :data:`REVISION_MAX_CHARS`."""
    parts = repo_id.split("/")
    if (len(repo_id) > REPO_ID_MAX_CHARS or "--" in repo_id or ".." in repo_id
            or any(p.endswith(("-", ".")) for p in parts)):
        raise HubError(f"{echo(ref)} is not a Hub id: org/name is at most "
                       f"{REPO_ID_MAX_CHARS} characters of letters, digits, '-', '_' and '.', "
                       "without '--' or '..', each part starting with a letter or digit and "
                       "not ending in '-' or '.'")
    if revision is not None and len(revision) > REVISION_MAX_CHARS:
        raise HubError(f"{echo(ref)}: the revision is {len(revision):,} characters; a branch, "
                       f"tag or commit is at most {REVISION_MAX_CHARS}")


def is_hub_id(ref: str) -> bool:
    """True for ``org/name[@revision]`` that is not a path on disk nor a .json file."""
    text = ref.strip()
    if text.endswith(".json") or Path(text).expanduser().exists():
        return False
    return parse_hub_id(text) is not None


def cache_dir() -> Path:
    """The Hugging Face hub cache folder (``HF_HUB_CACHE``, ``$HF_HOME/hub``, or
    ``$XDG_CACHE_HOME/huggingface/hub`` / ``~/.cache/huggingface/hub``)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "huggingface" / "hub"


def offline() -> bool:
    """True when ``HF_HUB_OFFLINE`` is set to a true value (only the cache is read)."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def _fill_hint(repo_id: str) -> str:
    return (f"fill it on a machine with network: `hf download {repo_id} config.json`, then "
            "set HF_HUB_CACHE to it")


_unreachable: dict[str, bool] = {}
"""Per Hub endpoint: whether this process found it unreachable (:func:`hub_unreachable`)."""


def _probe_address() -> tuple[str, int]:
    """Where a download would connect first: the HTTPS proxy in force, else the Hub endpoint
    (``HF_ENDPOINT``, default https://huggingface.co)."""
    # lazy: urllib's URL parser, only when the Hub is probed
    from urllib.parse import urlsplit

    endpoint = urlsplit(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    host = endpoint.hostname or "huggingface.co"
    port = endpoint.port or (80 if endpoint.scheme == "http" else 443)
    return _proxy_address(endpoint.scheme or "https", host) or (host, port)


def _proxy_address(scheme: str, host: str) -> tuple[str, int] | None:
    """The host and port (default 8080) of the proxy the environment sets for ``scheme``,
    unless ``host`` bypasses it; ``None`` without one (or one with no host name)."""
    # lazy: urllib's URL parser, only when the Hub is probed
    from urllib.parse import urlsplit

    # lazy: urllib's proxy settings, only when the Hub is probed
    from urllib.request import getproxies, proxy_bypass

    proxy = getproxies().get(scheme)
    if not proxy or proxy_bypass(host):
        return None
    parts = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    if not parts.hostname:
        return None
    return parts.hostname, parts.port or 8080


def hub_unreachable() -> bool:
    """True when one TCP connection to the Hub (or its proxy) fails or takes more than
    :data:`HUB_PROBE_TIMEOUT_S` (name lookup included): then this process reads the cache
    only, instead of ``huggingface_hub``'s ~25 s of retries. Tried once per process."""
    import socket
    import threading

    address = _probe_address()
    key = f"{address[0]}:{address[1]}"
    if key not in _unreachable:
        reached: list[bool] = []

        def connect() -> None:
            try:
                socket.create_connection(address, timeout=HUB_PROBE_TIMEOUT_S).close()
                reached.append(True)
            except OSError:
                pass

        worker = threading.Thread(target=connect, daemon=True)  # a name lookup has no timeout
        worker.start()
        worker.join(HUB_PROBE_TIMEOUT_S)
        _unreachable[key] = not reached
    return _unreachable[key]


def _cache_only() -> bool:
    """Whether downloads are off: ``HF_HUB_OFFLINE``, or the Hub found unreachable."""
    return offline() or hub_unreachable()


def _download(repo_id: str, filename: str, revision: str | None) -> Path:
    """The local path of ``filename`` of ``repo_id`` at ``revision``: from the cache, or
    downloaded into it when allowed and the Hub is reachable. Raises the ``huggingface_hub``
    errors, and :class:`HubError` for a cache the system cannot use (a name too long)."""
    # lazy: huggingface_hub (~150 ms of imports), only when a Hub id is resolved
    from huggingface_hub import hf_hub_download

    try:
        path = hf_hub_download(repo_id, filename, revision=revision, cache_dir=cache_dir(),
                               token=os.environ.get("HF_TOKEN") or None,
                               local_files_only=_cache_only())
    except (OSError, ValueError) as exc:
        from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError

        if isinstance(exc, LocalEntryNotFoundError):  # an OSError: the caller words it
            raise
        if isinstance(exc, HFValidationError):
            raise HubError(f"{echo(repo_id)} is not a Hub id the Hub accepts: "
                           f"{str(exc).split(':', 1)[0]}") from exc
        if isinstance(exc, OSError) and not exc.__class__.__module__.startswith(
                "huggingface_hub"):
            raise HubError(f"{repo_id}: the Hugging Face cache ({cache_dir()}) cannot be "
                           f"used: {exc.strerror or exc}; point HF_HUB_CACHE at a writable "
                           "folder") from exc
        raise
    return Path(str(path))


def _optional_json(repo_id: str, filename: str, revision: str) -> dict[str, Any] | None:
    """A small JSON file of the repo when it has one (cached or reachable), else None."""
    # lazy: huggingface_hub errors, only when a Hub id is resolved
    from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError, LocalEntryNotFoundError

    try:
        path = _download(repo_id, filename, revision)
    except (EntryNotFoundError, LocalEntryNotFoundError, HfHubHTTPError, OSError):
        return None
    try:  # a regular file of bounded size only (a cache entry could be anything)
        data = json.loads(read_regular(path, MAX_SIDE_FILE_BYTES, filename))
    except (OSError, PlannerError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _side_quantization(repo_id: str, commit: str) -> dict[str, Any] | None:
    """Quantization settings kept beside config.json, as a ``quantization_config`` block."""
    gptq = _optional_json(repo_id, SIDE_QUANT_FILES[0], commit)
    if gptq is not None and "bits" in gptq:
        return {"quant_method": "gptq", **gptq}
    modelopt = _optional_json(repo_id, SIDE_QUANT_FILES[1], commit)
    if modelopt is not None and isinstance(modelopt.get("quantization"), dict):
        return {"quant_method": "modelopt", **modelopt["quantization"]}
    return None


def fetch_config(ref: str) -> HubConfig:
    """Read the config.json (and the safetensors index's total size) of Hub id ``ref``.

    Raises :class:`HubError` with what to do: not cached and no network (naming the cache
    folder and the command that fills it), gated (set ``HF_TOKEN``), unknown repo or revision.
    """
    parsed = parse_hub_id(ref)
    if parsed is None:
        raise HubError(f"{echo(ref)} is not a Hub id: write org/name or org/name@revision")
    repo_id, revision = parsed
    check_hub_id(ref, repo_id, revision)
    path = _config_path(repo_id, revision)
    at = f"@{revision}" if revision else ""
    try:
        config = json.loads(read_config_text(path))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{repo_id}{at}", "<file>", f"config.json is not valid JSON (line "
                          f"{exc.lineno}, column {exc.colno}: {exc.msg})") from exc
    if not isinstance(config, dict):
        raise ConfigError(f"{repo_id}{at}", "<root>", "must be a JSON object")
    commit = path.parent.name
    if "quantization_config" not in config:
        side = _side_quantization(repo_id, commit)
        if side is not None:
            config["quantization_config"] = side
    return HubConfig(repo_id=repo_id, revision=revision or "main", commit=commit,
                     config=config, index_total_bytes=_index_total_bytes(repo_id, commit))


def _config_path(repo_id: str, revision: str | None) -> Path:
    """The cached path of ``repo_id``'s config.json at ``revision`` (downloaded when not
    cached); each Hub failure as a :class:`HubError` that says what to do."""
    # lazy: huggingface_hub errors, only when a Hub id is resolved
    from huggingface_hub.errors import (
        EntryNotFoundError,
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    at = f"@{revision}" if revision else ""
    try:
        return _download(repo_id, "config.json", revision)
    except GatedRepoError as exc:
        raise HubError(f"{repo_id} is gated: accept its terms on https://huggingface.co/"
                       f"{repo_id} and set HF_TOKEN to a token that has access") from exc
    except RevisionNotFoundError as exc:
        raise HubError(f"{repo_id} has no revision {revision!r}") from exc
    except RepositoryNotFoundError as exc:
        raise HubError(f"{repo_id} is not on the Hub (or is private: set HF_TOKEN)") from exc
    except LocalEntryNotFoundError as exc:  # before EntryNotFoundError, its base class
        why = "HF_HUB_OFFLINE is set" if offline() else "the Hub cannot be reached"
        raise HubError(f"{repo_id}{at}: config.json is not in the Hugging Face cache "
                       f"({cache_dir()}) and {why}; {_fill_hint(repo_id)}") from exc
    except EntryNotFoundError as exc:
        raise HubError(f"{repo_id}{at} has no config.json") from exc
    except HfHubHTTPError as exc:
        raise HubError(f"{repo_id}{at}: the Hub answered {exc}") from exc


def _index_total_bytes(repo_id: str, commit: str) -> int | None:
    """The safetensors index's ``metadata.total_size`` (bytes) at ``commit``, when the repo
    has an index with a positive size."""
    index = _optional_json(repo_id, INDEX_FILE, commit)
    if index is None:
        return None
    size = (index.get("metadata") or {}).get("total_size")
    return int(size) if isinstance(size, (int, float)) and size > 0 else None


def fetch_spec(ref: str) -> ModelSpec:
    """The :class:`ModelSpec` of Hub id ``ref`` (:func:`fetch_config`), named after the repo."""
    read = fetch_config(ref)
    return spec_from_config(read.config, read.name)
