"""Exploration engines: breadth-first search, random walks and Hypothesis."""
