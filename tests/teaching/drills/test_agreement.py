"""Each drill's answer agrees with an independent computation from what its *prompt* states.

The prompt is parsed back (so a problem whose text and answer disagree fails), and the
answer recomputed with toklab's reference functions and its fast engines (and, for
WordPiece, Hugging Face's); then typical wrong answers, written here independently of
the drills' own list, must be rejected with the mistake named.
"""

from __future__ import annotations

import ast
import math
import random
import re
from collections import Counter

import pytest
from tokenizers import Tokenizer, models

from toklab import ByteBPE, bpe, unigram, wordpiece
from toklab.base import unicode
from toklab.data import vocabs
from toklab.measure import metrics, vocab_facts
from toklab.teaching import drills

SEEDS = range(40)


def _merges(text: str) -> list[tuple[str, str]]:
    return [tuple(m.split("+")) for m in re.findall(r"\b\w+\+\w+\b", text)]


def _rejects(problem, wrong, phrase):
    ok, feedback = problem.check(wrong)
    assert not ok and phrase.lower() in feedback.lower(), (problem.prompt, wrong, feedback)


# ---------------------------------------------------------------------------- BPE


def _parse_train(prompt):
    corpus = dict((w, int(n)) for w, n in re.findall(r"(\w+): (\d+)", prompt.split("\n")[1]))
    k = int(re.search(r"first (\d+) merges", prompt)[1])
    return corpus, k


def _merge(word, pair):
    """Every occurrence of ``pair`` in ``word`` merged, left to right without overlaps (written here)."""
    out, j = [], 0
    while j < len(word):
        if j + 1 < len(word) and (word[j], word[j + 1]) == pair:
            out.append(word[j] + word[j + 1])
            j += 2
        else:
            out.append(word[j])
            j += 1
    return out


def _train_local(corpus, k, weighted=True, largest=False):
    """A plain training loop written here: recount, most frequent pair, tie rule."""
    words = [(list(w), n if weighted else 1) for w, n in corpus.items()]
    merges = []
    for _ in range(k):
        counts = Counter()
        for w, n in words:
            for pair in zip(w, w[1:]):
                counts[pair] += n
        best = max(counts.values())
        tied = sorted(p for p, c in counts.items() if c == best)
        pair = tied[-1] if largest else tied[0]
        merges.append(pair)
        words = [(_merge(w, pair), n) for w, n in words]
    return merges


@pytest.mark.parametrize("seed", SEEDS)
def test_bpe_train_agrees_with_reference_train_and_the_fast_trainer(seed):
    p = drills.generate("bpe-train", seed)
    corpus, k = _parse_train(p.prompt)
    assert corpus == p.data["corpus"]
    assert p.answer == bpe.reference_train({tuple(w): n for w, n in corpus.items()}, k) == _train_local(corpus, k)
    # the fast trainer on the same words, as bytes, each word its own pre-token
    text = " ".join(" ".join([w] * n) for w, n in corpus.items())
    fast = bpe.train(text, 256 + k, pattern=r"\w+| ")
    assert [(a.decode(), b.decode()) for a, b in fast.merges] == p.answer
    if _train_local(corpus, k, largest=True) != p.answer:
        _rejects(p, _train_local(corpus, k, largest=True), "Tie broken")
    if _train_local(corpus, k, weighted=False) != p.answer:
        _rejects(p, _train_local(corpus, k, weighted=False), "Word counts ignored")


def _recount(word, merges):
    """Merges the known pair most frequent in the word (the classic wrong encoder), written here."""
    rank = {m: r for r, m in enumerate(merges)}
    w = list(word)
    while True:
        counts = Counter(pair for pair in zip(w, w[1:]) if pair in rank)
        if not counts:
            return w
        top = max(counts.values())
        w = _merge(w, min((q for q in counts if counts[q] == top), key=rank.get))


@pytest.mark.parametrize("seed", SEEDS)
def test_bpe_encode_agrees_with_reference_encode_and_byte_bpe(seed):
    p = drills.generate("bpe-encode", seed)
    merges = [(a, b) for a, b in re.findall(r"rank \d+: (\w+)\+(\w+)", p.prompt)]
    word = re.search(r"Encode the word '(\w+)'", p.prompt)[1]
    assert p.answer == bpe.reference_encode(list(word), merges)
    fast = ByteBPE([(a.encode(), b.encode()) for a, b in merges])
    assert [t.decode() for t in fast.tokens(fast.segment(word))] == p.answer
    assert _recount(word, merges) != p.answer
    _rejects(p, _recount(word, merges), "Frequency instead of rank")


