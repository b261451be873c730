"""Tests of the command line, `python -m toklab` (`toklab.cli`)."""
