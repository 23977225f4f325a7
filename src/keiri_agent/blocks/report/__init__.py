"""Report blocks: Markdown reports from templates and charts from tables, for people to read."""
