"""Unigram training, sentencepiece's way: seed vocabulary, EM with forward-backward, pruning.

Unlike the plain functions in `toklab.unigram.reference`, the trainer runs each
step over every distinct word at once on the numpy lattice
(`toklab.unigram.lattice.Lattice`): `expected_counts` is the batched E-step
(must equal `reference_expected_counts`), `m_step` the M-step (must equal
`reference_m_step`) and `prune_losses` the pruning loss (must equal
`reference_prune_loss`). `seed_pieces` builds the oversized starting
vocabulary from frequent substrings, level by level.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np

from ..base.checks import (MAX_SENTENCE_LENGTH, SkippedCount, check_int, check_not_a_file_name, short_sentences,
                           type_name, warn_smaller)
from ..base.pieces import byte_piece
from ..pre_tokenizers.metaspace import split_words
from .lattice import Lattice, code_points
from .model import Unigram
from .reference import MIN_EXPECTED_COUNT, digamma

__all__ = ["word_counts", "seed_pieces", "digamma_array", "expected_counts", "m_step", "prune_losses", "prune", "train"]


def word_counts(
    source: str | Iterable[str] | Mapping[str, int], split: Callable[[str], Iterable[str]] | None
) -> Counter:
    """Distinct words and their counts from text, sentences, or a ready word-count mapping."""
    counts: Counter = Counter()
    if isinstance(source, (bytes, bytearray)) or not hasattr(source, "__iter__"):
        raise TypeError(f"source must be text, an iterable of sentences or a word -> count mapping, got {type_name(source)}")
    if isinstance(source, Mapping):
        for word, c in source.items():
            if not isinstance(word, str):
                raise TypeError(f"word counts must map str to int, got key {word!r}")
            if not (isinstance(c, int) and c >= 0):
                raise ValueError(f"count of {word!r} must be an integer >= 0, got {c!r}")
            if word and c:
                counts[word] += c
        return counts
    sentences = source.split("\n") if isinstance(source, str) else source
    for sentence in sentences:
        if not isinstance(sentence, str):
            raise TypeError(f"training sentences must be str, got {type(sentence).__name__}")
        counts.update(w for w in (split(sentence) if split else [sentence]) if w)
    return counts


def seed_pieces(
    word_counts: Mapping[str, int],
    *,
    max_piece_length: int = 16,
    seed_size: int = 1_000_000,
) -> dict[str, float]:
    """The initial, oversized vocabulary: every character plus the most frequent substrings.

    Same rule and same result (the same dict, in the same order) as
    `toklab.unigram.reference.reference_seed_pieces`, which states it in plain
    loops: the substrings of length 2..``max_piece_length`` that occur at
    least twice (weighted by word count), minus those always followed by the
    same character; the ``seed_size`` with the largest ``count * length``,
    ties broken by the piece; every character. Scores are ``log(value /
    total)``, value = count for a character, count * length otherwise.

    Here every word is counted at once. The words are laid end to end in one
    array of code points, and level by level (apriori, as in the reference)
    each position whose substring of length ``l - 1`` is frequent, and whose
    neighbour's is too, gets an exact integer key for its substring of
    length ``l``: the dense ID of the shorter substring times a constant
    above every code point, plus the next code point. `numpy.unique` on the
    keys numbers the distinct substrings and a weighted `numpy.bincount`
    counts them.
    """
    if max_piece_length < 1:
        raise ValueError(f"max_piece_length must be >= 1, got {max_piece_length}")
    items = sorted((w, c) for w, c in word_counts.items() if w and c > 0)
    if not items:
        return {}
    codes, starts, lens = code_points([w for w, _ in items])
    codes = codes.astype(np.int32)  # (int32 positions and codes: half the memory of the level arrays)
    n = len(codes)
    end = np.repeat((starts + lens).astype(np.int32), lens + 1)[:n]  # one past the last character of each word
    weight = np.repeat(np.array([c for _, c in items], dtype=np.int64), lens + 1)[:n]
    valid = np.ones(n, dtype=bool)
    valid[(starts + lens)[:-1]] = False  # the separators between words
    # Level 1: characters.
    char_codes, char_of = np.unique(codes[valid], return_inverse=True)
    char_count = np.bincount(char_of, weights=weight[valid]).astype(np.int64)
    chars = {chr(int(u)): int(c) for u, c in zip(char_codes, char_count)}
    pos = np.flatnonzero(valid).astype(np.int32)
    keep = char_count[char_of] >= 2
    pos, ids = pos[keep], char_of[keep]
    ids = (np.cumsum(char_count >= 2) - 1)[ids]  # dense among the frequent characters
    del valid, char_of, keep
    prev_count = char_count[char_count >= 2]
    base = np.int64(max(int(char_codes[-1]) + 1, 1))
    levels = []  # per length >= 2: (length, a position of each frequent substring, its count, alive mask)
    for length in range(2, max_piece_length + 1):
        ok = np.zeros(n + 1, dtype=bool)
        ok[pos] = True
        sel = ok[pos + 1] & (pos + length <= end[pos])
        here, hid = pos[sel], ids[sel]
        del pos, ids, sel, ok
        key = hid * base + codes[here + length - 1]
        del hid
        uniq, first, inv = np.unique(key, return_index=True, return_inverse=True)
        del key
        count = np.bincount(inv, weights=weight[here]).astype(np.int64)
        frequent = count >= 2
        if not frequent.any():
            break
        # Drop the previous level's strings that never branch to the right: some
        # one-character extension has the same count.
        if length > 2:
            prefix = uniq[frequent] // base
            run = np.flatnonzero(np.r_[True, prefix[1:] != prefix[:-1]])
            best = np.maximum.reduceat(count[frequent], run)
            same = best == prev_count[prefix[run]]
            levels[-1][3][prefix[run][same]] = False
        rank = np.cumsum(frequent) - 1
        levels.append((length, here[first[frequent]], count[frequent], np.ones(int(frequent.sum()), dtype=bool)))
        stay = frequent[inv]
        pos, ids = here[stay], rank[inv[stay]].astype(np.int32)
        del here, inv, stay, first
        prev_count = count[frequent]
    joined = "\0".join(w for w, _ in items)
    found = [
        (joined[p : p + length], int(c))
        for length, at, cnt, alive in levels
        for p, c in zip(at[alive].tolist(), cnt[alive].tolist())
    ]
    ranked = sorted(found, key=lambda kv: (-kv[1] * len(kv[0]), kv[0]))[:seed_size]
    values = {ch: float(c) for ch, c in sorted(chars.items(), key=lambda kv: (-kv[1], kv[0]))}
    values.update((s, float(c * len(s))) for s, c in ranked)
    log_total = math.log(sum(values.values()))
    return {p: math.log(v) - log_total for p, v in values.items()}


def digamma_array(x):
    """`digamma` on a numpy array (same recurrence and series)."""
    x = np.array(x, dtype=np.float64)
    result = np.zeros_like(x)
    small = x < 10
    while small.any():
        result[small] -= 1.0 / x[small]
        x[small] += 1.0
        small = x < 10
    inv2 = 1.0 / (x * x)
    return result + np.log(x) - 0.5 / x - inv2 * (
        1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 / 132)))
    )


def expected_counts(word_counts: Mapping[str, float], scores: Mapping[str, float]) -> dict[str, float]:
    """The trainer's E-step on its own: expected piece counts by batched forward-backward.

    ``scores`` are log-probabilities. The result equals
    `reference_expected_counts` (enumeration) and `Unigram.expected_counts`
    (per-word loops) up to rounding; pieces with expected count 0 are left out.
    """
    names = list(scores)
    words = [w for w, c in word_counts.items() if w and c]
    lattice = Lattice(words, {p: i for i, p in enumerate(names)})
    counts = np.array([float(word_counts[w]) for w in words])
    expected, _ = lattice.forward_backward(np.array([float(scores[p]) for p in names]), counts)
    return {p: float(e) for p, e in zip(names, expected) if e > 0}


def train(
    source: str | Iterable[str] | Mapping[str, int],
    vocab_size: int,
    *,
    max_piece_length: int = 16,
    seed_size: int = 1_000_000,
    em_iters: int = 2,
    shrink: float = 0.75,
    required_chars: Iterable[str] = (),
    protected: Iterable[str] = (),
    special_tokens: Sequence[str] = (),
    unk_piece: str = "<unk>",
    byte_fallback: bool = False,
    split: Callable[[str], Iterable[str]] | None = split_words,
    bayesian: bool = True,
    history: list | None = None,
    progress: bool = False,
    allow_smaller: bool = False,
    max_sentence_length: int | None = MAX_SENTENCE_LENGTH,
) -> Unigram:
    """Train a Unigram model with ``vocab_size`` entries, the way sentencepiece does.

    ``source`` is escaped text (a string is cut into lines), an iterable of
    escaped sentences, or a mapping ``word -> count``. Sentences are cut into
    words by ``split`` (default `split_words`: before every ``▁``; ``None``
    keeps each sentence whole); no piece crosses a word boundary. A sentence
    (or a word of the mapping) longer than ``max_sentence_length`` UTF-8 bytes is
    left out, as sentencepiece leaves it out, with a
    `toklab.base.checks.LongSentenceWarning` counting them; None keeps every one.

    ``vocab_size`` counts every entry: the unknown piece, ``special_tokens``
    (control pieces), the 256 byte pieces if ``byte_fallback``, and the
    ordinary pieces. Always kept: every character of the corpus, each of
    ``required_chars`` and each of ``protected`` (pieces that take part in EM
    but are never pruned). ValueError if those alone exceed ``vocab_size``.
    If the corpus cannot fill the vocabulary the model is smaller and
    `toklab.base.checks.SmallVocabularyWarning` says so, unless ``allow_smaller``
    (the rule every trainer follows).

    The algorithm (sentencepiece's ``unigram_model_trainer.cc``):

    1. Seed: every character plus up to ``seed_size`` frequent substrings
       (`seed_pieces`).
    2. ``em_iters`` EM iterations. The E-step computes each piece's
       *expected* count over all segmentations of every word
       (forward-backward, `expected_counts`), not its count in the best
       segmentation (that would be hard, Viterbi EM). The M-step drops pieces
       expected fewer than 0.5 times and, with ``bayesian`` (the default, as
       in sentencepiece), sets ``score = digamma(count) - digamma(total)``
       instead of ``log(count / total)``: a variational-Bayes update with a
       sparse prior that favours removing rare pieces. ``bayesian=False``
       gives textbook maximum-likelihood EM.
    3. If more than ``1.1 * vocab_size`` pieces remain, prune: segment every
       word with Viterbi, count each piece's uses ``freq``, and estimate for
       each piece the loss in corpus log-likelihood if it were removed and
       each of its uses replaced by its best segmentation into other pieces
       (which get its count added). Pieces never used, or whose own best
       segmentation is not themselves, go; of the rest, the
       ``shrink`` fraction with the largest loss is kept. Back to 2.
    4. Keep the characters and the best-scoring pieces up to ``vocab_size``.

    Deterministic: no randomness, ties broken by the piece string, nothing
    depends on hash order. ``history``, if given, receives one dict per EM
    iteration (``round``, ``em_iter``, ``pieces`` left after its M-step,
    ``log_likelihood``: the corpus's marginal log-likelihood under the scores
    its E-step used) and one per pruning step (``round``, ``pruned_to``).
    """
    check_int(vocab_size, "vocab_size", minimum=1)
    check_int(em_iters, "em_iters", minimum=1)
    check_int(max_piece_length, "max_piece_length", minimum=1)
    check_int(seed_size, "seed_size", minimum=1)
    if not 0 < shrink < 1:
        raise ValueError(f"shrink must be between 0 and 1 (exclusive), got {shrink!r}")
    specials = list(dict.fromkeys(special_tokens))
    protected = list(dict.fromkeys(protected))
    for piece in protected:
        if not isinstance(piece, str) or not piece:
            raise ValueError(f"protected pieces must be non-empty strings, got {piece!r}")
    required = sorted(set(required_chars))
    for ch in required:
        if len(ch) != 1:
            raise ValueError(f"required_chars must be single characters, got {ch!r}")
    meta = [unk_piece, *specials] + ([byte_piece(b) for b in range(256)] if byte_fallback else [])
    clash = sorted(set(meta) & (set(protected) | set(required)))
    if clash or len(set(meta)) != len(meta):
        raise ValueError(f"the unknown piece, special tokens and byte pieces must be distinct from each other "
                         f"and from protected pieces; clash: {clash or 'duplicate special token'}")

    if max_sentence_length is not None:
        check_int(max_sentence_length, "max_sentence_length", minimum=1)
    skipped = SkippedCount()
    if isinstance(source, Mapping):
        if max_sentence_length is not None:
            kept = set(short_sentences(source, max_sentence_length, skipped))
            source = {w: c for w, c in source.items() if w in kept}
    elif hasattr(source, "__iter__") and not isinstance(source, (bytes, bytearray)):
        source = short_sentences(check_not_a_file_name(source).split("\n") if isinstance(source, str) else source, max_sentence_length,
                                 skipped)
    counts = word_counts(source, split)
    skipped.warn("toklab.unigram.train", max_sentence_length or 0)
    if not counts:
        raise ValueError("no text to train on: the corpus is empty" + (
            f" (all {skipped.count:,} sentences are longer than max_sentence_length={max_sentence_length:,} bytes)"
            if skipped.count else ""))
    seed = seed_pieces(counts, max_piece_length=max_piece_length, seed_size=seed_size)
    chars = [p for p in seed if len(p) == 1]
    keep_always = list(dict.fromkeys([*chars, *required, *protected]))
    n_target = vocab_size - len(meta)
    if n_target < len(keep_always):
        raise ValueError(
            f"vocab_size={vocab_size} is too small: {len(meta)} reserved entries (the unknown piece, "
            f"special tokens: {len(specials)}{', byte pieces: 256' if byte_fallback else ''}) plus "
            f"{len(keep_always)} pieces that are always kept ({len(chars)} characters of the corpus, "
            f"required characters and protected pieces) need vocab_size >= {len(meta) + len(keep_always)}"
        )

    # Pieces get fixed indices for the whole run; "alive" marks the current vocabulary.
    names = list(seed)
    floor = min(seed.values())
    for piece in [*protected, *required]:
        if piece not in seed:
            names.append(piece)
    logp = np.array([seed.get(p, floor) for p in names], dtype=np.float64)
    is_protected = np.zeros(len(names), dtype=bool)
    index = {p: i for i, p in enumerate(names)}
    is_protected[[index[p] for p in keep_always]] = True
    alive = np.ones(len(names), dtype=bool)
    lengths = np.fromiter((len(p) for p in names), dtype=np.int64, count=len(names))

    words = sorted(counts)
    word_count = np.array([float(counts[w]) for w in words])
    lattice = Lattice(words, {p: i for i, p in enumerate(names)})
    desired = int(vocab_size * 1.1)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(desc="Unigram EM", unit="round")
    step = 0
    while True:
        step += 1
        for it in range(em_iters):
            expected, log_z = lattice.forward_backward(logp, word_count)
            logp, alive = m_step(expected, alive, is_protected, bayesian)
            lattice.keep(alive)
            if history is not None:
                history.append({"round": step, "em_iter": it + 1, "pieces": int(alive.sum()),
                                "log_likelihood": float(word_count @ log_z)})
        n_alive = int(alive.sum())
        if bar is not None:
            bar.update(1)
            bar.set_postfix(pieces=n_alive)
        if n_alive <= desired:
            break
        alive = prune(lattice, names, logp, alive, is_protected, lengths, word_count,
                      max(desired, int(shrink * n_alive)))
        logp = np.where(alive, logp, -np.inf)
        lattice.keep(alive)
        if history is not None:
            history.append({"round": step, "pruned_to": int(alive.sum())})
    if bar is not None:
        bar.close()

    # Final cut: the always-kept pieces, then the best scores (ties: the piece string).
    # (Every alive piece has a finite score: protected ones are never dropped.)
    final = [index[p] for p in keep_always]
    taken = set(final)
    ranked = sorted((i for i in np.flatnonzero(alive) if i not in taken), key=lambda i: (-logp[i], names[i]))
    final += ranked[: max(0, n_target - len(final))]
    scored = [(names[i], float(logp[i])) for i in final]
    scored.sort(key=lambda ps: (-ps[1], ps[0]))
    entries = [(unk_piece, 0.0, "unknown")] + [(s, 0.0, "control") for s in specials]
    if byte_fallback:
        entries += [(byte_piece(b), 0.0, "byte") for b in range(256)]
    entries += [(p, s, "normal") for p, s in scored]
    warn_smaller("toklab.unigram.train", len(entries), vocab_size,
                 f"the corpus has only {len(scored)} pieces worth keeping (its characters and the substrings that "
                 "survive EM)", allow_smaller)
    return Unigram.from_entries(entries, byte_fallback=byte_fallback)


def m_step(expected, alive, is_protected, bayesian: bool):
    """New scores from expected counts; pieces expected < 0.5 times leave (unless protected).

    A protected piece expected less than 0.5 times is scored as if it had
    been expected 0.5 times, so it keeps a finite (low) score.
    """
    keep = alive & ((expected >= MIN_EXPECTED_COUNT) | is_protected)
    count = np.where(is_protected, np.maximum(expected, MIN_EXPECTED_COUNT), expected)
    total = count[keep].sum()
    logp = np.full(len(expected), -np.inf)
    if not keep.any():  # no piece left (the reference returns an empty vocabulary)
        return logp, keep
    if bayesian:
        logp[keep] = digamma_array(count[keep]) - digamma(total)
    else:
        logp[keep] = np.log(count[keep]) - math.log(total)
    return logp, keep


def prune_losses(lattice, names, logp, alive, is_protected, lengths, word_count):
    """The pruning loss of every candidate piece, for all words at once: ``(candidate IDs, losses)``.

    Must equal `toklab.unigram.reference.reference_prune_loss` (which states
    the rule). ``freq[i]`` = uses of piece i in the Viterbi segmentation of the
    corpus. A candidate (alive, not protected, used, two or more characters)
    whose best segmentation into *other* pieces scores higher than itself is
    left out: it is never its own Viterbi segmentation.
    """
    _, seg_words, seg_pieces = lattice.viterbi(logp)
    freq = np.bincount(seg_pieces, weights=word_count[seg_words], minlength=len(names))
    total = freq.sum()
    n_words = word_count.sum()
    cand = np.flatnonzero(alive & ~is_protected & (freq > 0) & (lengths > 1))
    if not cand.size:
        return cand, np.zeros(0)
    # Best segmentation of each candidate into other pieces (the whole-piece edge left out).
    live = np.flatnonzero(alive)
    alt = Lattice([names[i] for i in cand], {names[i]: int(i) for i in live}, whole=False, backward=False)
    alt_score, alt_of, alt_piece = alt.viterbi(logp)
    own_best = alt_score <= logp[cand]
    n_alt = np.bincount(alt_of, minlength=cand.size)
    f_i = freq[cand]
    log_alt = np.bincount(alt_of, weights=np.log(freq[alt_piece] + f_i[alt_of]), minlength=cand.size)
    log_alt -= n_alt * np.log(total + f_i * (n_alt - 1))
    loss = f_i / n_words * ((np.log(f_i) - math.log(total)) - log_alt)
    return cand[own_best], loss[own_best]


def prune(lattice, names, logp, alive, is_protected, lengths, word_count, size: int):
    """sentencepiece's pruning step: keep ``size`` pieces, the protected ones and those whose loss is largest.

    Pieces never used in the Viterbi segmentation of the corpus, or never
    their own best segmentation, go first; ties in loss go to the piece string.
    """
    keep = alive & is_protected
    cand, loss = prune_losses(lattice, names, logp, alive, is_protected, lengths, word_count)
    room = size - int(keep.sum())
    if cand.size and room > 0:
        order = sorted(range(cand.size), key=lambda k: (-loss[k], names[cand[k]]))[:room]
        keep[cand[order]] = True
    return keep
