"""Excel blocks: write records into a copy of a workbook through ``ExcelManager``."""
