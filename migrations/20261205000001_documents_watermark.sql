-- enable_watermark: the delivered document (Word, PowerPoint or PDF) carries
-- a visible mark of machine translation on every page or slide and a
-- document property saying so.
ALTER TABLE documents ADD COLUMN watermark boolean NOT NULL DEFAULT false;
