-- Clients identified by a client ID metadata document (an https client_id):
-- the row caches the document (name, redirect URIs, scopes) until
-- metadata_expires_at, when the document is fetched again. NULL for clients
-- registered by an administrator or dynamically.
ALTER TABLE oauth_applications ADD COLUMN metadata_expires_at timestamptz;
