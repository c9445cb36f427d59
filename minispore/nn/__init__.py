"""minispore.nn: Cells (more layers, losses and optimizers arrive with issue 5)."""
from .cell import Cell, CellList, SequentialCell

__all__ = ["Cell", "CellList", "SequentialCell"]
