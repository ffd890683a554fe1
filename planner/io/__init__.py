"""Files in and out at the planner's edge: the Excel workbook (:mod:`planner.io.xlsx`), benchmark
result files (:mod:`planner.io.bench`), bulk-import tables (:mod:`planner.io.tables`) and the
text rules every cell written to CSV or SpreadsheetML follows (:mod:`planner.io.textcells`).

One layer (tests/project/test_layers.py): it reads the compute layer and below, and the service
layer above calls it; nothing here touches the database.
"""
