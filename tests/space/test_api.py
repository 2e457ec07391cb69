"""The JSON of the Space's ``score`` endpoint, and its arguments checked by type before any model work."""

from __future__ import annotations

import pytest

from fastbertscore import space


@pytest.mark.parametrize(
    "arguments, name, got",
    [
        ({"candidate": ["a", "b"], "reference": "c"}, "candidate", "list"),
        ({"candidate": "a", "reference": 3}, "reference", "int"),
        ({"candidate": "a", "reference": "b", "model": ["m"]}, "model", "list"),
        ({"candidate": "a", "reference": "b", "idf": "yes"}, "idf", "str"),
        ({"candidate": "a", "reference": "b", "num_layers": True}, "num_layers", "bool"),
    ],
)
def test_score_arguments_of_another_type_are_named(arguments, name, got):
    # A list as the candidate read "The candidate is empty: type some text".
    with pytest.raises(TypeError, match=rf"argument '{name}' of /score must be .*; got {got} "):
        space.check_score_arguments(**arguments)
    space.check_score_arguments(candidate="a", reference="b", model=None, num_layers=3, lang="en", idf=False)
    with pytest.raises(TypeError, match="The candidate must be a string; got a list"):
        space.check_text(["a"], "The candidate", 100)
