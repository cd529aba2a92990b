"""The iteration space of a reduction (aclgen/runtime/geometry.py): kept dims first, reduced ones
last, and the choice to run rows `columns`-wise."""

from aclgen.runtime.geometry import plan


def test_rows_along_a_contiguous_reduced_dim():
    # softmax over the last dim of a contiguous [4, 6]: a row at a time
    p = plan((4, 6), [(6, 1), (6, 1)], reduced=(1,))
    assert (p.shape, p.reduced, p.columns, p.rows) == ((4, 6), 1, False, 4)
    assert p.layouts == ("contiguous", "contiguous")


def test_columns_when_the_kept_dim_is_the_contiguous_one():
    # dgamma = sum over the rows of dy * x ([5, 8], reduced dim 0): the kept dim (8) comes first,
    # every operand walks it contiguously (the output of shape [1, 8] too), the reduced one with
    # stride 8: 64 rows a step along the kept dim, whose layouts the variant takes
    p = plan((5, 8), [(8, 1), (8, 1), (0, 1)], reduced=(0,))
    assert (p.shape, p.strides, p.reduced, p.columns) == ((8, 5), ((1, 8), (1, 8), (1, 0)), 1, True)
    assert p.layouts == ("contiguous", "contiguous", "contiguous")
    # a row value broadcast along the kept dim (LayerNormBackward's mean [5, 1]) is fine
    p = plan((5, 8), [(8, 1), (1, 0), (0, 1)], reduced=(0,))
    assert p.columns and p.layouts == ("contiguous", "broadcast", "contiguous")


def test_columns_when_every_row_is_one_element():
    # dgamma of a single row ([1, 8], reduced dim 0 of size 1): each row (a column) is one element,
    # whose reduction a row at a time would set up and fold once per element
    p = plan((1, 8), [(8, 1), (8, 1), (0, 1)], reduced=(0,))
    assert (p.shape, p.reduced, p.columns) == ((8, 1), 1, True)
    assert not plan((1, 8), [(8, 2), (0, 1)], reduced=(0,)).columns  # kept dim strided


def test_rows_when_a_kept_dim_is_strided_or_nothing_is_gathered():
    assert not plan((5, 8), [(16, 2), (0, 1)], reduced=(0,)).columns  # kept dim strided
    assert not plan((5, 8), [(1, 5), (0, 1)], reduced=(0,)).columns  # reduced dim contiguous
    assert not plan((5, 1), [(1, 1), (0, 0)], reduced=(0,)).columns  # no kept dim
