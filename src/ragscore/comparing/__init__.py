"""ragscore compare and power: a candidate run against a baseline, several runs pair by pair, and how many
questions a comparison needs."""
