"""The cross-encoder experiment of issue 38 (rejected; README.md here): research scripts run with
``python -m benchmarks.cross_encoder.<script>`` from the repository root. The model scripts need a
separate venv with torch; neither the product nor the tests import anything from here.
"""
