"""The shipped GPU catalog (seeds/gpus.toml): every record is sane and sourced, and the figures
issue 13 corrected stay corrected."""
from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from planner.spec.catalog import load_gpus

SEEDS = Path(__file__).resolve().parents[2] / "seeds" / "gpus.toml"
RECORDS = tomllib.loads(SEEDS.read_text())
GPUS = load_gpus()
PEAK_KEYS = ("bf16_tflops", "fp16_tflops", "fp8_tflops", "int8_tops", "int4_tops")

# Sparse (2:4) headline figures the datasheets print, per part and key; the catalog keeps the
# dense figure, which is half of it to the datasheet's rounding (L40S prints 362.05 | 733),
# never the headline itself.
_A100 = {"bf16_tflops": 624, "fp16_tflops": 624, "int8_tops": 1248, "int4_tops": 2496}
_H100 = {"bf16_tflops": 1979, "fp16_tflops": 1979, "fp8_tflops": 3958, "int8_tops": 3958}
_HGX_B = {"bf16_tflops": 4500, "fp16_tflops": 4500, "fp8_tflops": 9000}
_CDNA3 = {"bf16_tflops": 2614.9, "fp16_tflops": 2614.9, "fp8_tflops": 5229.8,
          "int8_tops": 5229.8}
SPARSE_HEADLINES = {
    "a100-40gb": _A100, "a100-80gb": _A100, "a100-80gb-pcie": _A100,
    "h100-sxm": _H100, "h200": _H100,
    "h100-pcie": {"bf16_tflops": 1513, "fp16_tflops": 1513, "fp8_tflops": 3026,
                  "int8_tops": 3026},
    "h100-nvl": {"bf16_tflops": 1671, "fp16_tflops": 1671, "fp8_tflops": 3341,
                 "int8_tops": 3341},
    "b200": {**_HGX_B, "int8_tops": 9000}, "b300": _HGX_B,
    "gb200": {"bf16_tflops": 5000, "fp16_tflops": 5000, "fp8_tflops": 10000,
              "int8_tops": 10000},
    "l40s": {"bf16_tflops": 733, "fp16_tflops": 733, "fp8_tflops": 1466, "int8_tops": 1466},
    "l4": {"bf16_tflops": 242, "fp16_tflops": 242, "fp8_tflops": 485, "int8_tops": 485},
    "a10": {"bf16_tflops": 250, "fp16_tflops": 250, "int8_tops": 500, "int4_tops": 1000},
    "mi300x": _CDNA3, "mi325x": _CDNA3,
    "mi355x": {"bf16_tflops": 5033.2, "fp16_tflops": 5033.2, "fp8_tflops": 10066.4,
               "int8_tops": 10066.4},
}


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_every_record_is_sane_and_sourced(name: str) -> None:
    rec, gpu = RECORDS[name], GPUS[name]
    assert rec.get("bf16_tflops") or rec.get("fp16_tflops"), "no 16-bit tensor path"
    assert rec["memory_gib"] > 0 and rec["memory_bandwidth_gb_per_s"] > 0
    assert rec.get("usable_memory_gib", 0) <= rec["memory_gib"]
    assert str(rec.get("source", "")).strip() and str(rec.get("serving_source", "")).strip()
    assert rec.get("price_is_example") is True and rec.get("price_usd_per_hour", 0) > 0
    assert gpu.memory_bytes == round(rec["memory_gib"] * 2**30)
    for key in PEAK_KEYS:  # dense, never the sparse headline
        if key in rec:
            assert rec[key] > 0
            sparse = SPARSE_HEADLINES.get(name, {}).get(key)
            if sparse is not None:
                assert rec[key] != sparse and rec[key] == pytest.approx(sparse / 2, rel=0.02), key
    # an 8-bit path is never slower than the 16-bit one it replaces
    sixteen = max(rec.get("bf16_tflops", 0), rec.get("fp16_tflops", 0))
    for key in ("fp8_tflops", "int8_tops"):
        if key in rec:
            assert rec[key] >= sixteen, key


