"""The fairengine Streamlit dashboard (entry point: ``streamlit run dashboard/app.py``)."""
