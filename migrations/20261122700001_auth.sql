-- The auth service (issue 7): authorities (tenants), users, administrator-registered
-- OAuth applications, authorization codes and issued tokens.
--
-- Federation (oauth_strat, adfs_strat, dynamic registration) comes later; the
-- user_auth_lookups table is already here so that SSO logins resolve users the
-- same way (lookup record on provider + uid, then email, then auto-create).

-- A tenant, found by the request's Host. Its organization carries the usage of
-- the Bearer tokens it issues on the translation and voice APIs.
CREATE TABLE authorities (
    id               uuid PRIMARY KEY,
    name             text NOT NULL,
    description      text NOT NULL DEFAULT '',
    domain           text NOT NULL UNIQUE,
    login_url        text NOT NULL DEFAULT '/auth/login?continue={{url}}',
    logout_url       text NOT NULL DEFAULT '/auth/login',
    -- internals.session_timeout (minutes) overrides SESSION_TIMEOUT_MINUTES.
    internals        jsonb NOT NULL DEFAULT '{}',
    config           jsonb NOT NULL DEFAULT '{}',
    organization_id  uuid NOT NULL REFERENCES organizations (id),
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
    -- "user-" followed by 14 base-62 characters, as the earlier deployment named them.
    id               text PRIMARY KEY,
    authority_id     uuid NOT NULL REFERENCES authorities (id),
    name             text NOT NULL DEFAULT '',
    email            text NOT NULL,
    -- md5(lower(email)), the earlier deployment's lookup key.
    email_digest     text NOT NULL,
    -- bcrypt ($2a$/$2b$/$2y$); empty for users who only sign in through SSO.
    password_digest  text NOT NULL DEFAULT '',
    -- 1 = support, 2 = sys_admin (the `p` bitmask of the JWT).
    permissions      integer NOT NULL DEFAULT 0,
    -- roles (`r` in the JWT)
    groups           text[] NOT NULL DEFAULT '{}',
    logged_out_at    timestamptz,
    deleted_at       timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (authority_id, email_digest)
);

-- Federated identities of a user (filled by the OAuth/SAML strategies, later).
CREATE TABLE user_auth_lookups (
    id          text PRIMARY KEY,          -- "auth-{authority}-{provider}-{uid}"
    user_id     text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    provider    text NOT NULL,
    uid         text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX user_auth_lookups_user ON user_auth_lookups (user_id);

CREATE TABLE oauth_applications (
    id                  uuid PRIMARY KEY,
    authority_id        uuid NOT NULL REFERENCES authorities (id),
    name                text NOT NULL,
    uid                 text NOT NULL UNIQUE,
    -- hex SHA-256 of the secret; NULL for a public client (PKCE required).
    secret_digest       text,
    redirect_uris       text[] NOT NULL,
    scopes              text[] NOT NULL DEFAULT '{public}',
    skip_authorization  boolean NOT NULL DEFAULT false,
    created_at          timestamptz NOT NULL DEFAULT now()
);

-- Authorization codes (10 minutes, single use). Only a digest of the code is kept.
CREATE TABLE oauth_codes (
    code_digest            text PRIMARY KEY,
    application_id         uuid NOT NULL REFERENCES oauth_applications (id) ON DELETE CASCADE,
    user_id                text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    redirect_uri           text NOT NULL,
    scopes                 text[] NOT NULL,
    code_challenge         text,
    resource               text,
    nonce                  text,
    -- The session the code was issued in (id_token auth_time).
    auth_time              timestamptz NOT NULL,
    expires_at             timestamptz NOT NULL,
    used_at                timestamptz,
    created_at             timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_codes_expires ON oauth_codes (expires_at);

-- One row per issued access token (its JWT `jti`), with the refresh token issued
-- beside it. Rows of one grant share a family: a rotated-out refresh token that
-- comes back, or a code redeemed twice, revokes the whole family.
CREATE TABLE oauth_tokens (
    jti                 uuid PRIMARY KEY,
    family_id           uuid NOT NULL,
    application_id      uuid NOT NULL REFERENCES oauth_applications (id) ON DELETE CASCADE,
    user_id             text REFERENCES users (id) ON DELETE CASCADE,
    code_digest         text,
    scopes              text[] NOT NULL,
    resource            text,
    expires_at          timestamptz NOT NULL,
    -- hex SHA-256 of the refresh token, if one was issued.
    refresh_digest      text UNIQUE,
    refresh_expires_at  timestamptz,
    -- When the refresh token was exchanged for the next pair (rotation).
    refreshed_at        timestamptz,
    revoked_at          timestamptz,
    created_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_tokens_family ON oauth_tokens (family_id);
CREATE INDEX oauth_tokens_code ON oauth_tokens (code_digest) WHERE code_digest IS NOT NULL;
CREATE INDEX oauth_tokens_expiry ON oauth_tokens (GREATEST(expires_at, refresh_expires_at));
