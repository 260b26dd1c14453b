"""What the make_notebook_0*.py scripts share: cell constructors and writing the notebook.

`write_notebook` keeps the cell ids of the notebook already at `path` for cells whose type
and source are unchanged, so regenerating an unedited notebook rewrites it byte for byte
(nbformat gives every new cell a random id).
"""
import collections
import os

import nbformat as nbf

md, code = nbf.v4.new_markdown_cell, nbf.v4.new_code_cell

KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}


def write_notebook(cells, path):
    """Write `cells` as an nbformat-4 notebook with the Python 3 kernelspec."""
    nb = nbf.v4.new_notebook(cells=cells, metadata={"kernelspec": KERNELSPEC})
    if os.path.exists(path):
        old_ids = collections.defaultdict(list)
        for cell in nbf.read(path, as_version=4).cells:
            if "id" in cell:
                old_ids[cell.cell_type, cell.source].append(cell.id)
        for cell in nb.cells:
            same = old_ids.get((cell.cell_type, cell.source))
            if same:
                cell.id = same.pop(0)
    nbf.write(nb, path)
