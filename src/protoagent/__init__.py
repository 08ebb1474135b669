"""ProtoAgent: a coding-agent harness that ends with evidence."""