def test_issue_13_corrections() -> None:
    assert RECORDS["b200"]["memory_bandwidth_gb_per_s"] == 7700  # HGX B200: 7.7 TB/s per GPU
    assert GPUS["b200"].bandwidth_bytes_per_s == 7.7e12
    # RTX 4090: PCIe Gen4 x16 counted both ways, as L40S and L4
    assert RECORDS["rtx-4090"]["interconnect_gb_per_s"] == 64
    assert RECORDS["l40s"]["interconnect_gb_per_s"] == RECORDS["l4"]["interconnect_gb_per_s"] == 64
    assert GPUS["rtx-4090"].interconnect_bytes_per_s == 64e9


def test_issue_13_parts_are_listed_with_their_datasheet_figures() -> None:
    figures = {  # name: (memory_gib, bandwidth GB/s, bf16 dense TFLOP/s)
        "a100-80gb-pcie": (80, 1935, 312), "h100-nvl": (94, 3900, 835.5), "h20": (96, 4000, 148),
        "a10": (24, 600, 125), "l20": (48, 864, 119.5), "mi325x": (256, 6000, 1307.4),
        "mi355x": (288, 8000, 2516.6), "b300": (288, 8000, 2250), "gb200": (186, 8000, 2500),
        "gaudi3": (128, 3670, 1835), "tpu-v5e": (16, 819, 197), "tpu-v5p": (95, 2765, 459),
        "tpu-v6e": (32, 1638, 918)}
    for name, (mem, bw, bf16) in figures.items():
        rec = RECORDS[name]
        assert (rec["memory_gib"], rec["memory_bandwidth_gb_per_s"], rec["bf16_tflops"]) == (
            mem, bw, bf16), name
    assert (RECORDS["tpu-v5e"]["int8_tops"], RECORDS["tpu-v5p"]["int8_tops"],
            RECORDS["tpu-v6e"]["int8_tops"]) == (393, 918, 1836)
    # no FP4/FP6 key exists: the parts that list them say so in their source
    for name in ("b200", "b300", "gb200", "mi355x"):
        assert "FP4" in RECORDS[name]["source"]


FP4_SPARSE_HEADLINES = {  # per GPU, from the 8- or 72-GPU totals the datasheets print
    "b200": 144_000 / 8, "b300": 144_000 / 8, "gb200": 1_440_000 / 72,
    "gb300": 1_440_000 / 72, "rtx-pro-6000": 4000}


def test_fp4_peaks_are_dense_and_only_where_the_tensor_cores_run_fp4() -> None:
    """Dense NVFP4/MXFP4 peaks (issue 26): Blackwell runs both at one FP4 rate, MI355X MXFP4
    only; Hopper and older list none (an FP4 checkpoint runs W4A16 there). B300 and GB300
    print 108 and 1,080 PF dense (13.5 and 15 PF per GPU), not half their sparse headline."""
    fp4 = {n: (r.get("nvfp4_tflops"), r.get("mxfp4_tflops")) for n, r in RECORDS.items()
           if "nvfp4_tflops" in r or "mxfp4_tflops" in r}
    assert fp4 == {"b200": (9000, 9000), "b300": (13500, 13500), "gb200": (10000, 10000),
                   "gb300": (15000, 15000), "rtx-pro-6000": (2000, 2000),
                   "mi355x": (None, 10066.4)}
    for name in ("b200", "gb200", "rtx-pro-6000"):
        assert fp4[name][0] == FP4_SPARSE_HEADLINES[name] / 2
    for name in ("b300", "gb300"):  # Blackwell Ultra: dense above half the sparse figure
        assert fp4[name][0] > FP4_SPARSE_HEADLINES[name] / 2
    assert GPUS["gb300"].flops_per_s["nvfp4"] == 15e15
    assert "nvfp4" not in GPUS["mi355x"].flops_per_s


