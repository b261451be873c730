"""Tokenization from scratch: byte-level BPE, WordPiece and Unigram.

Standard library only. `python tokenization_from_scratch.py` runs the eight
classic checks and prints one PASS or FAIL line for each. With the toklab
package installed, `python -m toklab sanity --impl my_file.py` runs its
eight invariants on any file that defines the same functions.
"""

import math
import re
import sys
import unicodedata
from collections import Counter
from itertools import groupby


# 1. The byte alphabet ------------------------------------------------------
def bytes_to_unicode():
    """GPT-2's table: a printable character for each of the 256 bytes.

    The 68 bytes that do not print as themselves (controls, space, DEL,
    no-break space, soft hyphen) move, in order, to U+0100 onwards.
    """
    kept = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    moved = [b for b in range(256) if b not in kept]
    table = {b: chr(b) for b in kept}
    table.update({b: chr(0x100 + n) for n, b in enumerate(moved)})
    return table


BYTE_TO_CHAR = bytes_to_unicode()
CHAR_TO_BYTE = {char: byte for byte, char in BYTE_TO_CHAR.items()}


def to_chars(data):
    """Bytes as a string of their stand-in characters."""
    return "".join(BYTE_TO_CHAR[b] for b in data)


# 2. BPE training: count, merge, record --------------------------------------
def pair_counts(words):
    """Adjacent pairs, each occurrence weighted by its word's count."""
    counts = Counter()
    for word, n in words.items():
        for pair in zip(word, word[1:]):
            counts[pair] += n
    return counts


def merge_pair(word, pair):
    """Merge every occurrence of pair, left to right, without overlaps."""
    out, i = [], 0
    while i < len(word):
        if word[i:i + 2] == pair:
            out.append(word[i] + word[i + 1])
            i += 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out)


def train(words, num_merges):
    """Merges in the order learned, from {tuple of symbols: count}.

    Ties go to the smallest pair, compared as strings. Trainers differ
    here, and one tie broken the other way changes every later merge.
    """
    words = {tuple(word): n for word, n in words.items()}
    merges = []
    for _ in range(num_merges):
        counts = pair_counts(words)
        if not counts:
            break
        best = min(counts, key=lambda pair: (-counts[pair], pair))
        merges.append(best)
        words = {merge_pair(w, best): n for w, n in words.items()}
    return merges


# 3. BPE encoding: ranks, never counts ---------------------------------------
def vocab(merges):
    """Token -> ID (and rank): the 256 bytes in GPT-2's order, then merges."""
    ids = {char: i for i, char in enumerate(BYTE_TO_CHAR.values())}
    for left, right in merges:
        ids.setdefault(left + right, len(ids))
    return ids


def encode_word(symbols, ranks):
    """Join the adjacent pair whose result ranks lowest, until none does.

    Nothing is counted. The same pair twice joins the leftmost first.
    """
    word = list(symbols)
    while len(word) > 1:
        joined = [ranks.get(a + b, math.inf) for a, b in zip(word, word[1:])]
        best = min(joined)
        if best == math.inf:
            break
        i = joined.index(best)
        word[i:i + 2] = [word[i] + word[i + 1]]
    return word


# 4. Byte-level BPE over regex chunks ----------------------------------------
# GPT-2's pattern in what `re` can say. `re` has no \p{L} or \p{N}, so
# letters are [^\W\d_], which also takes the numbers that are not decimal
# digits (², ½, Ⅻ, ①); its \s also takes U+001C..U+001F; and characters
# newer than Python's Unicode tables are neither. Elsewhere, same chunks.
GPT2_SPLIT = re.compile(
    r"'(?:[sdmt]|ll|ve|re)"   # contractions (ASCII apostrophe only)
    r"| ?[^\W\d_]+"           # letters, with one leading space
    r"| ?\d+"                 # digits, a run of any length
    r"| ?(?:[^\s\w]|_)+"      # anything else but whitespace
    r"|\s+(?!\S)|\s+")        # spaces, leaving the last to the next word


def split(text):
    """Chunks: no merge crosses from one to the next."""
    return GPT2_SPLIT.findall(text)


