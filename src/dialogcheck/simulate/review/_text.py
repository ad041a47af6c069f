"""Words, spans and likeness of short texts: what the review's rules compare.

Texts are compared as lists of lower-case words, so punctuation, case and
curly quotes never decide whether two messages are the same. An id such as
`noah_muller_9847` is one word.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from difflib import SequenceMatcher

from ..._redact import mask

_WORD = re.compile(r"[\w']+")
_LETTER_OR_DIGIT = re.compile(r"[^\W_]")
_CURLY = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
#: A passage the brief puts in quotation marks: words the user is told to say, so saying them is no leak.
_QUOTED = re.compile(r"(?<!\w)'(.+?)'(?!\w)|\"(.+?)\"", re.S)
#: Words a message needs to say something about a goal; the rest say nothing of what the user wants.
_FUNCTION_WORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further get got had has have
    having he her here hers herself him himself his how i if in into is it its itself just let lets may me might
    more most must my myself no nor not now of off on once one only or other our ours ourselves out over own
    same shall she should so some such than that the their theirs them themselves then there these they this
    those through to too under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves want wants wanted like need needs needed please thanks thank hello
    hi hey help agent customer service ask asks asked say says said tell told know yes okay sure something anything
    everything nothing someone anyone else good morning afternoon evening bye goodbye""".split()
)
#: How the brief speaks to the user, and a customer speaking of itself never does.
SECOND_PERSON = frozenset({"you", "your", "yours", "yourself", "you're", "you've", "you'll", "you'd"})
#: Letters of a word that stand for it when goals are compared: `cancel`, `cancelled` and `cancellation` meet.
STEM_LETTERS = 5


def plain(text: str) -> str:
    """The text with curly quotes made straight."""
    return text.translate(_CURLY)


def words(text: str) -> tuple[str, ...]:
    """The text's words, lower-case, apostrophes kept inside a word (`don't`) and dropped around it."""
    found = (w.strip("'") for w in _WORD.findall(plain(text).lower()))
    return tuple(w for w in found if w)


def has_word(text: str) -> bool:
    """Whether the text holds a letter or digit at all."""
    return _LETTER_OR_DIGIT.search(text) is not None


def content_stems(text: str) -> frozenset[str]:
    """The words that can say what someone wants, each by its first letters.

    Function words, contractions ("don't"), numbers and ids (`noah_muller_9847`) say nothing of a goal.
    """
    found = (w[:-2] if w.endswith("'s") else w for w in words(text))
    return frozenset(w[:STEM_LETTERS] for w in found if len(w) >= 3 and w.isalpha() and w not in _FUNCTION_WORDS)


def unquoted_parts(text: str) -> list[str]:
    """The text cut at every quoted passage, the passages left out."""
    return _QUOTED.split(plain(text))[::3]


def ngrams(sequence: Sequence[str], n: int) -> Iterator[tuple[str, ...]]:
    return (tuple(sequence[i : i + n]) for i in range(len(sequence) - n + 1))


def ngram_set(runs: Iterable[Sequence[str]], n: int) -> frozenset[tuple[str, ...]]:
    """Every run of `n` consecutive words inside one of `runs` (never across two)."""
    return frozenset(gram for run in runs for gram in ngrams(run, n))


def longest_common_span(a: Sequence[str], b: Sequence[str]) -> tuple[str, ...]:
    """The longest run of words that `a` and `b` both hold, in `a`'s words."""
    match = SequenceMatcher(None, a, b, autojunk=False).find_longest_match(0, len(a), 0, len(b))
    return tuple(a[match.a : match.a + match.size])


def likeness(a: Sequence[str], b: Sequence[str]) -> float:
    """How alike two word lists are, 0 to 1 (difflib's ratio: twice the matched words over both lengths)."""
    return SequenceMatcher(None, a, b, autojunk=False).ratio() if a or b else 1.0


def alike(a: Sequence[str], b: Sequence[str], at_least: float) -> bool:
    """Whether `likeness(a, b)` is `at_least`; difflib's cheap upper bounds rule most pairs out before the ratio."""
    if not (a or b):
        return True
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    return matcher.real_quick_ratio() >= at_least and matcher.quick_ratio() >= at_least and matcher.ratio() >= at_least


def excerpt(text: str, limit: int = 80) -> str:
    """The text on one line, cut to `limit` characters, for a reason to quote."""
    one_line = " ".join(text.split())
    if len(one_line) <= limit:
        return one_line
    one_line = mask(one_line)
    return one_line if len(one_line) <= limit else one_line[: limit - 1].rstrip() + "\u2026"
