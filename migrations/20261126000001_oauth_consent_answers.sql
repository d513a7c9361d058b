-- Consent forms are single-use: the digest of every consent token that was
-- answered, kept until the token would have expired anyway (the scheduler
-- prunes older rows). A second answer with the same token is refused.
CREATE TABLE oauth_consent_answers (
    token_digest text PRIMARY KEY,
    expires_at   timestamptz NOT NULL
);
CREATE INDEX oauth_consent_answers_expiry ON oauth_consent_answers (expires_at);