def encode(text, ranks):
    """Text -> IDs: chunks, their UTF-8 bytes as characters, then merges.

    No special token comes out of here: they are inserted by ID only.
    """
    ids = []
    for chunk in split(text):
        tokens = encode_word(to_chars(chunk.encode("utf-8")), ranks)
        ids += [ranks[token] for token in tokens]
    return ids


def decode(ids, ranks):
    """IDs -> text: join the tokens' bytes, then decode UTF-8 once."""
    tokens = {i: token for token, i in ranks.items()}
    data = bytes(CHAR_TO_BYTE[c] for i in ids for c in tokens[i])
    return data.decode("utf-8", errors="replace")


def train_on_text(text, num_merges):
    """Byte-level BPE training: count the chunks, train on their bytes."""
    return train(Counter(tuple(to_chars(chunk.encode("utf-8")))
                         for chunk in split(text)), num_merges)


# 5. WordPiece: longest match first ------------------------------------------
def wordpiece(word, vocab, unk="[UNK]"):
    """The longest piece first; pieces after the first start with '##'.

    One position where nothing matches makes the whole word unk, and no
    shorter piece is tried earlier on.
    """
    pieces, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                break
        else:
            return [unk]
        pieces.append(piece)
        start = end
    return pieces


# 6. Unigram: Viterbi and forward, in log space ------------------------------
def viterbi(text, logp):
    """The most probable segmentation and its log probability.

    Ties keep the earliest start of the last piece.
    """
    n, longest = len(text), max(map(len, logp), default=0)
    best, back = [0.0] + [-math.inf] * n, [0] * (n + 1)
    for end in range(1, n + 1):
        for start in range(max(0, end - longest), end):
            score = best[start] + logp.get(text[start:end], -math.inf)
            if score > best[end]:
                best[end], back[end] = score, start
    if best[n] == -math.inf:
        raise ValueError(f"no segmentation of {text!r} with these pieces")
    pieces, end = [], n
    while end:
        pieces.append(text[back[end]:end])
        end = back[end]
    return pieces[::-1], best[n]


def logsumexp(values):
    """log(sum(exp(v))), taking out the largest term so nothing overflows."""
    top = max(values, default=-math.inf)
    if top == -math.inf:
        return top
    return top + math.log(sum(math.exp(v - top) for v in values))


def forward(text, logp):
    """log P(text): the sum over every segmentation, not the best one."""
    longest = max(map(len, logp), default=0)
    alpha = [0.0] + [-math.inf] * len(text)
    for end in range(1, len(text) + 1):
        starts = range(max(0, end - longest), end)
        alpha[end] = logsumexp([alpha[start] + logp[text[start:end]]
                                for start in starts
                                if text[start:end] in logp])
    return alpha[-1]


# 7. Coverage and fidelity: byte fallback beside NFKC ------------------------
def nfkc(text):
    """Compatibility normalization: 'Ａ' -> 'A', '①' -> '1'. Lossy."""
    return unicodedata.normalize("NFKC", text)


def segment(text, logp):
    """Viterbi where pieces cover the text, UTF-8 byte pieces where not.

    (A trainer makes every character it keeps a piece on its own.)
    """
    pieces = []
    for covered, run in groupby(text, key=lambda char: char in logp):
        run = "".join(run)
        if covered:
            pieces += viterbi(run, logp)[0]
        else:
            pieces += [f"<0x{b:02X}>" for b in run.encode("utf-8")]
    return pieces


def decode_pieces(pieces):
    """Join pieces; byte pieces are gathered and decoded as UTF-8."""
    data = bytearray()
    for piece in pieces:
        byte = re.fullmatch(r"<0x([0-9A-F]{2})>", piece)
        data += bytes([int(byte[1], 16)]) if byte else piece.encode()
    return data.decode("utf-8", errors="replace")


# 8. Prefix instability ------------------------------------------------------
def unstable_cuts(text, ranks):
    """Where a prompt cut from text would not end in text's own tokens."""
    full = encode(text, ranks)
    heads = {k: encode(text[:k], ranks) for k in range(1, len(text))}
    return [k for k, head in heads.items() if full[:len(head)] != head]


# 9. Fertility and bits per byte ---------------------------------------------
def fertility(n_tokens, text, unit):
    """Tokens per unit of text. Without its unit it is not a number."""
    units = {"bytes": len(text.encode("utf-8")), "chars": len(text),
             "words": len(text.split())}  # words: no use for Chinese
    if unit not in units:
        raise ValueError(f"unit must be one of {list(units)}, not {unit!r}")
    return n_tokens / units[unit]


