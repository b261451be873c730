"""Tests of `toklab.lab.patching` (§6): byte vocabulary and next-byte model, patches, hash embeddings."""
