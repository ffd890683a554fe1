"""The shipped catalog in ``seeds/``: model config.json files and GPU datasheet figures.

This is the file side of the estimator: it reads JSON and TOML and hands back
:class:`ModelSpec` and :class:`GpuSpec` objects. The estimator itself does no I/O.
``PLANNER_SEEDS_DIR`` points the planner at another catalog folder (tests use it).
"""

from __future__ import annotations

import json
import os
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

from planner.core import resources
from planner.core.errors import ConfigError, NotFoundError, PlannerError
from planner.core.files import FileRefused, read_regular
from planner.core.units import GB, GiB
from planner.spec.architecture import ModelSpec
from planner.spec.gpu import GpuSpec
from planner.spec.hf_config import spec_from_config


def seeds_dir() -> Path:
    """The catalog folder: ``$PLANNER_SEEDS_DIR`` or the shipped ``seeds/``
    (:func:`planner.core.resources.seeds_dir`)."""
    env = os.environ.get("PLANNER_SEEDS_DIR")
    return Path(env) if env else resources.seeds_dir()


MAX_CONFIG_BYTES = 4 << 20
"""Largest config.json accepted (4 MiB; real ones are a few KiB). A bigger file, or an endless
one such as ``/dev/zero``, is refused after reading this much."""
MAX_CONFIG_DEPTH = 64
"""Deepest nesting of arrays and objects accepted in a config.json."""


def read_config_text(path: str | Path) -> str:
    """The text of a config.json file, read as UTF-8 (a leading byte-order mark is dropped);
    :class:`ConfigError` when it is not a regular file (a FIFO, a device, a folder: refused
    before reading, so nothing blocks), cannot be read, is larger than
    :data:`MAX_CONFIG_BYTES` or is not UTF-8 (:func:`planner.core.files.read_regular`). At most
    ``MAX_CONFIG_BYTES + 1`` bytes are ever read."""
    p = Path(path)
    try:
        data = read_regular(p, MAX_CONFIG_BYTES, "config.json")
    except FileRefused as exc:
        raise ConfigError(str(p), "<file>", exc.reason) from None
    return decode_config(data, str(p))


def decode_config(data: bytes, label: str) -> str:
    """``data`` as UTF-8 text; :class:`ConfigError` naming the encoding problem otherwise."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in data[:4096]:
        raise ConfigError(label, "<file>", "is not UTF-8 text (it looks like UTF-16 or "
                                           "UTF-32); save it as UTF-8")
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise ConfigError(label, "<file>", f"is not UTF-8 text (byte {exc.start + 1} is "
                                           f"0x{data[exc.start]:02x}); save it as UTF-8") from None


_CONSTANTS = {"Infinity": float("inf"), "-Infinity": float("-inf"), "NaN": float("nan")}
"""The non-standard literals Python's json module writes and transformers reads (its config
loader is ``json.loads``): NVIDIA-Nemotron-3-Super's ``"time_step_limit": [0.0, Infinity]``."""


def _read_constant(name: str) -> float:
    return _CONSTANTS[name]


