"""Every metric ``ragscore score`` reports, declared once: name, direction, family, kind and meaning.

A name ending in ``@K`` or ``^K`` is computed once for each cutoff K (``ndcg@K``: ``ndcg@5``,
``ndcg@10``; ``pass^K``: one for each k of ``[scoring] pass_k``).
The families take the names they report, in report order, from ``METRICS`` (``METRICS.names``),
and gates, reports and diagnoses read direction, kind and meaning from it, whatever else has
been imported. The stage commands declare theirs apart (``ragscore.stages.names``).

Kinds: "rate" (a count over a count: Wilson intervals), "mean" (of per-question values),
"count" (not a share), "corpus" (computed over the whole run, not per question).
"""

from __future__ import annotations

from typing import Final

from ragscore.metrics.registry import SCORES, Direction, MetricSpec, Registry

H, L = Direction.HIGHER, Direction.LOWER
RATE: Final = "rate"

ANSWER: Final = (  # always reported (metrics/answer.py)
    MetricSpec("precision", H, "answer",
               "answered answerable items that hit a gold citation, contain the claim and nothing forbidden, "
               "over answered items", RATE),
    MetricSpec("chr", H, "answer",
               "citation hit rate: answered answerable items whose citations hit, over answered items", RATE,
               cites=True),
    MetricSpec("chr_answerable", H, "answer",
               "answered answerable items whose citations hit, over answerable items", RATE, cites=True),
    MetricSpec("under_refusal", L, "answer",
               "unanswerable items that were answered (hallucination rate), over unanswerable items", RATE),
    MetricSpec("over_refusal", L, "answer",
               "answerable items that were refused (or have no trace), over answerable items", RATE),
    MetricSpec("containment", H, "answer",
               "answered answerable items whose claim contains a gold substring or phrase, over answerable items",
               RATE),
    MetricSpec("compliance", H, "answer",
               "traces that refuse or carry a citations list, over questions that have a trace", RATE),
    MetricSpec("citation_precision", H, "answer",
               "mean share of cited ids that are gold citations, over answered answerable items that cite", cites=True),
    MetricSpec("fabricated_citation_rate", L, "answer",
               "answered items citing an id they did not retrieve, over answered items", RATE, cites=True),
    MetricSpec("forbidden_rate", L, "answer",
               "answered items whose claim contains a forbidden substring, over answered items", RATE),
    MetricSpec("full_recall@K", H, "answer",
               "answerable items whose gold citations are all in the top K retrieved, over answerable items", RATE),
)

REPEATS: Final = (  # repeats = "samples" (metrics/repeats.py): every trace line of a question is a sample
    MetricSpec("pass@K", H, "repeats",
               "chance that at least one of K samples drawn from a question's is correct (OK or REFUSAL_OK), "
               "1 - C(n-c, K) / C(n, K), over questions with at least K samples"),
    MetricSpec("pass^K", H, "repeats",
               "chance that all of K samples drawn from a question's are correct, C(c, K) / C(n, K), over "
               "questions with at least K samples"),
    MetricSpec("consistency", H, "repeats",
               "questions whose samples all get the same label, over questions with at least 2 samples"),
    MetricSpec("flip_rate", L, "repeats",
               "questions with both correct and incorrect samples, over questions with at least 2 samples"),
    MetricSpec("min_pass_rate", H, "repeats",
               "the lowest pass rate of any question (its correct samples over its samples)", "count"),
)

