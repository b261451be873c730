"""``train bpe|wordpiece|unigram FILES... --vocab-size N -o OUT``: a tokenizer from text files.

Each algorithm is toklab's own trainer (`toklab.train_bpe`, `toklab.train_wordpiece`,
`toklab.train_unigram`), fed the files as UTF-8 text (checked first, so a bad
byte is reported with its file and offset before any training starts), and
its output is a file ``--model`` reads:

- ``bpe``: byte-level BPE saved by `toklab.ByteBPE.save` (``toklab-bpe`` JSON);
- ``wordpiece``: BERT's ``vocab.txt`` (`toklab.WordPiece.save`); it keeps no
  normalizer settings, so a model trained with ``--cased`` is read back with
  ``--model OUT --cased``;
- ``unigram``: a sentencepiece-style model (normalization, ``▁`` for spaces,
  ``<unk>``, ``<s>``, ``</s>``, optional byte fallback), trained from raw lines
  as sentencepiece does and saved as ``toklab-sentencepiece`` JSON
  (`toklab.formats.sentencepiece_json`), or, for an output named ``*.model``, as a
  sentencepiece ``.model`` file that the ``sentencepiece`` library loads (the
  normalization rule is then compiled into the file's table, and training
  normalizes with that table). Like sentencepiece, it skips lines longer than
  ``--max-sentence-length`` bytes (4,192 by default) and says how many.

A progress bar (on standard error) appears when standard error is a terminal
and a step runs longer than about a second (``--progress``/``--no-progress``
force it on or off).

Inputs that are not regular files (a pipe, ``/dev/stdin``, a device) are read
once, up to `toklab.base.files.STREAM_LIMIT` bytes, so ``/dev/zero`` is an error
rather than a run that never ends. The output folder is checked before training,
and the file is written all at once (`toklab.base.files.atomic_write`): a failed
write leaves the previous file as it was and is reported with its path.
"""

from __future__ import annotations

import argparse
import codecs
import os
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from .. import formats
from ..base.files import STREAM_LIMIT, InputTooLarge, read_limited, regular_file
from ..bpe import train as train_bpe
from ..bpe.trainer import file_blocks, text_blocks
from ..normalizers import NORMALIZATIONS, SentencePieceNormalizer
from ..normalizers.tables import compile_rule
from ..pre_tokenizers import PATTERNS
from ..sentencepiece.model_file import SPConfig
from ..sentencepiece.tokenizer import SentencePieceTokenizer
from ..unigram import train as train_unigram
from ..wordpiece import train as train_wordpiece
from .base import Command, CommandError, decode_utf8, opened

__all__ = ["COMMANDS", "MAX_SENTENCE_LENGTH", "Source", "check_utf8", "line_batches", "sources"]

_READ = 1 << 20  # bytes read at a time
#: Seconds a step must run before its progress bar appears (tqdm's ``delay``, via TQDM_DELAY).
PROGRESS_DELAY = "1"
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
#: sentencepiece's ``max_sentence_length``: longer lines (in UTF-8 bytes) are left out of Unigram training.
MAX_SENTENCE_LENGTH = 4192


