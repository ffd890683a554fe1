"""GPU topology (issue 23 item 4): how each GPU is wired, on gpus.

``nvlink_domain_gpus`` (GPUs one scale-up fabric joins), ``mesh_links_per_gpu`` (point-to-point
scale-up links; NULL for a switched fabric), ``pcie_gen`` (the x16 host link) and
``nic_gbit_per_s`` (scale-out NIC per GPU, one direction), with ``topology_source``: what
:mod:`planner.formulas.topology` reads to cost a collective on the link a group really crosses
(an A100 PCIe TP4 ring crosses PCIe, not the two-card NVLink bridge). The GPUs of the shipped
catalog get its figures (by name, where the row has none), as a database seeded at this revision
would have; other rows get NULL (unknown: the listed interconnect for any group, as before).
Each number carries a CHECK that it is NULL or positive. On SQLite the table is rebuilt (batch
mode). A downgrade drops the columns.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-01 23:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

COLUMNS: tuple[tuple[str, sa.types.TypeEngine], ...] = (
    ("nvlink_domain_gpus", sa.Integer()),
    ("mesh_links_per_gpu", sa.Integer()),
    ("pcie_gen", sa.Integer()),
    ("nic_gbit_per_s", sa.Float()),
)


def upgrade() -> None:
    with op.batch_alter_table("gpus") as batch_op:
        for name, type_ in COLUMNS:
            batch_op.add_column(sa.Column(name, type_, nullable=True))
            batch_op.create_check_constraint(op.f(f"ck_gpus_{name}_positive"),
                                             f"{name} IS NULL OR {name} > 0")
        batch_op.add_column(sa.Column("topology_source", sa.Text(), nullable=False,
                                      server_default=""))
    with op.batch_alter_table("gpus") as batch_op:
        batch_op.alter_column("topology_source", server_default=None)
    _fill_shipped_gpus()


def _fill_shipped_gpus() -> None:
    """Give the GPUs of the shipped catalog (by name) its topology figures where the row has
    none: what a database seeded at this revision has, and what a downgrade then upgrade
    restores."""
    from planner.spec.catalog import load_gpus  # the shipped catalog (seeds/gpus.toml)

    gpus = sa.table("gpus", sa.column("name", sa.String),
                    sa.column("topology_source", sa.Text),
                    *(sa.column(name, type_) for name, type_ in COLUMNS))
    bind = op.get_bind()
    for name, spec in load_gpus().items():
        values = {"nvlink_domain_gpus": spec.nvlink_domain_gpus or None,
                  "mesh_links_per_gpu": spec.mesh_links_per_gpu or None,
                  "pcie_gen": spec.pcie_gen or None,
                  "nic_gbit_per_s": spec.nic_gbit_per_s or None,
                  "topology_source": spec.topology_source}
        bind.execute(gpus.update().where(gpus.c.name == name,
                                         gpus.c.nvlink_domain_gpus.is_(None))
                     .values(**values))


def downgrade() -> None:
    with op.batch_alter_table("gpus") as batch_op:
        batch_op.drop_column("topology_source")
        for name, _type in reversed(COLUMNS):
            batch_op.drop_constraint(op.f(f"ck_gpus_{name}_positive"), type_="check")
            batch_op.drop_column(name)
