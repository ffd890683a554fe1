"""Front-end inputs at the front end's figure (issue 23, engine front ends as data).

Revision 0003 gave every stored scenario the then defaults of the three front-end inputs,
vLLM's OpenAI-server figures: ``request_latency_s`` 0.04 s, ``request_overhead_s`` 0.02 s and
``stream_overhead_s_per_token`` 0.0002 s. Since the front ends became data
(:mod:`planner.formulas.frontends`, commit 2ddb5fc) those inputs default to 0, meaning "the
engine's front end's figure" (SGLang's HTTP server 0.02 s latency, trtllm-serve 0.045 s,
Triton, Dynamo...), so a scenario stored before kept vLLM's figures as explicit overrides on
every engine. This revision sets exactly those old default values to 0, each column on its
own: a scenario on vLLM computes the same figures (its front end's are the old defaults), one
on another engine gets its own front end's; any other value a user typed is kept. A downgrade
sets 0 back to the old default (what 0 stood for there on a vLLM scenario; an explicit 0 typed
before this revision, which meant "no front-end time" then, reads as the default after a round
trip). The values are written out here, not read from the registry, so this revision means the
same thing whatever the registry becomes. No column changes: no table rebuild.

Numbered 0016 and revising 0013 on its branch; the lead rechains it after 0014 and 0015 at
the merge (only ``down_revision`` changes).

Revision ID: 0016
Revises: 0013
Create Date: 2026-12-02 02:50:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

OLD_DEFAULTS: tuple[tuple[str, float], ...] = (
    ("request_latency_s", 0.04),
    ("request_overhead_s", 0.02),
    ("stream_overhead_s_per_token", 0.0002),
)
"""(column, 0003's server default for existing rows), seconds (per token for the last)."""

_SCENARIOS = sa.table("scenarios", *(sa.column(name, sa.Float) for name, _ in OLD_DEFAULTS))


def _set(name: str, old: float, new: float) -> None:
    """Rows whose ``name`` is ``old`` get ``new``; bound as floats, so the comparison is of the
    same double on SQLite and PostgreSQL."""
    column = _SCENARIOS.c[name]
    op.get_bind().execute(_SCENARIOS.update().where(column == old).values({name: new}))


def upgrade() -> None:
    for name, default in OLD_DEFAULTS:
        _set(name, default, 0.0)


def downgrade() -> None:
    for name, default in OLD_DEFAULTS:
        _set(name, 0.0, default)
