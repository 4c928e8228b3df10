"""Retrieval runs scored as trec_eval scores them: TREC and BEIR qrels, TREC runs, trec_eval's measures."""
