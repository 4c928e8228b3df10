"""Reading the inputs: files and records, each trace format, the gold set, scores and reports."""
