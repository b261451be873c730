"""Checkers for the book's coding exercises, one module per chapter.

Each ``check_*`` function takes the reader's own implementation, runs it on
cases with known answers (worked examples and randomized ones compared with
toklab's tested implementation) and raises AssertionError explaining the
first disagreement. It returns a short success message otherwise.
"""
