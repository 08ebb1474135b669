"""SQL migrations for the PostgreSQL session store, applied in order by ``postgres_store.migrate``."""
