"""Compare the overlap metrics with the reference implementations on random texts, to 1e-9.

rouge-score, sacrebleu and nltk come with the ``test`` extra; each test that needs one
skips when it is missing. SQuAD's official script is not a package: its rules are
restated below, literally and slowly, as the oracle.
"""

from __future__ import annotations

import collections
import re
import string
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragscore.metrics.overlap import (
    TextStats,
    corpus_values,
    text_metric_names,
    text_stats,
    text_values,
)
from ragscore.metrics.overlap.bleu import tokenize_13a
from ragscore.metrics.overlap.porter import stem
from ragscore.metrics.overlap.rouge import ROUGE_TYPES, lcs_length, rouge_multi, rouge_tokens
from ragscore.metrics.overlap.squad import squad_scores
from ragscore.metrics.overlap.unicode_tokens import unicode_tokens

TOL = 1e-9
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MAIN_SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------------------------
# References, imported only by the tests that need them.
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rouge_scorer() -> Any:
    """Import rouge-score's scorer module, or skip."""
    return pytest.importorskip("rouge_score.rouge_scorer")


@pytest.fixture(scope="module")
def sacrebleu() -> Any:
    """Import sacrebleu (and its 13a tokenizer module), or skip."""
    module = pytest.importorskip("sacrebleu")
    pytest.importorskip("sacrebleu.tokenizers.tokenizer_13a")
    return module


@pytest.fixture(scope="module")
def nltk_stemmer() -> Any:
    """Build NLTK's default Porter stemmer, or skip."""
    porter = pytest.importorskip("nltk.stem.porter")
    return porter.PorterStemmer()


@pytest.fixture(scope="module")
def scorers(rouge_scorer: Any) -> dict[bool, Any]:
    """Build rouge-score scorers for all four types, without and with stemming."""
    return {flag: rouge_scorer.RougeScorer(list(ROUGE_TYPES), use_stemmer=flag) for flag in (False, True)}


# --------------------------------------------------------------------------------------------
# The SQuAD v2.0 official rules, restated as the oracle.
# --------------------------------------------------------------------------------------------


def squad_normalize(s: str) -> str:
    """Lower-case, drop ASCII punctuation character by character, blank out articles, collapse spaces."""
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(re.compile(r"\b(a|an|the)\b", re.UNICODE), " ", s)
    return " ".join(s.split())


def squad_f1(gold: str, pred: str) -> float:
    """Token F1 of one gold answer by the v2.0 script's rules."""
    gold_toks = squad_normalize(gold).split() if gold else []
    pred_toks = squad_normalize(pred).split() if pred else []
    common = collections.Counter(gold_toks) & collections.Counter(pred_toks)
    num_same = sum(common.values())
    if len(gold_toks) == 0 or len(pred_toks) == 0:
        return int(gold_toks == pred_toks)
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(pred_toks)
    recall = 1.0 * num_same / len(gold_toks)
    return (2 * precision * recall) / (precision + recall)


def squad_oracle(pred: str, golds: list[str]) -> tuple[float, float]:
    """(EM, F1) max over the golds that survive v2.0's no-answer filter."""
    kept = [g for g in golds if squad_normalize(g)] or [""]
    em = max(int(squad_normalize(g) == squad_normalize(pred)) for g in kept)
    return em, max(squad_f1(g, pred) for g in kept)


# --------------------------------------------------------------------------------------------
# Random texts: words that hit every rule (articles, numbers, 13a cases, HTML entities,
# stemmable words, non-ASCII letters, CJK, emoji), punctuation, and separators including
# newlines (ROUGE-Lsum) and '-\n' (13a).
# --------------------------------------------------------------------------------------------

VOCAB = (
    "the The THE a A an An cat cats Cat sat on mat Paris paris PARIS France capital is was "
    "running runner runners ran quickly happiness relational generalization agreed dying skies news "
    "Denver Broncos Panthers won answer answers 1,000 1000 3.14 3.14159 1990-1995 1990–1995 42 2020s "
    "state-of-the-art U.S.A. USA don't dont It's e.g. x,1 50% $5.00 (approx) A_B foo/bar "
    "café Café cafe Müller Möller naïve Straße strasse İstanbul istanbul crème brûlée "
    "東京 東京都 北京 首都 是 서울 😀 “Paris” ‘quoted’ — … x² ½ ＡＢＣ１２３ हिन्दी "
    "AT&amp;T &lt;b&gt; &quot;x&quot; &amp;lt; <skipped>"
).split()
PUNCT = [".", ",", "!", "?", ";", ":", "-", "'", '"', "(", ")", "/", "...", "&", "#", "@"]
SEPARATORS = [" ", " ", " ", " ", "  ", "\n", "\t", "", "-\n", " \n ", "\xa0", "\n\n"]