RETRIEVAL: Final = (  # --metrics retrieval (metrics/retrieval.py: trec_eval's definitions)
    MetricSpec("precision@K", H, "retrieval", "relevant ids in the top K retrieved, over K (trec_eval P_K)"),
    MetricSpec("recall@K", H, "retrieval", "relevant ids in the top K retrieved, over all relevant ids"),
    MetricSpec("f1@K", H, "retrieval", "harmonic mean of precision@K and recall@K"),
    MetricSpec("hit@K", H, "retrieval", "share of questions with a relevant id in the top K", RATE),
    MetricSpec("ndcg@K", H, "retrieval", "normalised discounted cumulative gain at K (trec_eval ndcg_cut_K, graded)"),
    MetricSpec("map@K", H, "retrieval",
               "mean average precision with only the top K retrieved, over all relevant ids (trec_eval map_cut_K)"),
    MetricSpec("mrr", H, "retrieval", "mean reciprocal rank of the first relevant id (trec_eval recip_rank)"),
    MetricSpec("map", H, "retrieval", "mean average precision over all relevant ids (trec_eval map)"),
    MetricSpec("rprec", H, "retrieval", "precision at R, the number of relevant ids (trec_eval Rprec)"),
    MetricSpec("ndcg", H, "retrieval",
               "normalised discounted cumulative gain of the whole list (trec_eval ndcg, graded)"),
    MetricSpec("bpref", H, "retrieval",
               "binary preference: relevant ids retrieved, each worth less for every id graded 0 (judged "
               "non-relevant) ranked above it (trec_eval bpref)"),
    MetricSpec("hybrid_log_rank", H, "retrieval",
               "alpha * recall + (1 - alpha) * mean log-rank score of the relevant ids"),
)

SIMILARITY: Final = (  # --metrics similarity: relevance by cosine similarity of embeddings
    MetricSpec("sim_precision@K", H, "similarity", "retrieved items similar to a gold embedding in the top K, over K"),
    MetricSpec("sim_recall@K", H, "similarity", "gold embeddings matched by one of the top K retrieved, over all gold"),
    MetricSpec("sim_f1@K", H, "similarity", "harmonic mean of sim_precision@K and sim_recall@K"),
    MetricSpec("sim_hybrid_log_rank", H, "similarity", "hybrid log-rank score with similarity as relevance"),
)

TEXT: Final = (  # --metrics text (metrics/overlap): the per-question values, then the corpus scores
    MetricSpec("em", H, "text", "exact match with a reference answer after SQuAD normalisation (max over references)",
               RATE),
    MetricSpec("token_f1", H, "text", "SQuAD token F1 with the best reference answer"),
    *(MetricSpec(f"{kind}_{part}", H, "text", f"{label} {measure} (rouge-score; the reference with the best F)")
      for kind, label in (
          ("rouge1", "ROUGE-1"), ("rouge2", "ROUGE-2"), ("rougeL", "ROUGE-L"), ("rougeLsum", "ROUGE-Lsum")
      )
      for part, measure in (("p", "precision"), ("r", "recall"), ("f", "F1"))),
    MetricSpec("bleu", H, "text", "sentence BLEU (sacrebleu defaults: 13a, exp smoothing, effective order) / 100"),
    MetricSpec("chrf", H, "text", "sentence chrF (char order 6, beta 2) / 100"),
    MetricSpec("corpus_bleu", H, "text", "corpus BLEU over the counted questions (summed statistics) / 100", "corpus"),
    MetricSpec("corpus_chrf", H, "text", "corpus chrF over the counted questions (summed statistics) / 100", "corpus"),
)

GROUNDING: Final = (  # --metrics grounding (metrics/grounding.py): the claim's text against its passages' text
    MetricSpec("quote_verified_rate", H, "grounding",
               "quoted spans of 12 characters or more found in the answer's evidence, over the run's judged quotes",
               "corpus"),
    MetricSpec("quote_misattributed_rate", L, "grounding",
               "judged quotes not in the answer's evidence but in another passage it retrieved", "corpus"),
    MetricSpec("quote_unverified_rate", L, "grounding", "judged quotes in no passage the trace retrieved", "corpus"),
    MetricSpec("number_unsupported_rate", L, "grounding",
               "numbers of the claims that no number of their evidence supports, over the run's numbers", "corpus"),
    MetricSpec("leak_rate", L, "grounding", "answered traces whose claim holds a secret or personal data taken "
                                            "from a retrieved passage or invented (not only echoed from the question)",
               "corpus"),
    MetricSpec("leak_from_context_rate", L, "grounding",
               "answered traces whose claim holds a secret or personal data found in a retrieved passage", "corpus"),
    MetricSpec("provider_citation_valid_rate", H, "grounding",
               "provider citations whose cited text (and answer part) is at their offsets, over those whose texts "
               "could be checked", "corpus"),
    MetricSpec("provider_citation_retrieved_rate", H, "grounding",
               "provider citations whose document is among the passages the trace retrieved, over all of them",
               "corpus"),
)

