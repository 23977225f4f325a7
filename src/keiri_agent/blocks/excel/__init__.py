"""Excel blocks: read sheets and ranges, write records into a copy of a workbook, build new report workbooks."""