words = st.sampled_from(VOCAB + PUNCT)
phrases = st.lists(st.tuples(words, st.sampled_from(SEPARATORS)), max_size=24).map(
    lambda parts: "".join(w + s for w, s in parts)
)
raw_text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)) | st.sampled_from("abc .,-\n"),
    max_size=30,
)
# Few distinct words over several lines: repeated tokens make the LCS ambiguous, which is
# where ROUGE-Lsum's union of traced LCS positions (and its tie-breaking) shows.
tiny_lines = st.lists(
    st.lists(st.sampled_from(["a", "b", "c", "d", "B", "c."]), max_size=7).map(" ".join), min_size=1, max_size=4
).map("\n".join)
texts = st.one_of(phrases, phrases, phrases, tiny_lines, raw_text, st.just(""), st.just("   "))


@st.composite
def claim_and_references(draw: st.DrawFn) -> tuple[str, list[str]]:
    """Draw a claim and 1-4 references, some built from the claim's own words so that they overlap."""
    claim_words = draw(st.lists(st.tuples(words, st.sampled_from(SEPARATORS)), max_size=20))
    claim = "".join(w + s for w, s in claim_words) if draw(st.booleans()) else draw(texts)
    references = []
    for _ in range(draw(st.integers(1, 4))):
        if claim_words and draw(st.booleans()):
            # A noisy copy: drop, repeat and reorder some of the claim's words.
            picked = draw(st.lists(st.sampled_from(claim_words), max_size=len(claim_words) + 3))
            references.append("".join(w + s for w, s in picked))
        else:
            references.append(draw(texts))
    return claim, references


def expected_values(scorer: Any, sacrebleu: Any, claim: str, references: list[str]) -> list[float]:
    """Compute text_values' tuple with the reference implementations."""
    em, f1 = squad_oracle(claim, references)
    multi = scorer.score_multi(references, claim)
    values = [float(em), float(f1)]
    for kind in ROUGE_TYPES:
        values += [multi[kind].precision, multi[kind].recall, multi[kind].fmeasure]
    values.append(sacrebleu.sentence_bleu(claim, references).score / 100)
    values.append(sacrebleu.sentence_chrf(claim, references).score / 100)
    return values


def assert_values(actual: tuple[float, ...], expected: list[float]) -> None:
    """Assert each named value within 1e-9."""
    for name, a, e in zip(text_metric_names(), actual, expected, strict=True):
        assert abs(a - e) <= TOL, (name, a, e)


# --------------------------------------------------------------------------------------------
# Properties.
# --------------------------------------------------------------------------------------------


@MAIN_SETTINGS
@given(claim_and_references(), st.booleans())
def test_text_values_match_references(
    scorers: dict[bool, Any], sacrebleu: Any, pair: tuple[str, list[str]], stemmer: bool
) -> None:
    claim, references = pair
    assert_values(text_values(claim, references, stemmer=stemmer), expected_values(scorers[stemmer], sacrebleu, claim, references))


@SETTINGS
@given(texts, texts, st.booleans())
def test_rouge_single_reference(scorers: dict[bool, Any], target: str, prediction: str, stemmer: bool) -> None:
    expected = scorers[stemmer].score(target, prediction)
    actual = rouge_multi([target], prediction, stemmer=stemmer)
    for kind in ROUGE_TYPES:
        assert all(abs(a - e) <= TOL for a, e in zip(actual[kind], expected[kind], strict=True)), kind
    assert rouge_tokens(prediction, stemmer=stemmer) == scorers[stemmer]._tokenizer.tokenize(prediction)


