"""ragscore agree and split: the quality of a gold set (agreement between annotators) and its division
into parts that keep their strata."""
