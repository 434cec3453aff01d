"""The palette's tree takes one row's height for all rows (QTreeView.uniformRowHeights), so it does not
measure every row's text in each layout and paint, the window's first frame included. That holds only
while every row really is as tall as the first: a row in another font or with a larger icon would be
cut, so this checks both."""

from PySide6.QtCore import QModelIndex


def _rows(tree, parent=QModelIndex()):
    model = tree.model()
    for r in range(model.rowCount(parent)):
        index = model.index(r, 0, parent)
        yield index
        yield from _rows(tree, index)


def test_the_palette_rows_are_one_height_and_the_tree_knows_it(make_window):
    w = make_window("dgx-h100")
    tree = w.palette.tree
    assert tree.uniformRowHeights(), "the tree measures every row's text again in each paint"
    tree.setUniformRowHeights(False)   # as Qt measures each row without the setting
    try:
        heights = {tree.sizeHintForIndex(index).height() for index in _rows(tree)}
    finally:
        tree.setUniformRowHeights(True)
    assert len(heights) == 1, f"palette rows of different heights {sorted(heights)}: uniform rows would cut some"
