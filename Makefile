# groupcheck: `make demo` and `make test` set everything up on a fresh machine.
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.stamp

.PHONY: setup kafka-setup demo test check lint bench clean

# The Apache Kafka versions `make setup` fetches (Maven) for `groupcheck kafka`; the first
# is the one groupcheck follows. `make setup KAFKA_VERSIONS="4.4.0 4.2.0"` adds another.
KAFKA_VERSIONS ?= 4.4.0

setup: $(STAMP) kafka-setup

# Idempotent and quick when the cache is current (scripts/kafka-setup.sh).
kafka-setup:
	@KAFKA_VERSIONS="$(KAFKA_VERSIONS)" bash scripts/kafka-setup.sh

$(STAMP): pyproject.toml scripts/bootstrap.sh
	@bash scripts/bootstrap.sh
	@touch $(STAMP)

demo: setup
	$(VENV)/bin/groupcheck simulate --preset SMALL --seed 3 --steps 25
	$(VENV)/bin/groupcheck explore --preset TINY --engine bfs
	-$(VENV)/bin/groupcheck explore --mutant revoke-without-waiting --engine bfs
	@echo "(exit status 1 above is expected: the mutant's counterexample was found)"

# Tests that start a JVM (mark "spark", tests/groupcheck/pipeline/test_pipeline_{spark,bfs}.py) are one
# xdist group (--dist loadgroup): they run on one worker, in one JVM, while the other
# workers run the rest.
test: setup
	$(PY) -m pytest -n auto --dist loadgroup -q tests

# The inner loop: the linters, then every test but those marked slow (tests/slow_tests.txt
# and the marks in the files), spark (a JVM) or kafka (a real broker). No Kafka setup needed.
check: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy model invariants reports groupcheck
	$(VENV)/bin/lint-imports
	$(PY) -m pytest -n auto -q -m "not slow and not spark and not kafka" tests

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy model invariants reports groupcheck
	$(VENV)/bin/lint-imports

bench: setup
	$(PY) bench/run.py --out bench/results

clean:
	rm -rf $(VENV) .cache/kafka .pytest_cache .mypy_cache .ruff_cache .hypothesis reports/out bench/results
