.PHONY: lint typecheck test bench
lint:
	ruff check src tests bench
typecheck:
	mypy
test:
	python -m pytest
bench:
	for b in bench/bench_*.py; do python $$b; done