class Source:
    """One training input: a regular file, read from disk each time it is needed, or the text of a stream."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.text: str | None = None
        if not regular_file(path):  # a pipe or a device: read it once, with a bound
            with opened(path) as fh:
                try:
                    data = read_limited(fh, STREAM_LIMIT, str(path))
                except InputTooLarge as exc:
                    raise CommandError(str(exc)) from None
            self.text = decode_utf8(data, str(path))
            self.size = len(data)
        else:
            self.size = check_utf8(path)

    def lines(self) -> Iterator[str]:
        """The lines, line endings kept."""
        if self.text is not None:
            yield from _LINE.findall(self.text)  # the lines a file object would give (\n, \r\n or \r ends one)
            return
        with open(self.path, encoding="utf-8", newline="") as fh:
            yield from fh

    def blocks(self, pattern: str, specials: list[str]) -> Iterator[str]:
        """About a megabyte at a time, cut where the pre-tokens cannot change (`toklab.bpe.trainer.file_blocks`)."""
        if self.text is not None:
            return text_blocks(self.text, pattern, specials)
        return file_blocks(self.path, pattern, specials)


def sources(paths: list[Path]) -> list[Source]:
    """The inputs, each checked to be UTF-8 before any training starts."""
    return [Source(p) for p in paths]


def check_utf8(path: Path) -> int:
    """The size of ``path`` in bytes, after checking it is UTF-8 throughout (CommandError naming the offset)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = 0
    with opened(path) as fh:
        while block := fh.read(_READ):
            try:
                decoder.decode(block)
            except UnicodeDecodeError as exc:
                raise CommandError(f"{path} is not UTF-8 text: byte 0x{block[exc.start]:02X} at offset "
                                   f"{offset + exc.start} cannot be decoded") from None
            offset += len(block)
    pending = decoder.getstate()[0]
    if pending:
        raise CommandError(f"{path} is not UTF-8 text: it ends in the middle of a character (byte "
                           f"0x{pending[0]:02X} at offset {offset - len(pending)} starts one)")
    return offset


def line_batches(inputs: list[Source], *, lines_per_batch: int = 10_000) -> Iterator[str]:
    """The inputs' text in batches of whole lines (line endings kept): no line is split across batches."""
    for source in inputs:
        batch: list[str] = []
        for line in source.lines():
            batch.append(line)
            if len(batch) >= lines_per_batch:
                yield "".join(batch)
                batch = []
        if batch:
            yield "".join(batch)


def _short_lines(inputs: list[Source], limit: int | None, skipped: list[int]) -> Iterator[str]:
    """The lines without their endings, leaving out (and counting in ``skipped``) those over ``limit`` bytes."""
    for source in inputs:
        for line in source.lines():
            line = line.rstrip("\r\n")
            if limit is not None and len(line.encode("utf-8")) > limit:
                skipped[0] += 1
                skipped[1] = max(skipped[1], len(line.encode("utf-8")))
                continue
            yield line


def _save(write, path: Path) -> None:
    """``write(path)``, with a failure reported as one line naming the file."""
    try:
        write(path)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        if reason.startswith(f"cannot write {path}: "):
            reason = reason[len(f"cannot write {path}: "):]
        raise CommandError(f"cannot write {path}: {reason}") from None


# ---------------------------------------------------------------------------- the three algorithms


def _bpe(args: argparse.Namespace, inputs: list[Source], progress: bool):
    specials = list(args.special or ())
    blocks = (block for source in inputs for block in source.blocks(args.pattern, specials))
    tok = train_bpe(blocks, args.vocab_size, pattern=args.pattern, special_tokens=specials,
                    min_frequency=args.min_frequency, processes=args.processes, progress=progress)
    _save(tok.save, args.output)
    merges = len(tok.merges)
    detail = f"256 bytes + {merges:,} merges + {len(tok.special_tokens)} special tokens"
    return len(tok), detail, "toklab-bpe JSON", ""


def _wordpiece(args: argparse.Namespace, inputs: list[Source], progress: bool):
    accents = {None: None, "auto": None, "yes": True, "no": False}[args.strip_accents]
    tok = train_wordpiece(line_batches(inputs), args.vocab_size, min_frequency=args.min_frequency, score=args.score,
                          lowercase=not args.cased, strip_accents=accents, progress=progress)
    _save(tok.save, args.output)
    options = " ".join(o for o in ("--cased" if args.cased else "",
                                   f"--strip-accents {args.strip_accents}" if args.strip_accents else "") if o)
    return len(tok), "[PAD] [UNK] [CLS] [SEP] [MASK] included", "BERT vocab.txt", options