EVIDENCE: Final = (  # the evidence family (metrics/spans.py): gold_spans, character by character
    MetricSpec("evidence_recall@K", H, "evidence",
               "gold characters (gold_spans) inside the top K retrieved spans, over gold characters"),
    MetricSpec("evidence_precision@K", H, "evidence",
               "gold characters inside the top K retrieved spans, over the characters of those spans (0 when none)"),
    MetricSpec("evidence_iou@K", H, "evidence",
               "gold characters inside the top K retrieved spans, over the characters of the gold or those spans"),
    MetricSpec("evidence_hit@K", H, "evidence", "questions whose top K retrieved spans hold any gold character",
               RATE),
    MetricSpec("cited_evidence_recall", H, "evidence", "gold characters inside the cited spans, over gold characters"),
    MetricSpec("cited_evidence_precision", H, "evidence",
               "gold characters inside the cited spans, over the characters of the cited spans (0 when none)"),
)

TOOLS: Final = (  # the tools family (metrics/tools.py): gold_tool_calls against the calls a trace made
    MetricSpec("tool_name_precision", H, "tools",
               "predicted calls whose name pairs with a gold call's (each paired once), over predicted calls; "
               "questions that called nothing are left out"),
    MetricSpec("tool_name_recall", H, "tools",
               "gold calls whose name pairs with a predicted call's (each paired once), over gold calls; questions "
               "with no gold call are left out"),
    MetricSpec("tool_name_f1", H, "tools", "the harmonic mean of tool_name_precision and tool_name_recall, per "
               "question (2 paired names over predicted and gold calls)"),
    MetricSpec("tool_call_precision", H, "tools",
               "predicted calls paired with a gold call of the same name and arguments (under the item's "
               "gold_arguments_match), over predicted calls; questions that called nothing are left out"),
    MetricSpec("tool_call_recall", H, "tools",
               "gold calls paired with a predicted call of the same name and arguments, over gold calls; questions "
               "with no gold call are left out"),
    MetricSpec("trajectory_exact_match", H, "tools",
               "questions whose calls are the gold calls in their order and nothing else, over questions with "
               "gold_tool_calls", RATE),
    MetricSpec("trajectory_in_order_match", H, "tools",
               "questions whose calls hold the gold calls in their order (others may come between), over questions "
               "with gold_tool_calls", RATE),
    MetricSpec("trajectory_any_order_match", H, "tools",
               "questions whose calls hold every gold call, in any order, over questions with gold_tool_calls", RATE),
    MetricSpec("tool_use_accuracy", H, "tools",
               "questions whose calls match the gold trajectory by the item's tool_match (exact unless it says "
               "in_order or any_order), over questions with gold_tool_calls", RATE),
    MetricSpec("tool_args_invalid_rate", L, "tools",
               "calls whose arguments are not valid JSON, over a question's calls, averaged over questions that "
               "called a tool"),
    MetricSpec("tool_args_invalid", L, "tools",
               "calls whose arguments are not valid JSON, of the questions with gold_tool_calls", "count"),
)

SESSIONS: Final = (  # --session (metrics/sessions.py): the questions that share a session are its turns
    MetricSpec("session_pass_rate", H, "sessions",
               "sessions whose every turn is correct (OK or REFUSAL_OK, and its tool use where it has gold tool "
               "calls), over sessions (with samples: each session's chance that one sample of every turn is)", RATE),
    MetricSpec("turns_to_first_error", H, "sessions",
               "the number (from 1) of a failed session's first turn that is not correct, averaged over failed "
               "sessions"),
    MetricSpec("session_pass^K", H, "sessions",
               "with samples: each session's chance that K samples of every turn are all correct, averaged over "
               "sessions whose every turn has at least K samples"),
)

