"""The groupcheck application: exploration engines, mutants and the command line."""
