"""The test suite. Importing it pins numpy's SIMD level before numpy loads, and keeps compiled
modules cached.

numpy picks its kernels for ``exp``, ``log`` and ``power`` by the CPU when it is imported, and
its AVX-512 kernels round some results differently, in the last bit, from its AVX2 ones. The
bit-identity goldens (``tests/fixtures/disagg_aggregated_golden.json``,
``tests/fixtures/spec_defaults_digests.json``) hold the x86-64-v3 (AVX2) results, so every
test process and the scripts that write those files run at that level whatever the machine
(numpy's runtime dispatch: ``NPY_DISABLE_CPU_FEATURES``). pytest imports this package before
``tests/conftest.py``, and so before anything there imports numpy; xdist workers inherit the
variable.

The test loop also keeps its compiled modules, and pytest's assert-rewritten test modules, in
the git-ignored ``__pycache__`` folders even where the machine sets ``PYTHONDONTWRITEBYTECODE``
(this project's development image does). Without that cache every run, and each xdist worker in
it, compiles ``planner/`` and rewrites the asserts of every test module again: the fast run takes
58 s with it off and 45 s with it on, on the 2-core development machine (issue 27).
"""

import os
import sys

NUMPY_BASELINE_DISABLED = "X86_V4 AVX512_ICL AVX512_SPR"
"""numpy CPU features turned off in tests: its AVX-512 dispatch targets (unknown names are
ignored, so the list holds on machines without them)."""

os.environ.setdefault("NPY_DISABLE_CPU_FEATURES", NUMPY_BASELINE_DISABLED)
sys.dont_write_bytecode = False
