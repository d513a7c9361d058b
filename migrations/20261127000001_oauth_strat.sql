-- Sign-in through a tenant's OAuth 2.0 / OpenID Connect identity provider:
-- one `oauth_strat` row per provider configuration, with the earlier
-- deployment's columns. Users arriving through one are matched on
-- user_auth_lookups (provider = the strategy id, uid from info_mappings),
-- then on email, then created.

CREATE TABLE oauth_strat (
    -- "oauth_strat-" followed by 14 base-62 characters.
    id                text PRIMARY KEY,
    authority_id      uuid NOT NULL REFERENCES authorities (id) ON DELETE CASCADE,
    name              text NOT NULL,
    client_id         text NOT NULL,
    client_secret     text NOT NULL DEFAULT '',
    -- our field -> comma-separated provider fields, the first non-empty wins
    -- (uid, email, name, first_name, last_name, image, …).
    info_mappings     jsonb NOT NULL DEFAULT '{}',
    -- extra query parameters of the authorization request.
    authorize_params  jsonb NOT NULL DEFAULT '{}',
    -- field -> [regex, …]: every field must have a value matching one of its
    -- regexes (case-insensitive) or the sign-in is refused.
    ensure_matching   jsonb NOT NULL DEFAULT '{}',
    -- base URL the other URLs are relative to (when they are not absolute).
    site              text NOT NULL DEFAULT '',
    authorize_url     text NOT NULL DEFAULT '/oauth/authorize',
    -- post or get.
    token_method      text NOT NULL DEFAULT 'post',
    -- request_body (client_id/client_secret in the form) or basic_auth.
    auth_scheme       text NOT NULL DEFAULT 'request_body',
    token_url         text NOT NULL DEFAULT '/oauth/token',
    scope             text NOT NULL DEFAULT '',
    -- the user's profile, read with the access token (a JSON object).
    raw_info_url      text NOT NULL DEFAULT '',
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_strat_authority ON oauth_strat (authority_id);

-- The provider's tokens of the user's last federated sign-in (or the
-- on-behalf-of token of a token exchange), e.g. a Microsoft Graph token.
ALTER TABLE users
    ADD COLUMN access_token   text,
    ADD COLUMN refresh_token  text,
    ADD COLUMN expires_at     timestamptz;

-- One identity per (user, provider, uid); the id already encodes it.
CREATE INDEX user_auth_lookups_provider_uid ON user_auth_lookups (provider, uid);
