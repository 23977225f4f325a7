"""File blocks: read evidence archives and folders through the file layer (seed 002 §5)."""
