"""Tests of `toklab.patching` (§6): byte vocabulary and next-byte model, patches, hash embeddings."""
