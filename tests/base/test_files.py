"""Files written all or nothing, and inputs that may never end (`toklab.base.files`).

A write that fails part-way (a full disk, ``ulimit -f``, an interrupt) must leave the
previous file as it was and no debris beside it; every ``save()`` and every file the
command line writes goes through `atomic_write`. A read from something that is not a
regular file stops at a bound.
"""

from __future__ import annotations

import errno
import io
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import toklab
from toklab import ByteBPE, SentencePieceTokenizer, WordPiece, formats
from toklab.base import files
from toklab.pipeline import versioning
from toklab.sentencepiece.model_file import SPConfig

PIECES = [("<unk>", 0.0, "unknown"), ("<s>", 0.0, "control"), ("</s>", 0.0, "control"), ("\u2581", -1.0),
          ("a", -2.0), ("b", -2.5), ("ab", -3.0)]


def _writers(tmp_path: Path) -> dict[str, tuple[Path, object]]:
    """Each way toklab writes a tokenizer file: (path, write())."""
    bpe = toklab.train_bpe("hello world, the quick brown fox " * 20, 270)
    wp = WordPiece(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "##s"])
    sp = SentencePieceTokenizer(PIECES, SPConfig(normalization="identity"))
    return {
        "ByteBPE.save": (tmp_path / "bpe.json", lambda p: bpe.save(p)),
        "WordPiece.save": (tmp_path / "vocab.txt", lambda p: wp.save(p)),
        "SentencePieceTokenizer.save": (tmp_path / "sp.model", lambda p: sp.save(p)),
        "save_sentencepiece": (tmp_path / "sp.json", lambda p: formats.save_sentencepiece(sp, p)),
        "versioning.save": (tmp_path / "versioned.json", lambda p: versioning.save(bpe, p)),
    }


@pytest.mark.parametrize("writer", ["ByteBPE.save", "WordPiece.save", "SentencePieceTokenizer.save",
                                    "save_sentencepiece", "versioning.save"])
def test_a_write_that_fails_part_way_leaves_the_previous_file(writer, tmp_path, monkeypatch):
    path, write = _writers(tmp_path)[writer]
    path.write_bytes(b"the previous, good file\n")
    before = sorted(os.listdir(tmp_path))

    def full_disk(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files.os, "fsync", full_disk)  # every byte written, none yet safe on disk
    with pytest.raises(OSError, match=f"cannot write .*{path.name}: No space left"):
        write(path)
    assert path.read_bytes() == b"the previous, good file\n"
    assert sorted(os.listdir(tmp_path)) == before  # no temporary file left behind
    monkeypatch.undo()
    write(path)
    assert path.read_bytes() != b"the previous, good file\n"


def test_an_interrupted_write_leaves_the_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "out.json"
    path.write_text("old", encoding="utf-8")

    def interrupted(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(files.os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        files.atomic_write(path, "new" * 1000)
    assert path.read_text(encoding="utf-8") == "old" and os.listdir(tmp_path) == ["out.json"]


def test_a_file_size_limit_leaves_the_previous_file(tmp_path):
    """``ulimit -f 1``: the library and the command line both keep the old file and name it in the error."""
    script = textwrap.dedent(
        """
        import resource, sys, warnings
        import toklab
        from toklab.cli import main
        warnings.simplefilter("ignore")
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))
        big = toklab.ByteBPE.from_tiktoken("r50k_base")
        try:
            big.save(sys.argv[1])
        except OSError as exc:
            print("library:", exc)
        sys.exit(main(["train", "bpe", sys.argv[2], "--vocab-size", "400", "-o", sys.argv[1]]))
        """
    )
    target = tmp_path / "tok.json"
    toklab.train_bpe("hello world " * 50, 260).save(target)
    good = target.read_bytes()
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(f"line {i}: the quick brown fox {i * 7} jumps\n" for i in range(3000)), encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", script, str(target), str(corpus)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 1, done.stderr
    assert f"library: [Errno {errno.EFBIG}] cannot write {target}: File too large" in done.stdout
    assert done.stderr.strip().splitlines() == [f"toklab train: error: cannot write {target}: File too large (the "
                                                "previous file, if any, is unchanged)"]
    assert target.read_bytes() == good
    assert sorted(os.listdir(tmp_path)) == ["corpus.txt", "tok.json"]


def test_a_new_file_gets_the_usual_permissions_and_an_old_one_keeps_its_own(tmp_path):
    new = tmp_path / "new.txt"
    files.atomic_write(new, b"x")
    umask = os.umask(0)
    os.umask(umask)
    assert new.stat().st_mode & 0o777 == 0o666 & ~umask
    old = tmp_path / "old.txt"
    old.write_text("y", encoding="utf-8")
    old.chmod(0o600)
    files.atomic_write(old, "z")
    assert old.read_text(encoding="utf-8") == "z" and old.stat().st_mode & 0o777 == 0o600


def test_writing_into_a_missing_folder_names_the_file(tmp_path):
    with pytest.raises(OSError, match="cannot write .*missing/out.json"):
        files.atomic_write(tmp_path / "missing" / "out.json", "x")


def test_reads_of_endless_streams_stop_at_the_bound(tmp_path):
    assert files.read_limited(io.BytesIO(b"x" * 100), limit=100) == b"x" * 100
    with pytest.raises(files.InputTooLarge, match="more than 100 bytes"):
        files.read_limited(io.BytesIO(b"x" * 101), limit=100)
    with open("/dev/zero", "rb") as zero, pytest.raises(files.InputTooLarge, match="/dev/zero gave more than"):
        files.read_limited(zero, limit=3 << 20, what="/dev/zero")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert [files.file_kind(p) for p in (tmp_path, fifo, "/dev/zero")] == ["directory", "FIFO", "device"]
    assert not files.regular_file(fifo) and not files.regular_file(tmp_path / "nothing")
    (tmp_path / "f.txt").write_text("x", encoding="utf-8")
    assert files.regular_file(tmp_path / "f.txt")
