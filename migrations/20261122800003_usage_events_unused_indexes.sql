-- Since the rollup (20261122100001), no query reads the ledger by (key, time)
-- or (organization, time): reports, limits and /v2/usage read the rollup plus
-- the entries past the watermark through `usage_events_tx` / `usage_events_key_tx`.
-- The two indexes only cost every append two random index insertions
-- (tolk-bench analytics: a ledger append on a 10M-row ledger took 0.34 ms with
-- them, 0.11 ms without, pgbench, synchronous_commit = off).
DROP INDEX IF EXISTS usage_events_key_time;
DROP INDEX IF EXISTS usage_events_org_time;
