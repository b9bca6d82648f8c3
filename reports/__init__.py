"""Renderers and run artifacts: text explanations, case-study layout, graphs, HTML reports."""
