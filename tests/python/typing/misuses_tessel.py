"""Mistakes the stubs let mypy catch (the test expects each error)."""

import tessel

t = tessel.zeros((2, 3))
t.no_such_method()  # error: has no attribute
n: int = t.dtype  # error: incompatible types (a tessel.dtype)
tessel.arange(3).reshape  # fine
tessel.not_a_function(1)  # error: has no attribute
