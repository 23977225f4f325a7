"""Tables between blocks: records lists, and the deterministic ``table.*`` blocks."""
