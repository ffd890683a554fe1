"""The suite runs numpy at the AVX2 level its bit-identity goldens were made at
(``tests/__init__.py``), in the controller and in every xdist worker."""

from __future__ import annotations

import os

try:
    from numpy._core._multiarray_umath import __cpu_features__
except ImportError:  # numpy 1.x
    from numpy.core._multiarray_umath import __cpu_features__

from tests import NUMPY_BASELINE_DISABLED


def test_numpy_runs_without_its_avx512_kernels() -> None:
    assert os.environ["NPY_DISABLE_CPU_FEATURES"] == NUMPY_BASELINE_DISABLED
    assert not __cpu_features__["X86_V4"] and not __cpu_features__["AVX512_SKX"]
