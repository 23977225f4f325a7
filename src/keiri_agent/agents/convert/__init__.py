"""The conversion and visualisation agent of seed 003: fetch files (local or S3), convert them
among CSV, TSV, Excel, JSON, JSONL and Parquet, or plot them, with a CodeAct fallback."""