@SETTINGS
@given(tiny_lines, st.lists(tiny_lines, min_size=1, max_size=3))
def test_rouge_lsum_on_repetitive_lines(scorers: dict[bool, Any], prediction: str, targets: list[str]) -> None:
    expected = scorers[False].score_multi(targets, prediction)["rougeLsum"]
    actual = rouge_multi(targets, prediction)["rougeLsum"]
    assert all(abs(a - e) <= TOL for a, e in zip(actual, expected, strict=True))


@SETTINGS
@given(st.lists(claim_and_references(), min_size=1, max_size=6))
def test_corpus_bleu_and_chrf_match_sacrebleu(sacrebleu: Any, corpus: list[tuple[str, list[str]]]) -> None:
    hypotheses = [claim for claim, _ in corpus]
    width = max(len(refs) for _, refs in corpus)
    # sacrebleu takes reference streams; None marks a question with fewer references.
    streams = [[refs[j] if j < len(refs) else None for _, refs in corpus] for j in range(width)]
    total = sum((text_stats(claim, refs) for claim, refs in corpus), TextStats())
    bleu, chrf = corpus_values(total)
    expected_bleu = sacrebleu.corpus_bleu(hypotheses, streams, use_effective_order=True).score / 100
    assert abs(bleu - min(expected_bleu, 1.0)) <= TOL
    default_bleu = sacrebleu.corpus_bleu(hypotheses, streams).score / 100
    assert abs(corpus_values(total, effective_order=False)[0] - min(default_bleu, 1.0)) <= TOL
    assert abs(chrf - sacrebleu.corpus_chrf(hypotheses, streams).score / 100) <= TOL


@SETTINGS
@given(texts)
def test_13a_tokenizer_matches_sacrebleu(sacrebleu: Any, text: str) -> None:
    assert tokenize_13a(text) == sacrebleu.tokenizers.tokenizer_13a.Tokenizer13a()(text)


@SETTINGS
@given(st.lists(st.sampled_from(VOCAB + PUNCT), max_size=30), st.lists(st.sampled_from(VOCAB), max_size=30))
def test_lcs_length_matches_dynamic_programming(a: list[str], b: list[str]) -> None:
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            table[i][j] = table[i - 1][j - 1] + 1 if a[i - 1] == b[j - 1] else max(table[i - 1][j], table[i][j - 1])
    assert lcs_length(a, b) == table[-1][-1] == lcs_length(b, a)


# Porter: random words over a small alphabet (so that suffix rules fire), random
# stems with Porter's suffixes, and a fixed list of stems x suffixes.
SUFFIXES = (
    "s sses ies ied ss eed ed ing ings at ate ated ating bl bled iz ized izing y ly ily alli ally "
    "ational tional enci anci izer bli abli entli eli ousli ization ation ator alism iveness fulness "
    "ousness aliti iviti biliti fulli logi logy icate ative alize iciti ical ful ness al ance ence er ic "
    "able ible ant ement ment ent ion sion tion ou ism iti ous ive ize e ll lled"
).split()
STEMS = (
    "run hop hope feed agre cat pony tie sky die ly gener relat condit happ fall hiss fizz fail fil "
    "control roll rate ceas prob adopt commun activ angular homolog effect bowdler triplic form "
    "electr hope good reviv allow infer airlin gyroscop adjust defens irrit replac depend analog "
    "sensibl sensit formal callous decis digit conform radic differ vil "
    "valenc hesit predic oper feud toy syzyg yy y a e i o u b tr ee by"
).split()


@SETTINGS
@given(
    st.one_of(
        st.text(alphabet="abcdeilnostuyz", min_size=1, max_size=14),
        st.builds(lambda a, b: a + b, st.text(alphabet="abcdeglmnoprstuvy", max_size=6), st.sampled_from(SUFFIXES)),
        st.text(alphabet="aeiouybcdlstxwAEIY0123456789İ", min_size=1, max_size=10),
    )
)
def test_porter_matches_nltk_on_random_words(nltk_stemmer: Any, word: str) -> None:
    assert stem(word) == nltk_stemmer.stem(word)


def test_porter_matches_nltk_on_word_list(nltk_stemmer: Any) -> None:
    # Irregular forms, words lower-casing to another length ("İ" becomes two characters),
    # and capitals, besides every stem with every suffix.
    special = ["skies", "dying", "lying", "tying", "news", "innings", "howe", "succeeded", "İs", "İed", "IS", "Ties"]
    word_list = [s + x for s in STEMS for x in SUFFIXES] + STEMS + SUFFIXES + special
    assert len(word_list) > 5000
    mismatches = [(w, stem(w), nltk_stemmer.stem(w)) for w in word_list if stem(w) != nltk_stemmer.stem(w)]
    assert mismatches == []