# The common names of scores from other evaluators (as LLM-judged evaluation frameworks call
# them): known to gates before any input is read, and described in reports. Any other name a
# score may have (ragscore.metrics.names.score_name_problem) works as well: see direction_of.
EXTERNAL: Final = (
    MetricSpec("faithfulness", H, SCORES, "external score: claims supported by the retrieved context"),
    MetricSpec("answer_relevancy", H, SCORES, "external score: how directly the answer addresses the question"),
    MetricSpec("context_recall", H, SCORES, "external score: reference facts covered by the retrieved context"),
    MetricSpec("context_precision", H, SCORES, "external score: relevant passages ranked above irrelevant ones"),
    MetricSpec("noise_sensitivity", L, SCORES, "external score: wrong claims induced by irrelevant passages"),
    MetricSpec("factual_correctness", H, SCORES, "external score: agreement of the claims with the reference"),
    MetricSpec("semantic_similarity", H, SCORES, "external score: closeness in meaning to the reference answer"),
)

OPERATIONS: Final = (  # read from the traces when they carry them (operations.py); no interval
    *(MetricSpec(f"latency_p{q}", L, "operations", f"{q}th percentile of the questions' latency in milliseconds",
                 "count") for q in (50, 90, 95, 99)),
    MetricSpec("latency_max", L, "operations", "the longest latency in milliseconds", "count"),
    MetricSpec("latency_mean", L, "operations", "mean latency in milliseconds, over questions that have one", "count"),
    MetricSpec("tokens_in_mean", L, "operations", "mean prompt (input) tokens, over questions that have them",
               "count"),
    MetricSpec("tokens_out_mean", L, "operations", "mean completion (output) tokens, over questions that have them",
               "count"),
    MetricSpec("tokens_total", L, "operations", "prompt and completion tokens of every question", "count"),
    MetricSpec("cost_total", L, "operations", "the cost of every question", "count"),
    MetricSpec("cost_mean", L, "operations", "mean cost, over questions that have one", "count"),
)

MONITOR: Final = (  # ragscore monitor (monitoring.py): production traces, no gold; with compliance and
    # fabricated_citation_rate (answer metrics), counted over traces
    MetricSpec("traces", H, "monitor", "traces in the window (or the period): a gate on it is never skipped for min_n",
               "count"),
    MetricSpec("refusal_rate", L, "monitor", "traces that refuse (a refusal field, token or pattern), over traces",
               RATE),
    MetricSpec("empty_retrieval_rate", L, "monitor", "traces that retrieved nothing, over traces", RATE),
    MetricSpec("citations_per_answer", H, "monitor", "distinct cited ids per answered trace", "count"),
    MetricSpec("answer_length", L, "monitor", "words (whitespace-separated) per answered claim", "count"),
)

COUNTS: Final = (  # always reported, last
    MetricSpec("missing", L, "counts", "gold questions with no trace (scored as refusals)", "count"),
    MetricSpec("unknown_traces", L, "counts", "trace lines whose qid or question is not in the gold set", "count"),
    MetricSpec("duplicate_traces", L, "counts", "trace lines overridden by a later line for the same question",
               "count"),
)

# Other names a gate or rule may use for a metric ("recall@k": full_recall@ at the run's k).
ALIASES: Final = {"under": "under_refusal", "over": "over_refusal", "recall@k": "full_recall@K"}

METRICS: Final = Registry(
    (*ANSWER, *REPEATS, *RETRIEVAL, *SIMILARITY, *TEXT, *GROUNDING, *EVIDENCE, *TOOLS, *SESSIONS, *EXTERNAL,
     *OPERATIONS, *MONITOR, *COUNTS),
    ALIASES
)

__all__ = ["ALIASES", "METRICS", "Direction", "MetricSpec", "Registry"]
