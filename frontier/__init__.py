"""A durable, shared URL frontier: dedup, host politeness, leases, retries and hubs (Redis + SQL)."""
