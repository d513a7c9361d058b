-- Request metering appends the ledger entry while the request runs (not after
-- it), so the entry's commit overlaps the work; a request that then fails gets
-- a reversal entry: same key, kind and tag, the negated amount, `reverses`
-- naming the entry. The ledger stays append-only and its sums exact.
ALTER TABLE usage_events ADD COLUMN reverses bigint REFERENCES usage_events (id);
ALTER TABLE usage_events DROP CONSTRAINT usage_events_amount_check;
ALTER TABLE usage_events ADD CONSTRAINT usage_events_amount_check CHECK (
    (reverses IS NULL AND amount >= 0) OR (reverses IS NOT NULL AND amount <= 0));
-- An entry is reversed at most once.
CREATE UNIQUE INDEX usage_events_reversed_once ON usage_events (reverses)
    WHERE reverses IS NOT NULL;