# ---------------------------------------------------------------------------- WordPiece


def _keep_pieces(word, vocab):
    out, i = [], 0
    while i < len(word):
        for j in range(len(word), i, -1):
            piece = word[i:j] if i == 0 else "##" + word[i:j]
            if piece in vocab:
                out.append(piece)
                i = j
                break
        else:
            return out + ["[UNK]"]
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_wordpiece_agrees_with_encode_word_the_model_and_hugging_face(seed):
    p = drills.generate("wordpiece", seed)
    vocab = re.search(r"Vocabulary: (.*) \[UNK\]", p.prompt)[1].split() + ["[UNK]"]
    words = re.search(r"Encode the text '([^']*)' \((\d) words", p.prompt)[1].split()
    assert len(words) == int(re.search(r"\((\d) words", p.prompt)[1])
    reference = [t for w in words for t in wordpiece.reference.encode_word(w, vocab)]
    model = wordpiece.WordPieceModel(vocab)
    fast = [t for w in words for t in model.encode_word(w)]
    hf = Tokenizer(models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]"))
    hf_tokens = [t for w in words for t in hf.encode(w, add_special_tokens=False).tokens]
    assert p.answer == reference == fast == hf_tokens
    wrong = [t for w in words for t in _keep_pieces(w, vocab)]
    if "[UNK]" in p.answer:
        assert wrong != p.answer
        _rejects(p, wrong, "Kept the pieces before the failure")
    else:
        assert wrong == p.answer


# ---------------------------------------------------------------------------- Unigram


def _parse_unigram(prompt):
    probs = {piece: float(v) for piece, v in re.findall(r"p\((\w+)\)=([\d.]+)", prompt)}
    text = re.search(r"Text: '(\w+)'", prompt)[1]
    assert math.isclose(sum(probs.values()), 1.0), probs  # a model is a distribution
    return text, probs


@pytest.mark.parametrize("seed", SEEDS)
def test_viterbi_agrees_with_enumeration_and_the_unigram_model(seed):
    p = drills.generate("unigram-viterbi", seed)
    text, probs = _parse_unigram(p.prompt)
    paths = sorted(unigram.segmentations(text, probs), key=lambda s: -math.prod(probs[x] for x in s))
    best = paths[0]
    assert p.answer[0] == best == unigram.Unigram.from_probs(probs).viterbi(text)
    assert p.answer[1] == pytest.approx(math.prod(probs[x] for x in best))
    total = sum(math.prod(probs[x] for x in s) for s in paths)
    _rejects(p, (best, total), "That is P(x)")


@pytest.mark.parametrize("seed", SEEDS)
def test_forward_agrees_with_enumeration_and_the_unigram_model(seed):
    p = drills.generate("unigram-forward", seed)
    text, probs = _parse_unigram(p.prompt)
    by_enumeration = [sum(math.prod(probs[x] for x in s) for s in unigram.segmentations(text[:i], probs))
                      for i in range(1, len(text) + 1)]
    model = unigram.Unigram.from_probs(probs).forward(text, log=False)[1:]
    assert p.answer == pytest.approx(by_enumeration, rel=1e-12)
    assert p.answer == pytest.approx(model, rel=1e-9)
    assert p.answer == pytest.approx(unigram.reference_forward(text, probs)[1:], rel=1e-15)
    best_into = [max(math.prod(probs[x] for x in s) for s in unigram.segmentations(text[:i], probs))
                 for i in range(1, len(text) + 1)]
    _rejects(p, best_into, "Max instead of sum")


# ---------------------------------------------------------------------------- measures


@pytest.mark.parametrize("seed", SEEDS)
def test_fertility_and_bpb_agree_with_toklab_metrics_and_tiktoken(seed, real):
    p = drills.generate("fertility-bpb", seed)
    text = ast.literal_eval(re.search(r"Text: ('.*'|\".*\") \(\d+ characters\)", p.prompt)[1])
    n_tokens = int(re.search(r"into (\d+) tokens", p.prompt)[1])
    nll = float(re.search(r"likelihood of ([\d.]+) nats", p.prompt)[1])
    _, cl100k, enc = real("cl100k_base")
    assert n_tokens == len(enc.encode_ordinary(text))
    fert = metrics.fertility(cl100k, text, "bytes")
    n_bytes = len(text.encode("utf-8"))
    assert p.answer[0] == n_bytes == fert.denominator_count
    assert p.answer[1] == pytest.approx(fert.tokens_per_unit)
    assert p.answer[2] == pytest.approx(metrics.loss_per_token(nll, n_tokens))
    assert p.answer[3] == pytest.approx(metrics.bits_per_byte(nll, n_bytes))
    _rejects(p, p.with_part("BPB", nll / n_bytes), "Forgot ln 2")
    _rejects(p, p.with_part("bytes", len(text)), "Counted characters")


