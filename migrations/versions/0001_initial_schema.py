"""Initial schema: models, gpus, fleets, scenarios, the scenario change log, the seed log.

Revision ID: 0001
Revises:
Create Date: 2026-11-29 09:37:22.556051
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('fleets',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('description', sa.Text(), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint('length(name) > 0', name=op.f('ck_fleets_name_not_empty')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_fleets')),
    sa.UniqueConstraint('name', name=op.f('uq_fleets_name'))
    )
    op.create_table('gpus',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=100), nullable=False),
    sa.Column('vendor', sa.String(length=100), nullable=False),
    sa.Column('label', sa.String(length=200), nullable=False),
    sa.Column('memory_bytes', sa.BigInteger(), nullable=False),
    sa.Column('bf16_flops_per_s', sa.Float(), nullable=True),
    sa.Column('fp16_flops_per_s', sa.Float(), nullable=True),
    sa.Column('fp8_flops_per_s', sa.Float(), nullable=True),
    sa.Column('int8_ops_per_s', sa.Float(), nullable=True),
    sa.Column('int4_ops_per_s', sa.Float(), nullable=True),
    sa.Column('memory_bandwidth_bytes_per_s', sa.Float(), nullable=False),
    sa.Column('interconnect_bytes_per_s', sa.Float(), nullable=False),
    sa.Column('power_w', sa.Float(), nullable=False),
    sa.Column('price_usd_per_gpu_hour', sa.Float(), nullable=False),
    sa.Column('price_is_example', sa.Boolean(), nullable=False),
    sa.Column('source', sa.Text(), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint('COALESCE(bf16_flops_per_s, fp16_flops_per_s, fp8_flops_per_s, int8_ops_per_s, int4_ops_per_s) IS NOT NULL', name=op.f('ck_gpus_some_throughput')),
    sa.CheckConstraint('bf16_flops_per_s IS NULL OR bf16_flops_per_s > 0', name=op.f('ck_gpus_bf16_flops_per_s_positive')),
    sa.CheckConstraint('fp16_flops_per_s IS NULL OR fp16_flops_per_s > 0', name=op.f('ck_gpus_fp16_flops_per_s_positive')),
    sa.CheckConstraint('fp8_flops_per_s IS NULL OR fp8_flops_per_s > 0', name=op.f('ck_gpus_fp8_flops_per_s_positive')),
    sa.CheckConstraint('int4_ops_per_s IS NULL OR int4_ops_per_s > 0', name=op.f('ck_gpus_int4_ops_per_s_positive')),
    sa.CheckConstraint('int8_ops_per_s IS NULL OR int8_ops_per_s > 0', name=op.f('ck_gpus_int8_ops_per_s_positive')),
    sa.CheckConstraint('interconnect_bytes_per_s >= 0', name=op.f('ck_gpus_interconnect_non_negative')),
    sa.CheckConstraint('memory_bandwidth_bytes_per_s > 0', name=op.f('ck_gpus_bandwidth_positive')),
    sa.CheckConstraint('memory_bytes > 0', name=op.f('ck_gpus_memory_positive')),
    sa.CheckConstraint('power_w >= 0', name=op.f('ck_gpus_power_non_negative')),
    sa.CheckConstraint('price_usd_per_gpu_hour >= 0', name=op.f('ck_gpus_price_non_negative')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_gpus')),
    sa.UniqueConstraint('name', name=op.f('uq_gpus_name'))
    )
    op.create_table('models',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('source', sa.String(length=500), nullable=False),
    sa.Column('config_json', sa.Text(), nullable=False),
    sa.Column('model_type', sa.String(length=50), nullable=False),
    sa.Column('hidden_size', sa.Integer(), nullable=False),
    sa.Column('num_layers', sa.Integer(), nullable=False),
    sa.Column('num_attention_heads', sa.Integer(), nullable=False),
    sa.Column('num_kv_heads', sa.Integer(), nullable=False),
    sa.Column('head_dim', sa.Integer(), nullable=False),
    sa.Column('vocab_size', sa.Integer(), nullable=False),
    sa.Column('params_total', sa.BigInteger(), nullable=False),
    sa.Column('params_active', sa.BigInteger(), nullable=False),
    sa.Column('kv_bytes_per_token_bf16', sa.BigInteger(), nullable=False),
    sa.Column('notes', sa.Text(), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint('hidden_size > 0', name=op.f('ck_models_hidden_size_positive')),
    sa.CheckConstraint('num_layers > 0', name=op.f('ck_models_num_layers_positive')),
    sa.CheckConstraint('params_active > 0 AND params_active <= params_total', name=op.f('ck_models_params_active_range')),
    sa.CheckConstraint('params_total > 0', name=op.f('ck_models_params_total_positive')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_models')),
    sa.UniqueConstraint('name', name=op.f('uq_models_name'))
    )
    op.create_table(
        "seeded_items",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("row_version", sa.Integer(), nullable=False),
        sa.Column("seeded_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_seeded_items")),
        sa.UniqueConstraint("kind", "name", name="uq_seeded_items_kind_name"),
    )
    op.create_table('scenarios',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('fleet_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('model_id', sa.Integer(), nullable=False),
    sa.Column('gpu_id', sa.Integer(), nullable=False),
    sa.Column('lora_targets', sa.String(length=200), nullable=False),
    sa.Column('notes', sa.Text(), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('gpus', sa.Integer(), nullable=False),
    sa.Column('tp', sa.Integer(), nullable=False),
    sa.Column('pp', sa.Integer(), nullable=False),
    sa.Column('weight_dtype', sa.String(length=16), nullable=False),
    sa.Column('quant_group_size', sa.Integer(), nullable=False),
    sa.Column('quant_scale_bits', sa.Integer(), nullable=False),
    sa.Column('keep_embeddings_16bit', sa.Boolean(), nullable=False),
    sa.Column('reserve_gib', sa.Float(), nullable=False),
    sa.Column('reserve_fraction', sa.Float(), nullable=False),
    sa.Column('mfu', sa.Float(), nullable=False),
    sa.Column('batch', sa.Integer(), nullable=False),
    sa.Column('prompt_tokens', sa.Integer(), nullable=False),
    sa.Column('output_tokens', sa.Integer(), nullable=False),
    sa.Column('kv_dtype', sa.String(length=16), nullable=False),
    sa.Column('mbu', sa.Float(), nullable=False),
    sa.Column('hours_per_month', sa.Float(), nullable=False),
    sa.Column('attention_convention', sa.String(length=16), nullable=False),
    sa.Column('logits_convention', sa.String(length=16), nullable=False),
    sa.Column('train_tokens', sa.Float(), nullable=False),
    sa.Column('train_seq_len', sa.Integer(), nullable=False),
    sa.Column('micro_batch_size', sa.Integer(), nullable=False),
    sa.Column('zero_stage', sa.Integer(), nullable=False),
    sa.Column('activation_recompute', sa.Boolean(), nullable=False),
    sa.Column('include_attention_flops', sa.Boolean(), nullable=False),
    sa.Column('lora_rank', sa.Integer(), nullable=False),
    sa.Column('budget_usd', sa.Float(), nullable=False),
    sa.Column('budget_gpu_hours', sa.Float(), nullable=False),
    sa.CheckConstraint("attention_convention IN ('causal', 'full')", name=op.f('ck_scenarios_attention_convention_choice')),
    sa.CheckConstraint("kind IN ('inference', 'training')", name=op.f('ck_scenarios_kind_choice')),
    sa.CheckConstraint("kv_dtype IN ('bf16', 'fp16', 'fp8', 'int8')", name=op.f('ck_scenarios_kv_dtype_choice')),
    sa.CheckConstraint("logits_convention IN ('last', 'all', 'none')", name=op.f('ck_scenarios_logits_convention_choice')),
    sa.CheckConstraint("weight_dtype IN ('bf16', 'fp16', 'fp8', 'int8', 'int4')", name=op.f('ck_scenarios_weight_dtype_choice')),
    sa.CheckConstraint('batch >= 1 AND batch <= 10000000', name=op.f('ck_scenarios_batch_range')),
    sa.CheckConstraint('budget_gpu_hours >= 0 AND budget_gpu_hours <= 1000000000000.0', name=op.f('ck_scenarios_budget_gpu_hours_range')),
    sa.CheckConstraint('budget_usd >= 0 AND budget_usd <= 1000000000000.0', name=op.f('ck_scenarios_budget_usd_range')),
    sa.CheckConstraint('gpus % (tp * pp) = 0', name=op.f('ck_scenarios_gpus_multiple_of_tp_pp')),
    sa.CheckConstraint('gpus >= 1 AND gpus <= 1000000', name=op.f('ck_scenarios_gpus_range')),
    sa.CheckConstraint('hours_per_month > 0 AND hours_per_month <= 744', name=op.f('ck_scenarios_hours_per_month_range')),
    sa.CheckConstraint('length(name) > 0', name=op.f('ck_scenarios_name_not_empty')),
    sa.CheckConstraint('lora_rank >= 0 AND lora_rank <= 65536', name=op.f('ck_scenarios_lora_rank_range')),
    sa.CheckConstraint('mbu > 0 AND mbu <= 1', name=op.f('ck_scenarios_mbu_range')),
    sa.CheckConstraint('mfu > 0 AND mfu <= 1', name=op.f('ck_scenarios_mfu_range')),
    sa.CheckConstraint('micro_batch_size >= 1 AND micro_batch_size <= 100000', name=op.f('ck_scenarios_micro_batch_size_range')),
    sa.CheckConstraint('output_tokens >= 1 AND output_tokens <= 100000000', name=op.f('ck_scenarios_output_tokens_range')),
    sa.CheckConstraint('pp >= 1 AND pp <= 1024', name=op.f('ck_scenarios_pp_range')),
    sa.CheckConstraint('prompt_tokens >= 1 AND prompt_tokens <= 100000000', name=op.f('ck_scenarios_prompt_tokens_range')),
    sa.CheckConstraint('quant_group_size >= -1 AND quant_group_size <= 1000000', name=op.f('ck_scenarios_quant_group_size_range')),
    sa.CheckConstraint('quant_scale_bits >= 0 AND quant_scale_bits <= 64', name=op.f('ck_scenarios_quant_scale_bits_range')),
    sa.CheckConstraint('reserve_fraction >= 0 AND reserve_fraction <= 0.99', name=op.f('ck_scenarios_reserve_fraction_range')),
    sa.CheckConstraint('reserve_gib >= 0 AND reserve_gib <= 100000', name=op.f('ck_scenarios_reserve_gib_range')),
    sa.CheckConstraint('tp >= 1 AND tp <= 1024', name=op.f('ck_scenarios_tp_range')),
    sa.CheckConstraint('train_seq_len >= 1 AND train_seq_len <= 100000000', name=op.f('ck_scenarios_train_seq_len_range')),
    sa.CheckConstraint('train_tokens >= 1 AND train_tokens <= 1e+16', name=op.f('ck_scenarios_train_tokens_range')),
    sa.CheckConstraint('zero_stage >= 0 AND zero_stage <= 3', name=op.f('ck_scenarios_zero_stage_range')),
    sa.ForeignKeyConstraint(['fleet_id'], ['fleets.id'], name=op.f('fk_scenarios_fleet_id_fleets'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['gpu_id'], ['gpus.id'], name=op.f('fk_scenarios_gpu_id_gpus'), ondelete='RESTRICT'),
    sa.ForeignKeyConstraint(['model_id'], ['models.id'], name=op.f('fk_scenarios_model_id_models'), ondelete='RESTRICT'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_scenarios')),
    sa.UniqueConstraint('fleet_id', 'name', name='uq_scenarios_fleet_id_name')
    )
    with op.batch_alter_table('scenarios', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_scenarios_fleet_id'), ['fleet_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_scenarios_gpu_id'), ['gpu_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_scenarios_model_id'), ['model_id'], unique=False)

    op.create_table('scenario_changes',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('scenario_id', sa.Integer(), nullable=False),
    sa.Column('change_set', sa.String(length=36), nullable=False),
    sa.Column('field', sa.String(length=100), nullable=False),
    sa.Column('old_value', sa.Text(), nullable=True),
    sa.Column('new_value', sa.Text(), nullable=True),
    sa.Column('version_after', sa.Integer(), nullable=False),
    sa.Column('changed_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('undone', sa.Boolean(), nullable=False),
    sa.ForeignKeyConstraint(['scenario_id'], ['scenarios.id'], name=op.f('fk_scenario_changes_scenario_id_scenarios'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_scenario_changes'))
    )
    with op.batch_alter_table('scenario_changes', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_scenario_changes_change_set'), ['change_set'], unique=False)
        batch_op.create_index(batch_op.f('ix_scenario_changes_scenario_id'), ['scenario_id'], unique=False)



def downgrade() -> None:
    op.execute("DROP TABLE IF EXISTS downgraded_0002_target_rates")  # kept by 0002's downgrade
    with op.batch_alter_table('scenario_changes', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_scenario_changes_scenario_id'))
        batch_op.drop_index(batch_op.f('ix_scenario_changes_change_set'))

    op.drop_table('scenario_changes')
    with op.batch_alter_table('scenarios', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_scenarios_model_id'))
        batch_op.drop_index(batch_op.f('ix_scenarios_gpu_id'))
        batch_op.drop_index(batch_op.f('ix_scenarios_fleet_id'))

    op.drop_table('scenarios')
    op.drop_table('seeded_items')
    op.drop_table('models')
    op.drop_table('gpus')
    op.drop_table('fleets')
