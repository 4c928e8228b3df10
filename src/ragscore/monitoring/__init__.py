"""ragscore monitor: the gold-free metrics of production traces per time window, their gates and drift."""
