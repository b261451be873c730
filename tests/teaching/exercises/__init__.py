"""Tests of the chapter exercise checkers (`toklab.teaching.exercises`)."""
