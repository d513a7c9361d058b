-- apalis.get_jobs is a LANGUAGE sql function planned generically: its LIMIT is an
-- unknown parameter (estimated at 10 % of the rows), so with a backlog the outer
-- UPDATE becomes a hash join over a sequential scan of all of apalis.jobs
-- (60-80 ms per fetch at 100k rows, measured by `tolk-bench queue`). Forbidding hash
-- and merge joins inside this one function gives the nested loop over the primary
-- key (4-7 ms per fetch of 100). Runs after apalis' own migrations (tolk migrate
-- applies those first); an apalis upgrade that replaces the function drops these
-- settings, so re-check with the bench after upgrading apalis-postgres.
ALTER FUNCTION apalis.get_jobs(text, text, integer) SET enable_hashjoin = off;
ALTER FUNCTION apalis.get_jobs(text, text, integer) SET enable_mergejoin = off;
