"""The file formats' tests: workbooks written and read back, benchmark result files, the streamed
sheet reader."""
