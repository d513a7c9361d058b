-- A dynamic client registration remembers the address it came from: the
-- hourly registration limit is per address, under a ceiling for all of them.
ALTER TABLE oauth_applications ADD COLUMN registered_from text;