def bits_per_byte(nll, text):
    """Total NLL (nats) in bits per UTF-8 byte: no tokenizer changes B."""
    return nll / (len(text.encode("utf-8")) * math.log(2))


# 10. Extending a vocabulary, and its regression test ------------------------
def extend(ranks, tokens):
    """New tokens take IDs after every old one: no old ID moves.

    Encoding reaches a token only by joining two tokens, so a new word
    must be the join of two tokens its text already encodes to.
    """
    new = dict(ranks)
    for token in tokens:
        new.setdefault(token, max(new.values()) + 1)
    return new


def respell(ids, old, new):
    """New IDs in old ones: each added token as the old ranks encode it."""
    added = {i: token for token, i in new.items() if token not in old}
    out = []
    for i in ids:
        if i in added:
            out += [old[part] for part in encode_word(added[i], old)]
        else:
            out.append(i)
    return out


def regression(old, new, texts):
    """What an extension broke, as messages; an empty list means nothing.

    Old IDs keep their tokens, every text still round-trips, and a text
    encodes as before except where an added token joins old ones.
    """
    problems = [f"{t!r} moved" for t, i in old.items() if new.get(t) != i]
    for text in texts:
        ids = encode(text, new)
        if decode(ids, new) != text:
            problems.append(f"{text!r} no longer round-trips")
        if respell(ids, old, new) != encode(text, old):
            problems.append(f"{text!r} encodes differently")
    return problems


def grow_rows(rows, sources):
    """Add a row per new ID, the mean of its sources' rows, in place."""
    for new_id, old_ids in sorted(sources.items()):
        if new_id != len(rows):
            raise ValueError(f"new ID {new_id} is not the next row")
        columns = zip(*(rows[i] for i in old_ids))
        rows.append([sum(column) / len(old_ids) for column in columns])


# The eight checks ---------------------------------------------------------
def check_byte_map():
    table, text, ranks = bytes_to_unicode(), " A\n中文🙂\x00", vocab([])
    assert sorted(table) == list(range(256)), "a byte is missing"
    assert len(set(table.values())) == 256, "two bytes share a character"
    assert sum(table[b] != chr(b) for b in table) == 68, "not 68 moved"
    assert table[0x20] == "Ġ", "the space is not 'Ġ'"
    ids = encode(text, ranks)
    assert len(ids) == len(text.encode()) and decode(ids, ranks) == text
    return f"256 <-> 256, 68 moved, ' ' -> 'Ġ', {text!r} round-trips"


def check_training_is_not_encoding():
    words = {tuple("abab"): 3, tuple("abac"): 1}
    assert pair_counts(words)[("a", "b")] == 7, "(a, b) is not counted 7"
    assert train(words, 3) == [("a", "b"), ("ab", "ab"), ("a", "c")]
    tokens = encode_word("abcbc", vocab([("a", "b"), ("b", "c")]))
    assert tokens == ["ab", "c", "bc"], f"'abcbc' -> {tokens}"
    swapped = encode_word("abc", vocab([("b", "c"), ("a", "b")]))
    assert swapped == ["a", "bc"], "swapped ranks, same tokens"
    assert encode_word("aaa", vocab([("a", "a")])) == ["aa", "a"]
    return "merges a+b, ab+ab, a+c; abcbc -> ab c bc, not a bc bc"


def check_wordpiece():
    found = wordpiece("abc", {"a", "##b", "##bc"})
    assert found == ["a", "##bc"], f"'abc' -> {found}"
    assert wordpiece("abc", {"a", "##b"}) == ["[UNK]"], "kept part of it"
    assert wordpiece("abc", {"a", "ab", "##bc"}) == ["[UNK]"], "backtracked"
    return "abc -> a ##bc; [UNK] without ##bc, or once ab is taken"