def test_issue_26_parts_are_listed_with_their_datasheet_figures() -> None:
    figures = {  # name: (memory_gib, bandwidth GB/s, bf16 dense TFLOP/s, power W)
        "gb300": (288, 8000, 2500, 1400), "rtx-pro-6000": (96, 1597, 500, 600),
        "b300": (288, 8000, 2250, 1100)}
    for name, expected in figures.items():
        rec = RECORDS[name]
        assert (rec["memory_gib"], rec["memory_bandwidth_gb_per_s"], rec["bf16_tflops"],
                rec["power_w"]) == expected, name
    assert len(RECORDS) == 27  # 26 since issue 26; the RTX 3090 joined from a test fixture


def test_fp4_checkpoint_takes_the_fp4_peak_where_the_gpu_lists_one() -> None:
    """``gpu_flops_per_s``, the matmul peak the latency and serving formulas read: path 4
    (NVFP4 W4A4) reads the NVFP4 peak, path 5 (MXFP4) the MXFP4 peak, and a part without one
    (H100, MI355X for NVFP4) the 16-bit peak (W4A16)."""
    from planner.formulas.derived import gpu_compute_bits, gpu_flops_per_s
    from planner.spec.gpu import gpu_figures

    def peak(gpu: str, path: int) -> float:
        f = gpu_figures(GPUS[gpu])
        args = [f[f"gpu_{d}_peak"] for d in ("bf16", "fp16", "fp8", "int8", "int4", "nvfp4",
                                             "mxfp4")]
        return gpu_flops_per_s(path, *args)

    assert peak("b200", 4) == 9000e12 and peak("b200", 5) == 9000e12
    assert peak("h100-sxm", 4) == peak("h100-sxm", 0) == 989.4e12
    assert peak("mi355x", 4) == 2516.6e12 and peak("mi355x", 5) == 10066.4e12
    f = gpu_figures(GPUS["b200"])
    assert gpu_compute_bits(4, f["gpu_fp8_peak"], f["gpu_int8_peak"], f["gpu_int4_peak"],
                            f["gpu_nvfp4_peak"], f["gpu_mxfp4_peak"]) == 4


def test_nvfp4_w4a4_gemm_share_is_the_measured_speedup_over_16_bit() -> None:
    """W4A4 NVFP4 GEMMs reach 2.03x their 16-bit GEMMs (Transformer Engine, "GEMM Speedups
    Across Precisions", B300, autocast), not the datasheet's 4x: on a B200 the 4-bit share is
    ``0.7 * 2.03 * 2,250 / 9,000`` = 0.355 of the 9,000 TFLOP/s peak; 8-bit and 16-bit
    matmuls keep the catalog's shares; ``weight_dtype nvfp4`` under ``quant_mode`` auto takes
    the FP4 path (4) as the engines do, MXFP4 stays weight-only (0)."""
    from planner.formulas.derived import FOUR_BIT_GEMM_SPEEDUP, gpu_matmul_efficiency
    from planner.spec.gpu import DEFAULT_PATH, gpu_figures, matmul_path

    f = gpu_figures(GPUS["b200"])
    e16, e8 = f["gpu_matmul_efficiency_16bit"], f["gpu_matmul_efficiency_8bit"]
    four = gpu_matmul_efficiency(4, e16, e8, 9000e12, f["gpu_bf16_peak"], f["gpu_fp16_peak"])
    assert four == pytest.approx(e16 * 2.03 * 2250 / 9000, rel=1e-12)
    assert 9000e12 * four == pytest.approx(FOUR_BIT_GEMM_SPEEDUP * e16 * 2250e12, rel=1e-12)
    assert gpu_matmul_efficiency(8, e16, e8, 4500e12, 2250e12, 2250e12) == e8
    assert gpu_matmul_efficiency(16, e16, e8, 2250e12, 2250e12, 2250e12) == e16
    assert DEFAULT_PATH["nvfp4"] == matmul_path("nvfp4") == "fp4"
    assert DEFAULT_PATH["mxfp4"] == "16bit" and matmul_path("nvfp4", "weight_only") == "16bit"
