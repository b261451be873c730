"""Tests of the chapter exercise checkers (`toklab.exercises`)."""
