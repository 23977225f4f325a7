"""keiri-agent's Streamlit app from the repository root: ``streamlit run app.py`` (seed 002 §10).

The app lives in the package (``keiri_agent.ui``); ``keiri-agent ui`` starts the same app.
"""

from keiri_agent.ui.app import main

main()