def _unigram(args: argparse.Namespace, inputs: list[Source], progress: bool):
    as_model = args.output.suffix == ".model"
    # A .model file carries a compiled table, and sentencepiece runs only tables, so train with that table.
    charsmap = compile_rule(args.normalization) if as_model else None
    config = SPConfig(model_type="unigram", normalization=args.normalization, byte_fallback=args.byte_fallback,
                      charsmap=charsmap)
    normalizer = SentencePieceNormalizer(config)
    skipped = [0, 0]
    limit = args.max_sentence_length or None
    sentences = (s for s in map(normalizer.normalize, _short_lines(inputs, limit, skipped)) if s)
    try:
        model = train_unigram(sentences, args.vocab_size, special_tokens=("<s>", "</s>"),
                              byte_fallback=args.byte_fallback, max_piece_length=args.max_piece_length,
                              max_sentence_length=None, progress=progress)
    except ValueError as exc:
        if skipped[0] and "empty" in str(exc):
            raise CommandError(f"every line is longer than --max-sentence-length={limit:,} bytes ({skipped[0]:,} "
                               "skipped), so there is nothing to train on; raise the limit or split the lines") from None
        raise
    tok = SentencePieceTokenizer(model.entries(), config)
    if as_model:
        _save(tok.save, args.output)
    else:
        _save(lambda path: formats.save_sentencepiece(tok, path), args.output)
    reserved = 3 + (256 if args.byte_fallback else 0)
    detail = f"<unk> <s> </s>{' + 256 byte pieces' if args.byte_fallback else ''} + {len(tok) - reserved:,} pieces"
    if skipped[0]:
        detail += (f"; skipped {skipped[0]:,} line{'s' * (skipped[0] != 1)} longer than {limit:,} bytes (the longest "
                   f"{skipped[1]:,}; --max-sentence-length changes the limit, as sentencepiece's does)")
    saved = "sentencepiece .model, which the sentencepiece library loads" if as_model else "toklab-sentencepiece JSON"
    return len(tok), detail, saved, ""


_ALGORITHMS = {"bpe": (_bpe, "byte-level BPE"), "wordpiece": (_wordpiece, "WordPiece"),
               "unigram": (_unigram, "Unigram (sentencepiece-style)")}


# ---------------------------------------------------------------------------- the command


def _at_least(minimum: int):
    """An argparse type: a whole number no smaller than ``minimum``."""

    def whole_number(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return whole_number


_positive, _whole = _at_least(1), _at_least(0)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", type=Path, help="UTF-8 text files to train on")
    parser.add_argument("--vocab-size", required=True, type=_positive, metavar="N",
                        help="entries in the vocabulary, special tokens included")
    parser.add_argument("-o", "--output", required=True, type=Path, metavar="OUT", help="where to write the tokenizer")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="show a progress bar (default: when standard error is a terminal)")


def _configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="algorithm", metavar="ALGORITHM", required=True)
    bpe = sub.add_parser("bpe", help="byte-level BPE (toklab-bpe JSON)", description=_ALGORITHM_HELP["bpe"])
    _common(bpe)
    bpe.add_argument("--pattern", choices=list(PATTERNS), default="gpt2", help="pre-tokenizer regex (default gpt2)")
    bpe.add_argument("--special", action="append", metavar="TOKEN",
                     help="a special token, kept whole and given an ID (repeatable), e.g. <|endoftext|>")
    bpe.add_argument("--min-frequency", type=_positive, default=1, metavar="N",
                     help="stop when the best pair occurs fewer than N times")
    bpe.add_argument("--processes", type=_positive, default=None, metavar="N",
                     help="count pre-tokens in N worker processes")
    wp = sub.add_parser("wordpiece", help="BERT-style WordPiece (vocab.txt)", description=_ALGORITHM_HELP["wordpiece"])
    _common(wp)
    wp.add_argument("--cased", action="store_true", help="do not lowercase")
    wp.add_argument("--strip-accents", choices=("auto", "yes", "no"), default=None,
                    help="strip accents (auto: with lowercasing, as BERT does)")
    wp.add_argument("--score", choices=("likelihood", "frequency"), default="likelihood",
                    help="merge score: WordPiece's likelihood (default) or pair frequency (HF's trainer)")
    wp.add_argument("--min-frequency", type=_positive, default=1, metavar="N", help="ignore pairs seen fewer times")
    uni = sub.add_parser("unigram", help="sentencepiece-style Unigram (toklab-sentencepiece JSON or .model)",
                         description=_ALGORITHM_HELP["unigram"])
    _common(uni)
    uni.add_argument("--normalization", choices=NORMALIZATIONS, default="nmt_nfkc",
                     help="normalization rule (default nmt_nfkc, sentencepiece's)")
    uni.add_argument("--byte-fallback", action="store_true",
                     help="add the 256 byte pieces, so no character is ever unknown")
    uni.add_argument("--max-piece-length", type=_positive, default=16, metavar="N", help="longest piece, in characters")
    uni.add_argument("--max-sentence-length", type=_whole, default=MAX_SENTENCE_LENGTH, metavar="BYTES",
                     help=f"skip lines longer than this many UTF-8 bytes, as sentencepiece does (default "
                          f"{MAX_SENTENCE_LENGTH}; 0: no limit)")


