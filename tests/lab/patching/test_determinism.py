"""`toklab.lab.patching` is deterministic: the same entropies, patches and hash buckets in every process."""

from __future__ import annotations

import os
import subprocess
import sys

_SNIPPET = (
    "import hashlib, numpy as np; from toklab.data import corpus; from toklab.lab import patching as P; "
    "t = corpus.load('mixed', max_bytes=30_000).encode(); "
    "m = P.ByteNgramModel.train(t[:20_000], order=5); e = m.entropies(t[20_000:]); "
    "s = P.patch_starts(e, P.threshold_for_mean_size(e, 4.5, 'monotonic'), 'monotonic'); "
    "h = P.hash_buckets(np.arange(0, 0x110000, 1009)); g = P.ngram_buckets(t, 5, 500_002); "
    "print(hashlib.sha256(e.tobytes() + s.tobytes() + h.tobytes() + g.tobytes()).hexdigest())"
)


def test_deterministic_across_processes_and_hash_seeds():
    outputs = set()
    for seed in ("0", "1", "random"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run([sys.executable, "-c", _SNIPPET], env=env, capture_output=True, text=True, check=True)
        outputs.add(out.stdout.strip())
    assert len(outputs) == 1