def parse_config(text: str, label: str) -> dict[str, Any]:
    """Parse config.json ``text``; :class:`ConfigError` unless it is a JSON object of at most
    :data:`MAX_CONFIG_BYTES` (in UTF-8) nested at most :data:`MAX_CONFIG_DEPTH` deep, without
    integers longer than Python reads. ``Infinity``, ``-Infinity`` and ``NaN`` read as the
    floats transformers reads them as (:data:`_CONSTANTS`); no shape key may take one (the
    readers accept integers only)."""
    if len(text) > MAX_CONFIG_BYTES or len(text.encode("utf-8", "surrogatepass")) > \
            MAX_CONFIG_BYTES:
        raise ConfigError(label, "<file>", f"is larger than {MAX_CONFIG_BYTES >> 20} MiB; a "
                                           "config.json is a few KiB of JSON")
    try:
        data = json.loads(text, parse_constant=_read_constant)
    except json.JSONDecodeError as exc:
        raise ConfigError(label, "<file>", f"is not valid JSON (line {exc.lineno}, column "
                                           f"{exc.colno}: {exc.msg})") from None
    except RecursionError:
        raise ConfigError(label, "<file>", f"is nested more than {MAX_CONFIG_DEPTH} levels "
                                           "deep") from None
    except ValueError as exc:  # an integer of more than 4,300 digits
        raise ConfigError(label, "<file>", f"is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ConfigError(label, "<root>", "must be a JSON object")
    check_config(data, label)
    return data


def check_config(config: Any, label: str) -> None:
    """:class:`ConfigError` if ``config`` nests arrays and objects more than
    :data:`MAX_CONFIG_DEPTH` deep (checked without recursion)."""
    stack: list[tuple[Any, int]] = [(config, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_CONFIG_DEPTH:
            raise ConfigError(label, "<file>", f"is nested more than {MAX_CONFIG_DEPTH} "
                                               "levels deep")
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend((v, depth + 1) for v in value)


def load_config(path: str | Path) -> dict[str, Any]:
    """Read a config.json file; a clear :class:`ConfigError` when it is missing, too large,
    not UTF-8, not JSON or nested too deep (:func:`read_config_text`, :func:`parse_config`)."""
    return parse_config(read_config_text(path), str(Path(path)))


def spec_from_file(path: str | Path, name: str | None = None) -> ModelSpec:
    """A :class:`ModelSpec` from a config.json file (name defaults to the file stem, or the
    folder name for a file called ``config.json``)."""
    p = Path(path)
    default = p.parent.name if p.stem == "config" else p.stem
    return spec_from_config(load_config(p), name or default)


def model_names() -> list[str]:
    """Catalog model names (the config files in ``seeds/models``)."""
    return sorted(p.stem for p in (seeds_dir() / "models").glob("*.json"))


@cache
def model_sources() -> dict[str, dict[str, str]]:
    """``seeds/models/sources.toml``: hub id and source URL per catalog model."""
    path = seeds_dir() / "models" / "sources.toml"
    if not path.exists():
        return {}
    with path.open("rb") as fh:
        return tomllib.load(fh)


def resolve_model(ref: str) -> tuple[str, dict[str, Any]]:
    """``(name, config dict)`` for a config.json path or a catalog name (case-insensitive)."""
    path = Path(ref).expanduser()
    if path.suffix == ".json" or path.exists():
        if path.is_dir():
            path = path / "config.json"
        return (path.parent.name if path.stem == "config" else path.stem), load_config(path)
    names = model_names()
    match = {n.lower(): n for n in names}.get(ref.strip().lower())
    if match is None:
        raise NotFoundError("model", ref, names)
    return match, load_config(seeds_dir() / "models" / f"{match}.json")


def resolve_model_spec(ref: str) -> ModelSpec:
    """:class:`ModelSpec` for a config.json path or a catalog name."""
    name, cfg = resolve_model(ref)
    return spec_from_config(cfg, name)


_FLOPS_KEYS = {"bf16": "bf16_tflops", "fp16": "fp16_tflops", "fp8": "fp8_tflops",
               "int8": "int8_tops", "int4": "int4_tops", "nvfp4": "nvfp4_tflops",
               "mxfp4": "mxfp4_tflops"}


def _whole(value: Any) -> int:
    """A whole-number catalog figure (``8``, ``8.0``); a fraction is refused."""
    number = float(value)
    if number != int(number):
        raise ValueError(f"{value!r} is not a whole number")
    return int(number)


def gpu_from_record(name: str, rec: dict[str, Any]) -> GpuSpec:
    """A :class:`GpuSpec` from one unit-suffixed catalog record (see ``seeds/gpus.toml``)."""
    try:
        if "memory_gib" in rec:
            memory = round(float(rec["memory_gib"]) * GiB)
        else:
            memory = round(float(rec["memory_gb"]) * GB)
        flops = {dt: float(rec[key]) * 1e12 for dt, key in _FLOPS_KEYS.items() if rec.get(key)}
        return GpuSpec(
            name=name, memory_bytes=memory, flops_per_s=flops,
            bandwidth_bytes_per_s=float(rec["memory_bandwidth_gb_per_s"]) * GB,
            price_usd_per_hour=float(rec.get("price_usd_per_hour", 0.0)),
            vendor=str(rec.get("vendor", "")), label=str(rec.get("label", name)),
            interconnect_bytes_per_s=float(rec.get("interconnect_gb_per_s", 0.0)) * GB,
            power_w=float(rec.get("power_w", 0.0)),
            price_is_example=bool(rec.get("price_is_example", False)),
            source=str(rec.get("source", "")),
            usable_memory_bytes=round(float(rec.get("usable_memory_gib", 0.0)) * GiB),
            matmul_efficiency=float(rec.get("matmul_efficiency", 0.0)),
            bandwidth_efficiency=float(rec.get("bandwidth_efficiency", 0.0)),
            matmul_efficiency_8bit=float(rec.get("matmul_efficiency_8bit", 0.0)),
            runtime_context_bytes=round(float(rec.get("runtime_context_gib", 0.0)) * GiB),
            serving_source=str(rec.get("serving_source", "")),
            nvlink_domain_gpus=_whole(rec.get("nvlink_domain_gpus", 0)),
            mesh_links_per_gpu=_whole(rec.get("mesh_links_per_gpu", 0)),
            pcie_gen=_whole(rec.get("pcie_gen", 0)),
            nic_gbit_per_s=float(rec.get("nic_gbit_per_s", 0.0)),
            topology_source=str(rec.get("topology_source", "")),
            compute_capability=float(rec.get("compute_capability", 0.0)),
        )
    except KeyError as exc:
        raise PlannerError(f"GPU {name!r}: catalog record lacks {exc.args[0]!r}") from exc
    except (TypeError, ValueError) as exc:
        raise PlannerError(f"GPU {name!r}: catalog record has a non-numeric figure: {exc}") from exc


def gpu_record(spec: GpuSpec) -> dict[str, Any]:
    """A GPU in the unit-suffixed form of ``seeds/gpus.toml`` (what users read and edit)."""
    record: dict[str, Any] = {
        "vendor": spec.vendor, "label": spec.label, "memory_gib": spec.memory_bytes / GiB}
    for dtype, key in _FLOPS_KEYS.items():
        if spec.flops_per_s.get(dtype):
            record[key] = spec.flops_per_s[dtype] / 1e12
    record.update(memory_bandwidth_gb_per_s=spec.bandwidth_bytes_per_s / GB,
                  interconnect_gb_per_s=spec.interconnect_bytes_per_s / GB,
                  power_w=spec.power_w, price_usd_per_hour=spec.price_usd_per_hour,
                  price_is_example=spec.price_is_example, source=spec.source)
    serving = {"usable_memory_gib": spec.usable_memory_bytes / GiB,
               "matmul_efficiency": spec.matmul_efficiency,
               "matmul_efficiency_8bit": spec.matmul_efficiency_8bit,
               "bandwidth_efficiency": spec.bandwidth_efficiency,
               "runtime_context_gib": spec.runtime_context_bytes / GiB}
    record.update({k: v for k, v in serving.items() if v})
    if spec.serving_source:
        record["serving_source"] = spec.serving_source
    topology = {"nvlink_domain_gpus": spec.nvlink_domain_gpus,
                "mesh_links_per_gpu": spec.mesh_links_per_gpu, "pcie_gen": spec.pcie_gen,
                "nic_gbit_per_s": spec.nic_gbit_per_s}
    record.update({k: v for k, v in topology.items() if v})
    if spec.topology_source:
        record["topology_source"] = spec.topology_source
    if spec.compute_capability:
        record["compute_capability"] = spec.compute_capability
    return record


def gpus_from_toml(path: str | Path) -> dict[str, GpuSpec]:
    """Every GPU record of a TOML file in the ``seeds/gpus.toml`` format, by name."""
    with Path(path).open("rb") as fh:
        data = tomllib.load(fh)
    return {name: gpu_from_record(name, rec) for name, rec in data.items()}


@cache
def load_gpus() -> dict[str, GpuSpec]:
    """Every GPU in ``seeds/gpus.toml``, by name."""
    return gpus_from_toml(seeds_dir() / "gpus.toml")


def resolve_gpu(name: str) -> GpuSpec:
    """A catalog GPU by name (case-insensitive)."""
    gpus = load_gpus()
    match = {n.lower(): n for n in gpus}.get(name.strip().lower())
    if match is None:
        raise NotFoundError("GPU", name, list(gpus))
    return gpus[match]