def _run(args: argparse.Namespace) -> int:
    paths = list(args.files)
    out = args.output.resolve()
    if any(p.resolve() == out for p in paths if p.exists()):
        raise CommandError(f"the output {args.output} is one of the training files", status=2)
    if not out.parent.is_dir():
        raise CommandError(f"cannot write {args.output}: directory {args.output.parent} does not exist")
    if out.is_dir():
        raise CommandError(f"cannot write {args.output}: it is a directory")
    if not os.access(out.parent, os.W_OK | os.X_OK):
        raise CommandError(f"cannot write {args.output}: no permission to create files in {args.output.parent}")
    inputs = sources(paths)
    size = sum(source.size for source in inputs)
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    if progress:
        os.environ.setdefault("TQDM_DELAY", PROGRESS_DELAY)
    train, name = _ALGORITHMS[args.algorithm]
    start = time.perf_counter()
    n, detail, saved, options = train(args, inputs, progress)
    seconds = time.perf_counter() - start
    print(f"trained {name} on {len(paths)} file{'s' * (len(paths) != 1)} ({size:,} bytes) in {seconds:.1f} s: "
          f"{n:,} entries ({detail})")
    if n < args.vocab_size:
        print(f"note: the corpus filled only {n:,} of the {args.vocab_size:,} entries asked for "
              "(no more merges or pieces to add); train on more text for a larger vocabulary")
    print(f"saved {args.output} ({saved}): use it with --model {args.output}" + (f" {options}" if options else ""))
    return 0


_ALGORITHM_HELP = {
    "bpe": "Train byte-level BPE (toklab.train_bpe) on the files and save it as toklab-bpe JSON.",
    "wordpiece": "Train WordPiece (toklab.train_wordpiece) with BERT's normalizer and pre-tokenizer; save vocab.txt.",
    "unigram": "Train a sentencepiece-style Unigram model (toklab.train_unigram) on the files' lines, normalized "
               "and with spaces escaped to ▁ as sentencepiece does (lines longer than --max-sentence-length bytes "
               "are skipped, as sentencepiece skips them); save it as toklab-sentencepiece JSON, or as a "
               "sentencepiece .model file when OUT ends in .model.",
}

_EXAMPLES = """examples:
  python -m toklab train bpe corpus.txt --vocab-size 1000 -o my_bpe.json
  python -m toklab encode "hello world" --model my_bpe.json
  python -m toklab train wordpiece a.txt b.txt --vocab-size 2000 -o vocab.txt
  python -m toklab train unigram corpus.txt --vocab-size 800 --byte-fallback -o my_unigram.json
  python -m toklab train unigram corpus.txt --vocab-size 800 -o my_unigram.model

python -m toklab train ALGORITHM --help lists each algorithm's options."""

COMMANDS = (
    Command("train", "train a BPE, WordPiece or Unigram tokenizer on text files", _configure, _run,
            "Train a tokenizer on UTF-8 text files and save it in a file --model reads. bpe writes toklab-bpe "
            "JSON, wordpiece writes BERT's vocab.txt, unigram writes toklab-sentencepiece JSON, or a sentencepiece "
            ".model file when OUT ends in .model.", _EXAMPLES),
)
