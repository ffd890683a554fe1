"""The Excel workbook, written and read back.

Writers, one module per sheet: :mod:`.scenarios` (Scenarios, Training, sweep sheets' bodies),
:mod:`.summary` (with its columns in :mod:`.summary_columns`), :mod:`.plan`, :mod:`.calibration`,
:mod:`.catalog` (Models, GPUs, Lists), :mod:`.sweep` (a sweep's print block) and
:mod:`.frontier` (a frontier's points and chart), assembled by :mod:`.workbook`; what they
share: :mod:`.layout` (columns both sides agree on), :mod:`.style` (fills, notes, print setup)
and :mod:`.sheetxml` (cell XML for the large sheet bodies).

Readers: :mod:`.stream` (the bounded streaming column reader) over the parts of
:mod:`.parts`; :mod:`.read_scenarios` (scenario sheets into a change plan) and
:mod:`.read_gpus` (the GPUs sheet's edits), with the limits and errors of :mod:`.read_common`.
"""
