-- A glossary's version, bumped by every change to it (name, dictionaries):
-- API replicas cache glossary terms keyed by it and check it per request, so a
-- change made through one replica is seen by all at once.
ALTER TABLE glossaries ADD COLUMN version bigint NOT NULL DEFAULT 1;
