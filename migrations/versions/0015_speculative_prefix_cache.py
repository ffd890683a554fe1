"""Speculative decoding and prefix caching (issue 25): five inputs on every scenario.

``spec_method`` (none, mtp, draft), ``spec_draft_tokens`` (draft tokens per step, 0 = the
method's default), ``spec_acceptance_length`` (mean tokens per verify step, 0 = the method's
typical value), ``spec_draft_model`` (the draft model's catalog name, blank unless the method
is draft) and ``prefix_cache_hit_fraction`` (share of prompt tokens served from the prefix
cache). Existing rows get none / 0 / 0 / blank / 0: no speculation and no cache hit, what the
serving model assumed before, so every stored figure stays what it was. The columns are
written out here, not read from the registry, so this revision means the same thing whatever
the registry becomes. On SQLite the table is rebuilt (batch mode) with foreign keys off, as
the migration runner does for every revision. A downgrade drops the columns.

Revises 0013 on this branch, built beside the disaggregated-serving revision 0014 (also on
0013); at the merge the lead rechains this one after 0014 (``down_revision = "0014"``).

Revision ID: 0015
Revises: 0013
Create Date: 2026-12-02 02:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

COLUMNS = (
    ("spec_method", sa.String(16), "none"),
    ("spec_draft_tokens", sa.Integer(), "0"),
    ("spec_acceptance_length", sa.Float(), "0.0"),
    ("spec_draft_model", sa.String(200), ""),
    ("prefix_cache_hit_fraction", sa.Float(), "0.0"),
)
CHECKS = (
    ("spec_method_choice", "spec_method IN ('none', 'mtp', 'draft')"),
    ("spec_draft_tokens_range", "spec_draft_tokens >= 0 AND spec_draft_tokens <= 64"),
    ("spec_acceptance_length_range",
     "spec_acceptance_length >= 0.0 AND spec_acceptance_length <= 65.0"),
    ("spec_draft_model_length", "length(spec_draft_model) <= 200"),
    ("prefix_cache_hit_fraction_range",
     "prefix_cache_hit_fraction >= 0.0 AND prefix_cache_hit_fraction <= 1.0"),
)


def upgrade() -> None:
    with op.batch_alter_table("scenarios") as batch_op:
        for name, type_, default in COLUMNS:
            batch_op.add_column(sa.Column(name, type_, nullable=False, server_default=default))
        for name, check in CHECKS:
            batch_op.create_check_constraint(op.f(f"ck_scenarios_{name}"), check)
    with op.batch_alter_table("scenarios") as batch_op:
        for name, _type, _default in COLUMNS:
            batch_op.alter_column(name, server_default=None)


def downgrade() -> None:
    with op.batch_alter_table("scenarios") as batch_op:
        for name, _check in CHECKS:
            batch_op.drop_constraint(op.f(f"ck_scenarios_{name}"), type_="check")
        for name, _type, _default in reversed(COLUMNS):
            batch_op.drop_column(name)
