"""The report's display tables, one module per topic of the report (`calibration.report.display`
puts them together)."""