# --------------------------------------------------------------------------------------------
# The "unicode" tokenizer: what it changes, shown against the reference behaviour.
# --------------------------------------------------------------------------------------------


def test_unicode_tokenizer_difference() -> None:
    # rouge-score's tokenizer keeps [a-z0-9] only: "café" loses its "é", CJK vanishes.
    assert rouge_tokens("Café") == ["caf"]
    assert rouge_tokens("Café", tokenizer="unicode") == ["café"]
    assert rouge_tokens("東京") == []
    assert rouge_tokens("東京都", tokenizer="unicode") == ["東", "京", "都"]

    names = text_metric_names()
    reference = dict(zip(names, text_values("東京", ["東京"]), strict=True))
    unicode = dict(zip(names, text_values("東京", ["東京"], tokenizer="unicode"), strict=True))
    assert reference["rouge1_f"] == reference["rougeL_f"] == 0.0  # identical answers score 0
    assert unicode["rouge1_f"] == unicode["rougeL_f"] == unicode["rouge2_f"] == 1.0
    assert reference["em"] == unicode["em"] == 1.0  # SQuAD keeps CJK, as one word

    # A spurious match: "Müller" and "Möller" both become ["m", "ller"].
    assert text_values("Müller", ["Möller"])[names.index("rouge1_f")] == 1.0
    assert text_values("Müller", ["Möller"], tokenizer="unicode")[names.index("rouge1_f")] == 0.0

    # CJK without spaces: one SQuAD word for the reference rules, one token per character here.
    assert squad_scores("東京都", ["東京"]) == (0.0, 0.0)
    assert squad_scores("東京都", ["東京"], tokenizer="unicode") == (0.0, 0.8)
    # Non-ASCII quotes are not ASCII punctuation for SQuAD.
    assert squad_scores("“Paris”", ["Paris"])[0] == 0.0
    assert squad_scores("“Paris”", ["Paris"], tokenizer="unicode")[0] == 1.0


def test_unicode_tokenizer_reference_behaviour(scorers: dict[bool, Any]) -> None:
    # The reference itself scores identical CJK answers 0 and "café" as "caf".
    assert scorers[False].score("東京", "東京")["rouge1"].fmeasure == 0
    assert scorers[False]._tokenizer.tokenize("café") == ["caf"]


@SETTINGS
@given(st.text(alphabet=string.ascii_letters + string.digits + string.punctuation + " \n\t", max_size=60))
def test_unicode_tokenizer_equals_reference_on_ascii(text: str) -> None:
    assert unicode_tokens(text) == rouge_tokens(text)
    assert rouge_tokens(text, stemmer=True, tokenizer="unicode") == rouge_tokens(text, stemmer=True)


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Café Müller", ["café", "müller"]),
        ("cafe\u0301", ["café"]),  # NFC composes the accent
        ("x\u0301!y", ["x\u0301", "y"]),  # a mark stays with its letter; the '!' still separates
        ("हिन्दी भाषा", ["हिन्दी", "भाषा"]),  # Devanagari vowel signs are marks, not separators
        ("İstanbul Straße ﬁne", ["i\u0307stanbul", "strasse", "fine"]),  # case folding
        ("東京都 2020年", ["東", "京", "都", "2020", "年"]),
        ("서울특별시", ["서", "울", "특", "별", "시"]),
        ("ひらがなカタカナ", ["ひ", "ら", "が", "な", "カ", "タ", "カ", "ナ"]),
        ("“Paris” — A_B, x² ½ 😀", ["paris", "a", "b", "x²", "½"]),
        ("", []),
    ],
)
def test_unicode_tokens_examples(text: str, tokens: list[str]) -> None:
    assert unicode_tokens(text) == tokens


def test_unknown_tokenizer_and_empty_references() -> None:
    with pytest.raises(ValueError, match="tokenizer"):
        text_values("a", ["a"], tokenizer="spacy")
    with pytest.raises(ValueError, match="reference"):
        text_values("a", [])
    with pytest.raises(TypeError):
        text_values("a", "a")