@pytest.mark.parametrize("seed", SEEDS)
def test_five_numbers_agree_with_vocab_facts_on_the_real_file(seed):
    p = drills.generate("five-numbers", seed)
    name = re.search(r"(\w+)'s file holds", p.prompt)[1]
    specials = {s: int(i.replace(",", "")) for s, i in re.findall(r"(<\|[^|]+\|>) = ([\d,]+)", p.prompt)}
    multiple = int(re.search(r"multiple of (\d+)", p.prompt)[1])
    spec = vocabs.load(name)
    assert set(spec.special_tokens.items()) <= set(specials.items())
    tok = ByteBPE.from_ranks(spec.ranks, pattern=spec.pattern, special_tokens=specials)
    five = vocab_facts.of_bpe(tok, name)
    rows = math.ceil(five.id_space / multiple) * multiple
    assert p.answer == (five.ordinary, five.special, five.entries, five.id_space, rows)
    _rejects(p, p.with_part("ID space", max(specials.values())), "Max ID, not max ID + 1")


# ---------------------------------------------------------------------------- prefix instability


@pytest.mark.parametrize("seed", SEEDS)
def test_prefix_instability_agrees_with_byte_bpe(seed):
    p = drills.generate("prefix-instability", seed)
    merges = _merges(re.search(r"Merges, in rank order: (.*)", p.prompt)[1])
    text = re.search(r"The full text '(\w+)'", p.prompt)[1]
    k = int(re.search(r"cut after (\d+) letters", p.prompt)[1])
    tok = ByteBPE([(a.encode(), b.encode()) for a, b in merges])
    full = [t.decode() for t in tok.tokens(tok.encode(text))]
    prompt = [t.decode() for t in tok.tokens(tok.encode(text[:k]))]
    assert " ".join(full) in p.prompt
    m = next(m for m in range(len(prompt) + 1) if full[: len(prompt) - m] == prompt[: len(prompt) - m])
    assert p.answer == (prompt, m)
    assert prompt == bpe.reference_encode(list(text[:k]), merges)
    if m:
        _rejects(p, (prompt, 0), "Assumed the prompt's tokens are final")
    else:
        _rejects(p, (prompt, 1), "Backed off a stable cut")


# ---------------------------------------------------------------------------- regularization


def _vocab_segmentations(word, vocab):
    """Every cut of ``word`` into strings of ``vocab`` (written here: recursion on the first token)."""
    if not word:
        return [[]]
    return [[word[:i], *rest] for i in range(1, len(word) + 1) if word[:i] in vocab
            for rest in _vocab_segmentations(word[i:], vocab)]


@pytest.mark.parametrize("seed", SEEDS)
def test_bpe_dropout_counts_every_segmentation_into_the_vocabulary_and_sampling_finds_them(seed):
    p = drills.generate("bpe-dropout", seed)
    merges = _merges(re.search(r"Merges, in rank order: (.*)", p.prompt)[1])
    word = re.search(r"Word: '(\w+)'", p.prompt)[1]
    vocab = set(word) | {a + b for a, b in merges}
    every = {tuple(s) for s in _vocab_segmentations(word, vocab)}
    assert p.answer[0] == bpe.reference_encode(list(word), merges)
    assert p.answer[1] == len(every) and p.answer[2] == min(map(len, every))
    # toklab's BPE-dropout, run many times, outputs only these, and (at p = 0.5) all of them
    ranks = {a.encode() + b.encode(): r for r, (a, b) in enumerate(merges)}
    rng = random.Random(seed)
    seen = {tuple(t.decode() for t in bpe.merge_dropout(word.encode(), ranks, 0.5, rng)) for _ in range(4000)}
    assert seen == every
    assert bpe.merge_dropout(word.encode(), ranks, 0.0, rng) == [t.encode() for t in p.answer[0]]
    kept = [m for m in merges if bpe.reference_encode(list(word), [m]) != list(word)]
    _rejects(p, p.with_part("segmentations", 2 ** (len(word) - 1)), "Every cut of the word")
    assert kept  # some merge applies to the word