def check_viterbi_and_forward():
    p = {"a": 0.15, "b": 0.15, "ab": 0.40, "aba": 0.20, "bab": 0.10}
    logp = {piece: math.log(q) for piece, q in p.items()}
    pieces, best = viterbi("abab", logp)
    total = math.exp(forward("abab", logp))
    assert pieces == ["ab", "ab"] and math.isclose(math.exp(best), 0.16)
    assert math.isclose(total, 0.22350625), f"P(abab) = {total}"
    log_p = forward("ab" * 1500, logp)  # P itself underflows a float
    assert math.exp(log_p) == 0.0 and math.isfinite(log_p), "underflow"
    return f"ab ab: 0.16 < P(abab) = {total:.8f}; log P(ab*1500) = {log_p:.0f}"


def check_coverage_vs_fidelity():
    logp = {char: math.log(1 / 3) for char in "A1 "}
    pieces = segment("A 龘", logp)
    assert pieces == ["A", " ", "<0xE9>", "<0xBE>", "<0x98>"], pieces
    assert decode_pieces(pieces) == "A 龘", "byte fallback lost text"
    assert nfkc("Ａ①") == nfkc("A1") == "A1", "NFKC kept 'Ａ①'"
    assert decode_pieces(segment(nfkc("Ａ①"), logp)) == "A1" != "Ａ①"
    return "龘 -> <0xE9><0xBE><0x98> and back; Ａ① -> A1 for good"


def check_prefix_instability():
    ranks = vocab([("a", "b"), ("ab", "c")])
    short, full = encode("ab", ranks), encode("abc", ranks)
    assert (short, full) == ([ranks["ab"]], [ranks["abc"]]), (short, full)
    assert unstable_cuts("abc", ranks) == [1, 2]
    return "encode('ab') = [ab] does not start encode('abc') = [abc]"


def check_measures():
    text = "Tokens cost 分词 🙂"
    n_tokens = len(encode(text, vocab([])))
    assert fertility(n_tokens, text, "bytes") == 1.0, "not 1 token/byte"
    per_char = fertility(n_tokens, text, "chars")
    nll, bpb = 4.0, bits_per_byte(4.0, "8 bytes!")  # no token count in it
    assert math.isclose(bpb, nll / (8 * math.log(2))), f"BPB {bpb}"
    return (f"1.00/byte = {per_char:.2f}/char; loss/token {nll / 2:g} "
            f"or {nll / 4:g}; BPB {bpb:.4f}")


def check_extension():
    old = vocab(train_on_text(SAMPLE, 60))
    left, right = encode_word(to_chars(b" tokenizer"), old)[:2]
    new = extend(old, [left + right, "<|tool|>"])
    texts = SAMPLE.splitlines() + ["<|tool|> as text", "a tokenizer"]
    assert regression(old, new, texts) == [], regression(old, new, texts)
    assert new[left + right] in encode(" tokenizer", new), "never used"
    moved = {t: i + (i >= 300) for t, i in old.items()} | {"<|x|>": 300}
    assert regression(old, moved, texts), "moved IDs not caught"
    rows = head = [[float(i), float(i % 7)] for i in range(len(old))]
    tool = encode(" tool", old)
    grow_rows(rows, {len(old): [old[left], old[right]], len(old) + 1: tool})
    mean = [sum(rows[i][k] for i in tool) / len(tool) for k in (0, 1)]
    assert rows[-1] == mean and head is rows, "new row or tied head wrong"
    return "old texts as before, moved IDs caught, tied head kept"


SAMPLE = ("A tokenizer turns text into IDs, and IDs back into text.\n"
          "Training counts pairs; encoding only follows the ranks.\n"
          "分词器把文本变成编号，再把编号变回文本。\n"
          "def encode(text): return [ranks[t] for t in split(text)]\n")
CHECKS = [
    ("the byte map", check_byte_map),
    ("training is not encoding", check_training_is_not_encoding),
    ("WordPiece fails whole words", check_wordpiece),
    ("Viterbi is not forward", check_viterbi_and_forward),
    ("coverage is not fidelity", check_coverage_vs_fidelity),
    ("prefix instability", check_prefix_instability),
    ("fertility and BPB", check_measures),
    ("extending a vocabulary", check_extension),
]


def main():
    failures = 0
    for number, (title, check) in enumerate(CHECKS, 1):
        try:
            verdict, detail = "PASS", check()
        except Exception as error:  # a broken part may fail in any way
            verdict, detail = "FAIL", f"{type(error).__name__}: {error}"
            failures += 1
        print(f"{verdict} {number} {title}: {detail}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
