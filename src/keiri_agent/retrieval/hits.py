"""What the indexes of this package rank with and return: float32 scores and hits.

BM25, dense and hybrid ranking each answer a query with hits in the same form (the document's
position in the corpus, its id and its score), so callers can swap one index for another.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["FloatArray", "Hit"]

FloatArray = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result: the document's position in the corpus, its id and its score."""

    index: int
    id: str
    score: float