@pytest.mark.parametrize("seed", SEEDS)
def test_unigram_sampling_agrees_with_enumeration_and_with_sampling(seed):
    p = drills.generate("unigram-sampling", seed)
    text, probs = _parse_unigram(p.prompt)
    alpha = float(re.search(r"with α = 1 and with α = ([\d.]+)", p.prompt)[1])
    paths = list(unigram.segmentations(text, probs))
    weights = [math.prod(probs[x] for x in z) for z in paths]
    best = max(weights)
    assert p.answer[0] == len(paths)
    assert p.answer[1] == pytest.approx(best / sum(weights))
    assert p.answer[2] == pytest.approx(best ** alpha / sum(w ** alpha for w in weights))
    # the Unigram model's own sampler agrees, within sampling error, at both alphas
    model = unigram.Unigram.from_probs(probs)
    best_z = paths[weights.index(best)]
    for a, expected in ((1.0, p.answer[1]), (alpha, p.answer[2])):
        draws = model.samples(text, 3000, alpha=a, seed=seed)
        share = sum(z == best_z for z in draws) / len(draws)
        assert abs(share - expected) < 4.5 * math.sqrt(expected * (1 - expected) / len(draws)) + 1e-9, (a, share)
        assert {tuple(z) for z in draws} <= {tuple(z) for z in paths}


# ---------------------------------------------------------------------------- byte level


GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


@pytest.mark.parametrize("seed", SEEDS)
def test_byte_level_agrees_with_utf8_the_gpt2_table_and_the_regex(seed, real):
    import regex

    p = drills.generate("byte-level", seed)
    text = ast.literal_eval(re.search(r"Text: ('.*'|\".*\") \(\d+ characters\)", p.prompt, re.S)[1])
    assert text == p.data["text"]
    data = text.encode("utf-8")
    table = unicode.bytes_to_unicode()
    form = "".join(table[b] for b in data)
    pieces = regex.findall(GPT2_PATTERN, text)
    assert "".join(pieces) == text
    assert p.answer == (len(data), len(pieces), form.count("Ġ"), form.count("Ċ"))
    assert form in p.solution
    # the real GPT-2 vocabulary: its tokens never cross a pre-token, and they are at most the bytes
    _, r50k, _ = real("r50k_base")
    ids = r50k.encode_ordinary(text)
    assert len(pieces) <= len(ids) <= len(data)
    for ch in {c for c in text if not c.isascii()}:
        assert f"U+{ord(ch):04X}" in p.prompt
    _rejects(p, p.with_part("most tokens", len(text)), "One token per character")


def _rule_in_words(text):
    """The pre-token rule exactly as the byte-level prompt states it, written here from its words."""
    import unicodedata

    def kind(ch):
        cat = unicodedata.category(ch)
        return "space" if ch.isspace() else "letter" if cat[0] == "L" else "digit" if cat[0] == "N" else "other"

    def run(i):  # the run of characters of text[i]'s kind, from i
        j = i + 1
        while j < len(text) and kind(text[j]) == kind(text[i]):
            j += 1
        return j

    out, i = [], 0
    while i < len(text):
        contraction = next((c for c in ("'s", "'t", "'re", "'ve", "'m", "'ll", "'d") if text.startswith(c, i)), None)
        if contraction:
            out.append(contraction)
            i += len(contraction)
        elif kind(text[i]) != "space":
            out.append(text[i:run(i)])
            i = run(i)
        elif text[i] == " " and i + 1 < len(text) and kind(text[i + 1]) != "space":
            out.append(text[i:run(i + 1)])
            i = run(i + 1)
        else:
            end = run(i)
            if end == len(text):  # a run at the end of the text: one pre-token
                out.append(text[i:end])
            else:  # followed by a non-space: its last character splits off
                if end - 1 > i:
                    out.append(text[i:end - 1])
                if text[end - 1] != " ":
                    out.append(text[end - 1])
                else:
                    out.append(text[end - 1:run(end)])
                    end = run(end)
            i = end
    return out


def test_the_pre_token_rule_the_byte_level_prompt_states_is_gpt2s_on_every_text_it_uses():
    from toklab.teaching.drills import bytelevel
    from toklab import pre_tokenizers

    pool = [t for texts in bytelevel.texts().values() for t in texts]
    assert len(pool) > 1000
    for text in pool:
        assert _rule_in_words(text) == pre_tokenizers.split(text, "gpt2"), text
