"""Task suites: run many objectives on isolated copies, on a local pool or Ray, into results.jsonl."""
